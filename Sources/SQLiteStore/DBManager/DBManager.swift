import Foundation

/// The easy entry point: one database file, opened once, shared safely by
/// the whole app.
///
/// `DBManager` is the original tutorials' database class done right. Created with a file
/// name, it installs the app's bundled template database on first run
/// (atomically, see ``DatabaseTemplate``), upgrades it with your
/// ``Migrator``, and keeps one connection open until ``close()``. Every call
/// is serialized, so a single manager can be used from any thread or task.
///
/// The People app of the original tutorials, with bound values instead of SQL built from
/// strings:
///
/// ```swift
/// let manager = try DBManager(
///     databaseFilename: "sampledb.sqlite",
///     template: Bundle.main.url(forResource: "sampledb", withExtension: "sqlite"))
///
/// // Add ("recordIDToEdit == -1"), then edit, a person.
/// let insert = try manager.executeQuery(
///     "INSERT INTO peopleInfo (firstname, lastname, age) VALUES (?, ?, ?)",
///     arguments: ["Grace", "O'Hopper", 85])
/// let id = insert.lastInsertedRowID
/// try manager.executeQuery("UPDATE peopleInfo SET age = ? WHERE peopleInfoID = ?", arguments: [86, id])
///
/// // List everyone; NULL ages stay in place.
/// let people = try manager.loadData("SELECT peopleInfoID, firstname, lastname, age FROM peopleInfo")
/// for row in people {
///     let name: String = try row["firstname"]
///     let age: Int? = try row["age"]
///     print(name, age.map(String.init) ?? "unknown")
/// }
///
/// // Swipe to delete.
/// let deleted = try manager.executeQuery("DELETE FROM peopleInfo WHERE peopleInfoID = ?", arguments: [id])
/// assert(deleted.affectedRows == 1)
/// ```
///
/// Errors are thrown as ``SQLiteError`` (and ``DatabaseFileError`` or
/// ``MigrationError`` when opening), never printed and ignored. For a log of
/// every statement and error, like the Users app's debug switch, set
/// ``debugLog``.
///
/// For several statements that must succeed or fail together, use
/// ``transaction(_:_:)``; for anything else the ``Database`` API offers,
/// ``withConnection(_:)``.
///
/// The manager may be called again from inside one of its own closures
/// (``transaction(_:_:)``, ``withConnection(_:)``): the nested call runs at
/// once on the same connection, inside the closure's transaction if there
/// is one, rather than waiting for itself.
public final class DBManager: Sendable {
    /// The database file's path, or `:memory:` for ``inMemory(migrator:configuration:debugLog:)``.
    public let path: String
    private let state: State

    /// The connection and the log, behind a recursive lock: the thread
    /// running one of the manager's closures may call the manager again
    /// (the call runs on the same connection, inside the closure's
    /// transaction if there is one), where a plain mutex would trap on the
    /// recursive lock; other threads wait for the lock.
    ///
    /// `@unchecked Sendable` because the compiler cannot see the lock. It is
    /// safe: every property is read and written only while `lock` is held,
    /// and never across a call to a closure (each access is short), so a
    /// nested call on the same thread cannot overlap an access either.
    private final class State: @unchecked Sendable {
        let lock = NSRecursiveLock()
        var database: Database?
        var log: (@Sendable (String) -> Void)?
        /// How many `withConnection` calls are running, nested, on the
        /// thread holding the lock; errors are logged by the outermost.
        var depth = 0

        init(database: Database, log: (@Sendable (String) -> Void)?) {
            self.database = database
            self.log = log
        }

        func locked<R>(_ body: () throws -> R) rethrows -> R {
            lock.lock()
            defer { lock.unlock() }
            return try body()
        }
    }

    /// Opens the database file `databaseFilename` in `directory`, installing
    /// `template` there first if no database is there yet, then applies the
    /// migrator's pending migrations.
    ///
    /// - Parameters:
    ///   - databaseFilename: The file's name, such as `"sampledb.sqlite"`.
    ///   - template: A pre-populated database shipped with the app, copied
    ///     when the file does not exist (or is empty). Without one, a new
    ///     file starts empty and the migrator creates the schema.
    ///   - directory: Where the file lives; by default the platform's data
    ///     directory for this app (see ``DataDirectory``), named after the
    ///     bundle identifier or the process, created if needed.
    ///   - migrator: Migrations to apply on open.
    ///   - configuration: How the connection is opened.
    ///   - debugLog: Receives every statement and every error (see
    ///     ``debugLog``).
    public convenience init(
        databaseFilename: String, template: URL? = nil, directory: URL? = nil, migrator: Migrator? = nil,
        configuration: Configuration = Configuration(), debugLog: (@Sendable (String) -> Void)? = nil
    ) throws {
        try DataDirectory.validateComponent(databaseFilename, what: "database file name")
        let folder: URL
        if let directory {
            folder = directory
        } else {
            folder = try DataDirectory.create(forApplication: Self.defaultApplicationName)
        }
        try self.init(
            databaseURL: folder.appendingPathComponent(databaseFilename), template: template, migrator: migrator,
            configuration: configuration, debugLog: debugLog)
    }

    /// Opens the database at `databaseURL`, installing `template` there first
    /// if no database is there yet, then applies the migrator's pending
    /// migrations. The file's directory must exist.
    public convenience init(
        databaseURL: URL, template: URL? = nil, migrator: Migrator? = nil,
        configuration: Configuration = Configuration(), debugLog: (@Sendable (String) -> Void)? = nil
    ) throws {
        // The trailing slash of `dir/` is kept: it names a directory, never a file.
        try self.init(
            path: DestinationPath.path(of: databaseURL), template: template, migrator: migrator,
            configuration: configuration, debugLog: debugLog)
    }

    /// A manager of a private in-memory database, gone when it is closed or
    /// released; for tests and previews.
    public static func inMemory(
        migrator: Migrator? = nil, configuration: Configuration = Configuration(),
        debugLog: (@Sendable (String) -> Void)? = nil
    ) throws -> DBManager {
        try DBManager(
            path: ":memory:", template: nil, migrator: migrator, configuration: configuration, debugLog: debugLog)
    }

    private init(
        path: String, template: URL?, migrator: Migrator?, configuration: Configuration,
        debugLog: (@Sendable (String) -> Void)?
    ) throws {
        self.path = path
        do {
            if let template {
                let destination = URL(fileURLWithPath: path)
                let outcome = try DatabaseTemplate.install(from: template, to: destination)
                if outcome == .installed { debugLog?("installed \(template.path) at \(path)") }
            }
            let database = try Database(path: path, configuration: configuration)
            if let debugLog { Self.installTrace(on: database, log: debugLog) }
            if let migrator {
                let applied = try migrator.migrate(database)
                if !applied.isEmpty { debugLog?("applied migrations: \(applied.joined(separator: ", "))") }
            }
            state = State(database: database, log: debugLog)
        } catch {
            debugLog?("error: \(error)")
            throw error
        }
    }

    /// The name of the data directory used when none is given: the main
    /// bundle's identifier, or else the process's name.
    public static var defaultApplicationName: String {
        if let identifier = Bundle.main.bundleIdentifier, !identifier.isEmpty { return identifier }
        return ProcessInfo.processInfo.processName
    }

    // MARK: - Running SQL

    /// Runs a query and returns all its rows, typed, with the column names.
    ///
    /// The SQL must hold one statement; values go in `arguments`, never in
    /// the SQL text.
    ///
    /// ```swift
    /// let adults = try manager.loadData(
    ///     "SELECT * FROM peopleInfo WHERE age >= ? ORDER BY peopleInfoID DESC", arguments: [18])
    /// ```
    @_disfavoredOverload
    public func loadData(_ sql: String, arguments: StatementArguments = StatementArguments()) throws -> QueryResult {
        try withConnection { db in
            let cursor = try db.cachedStatement(sql).fetchCursor(arguments: arguments)
            var rows: [[SQLiteValue]] = []
            while let row = try cursor.next() { rows.append(row.values) }
            return QueryResult(columnNames: cursor.columnNames, rows: rows)
        }
    }

    /// Runs SQL that changes the database (INSERT, UPDATE, DELETE, schema
    /// changes; several statements separated by semicolons are allowed) and
    /// reports what it did. Rows a statement returns are discarded.
    @_disfavoredOverload
    @discardableResult
    public func executeQuery(_ sql: String, arguments: StatementArguments = StatementArguments()) throws
        -> ExecutionResult
    {
        try withConnection { db in
            let changesBefore = db.totalChangesCount
            try db.execute(sql, arguments: arguments)
            return ExecutionResult(
                affectedRows: db.totalChangesCount - changesBefore, lastInsertedRowID: db.lastInsertedRowID)
        }
    }

    /// Runs `body` in a transaction on the connection: committed when it
    /// returns, rolled back when it throws.
    ///
    /// ```swift
    /// try manager.transaction { db in
    ///     try db.execute("DELETE FROM CONTACTS WHERE ID = ?", arguments: [id])
    ///     try db.execute("INSERT INTO CONTACTS (NAME) VALUES (?)", arguments: ["Ann"])
    /// }
    /// ```
    public func transaction<T: Sendable>(
        _ kind: TransactionKind = .immediate, _ body: (Database) throws -> T
    ) throws -> T {
        try withConnection { db in try db.transaction(kind, body) }
    }

    /// Gives `body` exclusive use of the connection for its duration. Other
    /// threads calling the manager wait. Do not keep the database, nor rows
    /// or statements from it, beyond `body`.
    ///
    /// `body` may call the manager again: the call runs on the same
    /// connection, inside `body`'s transaction if there is one (a nested
    /// ``transaction(_:_:)`` throws, as transactions do not nest: use
    /// ``Database/savepoint(_:)``).
    ///
    /// The manager owns the connection: if `body` closes it
    /// (``Database/close()`` or the manager's ``close()``), the manager is
    /// closed from then on and the call throws a ``ResultCode/misuse`` error
    /// (a transaction open at that moment was rolled back).
    public func withConnection<T: Sendable>(_ body: (Database) throws -> T) throws -> T {
        try state.locked {
            state.depth += 1
            defer { state.depth -= 1 }
            do {
                guard let database = state.database else {
                    throw SQLiteError(code: .misuse, message: "the database \(path) is closed")
                }
                defer {
                    if database.isClosed, state.database != nil {
                        state.database = nil
                        state.log?("closed \(path)")
                    }
                }
                let result = try body(database)
                if database.isClosed {
                    throw SQLiteError.misuse(
                        "the connection to \(path) was closed inside the closure; the manager is closed now")
                }
                return result
            } catch {
                if state.depth == 1 { state.log?("error: \(error)") }
                throw error
            }
        }
    }

    // MARK: - Connection

    /// Whether the connection is open (until ``close()``).
    public var isConnected: Bool {
        state.locked { state.database != nil }
    }

    /// Closes the connection. Later calls throw; closing twice is harmless.
    /// Called from inside one of the manager's closures, it closes the
    /// connection that closure uses, and that closure's call throws.
    public func close() {
        state.locked {
            guard let database = state.database else { return }
            state.database = nil
            database.close()
            state.log?("closed \(path)")
        }
    }

    /// Receives every statement the connection runs (with parameters as
    /// written, never the bound values, which may be private) and every
    /// error, as one-line messages. Nil (the default) logs nothing.
    ///
    /// ```swift
    /// manager.debugLog = { message in print("DB:", message) }
    /// ```
    public var debugLog: (@Sendable (String) -> Void)? {
        get { state.locked { state.log } }
        set {
            state.locked {
                state.log = newValue
                guard let database = state.database else { return }
                if let newValue {
                    Self.installTrace(on: database, log: newValue)
                } else {
                    database.trace(nil)
                }
            }
        }
    }

    private static func installTrace(on database: Database, log: @escaping @Sendable (String) -> Void) {
        database.trace { event in log("SQL: \(event.sql)") }
    }
}

/// What ``DBManager/executeQuery(_:arguments:)-(String,_)`` did.
public struct ExecutionResult: Sendable, Equatable {
    /// Rows inserted, updated or deleted by the SQL, including those changed
    /// by triggers it fired; 0 for schema changes and queries.
    public let affectedRows: Int
    /// The rowid of the most recent successful INSERT on the connection (the
    /// new record's ID after an INSERT); unchanged by other statements, 0 if
    /// there was none.
    public let lastInsertedRowID: Int64

    /// Creates a result.
    public init(affectedRows: Int, lastInsertedRowID: Int64) {
        self.affectedRows = affectedRows
        self.lastInsertedRowID = lastInsertedRowID
    }
}
