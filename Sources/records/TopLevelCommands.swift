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
    async throws
{
    let path = [command.name]
    var globals = globals
    let arguments = try ParsedArguments(Array(words.dropFirst()), for: command, path: path, globals: &globals)
    if arguments.wantsHelp {
        try Console.out(Help.command(command, after: []))
        return
    }
    try await Invocation(arguments: arguments, path: path, globals: globals, environment: environment).run(command)
}
