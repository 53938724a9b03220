import Foundation
import RecordsApp
import SQLiteStore

/// Exit statuses.
enum ExitStatus: Int32 {
    case success = 0
    case failure = 1
    case usage = 2
}

/// Runs one `records` command line and returns its exit status.
@MainActor
func runRecords(_ arguments: [String], environment: [String: String]) -> ExitStatus {
    do {
        let globals = try GlobalOptions(arguments)
        if globals.version {
            Console.out(Help.version)
            return .success
        }
        try dispatch(globals, environment: environment)
        return .success
    } catch let error as UsageError {
        Console.error("records: error: \(error.message)")
        let helpCommand = (["records"] + error.helpPath + ["--help"]).joined(separator: " ")
        Console.error("Run '\(helpCommand)' for usage.")
        return .usage
    } catch let error as ValidationError {
        Console.error("records: error: \(error)")
        return .usage
    } catch let error as SQLiteError {
        // The SQL and arguments are for --debug, not for every user.
        Console.error("records: error: \(error.message)")
        return .failure
    } catch {
        Console.error("records: error: \(error)")
        return .failure
    }
}

@MainActor
private func dispatch(_ globals: GlobalOptions, environment: [String: String]) throws {
    var words = globals.words
    let wantsHelp = words.first == "-h" || words.first == "--help"
    if words.first == "help" || wantsHelp {
        words.removeFirst()
        try printHelp(for: words)
        return
    }
    guard let familyName = words.first else {
        Console.error(Help.main)
        throw UsageError(message: "missing app: choose \(familyNames)", helpPath: [])
    }
    guard let family = commandFamilies.first(where: { $0.name == familyName }) else {
        throw UsageError(
            message:
                "unknown app '\(familyName)': choose \(familyNames)\(suggestion(familyName, commandFamilies.map(\.name)))",
            helpPath: [])
    }
    guard words.count > 1 else {
        Console.error(Help.family(family))
        throw UsageError(message: "missing command for '\(family.name)'", helpPath: [family.name])
    }
    let commandName = words[1]
    if commandName == "-h" || commandName == "--help" {
        Console.out(Help.family(family))
        return
    }
    let command: Command
    let path: [String]
    switch try family.lookup(Array(words.dropFirst())) {
    case .group(let group, let wantsHelp):
        if wantsHelp {
            Console.out(Help.family(family, group: group))
            return
        }
        Console.error(Help.family(family, group: group))
        throw UsageError(message: "missing command for '\(family.name) \(group)'", helpPath: [family.name, group])
    case .command(let found, let wordCount):
        command = found
        path = [family.name] + words.dropFirst().prefix(wordCount)
    }
    let arguments = try ParsedArguments(Array(words.dropFirst(path.count)), for: command, path: path)
    if arguments.wantsHelp {
        Console.out(Help.command(command, in: family))
        return
    }
    try command.run(Invocation(arguments: arguments, path: path, globals: globals, environment: environment))
}

@MainActor
private func printHelp(for words: [String]) throws {
    guard let familyName = words.first else {
        Console.out(Help.main)
        return
    }
    guard let family = commandFamilies.first(where: { $0.name == familyName }) else {
        throw UsageError(message: "no help for unknown app '\(familyName)': choose \(familyNames)", helpPath: [])
    }
    guard words.count > 1 else {
        Console.out(Help.family(family))
        return
    }
    switch try family.lookup(Array(words.dropFirst())) {
    case .group(let group, _): Console.out(Help.family(family, group: group))
    case .command(let command, _): Console.out(Help.command(command, in: family))
    }
}

private var familyNames: String { commandFamilies.map(\.name).joined(separator: ", ") }

private func suggestion(_ word: String, _ candidates: [String]) -> String {
    candidates.first { editDistance($0, word) <= 2 }.map { "; did you mean '\($0)'?" } ?? ""
}
