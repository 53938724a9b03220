import Foundation
import SQLiteStore
import SQLiteStoreAppSupport

/// The records app's database: where it lives, its schema and migrations,
/// and the sample database it starts from.
///
/// ```swift
/// let location = try AppDatabase.location(databasePath: nil)   // default place
/// let database = try AppDatabase(url: location.url, start: .sample)
/// let people = try await PeopleStore(database: database).all()
/// ```
///
/// On first use the shipped sample database is installed (atomically) at the
/// location, then the migrations bring it, or any older database of the
/// app, up to date. The file is shared through a `DatabasePool` (WAL): the
/// stores' reads run on reader connections beside each other and beside
/// the one write at a time, each on its connection's own thread, never the
/// caller's.
///
/// ## Whose database it is
/// A file that is there already is opened only if it is records' own (it
/// has the migrations table), holds nothing, or holds only tables of the
/// original tutorials (see ``DatabaseContents``). Any other SQLite file
/// belongs to another application: it is refused with a
/// ``ForeignDatabaseError`` and left exactly as it was, unless
/// `adoptingForeignDatabase` is true.
///
/// ## One app's tables never block the others
/// When an app's migration refuses the table it found (a Users table
/// whose emails clash, a coffee table of unknown columns), that app is
/// left out and the others open as usual; the app's store then throws an
/// ``AppUnavailableError`` saying why, and the migration is tried again on
/// the next open.
///
/// ## Adding an app
/// A new app (Coffee, Users, ...) adds its folder with a `…Schema.swift`
/// holding its migrations and an `…App.swift` declaring its
/// ``AppDescriptor``, and one line to ``apps``: ``App``, the migrations and
/// ``changes(of:)`` follow from it. Never change or remove a migration that
/// has shipped; append new ones to the app's list.
public final class AppDatabase: Sendable {
    /// One of the apps that share the database, as its ``AppDescriptor``
    /// names it: `people`, `contacts`, `coffee`, `users`. Every app is one
    /// of ``AppDatabase/apps``.
    public struct App: Hashable, Sendable, CaseIterable, RawRepresentable, CustomStringConvertible {
        /// The app's name, as the command line and the web's live topics
        /// spell it: "people".
        public let rawValue: String

        /// The app of that name (exactly: "People" is none), if there is one.
        public init?(rawValue: String) {
            guard let app = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
            self = app
        }

        /// An app's name, for its descriptor's file; only ``AppDatabase/apps`` makes it an app.
        init(named name: String) { rawValue = name }

        /// Every app, in the order of ``AppDatabase/apps``.
        public static var allCases: [App] { AppDatabase.apps.map(\.app) }

        /// "People", "Coffee", ...
        public var displayName: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }

        public var description: String { rawValue }

        /// What the database knows of the app.
        var descriptor: AppDescriptor {
            guard let descriptor = AppDatabase.apps.first(where: { $0.app == self }) else {
                preconditionFailure("the app \(rawValue) is not in AppDatabase.apps")
            }
            return descriptor
        }
    }

    /// The migrations of every app, in the order of ``apps``.
    static var migrationGroups: [(app: App, migrations: [Migrator.Migration])] {
        apps.map { ($0.app, $0.migrations) }
    }

    /// The name of the data directory (`~/.local/share/records` on Linux).
    public static let applicationName = "records"
    /// The database file's name in the data directory.
    public static let defaultFileName = "records.sqlite"
    /// The environment variable that overrides the database location.
    public static let environmentVariable = "RECORDS_DATABASE"

    /// The connections: a pool (WAL, readers beside the writer) for a
    /// file, a queue for ``inMemory()``.
    let writer: any DatabaseWriter

    /// The stores' writes, combined: the writes that wait for the writer
    /// together share one transaction, each in its own savepoint, so that
    /// many creates at once (the API under load) commit and reach the disk
    /// together rather than one by one. Each transaction ends by folding
    /// the rows its writes added or changed (search text, sort keys), once
    /// for all of them.
    let combinedWrites: WriteCombiner

    /// The apps whose migration refused the tables it found, and why.
    let unavailableApps: [App: AppUnavailableError]

    /// Whether this is a read replica (``init(readReplicaAt:vfs:staleConnectionCheck:debugLog:)``):
    /// every write fails, and the stores leave out the bookkeeping writes
    /// they would make while reading (a session's last use, an expired
    /// session's removal).
    public let isReadOnly: Bool

    /// Receives every statement and error, when a log was asked for.
    let debugLog: (@Sendable (String) -> Void)?

    /// The database file's path (`:memory:` for ``inMemory()``).
    public let path: String

    /// The file at ``path`` when the database was opened (nil in memory):
    /// a ``DatabaseFileWatch`` compares the path with it, to notice the
    /// file deleted or replaced under the open connections.
    public let openedFile: FileIdentity?

    /// The migrator with the shared migrations, then every app's.
    public static var migrator: Migrator {
        var migrator = Migrator()
        migrator.register(sharedMigrations)
        for group in migrationGroups { migrator.register(group.migrations) }
        return migrator
    }

    /// What a new database starts from.
    public enum Start: Sendable, Equatable {
        /// The sample database that ships with records
        /// (``bundledTemplateURL()``), looked for only when there is no
        /// database at the location yet.
        case sample
        /// An empty database: the migrations make the apps' tables.
        case empty
    }

    /// Opens the database at `url`, starting it from the sample or empty
    /// if no database is there yet, then applying pending migrations.
    ///
    /// An existing database opens even if the sample is missing: the sample
    /// is looked for only when it is needed.
    ///
    /// - Parameters:
    ///   - url: The database file. Its directory must exist.
    ///   - start: What a new database starts from.
    ///   - adoptingForeignDatabase: See ``init(url:template:adoptingForeignDatabase:synchronous:automaticCheckpoints:groupCommit:debugLog:)``.
    ///   - synchronous: See ``init(url:template:adoptingForeignDatabase:synchronous:automaticCheckpoints:groupCommit:debugLog:)``.
    ///   - automaticCheckpoints: See ``init(url:template:adoptingForeignDatabase:synchronous:automaticCheckpoints:groupCommit:debugLog:)``.
    ///   - groupCommit: See ``init(url:template:adoptingForeignDatabase:synchronous:automaticCheckpoints:groupCommit:debugLog:)``.
    ///   - debugLog: Receives every statement and error.
    /// - Throws: What ``init(url:template:adoptingForeignDatabase:synchronous:automaticCheckpoints:groupCommit:debugLog:)``
    ///   throws, and ``DatabaseFileError`` when the sample is needed and
    ///   missing.
    public convenience init(
        url: URL, start: Start, adoptingForeignDatabase: Bool = false, synchronous: SynchronousMode? = nil,
        automaticCheckpoints: Bool = true, groupCommit: Bool = false, debugLog: (@Sendable (String) -> Void)? = nil
    ) throws {
        let template: URL?
        switch start {
        case .sample: template = DatabaseTemplate.isInstalled(at: url) ? nil : try Self.bundledTemplateURL()
        case .empty: template = nil
        }
        try self.init(
            url: url, template: template, adoptingForeignDatabase: adoptingForeignDatabase, synchronous: synchronous,
            automaticCheckpoints: automaticCheckpoints, groupCommit: groupCommit, debugLog: debugLog)
    }

    /// Opens the database at `url`, installing `template` there first if no
    /// database is there yet, then applying pending migrations.
    ///
    /// The file is shared through a `DatabasePool` in WAL mode: reads run
    /// beside each other and beside the write.
    ///
    /// - Parameters:
    ///   - url: The database file. Its directory must exist.
    ///   - template: The database to start from, usually
    ///     ``bundledTemplateURL()``; nil starts from an empty database.
    ///   - adoptingForeignDatabase: Open a SQLite file that another
    ///     application made (see ``DatabaseContents``) and add the apps'
    ///     tables beside its own. Without it, such a file is refused,
    ///     unchanged.
    ///   - synchronous: How often a commit waits for the disk (see
    ///     `Configuration.synchronous`); nil keeps SQLite's default, `full`:
    ///     every commit that returned survives a power failure. `normal`
    ///     makes single writes several times faster and survives the
    ///     process being killed, not a power failure.
    ///   - automaticCheckpoints: Whether a commit checkpoints the
    ///     write-ahead log once it is 1,000 pages long (SQLite's default).
    ///     Pass false while another program checkpoints the database, such
    ///     as Litestream replicating it.
    ///   - groupCommit: Whether writes that end together share one wait
    ///     for the disk (`Configuration.groupCommit`): with `full` (or
    ///     nil), each write still returns only once it is on the disk, and
    ///     many writers at once (a server) commit several times faster.
    ///     Ignored with `normal`, which does not wait for the disk.
    ///   - debugLog: Receives every statement and error.
    /// - Throws: ``ForeignDatabaseError`` (another application's database:
    ///   nothing was changed), ``DatabaseFileError`` (template or location
    ///   unusable), `SQLiteError` (not a database, cannot open),
    ///   `MigrationError` (made by a newer version, or a migration failed).
    public convenience init(
        url: URL, template: URL?, adoptingForeignDatabase: Bool = false, synchronous: SynchronousMode? = nil,
        automaticCheckpoints: Bool = true, groupCommit: Bool = false, debugLog: (@Sendable (String) -> Void)? = nil
    ) throws {
        do {
            if !adoptingForeignDatabase { try Self.refuseForeignDatabase(at: url) }
            if let template {
                let outcome = try DatabaseTemplate.install(from: template, to: url)
                if outcome == .installed { debugLog?("installed \(template.path) at \(url.path)") }
            }
            var configuration = Self.configuration(debugLog: debugLog)
            configuration.synchronous = synchronous
            configuration.groupCommit = groupCommit && synchronous != .normal && synchronous != .off
            if !automaticCheckpoints { configuration.automaticCheckpointFrames = 0 }
            let pool = try DatabasePool(path: url.path, configuration: configuration)
            try self.init(writer: pool, path: url.path, debugLog: debugLog)
        } catch {
            debugLog?("error: \(error)")
            throw error
        }
    }

    /// Takes the open connections and migrates the database; closes them on
    /// failure.
    private init(writer: any DatabaseWriter, path: String, debugLog: (@Sendable (String) -> Void)?) throws {
        self.writer = writer
        self.path = path
        // Right after the connections opened it: the file they hold.
        openedFile = path == ":memory:" ? nil : FileIdentity(path: path)
        self.debugLog = debugLog
        isReadOnly = false
        do {
            let unavailable = try writer.writeWithoutTransaction { db in try Self.migrate(db, log: debugLog) }
            unavailableApps = unavailable
            // Each transaction of combined writes folds the rows its writes
            // added or changed once, at its end: FTS5 writes its pending
            // words at every savepoint, so folding inside each write's own
            // savepoint would write them once for each write.
            let apps = Self.apps.filter { unavailable[$0.app] == nil }
            let foldPending: @Sendable (Database) throws -> Void = { db in
                for app in apps { try app.foldPending(db) }
            }
            combinedWrites = WriteCombiner(writer, finishing: foldPending)
            // Rows another program wrote (the sample's, a foreign tool's)
            // are folded now rather than at the first read, so that read
            // replicas see them too. Not fatal: a read folds them later.
            let pending = try? writer.read { db in try apps.contains { try !$0.isFolded(db) } }
            if pending == true { _ = try? writer.write(foldPending) }
        } catch {
            try? writer.close()
            throw error
        }
    }

    /// Opens a read replica of a records database through a registered
    /// SQLite VFS that serves another machine's database, such as
    /// Litestream's read-replica VFS (registered with SQLiteStore's
    /// `LoadableExtension.loadForProcess(at:entryPoint:)`).
    ///
    /// The replica is opened read-only and never migrated: its schema is
    /// the primary's, which must be the one this version of the app
    /// expects. Reads see the primary's commits as the VFS brings them in;
    /// every write fails with SQLite's read-only error.
    ///
    /// - Parameters:
    ///   - path: The name the VFS opens (Litestream's ignores it and reads
    ///     the replica it was configured with).
    ///   - vfs: The VFS's registered name.
    ///   - staleConnectionCheck: Replaces the connection when it stops
    ///     following the primary (a VFS's own check, such as Litestream's);
    ///     nil for none.
    ///   - debugLog: Receives every statement and error.
    /// - Throws: `SQLiteError` (no such VFS, the replica cannot be read),
    ///   ``ReadReplicaError`` when the replica's schema is not this
    ///   version's.
    public convenience init(
        readReplicaAt path: String, vfs: String, staleConnectionCheck: StaleConnectionCheck? = nil,
        debugLog: (@Sendable (String) -> Void)? = nil
    ) throws {
        var configuration = Self.configuration(debugLog: debugLog)
        configuration.vfs = vfs
        configuration.staleConnectionCheck = staleConnectionCheck
        configuration.isReadOnly = true
        configuration.createsMissingFile = false
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try self.init(readOnly: queue, path: path, debugLog: debugLog)
    }

    /// Takes a read-only connection and checks that its schema is this
    /// version's; closes it on failure.
    private init(readOnly writer: any DatabaseWriter, path: String, debugLog: (@Sendable (String) -> Void)?) throws {
        self.writer = writer
        combinedWrites = WriteCombiner(writer)
        self.path = path
        self.debugLog = debugLog
        isReadOnly = true
        // A replica has no file of its own at its path to watch.
        openedFile = nil
        unavailableApps = [:]
        do {
            let pending = try writer.read { db in try Self.migrator.pendingIdentifiers(in: db) }
            guard pending.isEmpty else {
                throw ReadReplicaError(
                    message: "the replica's database lacks \(pending.count) migration(s) this version of records "
                        + "applies (\(pending.prefix(3).joined(separator: ", "))\(pending.count > 3 ? ", …" : "")): "
                        + "upgrade and start the primary first, so that it migrates the database, then the replicas")
            }
        } catch {
            try? writer.close()
            throw error
        }
    }

    /// A private, in-memory database with the app's schema and no rows, for
    /// tests and previews.
    public static func inMemory() throws -> AppDatabase {
        try AppDatabase(
            writer: DatabaseQueue.inMemory(configuration: configuration(debugLog: nil)), path: ":memory:",
            debugLog: nil)
    }

    /// Why an app cannot use this database (its migration refused the
    /// table it found), or nil when it can.
    public func unavailability(of app: App) -> AppUnavailableError? { unavailableApps[app] }

    /// Applies every pending migration. When an app's migration refuses
    /// the table it found, that app's pending migrations are left out and
    /// the others applied.
    ///
    /// - Returns: The apps left out, with why.
    static func migrate(_ db: Database, log: (@Sendable (String) -> Void)?) throws -> [App: AppUnavailableError] {
        let pendingBefore = try Self.migrator.pendingIdentifiers(in: db)
        var unavailable: [App: AppUnavailableError] = [:]
        var leftOut = Set<String>()
        while true {
            var attempt = Migrator()
            attempt.register(sharedMigrations)
            for group in migrationGroups {
                attempt.register(group.migrations.filter { !leftOut.contains($0.identifier) })
            }
            do {
                try attempt.migrate(db)
                break
            } catch let error as MigrationError {
                guard case .migrationFailed(let identifier) = error.kind,
                    let refusal = error.underlyingError as? any TableRefusal,
                    let group = migrationGroups.first(where: { $0.migrations.map(\.identifier).contains(identifier) }),
                    unavailable[group.app] == nil
                else { throw error }
                unavailable[group.app] = AppUnavailableError(app: group.app, reason: String(describing: refusal))
                let pending = Set(try attempt.pendingIdentifiers(in: db))
                leftOut.formUnion(group.migrations.map(\.identifier).filter { pending.contains($0) })
                log?("left out the \(group.app.rawValue) migrations: \(refusal)")
            }
        }
        let pendingAfter = Set(try Self.migrator.pendingIdentifiers(in: db))
        let applied = pendingBefore.filter { !pendingAfter.contains($0) }
        if !applied.isEmpty { log?("applied migrations: \(applied.joined(separator: ", "))") }
        return unavailable
    }

    /// How long a command waits for another program's lock before it fails
    /// with ``ResultCode/busy``.
    public static let lockWaitLimit: Duration = .seconds(60)

    /// The connection settings: every connection (the writer and each
    /// reader) gets the search function, and waits up to a minute for
    /// another process's lock (the library's default is five seconds): a
    /// command that only has to wait its turn behind other writers, such as
    /// a large picture being stored, should wait, not fail. With a log,
    /// every connection reports its statements (never the bound values).
    static func configuration(debugLog: (@Sendable (String) -> Void)?) -> Configuration {
        var configuration = Configuration()
        configuration.label = applicationName
        configuration.busyTimeout = lockWaitLimit
        configuration.prepareDatabase = { db in
            // Temporary tables, sorts and statement journals stay in memory:
            // a file SQLite makes in TMPDIR for them lives, between its
            // creation and its unlinking, long enough for a process killed
            // then to leave it behind (the crash test found two).
            try db.execute("PRAGMA temp_store = MEMORY")
            try SearchFolding.register(on: db)
            if let debugLog { db.trace { event in debugLog("SQL: \(event.sql)") } }
        }
        return configuration
    }

    /// Closes the connections; the stores throw afterwards.
    public func close() { try? writer.close() }

    // MARK: - Access for the stores

    /// Runs `body` with a connection, for reads, on the calling thread (for
    /// tests and the migrations' checks).
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try logged { try writer.read(body) }
    }

    /// Runs `body` in a transaction on the calling thread: all of its
    /// changes or none.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        try logged { try writer.write(body) }
    }

    /// Runs `body` for one app's reads, on a reader connection's own
    /// thread, never the caller's: it sees one committed state of the
    /// database throughout.
    ///
    /// - Throws: ``AppUnavailableError`` when the app's migration refused
    ///   its table.
    func read<T: Sendable>(for app: App, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        if let reason = unavailableApps[app] { throw reason }
        do {
            return try await writer.read(body)
        } catch {
            debugLog?("error: \(error)")
            throw error
        }
    }

    /// Runs `body` in a transaction for one app's changes, on the writer
    /// connection's own thread, never the caller's. Writes that wait for
    /// the writer together share one transaction, each in a savepoint of
    /// its own (``combinedWrites``): one that throws is undone alone, and
    /// each returns once its transaction committed and is on the disk.
    ///
    /// - Throws: ``AppUnavailableError`` when the app's migration refused
    ///   its table.
    func write<T: Sendable>(for app: App, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        if let reason = unavailableApps[app] { throw reason }
        do {
            // The rows this write adds or changes get their folded search
            // text and sort keys in the same transaction, at its end (see
            // ``combinedWrites``), so that a read replica, which cannot
            // fold them, finds them (a read here would fold them anyway).
            return try await combinedWrites.write(body)
        } catch {
            debugLog?("error: \(error)")
            throw error
        }
    }

    /// Runs `read` for one app's reads once every row of `folded` is
    /// folded: in a reader (the usual case), else in a write that first
    /// folds the rows another program wrote since, so that a read never
    /// misses a row for want of its folded text or keys. A read replica
    /// cannot fold: it reads what the primary folded.
    func readFolded<T: Sendable>(
        for app: App, _ folded: some FoldedColumns, _ read: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        let found = try await self.read(for: app) { db in try folded.isComplete(db) ? read(db) : nil }
        if let found { return found }
        if isReadOnly { return try await self.read(for: app, read) }
        return try await write(for: app) { db in
            try folded.fill(db)
            return try read(db)
        }
    }

    /// Runs `body` for reads of the tables the apps share, on a reader
    /// connection's own thread: one committed state throughout.
    func sharedRead<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await writer.read(body)
        } catch {
            debugLog?("error: \(error)")
            throw error
        }
    }

    /// Runs `body` in a transaction for changes of the tables the apps
    /// share, on the writer connection's own thread; it may share its
    /// transaction with other waiting writes, as ``write(for:_:)`` does.
    func sharedWrite<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await combinedWrites.write(body)
        } catch {
            debugLog?("error: \(error)")
            throw error
        }
    }

    private func logged<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            debugLog?("error: \(error)")
            throw error
        }
    }
}

/// An app cannot use the database: its migration refused the table it
/// found, which was left as it was. The other apps work as usual.
public struct AppUnavailableError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The app.
    public let app: AppDatabase.App
    /// What its migration said.
    public let reason: String

    /// Creates an error.
    public init(app: AppDatabase.App, reason: String) {
        self.app = app
        self.reason = reason
    }

    public var description: String {
        let others = AppDatabase.App.allCases.filter { $0 != app }.map(\.displayName)
        let list = others.dropLast().joined(separator: ", ") + " and " + (others.last ?? "")
        return "the \(app.displayName) app cannot use this database: \(reason) (\(list) work as usual)"
    }
}

/// An app's migration refusing the table it found, rather than failing.
/// ``AppDatabase`` then leaves that app out and opens the others.
protocol TableRefusal: Error, CustomStringConvertible {}

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
        try db.transaction { db in try db.execute(sql: sql) }
        try db.execute("VACUUM INTO ?", arguments: [destination.path])
        db.close()
    }
}

/// Why a read replica cannot be served: its schema is not the one this
/// version of the app expects.
public struct ReadReplicaError: Error, Sendable, CustomStringConvertible {
    /// What is wrong and what to do.
    public let message: String
    public var description: String { message }
}
