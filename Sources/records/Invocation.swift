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
    /// The database file's path, once the command has looked for it: for
    /// messages about the database.
    private(set) var databaseFile: String?

    init(arguments: ParsedArguments, path: [String], globals: GlobalOptions, environment: [String: String]) {
        self.arguments = arguments
        self.path = path
        self.globals = globals
        self.environment = environment
    }

    /// The app's database: installed from the sample on first use, migrated.
    func database() throws -> AppDatabase {
        if let openDatabase { return openDatabase }
        try checkLocationVariables()
        let location = try AppDatabase.location(databasePath: globals.databasePath, environment: environment)
        databaseFile = location.url.path
        var log: (@Sendable (String) -> Void)?
        if globals.debug { log = { @Sendable message in Console.error("records: debug: \(message)") } }
        log?("database \(location.url.path) (from \(location.source.rawValue))")
        let database = try AppDatabase(
            url: location.url, start: .sample, adoptingForeignDatabase: globals.adopt, debugLog: log)
        openDatabase = database
        return database
    }

    /// Refuses environment variables that would choose the database's
    /// location but are not UTF-8: their decoded value would be a
    /// different path (each bad byte replaced by U+FFFD), and the database
    /// would be made or opened in the wrong place.
    private func checkLocationVariables() throws {
        var consulted: [String] = []
        var path = globals.databasePath
        if path == nil {
            consulted.append(AppDatabase.environmentVariable)
            path = environment[AppDatabase.environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
            // The default location's folder.
            if path == nil { consulted += ["XDG_DATA_HOME", "HOME"] }
        }
        if path?.hasPrefix("~") == true { consulted.append("HOME") }
        for name in consulted where RawEnvironment.isNotUTF8(name) {
            throw UsageError(
                message: "the environment variable \(name) is not valid UTF-8 text: records needs database "
                    + "paths in UTF-8 (rename the folder or file, or give another path with --database PATH)",
                helpPath: [])
        }
    }

    /// Runs `body`, which prints what a command did to the database: if
    /// that cannot be written, the error says what was done anyway.
    ///
    /// - Parameters:
    ///   - change: What was done, such as "coffee 12 was added".
    ///   - lost: What the user misses, such as "its ID".
    func afterChange(_ change: String, lost: String = "the confirmation", _ body: () throws -> Void) throws {
        do {
            try body()
        } catch var error as OutputError {
            error.change = change
            error.lost = lost
            throw error
        }
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
            try Console.out(text())
        }
    }

    /// Runs the command, naming the database file in its database errors.
    func run(_ command: Command) async throws {
        // Closing checkpoints the write-ahead log into the file and
        // removes it, so that a finished command leaves only the database.
        defer { openDatabase?.close() }
        do {
            try await command.run(self)
        } catch let error as SQLiteError {
            guard let databaseFile else { throw error }
            throw DatabaseFailure(error: error, path: databaseFile)
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

/// A database error, with the database file it happened in.
struct DatabaseFailure: Error, CustomStringConvertible {
    let error: SQLiteError
    let path: String

    var description: String {
        switch error.code {
        case .busy:
            let seconds = AppDatabase.lockWaitLimit.components.seconds
            return "the database \(path) is locked by another program (waited \(seconds) s); try again once it is done"
        case .corrupt:
            return "the database \(path) is damaged (malformed): \(error.message)"
        default:
            // Some messages name the file already ("file is not a database: PATH").
            return error.message.contains(path) ? error.message : "\(error.message) (database \(path))"
        }
    }
}
