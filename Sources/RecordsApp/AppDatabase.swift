import Foundation
import SQLiteStore

/// The records app's database: where it lives, its schema and migrations,
/// and the sample database it starts from.
///
/// ```swift
/// let location = try AppDatabase.location(databasePath: nil)   // default place
/// let database = try AppDatabase(url: location.url, template: AppDatabase.bundledTemplateURL())
/// let people = try PeopleStore(database: database).all()
/// ```
///
/// On first use the shipped sample database is installed (atomically) at the
/// location, then the migrations bring it, or any older database of the
/// app, up to date. One connection is kept open and shared safely by the
/// stores.
///
/// ## Adding an app
/// A new app (Coffee, Users, ...) adds its folder with a `…Schema.swift`
/// holding its migrations as `static let migrations: [Migrator.Migration]`,
/// and one line to ``migrationGroups``. Never change or remove a migration
/// that has shipped; append new ones to the app's list.
public final class AppDatabase: Sendable {
    /// The migrations of every app, in registration order. A new app adds
    /// one line here.
    static let migrationGroups: [[Migrator.Migration]] = [
        PeopleSchema.migrations,
        ContactsSchema.migrations,
        CoffeeSchema.migrations,
        UsersSchema.migrations,
    ]

    /// The name of the data directory (`~/.local/share/records` on Linux).
    public static let applicationName = "records"
    /// The database file's name in the data directory.
    public static let defaultFileName = "records.sqlite"
    /// The environment variable that overrides the database location.
    public static let environmentVariable = "RECORDS_DATABASE"

    /// The connection, serialized.
    let manager: DBManager

    /// The database file's path (`:memory:` for ``inMemory()``).
    public var path: String { manager.path }

    /// The migrator with every app's migrations.
    public static var migrator: Migrator {
        var migrator = Migrator()
        for group in migrationGroups { migrator.register(group) }
        return migrator
    }

    /// Opens the database at `url`, installing `template` there first if no
    /// database is there yet, then applying pending migrations.
    ///
    /// - Parameters:
    ///   - url: The database file. Its directory must exist.
    ///   - template: The database to start from, usually
    ///     ``bundledTemplateURL()``; nil starts from an empty database.
    ///   - debugLog: Receives every statement and error.
    /// - Throws: ``DatabaseFileError`` (template or location unusable),
    ///   `SQLiteError` (not a database, cannot open), `MigrationError`
    ///   (made by a newer version, or a migration failed).
    public convenience init(url: URL, template: URL?, debugLog: (@Sendable (String) -> Void)? = nil) throws {
        self.init(
            manager: try DBManager(
                databaseURL: url, template: template, migrator: Self.migrator, configuration: Self.configuration,
                debugLog: debugLog))
    }

    private init(manager: DBManager) {
        self.manager = manager
    }

    /// A private, in-memory database with the app's schema and no rows, for
    /// tests and previews.
    public static func inMemory() throws -> AppDatabase {
        AppDatabase(manager: try DBManager.inMemory(migrator: migrator, configuration: configuration))
    }

    /// The connection settings: every connection gets the search function,
    /// and waits up to a minute for another process's lock (the library's
    /// default is five seconds): a command that only has to wait its turn
    /// behind other writers, such as a large picture being stored, should
    /// wait, not fail.
    static var configuration: Configuration {
        var configuration = Configuration()
        configuration.label = applicationName
        configuration.busyTimeout = .seconds(60)
        configuration.prepareDatabase = { db in try SearchFolding.register(on: db) }
        return configuration
    }

    /// Closes the connection; the stores throw afterwards.
    public func close() { manager.close() }

    // MARK: - Access for the stores

    /// Runs `body` with the connection, for reads.
    func read<T: Sendable>(_ body: (Database) throws -> T) throws -> T {
        try manager.withConnection(body)
    }

    /// Runs `body` in a transaction: all of its changes or none.
    func write<T: Sendable>(_ body: (Database) throws -> T) throws -> T {
        try manager.transaction(.immediate, body)
    }
}

// MARK: - Location

/// Where the database is, and what decided it.
public struct DatabaseLocation: Sendable, Equatable {
    /// What chose the location.
    public enum Source: String, Sendable {
        /// The `--database` option.
        case option = "--database"
        /// The `RECORDS_DATABASE` environment variable.
        case environment = "RECORDS_DATABASE"
        /// The platform's data directory.
        case defaultDirectory = "the data directory"
    }

    /// The database file.
    public let url: URL
    /// What chose it.
    public let source: Source
}

extension AppDatabase {
    /// Resolves the database file: `databasePath` if given, else the
    /// `RECORDS_DATABASE` environment variable, else `records.sqlite` in the
    /// platform's data directory, which is created if needed.
    ///
    /// A leading `~/` is expanded; relative paths are relative to the
    /// current directory. Empty values count as not given.
    public static func location(
        databasePath: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> DatabaseLocation {
        if let databasePath, !databasePath.isEmpty {
            return DatabaseLocation(url: fileURL(databasePath, environment: environment), source: .option)
        }
        if let path = environment[environmentVariable], !path.isEmpty {
            return DatabaseLocation(url: fileURL(path, environment: environment), source: .environment)
        }
        let directory = try DataDirectory.create(forApplication: applicationName, environment: environment)
        return DatabaseLocation(url: directory.appendingPathComponent(defaultFileName), source: .defaultDirectory)
    }

    private static func fileURL(_ path: String, environment: [String: String]) -> URL {
        var expanded = path
        if path == "~" || path.hasPrefix("~/") {
            let home = environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
            expanded = home + path.dropFirst()
        }
        return URL(fileURLWithPath: expanded).standardizedFileURL
    }
}

// MARK: - Sample database

extension AppDatabase {
    /// The name of the resource bundle SwiftPM builds for this target.
    private static let resourceBundleName = "SQLiteStore_RecordsApp"

    /// The sample database that ships with the app.
    ///
    /// Looked up beside the executable (where SwiftPM puts the target's
    /// resource bundle) and in the main bundle; unlike `Bundle.module`, a
    /// missing bundle is a thrown error, not a crash.
    public static func bundledTemplateURL() throws -> URL {
        var candidates: [URL] = []
        var directories = [Bundle.main.bundleURL, Bundle.main.resourceURL].compactMap { $0 }
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            directories.append(executable.deletingLastPathComponent())
        }
        for directory in directories {
            for suffix in [".resources", ".bundle"] {
                let bundle = directory.appendingPathComponent(resourceBundleName + suffix)
                candidates.append(bundle.appendingPathComponent("sampledb.sqlite"))
                candidates.append(bundle.appendingPathComponent("Contents/Resources/sampledb.sqlite"))
            }
            candidates.append(directory.appendingPathComponent("sampledb.sqlite"))
        }
        if let found = candidates.first(where: { FileManager.default.isReadableFile(atPath: $0.path) }) {
            return found
        }
        let places = Set(directories.map(\.path)).sorted().joined(separator: ", ")
        throw DatabaseFileError(
            .templateMissing, path: "sampledb.sqlite",
            message: "the sample database that ships with records is missing (looked for the "
                + "\(resourceBundleName) resources in \(places)); reinstall records, or use --database "
                + "with an existing database")
    }

    /// Builds a sample database from SQL: the one way the shipped
    /// `sampledb.sqlite` is made (by `scripts/make-sample-database.sh`) and
    /// checked (by the tests).
    ///
    /// The SQL runs in memory, then `VACUUM INTO` writes a compact file. For
    /// a given SQLite version the bytes depend only on the SQL.
    ///
    /// - Throws: `SQLiteError` when the SQL fails; ``DatabaseFileError``
    ///   when `destination` exists (it is never overwritten).
    public static func buildSampleDatabase(sql: String, at destination: URL) throws {
        if FileManager.default.fileExists(atPath: destination.path) {
            throw DatabaseFileError(
                .destinationUnusable, path: destination.path,
                message: "\(destination.path) already exists; remove it first")
        }
        let db = try Database.inMemory()
        try db.transaction { db in try db.execute(sql) }
        try db.execute("VACUUM INTO ?", arguments: [destination.path])
        db.close()
    }
}
