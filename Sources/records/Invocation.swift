import Foundation
import RecordsApp
import SQLiteStore

/// The global options, read from anywhere on the command line before `--`.
struct GlobalOptions {
    var databasePath: String?
    /// `--adopt`: open another application's SQLite file all the same.
    var adopt = false
    var debug = false
    var version = false
    /// The words left for the app and command.
    var words: [String] = []

    init(_ arguments: [String]) throws {
        var index = 0
        var passThrough = false
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            if passThrough {
                words.append(word)
                continue
            }
            switch word {
            case "--":
                passThrough = true
                words.append(word)
            case "--database":
                guard index < arguments.count else {
                    throw UsageError(message: "option '--database' needs a value (PATH)", helpPath: [])
                }
                try setDatabase(arguments[index])
                index += 1
            case _ where word.hasPrefix("--database="):
                try setDatabase(String(word.dropFirst("--database=".count)))
            case "--adopt":
                adopt = true
            case "--debug":
                debug = true
            case "--version":
                version = true
            default:
                words.append(word)
            }
        }
    }

    private mutating func setDatabase(_ path: String) throws {
        guard databasePath == nil else {
            throw UsageError(message: "option '--database' is given more than once", helpPath: [])
        }
        guard !path.isEmpty else { throw UsageError(message: "option '--database' needs a path", helpPath: []) }
        databasePath = path
    }
}

/// What a command runs with: its arguments, and the database, opened on
/// first use so that usage errors never touch it.
@MainActor
final class Invocation {
    let arguments: ParsedArguments
    /// The family and command words, for messages.
    let path: [String]
    private let globals: GlobalOptions
    private let environment: [String: String]
    private var openDatabase: AppDatabase?

    init(arguments: ParsedArguments, path: [String], globals: GlobalOptions, environment: [String: String]) {
        self.arguments = arguments
        self.path = path
        self.globals = globals
        self.environment = environment
    }

    /// The app's database: installed from the sample on first use, migrated.
    func database() throws -> AppDatabase {
        if let openDatabase { return openDatabase }
        let location = try AppDatabase.location(databasePath: globals.databasePath, environment: environment)
        var log: (@Sendable (String) -> Void)?
        if globals.debug { log = { @Sendable message in Console.error("records: debug: \(message)") } }
        log?("database \(location.url.path) (from \(location.source.rawValue))")
        // The sample is only needed when there is no database yet, so an
        // existing database opens even if the sample went missing.
        let template = DatabaseTemplate.isInstalled(at: location.url) ? nil : try AppDatabase.bundledTemplateURL()
        let database = try AppDatabase(
            url: location.url, template: template, adoptingForeignDatabase: globals.adopt, debugLog: log)
        openDatabase = database
        return database
    }

    /// The value of a required option (the parser has checked it is there).
    func required(_ option: String) -> String { arguments.value(option) ?? "" }

    /// The first positional argument as a record ID.
    func recordID() throws -> Int64 {
        try ParsedArguments.recordID(arguments.positionals.first ?? "", path: path)
    }

    /// `--json` was given.
    var wantsJSON: Bool { arguments.flag("json") }

    /// Prints `value` as JSON when `--json` was given, else `text`.
    func emit<T: Encodable>(_ value: T, text: @autoclosure () -> String) throws {
        if wantsJSON {
            try Console.json(value)
        } else {
            Console.out(text())
        }
    }

    /// An optional option parsed as one of an enumeration's values.
    func choice<T: RawRepresentable & CaseIterable>(_ option: String, default value: T) throws -> T
    where T.RawValue == String {
        guard let text = arguments.value(option) else { return value }
        return try ParsedArguments.choice(text, option: option, as: T.self, path: path)
    }
}

/// A command that ran but did not succeed, such as "Match not found":
/// exit status 1, the message on standard error.
struct CommandFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
