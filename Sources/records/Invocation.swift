import Foundation
import RecordsApp
import SQLiteStore
import SQLiteStoreAppSupport

/// The global options: accepted before the app's name, between it and the
/// command, and among the command's own arguments (`records --json people
/// list`, `records people --json list`, `records people list --json`).
///
/// They are recognised only where an option may stand: the word after an
/// option that takes a value is that value, whatever it looks like, so
/// `records contacts add --name --version ...` names a contact "--version";
/// and every word after `--` is an argument.
struct GlobalOptions {
    /// One global option, for help, completion and the manual.
    struct Definition {
        let name: String
        /// The placeholder of its value; nil for a flag.
        let valueName: String?
        let help: String
    }

    /// Every global option, in the order help lists them (`-h, --help` is
    /// handled with the commands, see ``ParsedArguments``).
    static let definitions = [
        Definition(name: "database", valueName: "PATH", help: "Use this database file (or set RECORDS_DATABASE)"),
        Definition(name: "json", valueName: nil, help: "Print JSON (one compact document) instead of text"),
        Definition(
            name: "wide", valueName: nil, help: "Print tables' cells whole, however wide the terminal"),
        Definition(
            name: "adopt", valueName: nil,
            help: "Open another application's SQLite file anyway, adding the apps' tables to it"),
        Definition(name: "debug", valueName: nil, help: "Log every SQL statement and error to standard error"),
        Definition(name: "version", valueName: nil, help: "Show the version"),
    ]

    var databasePath: String?
    /// `--adopt`: open another application's SQLite file all the same.
    var adopt = false
    var debug = false
    /// `--json` given outside the command's own options.
    var json = false
    /// `--wide`: no table is cut to the terminal's width.
    var wide = false

    /// `--version` was given where an option may stand.
    struct VersionRequest: Error {}

    /// Reads the global option at `words[index]`, if it is one.
    ///
    /// - Returns: How many words it took (2 for `--database PATH`), or 0
    ///   when `words[index]` is no global option.
    /// - Throws: ``VersionRequest`` for `--version`; ``UsageError`` for a
    ///   missing or repeated database path.
    mutating func consume(_ words: [String], at index: Int) throws -> Int {
        let word = words[index]
        switch word {
        case "--database":
            guard index + 1 < words.count else {
                throw UsageError(message: "option '--database' needs a value (PATH)", helpPath: [])
            }
            try setDatabase(words[index + 1])
            return 2
        case _ where word.hasPrefix("--database="):
            try setDatabase(String(word.dropFirst("--database=".count)))
        case "--adopt": adopt = true
        case "--debug": debug = true
        case "--json": json = true
        case "--wide": wide = true
        case "--version": throw VersionRequest()
        default: return 0
        }
        return 1
    }

    /// Reads the global options at the start of `words` (before the app's
    /// name, or before a command's name) and returns the words after them.
    mutating func consumeLeading(_ words: [String]) throws -> [String] {
        var index = 0
        while index < words.count {
            let used = try consume(words, at: index)
            if used == 0 { break }
            index += used
        }
        return Array(words[index...])
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
    ///
    /// - Parameter synchronous: How often its commits wait for the disk
    ///   (`records serve --synchronous`); nil for SQLite's default, `full`.
    func database(
        synchronous: SynchronousMode? = nil, automaticCheckpoints: Bool = true, groupCommit: Bool = false
    ) throws -> AppDatabase {
        if let openDatabase { return openDatabase }
        try checkLocationVariables()
        let location = try AppDatabase.location(databasePath: globals.databasePath, environment: environment)
        databaseFile = location.url.path
        var log: (@Sendable (String) -> Void)?
        if globals.debug { log = { @Sendable message in Console.error("records: debug: \(message)") } }
        log?("database \(location.url.path) (from \(location.source.rawValue))")
        let database = try AppDatabase(
            url: location.url, start: .sample, adoptingForeignDatabase: globals.adopt, synchronous: synchronous,
            automaticCheckpoints: automaticCheckpoints, groupCommit: groupCommit, debugLog: log)
        openDatabase = database
        return database
    }

    /// Where the database file is, or would be made, without opening it
    /// (the directory of the default location is made).
    func databaseFilePath() throws -> String {
        try checkLocationVariables()
        return try AppDatabase.location(databasePath: globals.databasePath, environment: environment).url.path
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

    /// The version `--if-version` names: nil when it is not given.
    ///
    /// - Throws: ``UsageError`` when it is not a version as `show` prints
    ///   it (16 lowercase hexadecimal characters).
    func ifVersion() throws -> RecordVersion? {
        guard let text = arguments.value("if-version") else { return nil }
        guard let version = RecordVersion(text) else {
            throw UsageError(
                message: "--if-version must be a record version as 'show' prints it (16 lowercase hexadecimal "
                    + "characters, such as 0123456789abcdef), not '\(text)'",
                helpPath: path)
        }
        return version
    }

    /// `--json` was given, as the command's option or a global one.
    var wantsJSON: Bool { arguments.flag("json") || globals.json }

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
        if globals.json && command.option(named: "json") == nil {
            throw UsageError(
                message: "'records \(path.joined(separator: " "))' has no JSON output: leave out --json",
                helpPath: path)
        }
        // Full values for --wide, and nothing cut in JSON.
        if globals.wide || wantsJSON { Presentation.tableWidth = nil }
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
