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

/// `records version`: the same as `records --version`, for those who type
/// it as a command, as with other tools.
let versionCommand = Command(
    name: "version", summary: "Show the version (the same as --version)",
    examples: ["records version"],
    run: { _ in try Console.out(Help.version) })

/// Every word that may follow `records`: the apps and families, the
/// top-level commands, and `help`, in the order help lists them. Messages
/// about a word that is none of them list these, so a new command is
/// named there without another change.
var firstWords: [String] { commandFamilies.map(\.name) + topLevelCommands.map(\.name) + ["help"] }
