import Foundation

// Commands that act on the whole database rather than on one app, such as
// `records backup FILE`: a command word right after `records`, with no app
// before it. Registry.swift lists them in `topLevelCommands`.

/// The top-level command named `word`, if there is one.
func topLevelCommand(named word: String) -> Command? {
    topLevelCommands.first { $0.name == word }
}

/// Runs a top-level command; `words` start with its name.
@MainActor
func runTopLevelCommand(_ command: Command, words: [String], globals: GlobalOptions, environment: [String: String])
    throws
{
    let path = [command.name]
    let arguments = try ParsedArguments(Array(words.dropFirst()), for: command, path: path)
    if arguments.wantsHelp {
        try Console.out(Help.topLevel(command))
        return
    }
    try Invocation(arguments: arguments, path: path, globals: globals, environment: environment).run(command)
}

extension Help {
    /// The help of a top-level command: `records backup --help`.
    static func topLevel(_ command: Command) -> String {
        var text = """
            records \(command.name) - \(command.summary)

            Usage: records [--database PATH] \(command.synopsis)
            """
        if !command.positionals.isEmpty {
            text += "\n\nArguments:\n" + aligned(command.positionals.map { ($0.name, $0.help) })
        }
        if !command.options.isEmpty {
            let options = command.options.map { option in
                ("--" + option.name + (option.valueName.map { " " + $0 } ?? ""), option.help)
            }
            text += "\n\nOptions:\n" + aligned(options)
        }
        if let discussion = command.discussion {
            text += "\n\n" + discussion
        }
        if !command.examples.isEmpty {
            text += "\n\nExamples:\n" + command.examples.map { "  " + $0 }.joined(separator: "\n")
        }
        return text
    }

    private static func aligned(_ rows: [(String, String)]) -> String {
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { "  " + $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }
            .joined(separator: "\n")
    }
}
