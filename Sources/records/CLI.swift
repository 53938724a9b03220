import Foundation
import RecordsApp
import SQLiteStore

/// Exit statuses.
enum ExitStatus: Int32 {
    case success = 0
    case failure = 1
    case usage = 2
    /// Standard output was a pipe whose reader had gone: the status a shell
    /// shows for a program that `SIGPIPE` ended (128 + 13), the usual way
    /// for `records people list | head -1` to end.
    case brokenPipe = 141
}

/// Runs one `records` command line and returns its exit status.
///
/// `arguments` are `CommandLine.arguments` without the program's name;
/// their raw bytes are checked too (see ``RawArguments``).
@MainActor
func runRecords(_ arguments: [String], environment: [String: String]) async -> ExitStatus {
    StandardStream.prepare()
    Presentation.configure(wide: false, environment: environment)
    do {
        try RawArguments.check()
        try await dispatch(arguments, environment: environment)
        return .success
    } catch is GlobalOptions.VersionRequest {
        do {
            try Console.out(Help.version)
            return .success
        } catch {
            let (message, status) = report(error)
            if let message { Console.error(message) }
            return status
        }
    } catch {
        let (message, status) = report(error)
        if let message { Console.error(message) }
        return status
    }
}

/// What to print for an error, and the exit status it means.
private func report(_ error: any Error) -> (message: String?, status: ExitStatus) {
    switch error {
    case let error as UsageError:
        let helpCommand = (["records"] + error.helpPath + ["--help"]).joined(separator: " ")
        return ("records: error: \(error.message)\nRun '\(helpCommand)' for usage.", .usage)
    case let error as ValidationError:
        // Several problems one per line, each readable on its own, rather
        // than one long line joined by semicolons.
        guard error.problems.count > 1 else { return ("records: error: \(error)", .usage) }
        let lines = error.problems.map { "  - \($0.message)" }.joined(separator: "\n")
        return ("records: error: \(error.problems.count) values are not valid:\n\(lines)", .usage)
    case let error as VersionConflictError:
        return (
            "records: error: \(error.kind) \(error.id) is now at version \(error.current), not \(error.expected): "
                + "someone changed it since, so nothing was written. Show it again and redo the change.",
            .failure
        )
    case let error as PictureError:
        switch error.reason {
        // Input that is not a picture it could store: invalid input, as a
        // bad price is.
        case .empty, .unrecognizedFormat, .tooLarge: return ("records: error: \(error)", .usage)
        case .unwritable where error.subject == standardOutputName && StandardStream.outputIsBrokenPipe:
            return (nil, .brokenPipe)
        default: return ("records: error: \(error)", .failure)
        }
    case let error as OutputError:
        // A reader that stops reading wants no more output, and no message,
        // unless the database was changed and the user must know it.
        let message = error.isBrokenPipe && error.change == nil ? nil : "records: error: \(error)"
        return (message, error.isBrokenPipe ? .brokenPipe : .failure)
    case let error as SQLiteError:
        // The SQL and arguments are for --debug, not for every user.
        return ("records: error: \(error.message)", .failure)
    default:
        return ("records: error: \(error)", .failure)
    }
}

/// How messages and ``PictureDestination`` name standard output.
let standardOutputName = "standard output"

@MainActor
private func dispatch(_ arguments: [String], environment: [String: String]) async throws {
    var globals = GlobalOptions()
    var words = try globals.consumeLeading(arguments)
    let wantsHelp = words.first == "-h" || words.first == "--help"
    if words.first == "help" || wantsHelp {
        words.removeFirst()
        try printHelp(for: words)
        return
    }
    guard let familyName = words.first else {
        Console.error(Help.main)
        throw UsageError(message: "missing app or command: choose \(familyNames)", helpPath: [])
    }
    if familyName.hasPrefix("-") && familyName != "-" {
        throw UsageError(message: "unknown option '\(familyName)'", helpPath: [])
    }
    if let command = topLevelCommand(named: familyName) {
        try await runTopLevelCommand(command, words: words, globals: globals, environment: environment)
        return
    }
    guard let family = commandFamilies.first(where: { $0.name == familyName }) else {
        throw UsageError(
            message:
                "unknown app or command '\(familyName)': choose \(familyNames)\(suggestion(familyName, firstWords))",
            helpPath: [])
    }
    // Global options between the app's name and the command's.
    words = [familyName] + (try globals.consumeLeading(Array(words.dropFirst())))
    guard words.count > 1 else {
        Console.error(Help.family(family))
        throw UsageError(message: "missing command for '\(family.name)'", helpPath: [family.name])
    }
    let commandName = words[1]
    if commandName == "-h" || commandName == "--help" {
        try Console.out(Help.family(family))
        return
    }
    let command: Command
    let path: [String]
    switch try family.lookup(Array(words.dropFirst())) {
    case .group(let group, let wantsHelp):
        if wantsHelp {
            try Console.out(Help.family(family, group: group))
            return
        }
        Console.error(Help.family(family, group: group))
        throw UsageError(message: "missing command for '\(family.name) \(group)'", helpPath: [family.name, group])
    case .command(let found, let wordCount):
        command = found
        path = [family.name] + words.dropFirst().prefix(wordCount)
    }
    let arguments = try ParsedArguments(
        Array(words.dropFirst(path.count)), for: command, path: path, globals: &globals)
    if arguments.wantsHelp {
        try Console.out(Help.command(command, in: family))
        return
    }
    try await Invocation(arguments: arguments, path: path, globals: globals, environment: environment).run(command)
}

@MainActor
private func printHelp(for words: [String]) throws {
    guard let familyName = words.first else {
        try Console.out(Help.main)
        return
    }
    if let command = topLevelCommand(named: familyName) {
        try Console.out(Help.command(command, after: []))
        return
    }
    guard let family = commandFamilies.first(where: { $0.name == familyName }) else {
        throw UsageError(
            message: "no help for unknown app or command '\(familyName)': choose \(familyNames)", helpPath: [])
    }
    guard words.count > 1 else {
        try Console.out(Help.family(family))
        return
    }
    switch try family.lookup(Array(words.dropFirst())) {
    case .group(let group, _): try Console.out(Help.family(family, group: group))
    case .command(let command, _): try Console.out(Help.command(command, in: family))
    }
}

/// Every word that may follow `records`, for messages.
private var familyNames: String { firstWords.joined(separator: ", ") }

private func suggestion(_ word: String, _ candidates: [String]) -> String {
    candidates.first { editDistance($0, word) <= 2 }.map { "; did you mean '\($0)'?" } ?? ""
}
