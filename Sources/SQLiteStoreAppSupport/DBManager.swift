import Foundation
import SQLiteStore

/// The easy entry point: one database file, opened once, shared safely by
/// the whole app.
///
/// `DBManager` is the original tutorials' database class done right. Created with a file
/// name, it installs the app's bundled template database on first run
/// (atomically, see ``DatabaseTemplate``), upgrades it with your
/// `Migrator`, and keeps one connection open until ``close()``. The
/// connection is a `DatabaseQueue`'s: every call waits for its turn and runs
/// alone, so a single manager can be used from any thread or task.
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
/// Errors are thrown as `SQLiteError` (and ``DatabaseFileError`` or
/// `MigrationError` when opening), never printed and ignored. For a log of
/// every statement and error, like the Users app's debug switch, set
/// ``debugLog``.
///
/// For several statements that must succeed or fail together, use
/// ``transaction(_:_:)``; for anything else the `Database` API offers,
/// ``withConnection(_:)``.
///
/// Inside one of its own closures (``transaction(_:_:)``,
/// ``withConnection(_:)``), use the `Database` the closure receives: calling
/// the manager itself there throws a `SQLiteError` with the code
/// `ResultCode.misuse`, rather than waiting for itself forever.
///
/// For many concurrent readers, or `async` access that never blocks a
/// thread, use SQLiteStore's `DatabasePool` or `DatabaseQueue` directly.
public final class DBManager: Sendable {
    /// The database file's path, or `:memory:` for ``inMemory(migrator:configuration:debugLog:)``.
    public let path: String
    /// Serializes the calls and owns the connection.
    private let queue: DatabaseQueue
    private let state = ManagerState()

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
    ///
    /// - Parameters:
    ///   - databaseURL: The database file.
    ///   - template: A pre-populated database shipped with the app, copied
    ///     when the file does not exist (or is empty).
    ///   - migrator: Migrations to apply on open.
    ///   - configuration: How the connection is opened.
    ///   - debugLog: Receives every statement and every error (see
    ///     ``debugLog``).
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
    ///
    /// - Parameters:
    ///   - migrator: Migrations to apply on open.
    ///   - configuration: How the connection is opened.
    ///   - debugLog: Receives every statement and every error (see
    ///     ``debugLog``).
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
        state.withLock { $0.log = debugLog }
        do {
            if let template {
                let destination = URL(fileURLWithPath: path)
                let outcome = try DatabaseTemplate.install(from: template, to: destination)
                if outcome == .installed { debugLog?("installed \(template.path) at \(path)") }
            }
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            debugLog?("error: \(error)")
            throw error
        }
        if let migrator {
            do {
                let applied = try withConnection { db in try migrator.migrate(db) }
                if !applied.isEmpty { debugLog?("applied migrations: \(applied.joined(separator: ", "))") }
            } catch {
                close()
                throw error
            }
        }
    }

    /// The name of the data directory used when none is given: the main
    /// bundle's identifier, or else the process's name.
    public static var defaultApplicationName: String {
        if let identifier = Bundle.main.bundleIdentifier, !identifier.isEmpty { return identifier }
        return ProcessInfo.processInfo.processName
    }

    // MARK: - Running SQL

    /// Runs a query given as SQL text, used as written, and returns all its
    /// rows, typed, with the column names.
    ///
    /// The SQL must hold one statement; values go in `arguments`, never in
    /// the SQL text. A string literal without the `sql:` label is an `SQL`
    /// and goes to ``loadData(_:arguments:)``, which also binds what it
    /// interpolates.
    ///
    /// ```swift
    /// let query = "SELECT * FROM peopleInfo WHERE age >= ? ORDER BY peopleInfoID DESC"
    /// let adults = try manager.loadData(sql: query, arguments: [18])
    /// ```
    ///
    /// - Parameters:
    ///   - sql: One statement.
    ///   - arguments: The values of its parameters.
    public func loadData(sql: String, arguments: StatementArguments = StatementArguments()) throws -> QueryResult {
        try load { db in try db.fetchCursor(sql: sql, arguments: arguments) }
    }

    /// Runs SQL text, used as written, that changes the database (INSERT,
    /// UPDATE, DELETE, schema changes; several statements separated by
    /// semicolons are allowed) and reports what it did. Rows a statement
    /// returns are discarded. A string literal without the `sql:` label goes
    /// to ``executeQuery(_:arguments:)``.
    ///
    /// Each call stands alone: SQL that begins a transaction must also end
    /// it (a transaction left open is rolled back and the call throws); use
    /// ``transaction(_:_:)`` for statements that belong together.
    ///
    /// - Parameters:
    ///   - sql: One statement, or several separated by semicolons.
    ///   - arguments: The values of its parameters.
    @discardableResult
    public func executeQuery(sql: String, arguments: StatementArguments = StatementArguments()) throws
        -> ExecutionResult
    {
        try execute { db in try db.execute(sql: sql, arguments: arguments) }
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
    ///
    /// Use the `Database` that `body` receives: calling the manager from
    /// inside `body` throws.
    ///
    /// - Parameters:
    ///   - kind: How the transaction begins; `.immediate` (the default)
    ///     takes the write lock at once.
    ///   - body: The work, given the connection.
    public func transaction<T: Sendable>(
        _ kind: TransactionKind = .immediate, _ body: (Database) throws -> T
    ) throws -> T {
        try access("transaction") { db in
            try db.transaction(kind) { db in
                let result = try body(db)
                // Inside the transaction, so that it is rolled back.
                try checkNotClosedInside()
                return result
            }
        }
    }

    /// Gives `body` exclusive use of the connection for its duration. Other
    /// threads calling the manager wait. Do not keep the database, nor rows
    /// or statements from it, beyond `body`.
    ///
    /// `body` must use the `Database` it receives: calling the manager again
    /// from inside `body` throws a `SQLiteError` with the code
    /// `ResultCode.misuse` (waiting for itself would never end). A
    /// transaction that `body` begins must end in `body`; one left open is
    /// rolled back and the call throws.
    ///
    /// The manager owns the connection: if `body` closes it (`Database`'s
    /// `close()`, or the manager's ``close()``), the manager is closed from
    /// then on and the call throws a `ResultCode.misuse` error (a
    /// transaction open at that moment was rolled back).
    ///
    /// - Parameter body: The work, given the connection.
    public func withConnection<T: Sendable>(_ body: (Database) throws -> T) throws -> T {
        try access("withConnection", body)
    }

    /// Reads every row of the cursor that `query` opens.
    private func load(_ query: (Database) throws -> RowCursor) throws -> QueryResult {
        try access("loadData") { db in
            let cursor = try query(db)
            var rows: [[SQLiteValue]] = []
            while let row = try cursor.next() { rows.append(row.values) }
            return QueryResult(columnNames: cursor.columnNames, rows: rows)
        }
    }

    /// Runs `statements` and counts the rows they changed.
    private func execute(_ statements: (Database) throws -> Void) throws -> ExecutionResult {
        try access("executeQuery") { db in
            let changesBefore = db.totalChangesCount
            try statements(db)
            return ExecutionResult(
                affectedRows: db.totalChangesCount - changesBefore, lastInsertedRowID: db.lastInsertedRowID)
        }
    }

    /// Runs `body` as one access of the queue, marked as this manager's for
    /// the nesting check, with the debug log, and with the manager's rules
    /// for closing.
    private func access<T>(_ method: String, _ body: (Database) throws -> T) throws -> T {
        let owner = ObjectIdentifier(self)
        if ReentrancyGuard.isInsideAccess(of: owner) {
            throw SQLiteError(
                code: .misuse,
                message: "DBManager.\(method) was called from inside one of the same manager's closures, where "
                    + "it would wait for itself; use the Database that the closure received")
        }
        if state.withLock({ $0.isClosed }) {
            throw SQLiteError(code: .misuse, message: "the database \(path) is closed")
        }
        var closedInside = false
        do {
            return try queue.writeWithoutTransaction { db in
                try ReentrancyGuard.withAccess(of: owner) {
                    updateTrace(on: db)
                    do {
                        let result = try body(db)
                        try checkNotClosedInside()
                        if db.isClosed { throw closedConnectionError() }
                        return result
                    } catch {
                        if db.isClosed {
                            closedInside = true
                            throw closedConnectionError()
                        }
                        throw error
                    }
                }
            }
        } catch {
            if closedInside { state.withLock { $0.isClosed = true } }
            let (log, mustFinishClose) = state.withLock { state in
                let pending = state.isClosed && !state.isCloseFinished
                if pending { state.isCloseFinished = true }
                return (state.log, pending)
            }
            log?("error: \(error)")
            if mustFinishClose { finishClose(log: log) }
            throw error
        }
    }

    private func closedConnectionError() -> SQLiteError {
        SQLiteError(
            code: .misuse, message: "the connection to \(path) was closed inside the closure; the manager is closed now"
        )
    }

    /// Throws when ``close()`` was called from inside the closure running
    /// now. Accesses run one at a time, so the flag is this access's; a
    /// close from another thread waits for the access instead.
    private func checkNotClosedInside() throws {
        if state.withLock({ $0.isClosedInsideAccess }) {
            throw SQLiteError(
                code: .misuse, message: "close() was called inside the closure; the manager \(path) is closed now")
        }
    }

    // MARK: - Connection

    /// Whether the connection is open (until ``close()``).
    public var isConnected: Bool {
        state.withLock { !$0.isClosed }
    }

    /// Closes the connection, after the calls in progress. Later calls
    /// throw; closing twice is harmless. Called from inside one of the
    /// manager's closures, it closes the manager when that closure ends, and
    /// that closure's call throws (its transaction, if any, is rolled back).
    public func close() {
        // Inside a closure, the access running it closes the queue when the
        // closure ends: closing it here would wait for that very access.
        let isInside = ReentrancyGuard.isInsideAccess(of: ObjectIdentifier(self))
        let (log, mustClose) = state.withLock { state in
            guard !state.isClosed else { return (state.log, false) }
            state.isClosed = true
            if isInside { state.isClosedInsideAccess = true } else { state.isCloseFinished = true }
            return (state.log, !isInside)
        }
        if mustClose { finishClose(log: log) }
    }

    private func finishClose(log: (@Sendable (String) -> Void)?) {
        // Not inside an access of the queue here: this cannot throw.
        try? queue.close()
        log?("closed \(path)")
    }

    /// Receives every statement the connection runs (with parameters as
    /// written, never the bound values, which may be private) and every
    /// error, as one-line messages. Nil (the default) logs nothing.
    ///
    /// ```swift
    /// manager.debugLog = { message in print("DB:", message) }
    /// ```
    public var debugLog: (@Sendable (String) -> Void)? {
        get { state.withLock { $0.log } }
        set { state.withLock { $0.log = newValue } }
    }

    /// Installs the statement trace when a log is set and removes it when
    /// none is; the trace reads the log at each statement, so a change takes
    /// effect at once where the trace is installed.
    private func updateTrace(on db: Database) {
        let (wanted, installed) = state.withLock { ($0.log != nil, $0.isTraceInstalled) }
        guard wanted != installed else { return }
        if wanted {
            let state = self.state
            db.trace { event in state.withLock { $0.log }?("SQL: \(event.sql)") }
        } else {
            db.trace(nil)
        }
        state.withLock { $0.isTraceInstalled = wanted }
    }
}

/// A manager's mutable state: the log and whether it is closed. Every
/// access is short and never calls out while holding the lock.
private final class ManagerState: @unchecked Sendable {
    struct Fields {
        var log: (@Sendable (String) -> Void)?
        var isTraceInstalled = false
        /// No call may start any more.
        var isClosed = false
        /// ``DBManager/close()`` was called from inside an access closure.
        var isClosedInsideAccess = false
        /// The queue was closed (or is being closed) and "closed" logged.
        var isCloseFinished = false
    }

    private let lock = NSLock()
    private var fields = Fields()

    func withLock<R>(_ body: (inout Fields) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&fields)
    }
}

/// What ``DBManager/executeQuery(sql:arguments:)`` did.
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

// MARK: - SQL with interpolated values

extension DBManager {
    /// Runs a query and returns all its rows, binding the values the SQL
    /// interpolates.
    ///
    /// ```swift
    /// let adults = try manager.loadData("SELECT * FROM peopleInfo WHERE age >= \(18)")
    /// ```
    public func loadData(_ sql: SQL, arguments: StatementArguments = StatementArguments()) throws -> QueryResult {
        try load { db in try db.fetchCursor(sql, arguments: arguments) }
    }

    /// Runs SQL that changes the database, binding the values it
    /// interpolates, and reports what it did.
    ///
    /// ```swift
    /// try manager.executeQuery("DELETE FROM peopleInfo WHERE peopleInfoID = \(id)")
    /// ```
    @discardableResult
    public func executeQuery(_ sql: SQL, arguments: StatementArguments = StatementArguments()) throws
        -> ExecutionResult
    {
        try execute { db in try db.execute(sql, arguments: arguments) }
    }
}

// MARK: - SQL text without its label

extension DBManager {
    /// Unavailable: SQL text in a `String` is labelled `sql:`.
    @available(
        *, unavailable, renamed: "loadData(sql:arguments:)",
        message:
            "SQL text in a String is used as written; label it sql:, or write the query as an SQL literal, which binds its values"
    )
    @_disfavoredOverload
    public func loadData(_ sql: String, arguments: StatementArguments = StatementArguments()) throws -> QueryResult {
        try loadData(sql: sql, arguments: arguments)
    }

    /// Unavailable: SQL text in a `String` is labelled `sql:`.
    @available(
        *, unavailable, renamed: "executeQuery(sql:arguments:)",
        message:
            "SQL text in a String is used as written; label it sql:, or write the query as an SQL literal, which binds its values"
    )
    @_disfavoredOverload
    @discardableResult
    public func executeQuery(_ sql: String, arguments: StatementArguments = StatementArguments()) throws
        -> ExecutionResult
    {
        try executeQuery(sql: sql, arguments: arguments)
    }
}
