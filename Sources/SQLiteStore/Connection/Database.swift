import Foundation

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// One SQLite connection.
///
/// ```swift
/// let db = try Database(path: "/path/to/people.sqlite")
/// try db.execute("""
///     CREATE TABLE IF NOT EXISTS people (
///         id INTEGER PRIMARY KEY AUTOINCREMENT,
///         name TEXT NOT NULL,
///         age INTEGER)
///     """)
/// try db.execute("INSERT INTO people (name, age) VALUES (?, ?)", arguments: ["Ada", 36])
/// let id = db.lastInsertedRowID
/// let names = try db.fetchAll(String.self, "SELECT name FROM people ORDER BY name")
/// ```
///
/// A `Database` is not thread-safe and not `Sendable`: use it from one thread
/// at a time, or share it through a serializing wrapper.
///
/// The connection closes when ``close()`` is called or the object is
/// released. Foreign keys are enforced unless the ``Configuration`` says
/// otherwise.
public final class Database {
    /// The path the database was opened with (`:memory:` for an in-memory
    /// database, empty for a temporary one).
    public let path: String
    /// The configuration the connection was opened with.
    public let configuration: Configuration
    @usableFromInline let connection: SQLiteConnection
    private let statementCache: StatementCache
    /// The SQL and statements generated for record types (see `Records/`).
    @usableFromInline let recordPlans = RecordPlans()
    var savepointDepth = 0

    /// Opens (and by default creates) the database file at `path`.
    ///
    /// A file that exists but that this process may not write (its
    /// permissions, a read-only file system) is opened read-only, as with
    /// ``Configuration/isReadOnly``: reads work, every write fails with
    /// ``ResultCode/readOnly`` naming the file, and the configuration's
    /// ``Configuration/journalMode`` is not set (it would be a write). The
    /// `-wal` and `-shm` files SQLite makes beside a WAL database for a
    /// read-only connection are removed when the process's last connection
    /// to the file closes, if the process made them and no other process
    /// uses them: left behind with the database's read-only permissions,
    /// they would make every write fail once the database is writable
    /// again.
    ///
    /// Throws a ``SQLiteError``: ``ResultCode/cantOpen`` when the file cannot
    /// be opened or created (missing directory, missing file with
    /// ``Configuration/createsMissingFile`` off or read-only, no permission),
    /// ``ResultCode/notADatabase`` when the file is not a SQLite database.
    public init(path: String, configuration: Configuration = Configuration()) throws {
        self.path = path
        self.configuration = configuration
        self.statementCache = StatementCache(capacity: max(0, configuration.statementCacheCapacity))
        var flags = SQLITE_OPEN_NOMUTEX
        let opensReadOnly = configuration.isReadOnly || Self.isUnwritableFile(path)
        if opensReadOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE
            if configuration.createsMissingFile { flags |= SQLITE_OPEN_CREATE }
        }
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, flags, configuration.vfs)
        guard code == SQLITE_OK, let handle else {
            let error = SQLiteError.from(connection: handle, code: code, sql: nil)
            sqlite3_close_v2(handle)
            throw SQLiteError(code: error.extendedCode, message: Self.openFailureMessage(error.message, path: path))
        }
        sqlite3_extended_result_codes(handle, 1)
        connection = SQLiteConnection(
            handle: handle, includesArgumentsInErrors: configuration.includesArgumentsInErrors)
        // Counted before anything is read, so before SQLite makes a -wal or
        // -shm file. Only with the default VFS, whose locks tell whether
        // another process uses the files.
        if configuration.vfs == nil || configuration.vfs == "unix", let name = sqlite3_db_filename(handle, "main") {
            connection.companionFiles = CompanionFiles.opened(String(cString: name))
        }
        // Installed once, before any statement is prepared, so that every
        // statement knows what it reads (for observation) and installing it
        // never expires cached statements later.
        sqlite3_set_authorizer(
            handle, libraryAuthorizerCallback, Unmanaged.passUnretained(connection.authorizer).toOpaque())
        do {
            try setUp()
        } catch {
            connection.close()
            throw error
        }
    }

    /// Opens a private in-memory database, gone when the connection closes.
    public static func inMemory(configuration: Configuration = Configuration()) throws -> Database {
        try Database(path: ":memory:", configuration: configuration)
    }

    /// Opens a private temporary database, stored in a file that SQLite
    /// deletes when the connection closes.
    public static func temporary(configuration: Configuration = Configuration()) throws -> Database {
        try Database(path: "", configuration: configuration)
    }

    deinit {
        statementCache.removeAll()
        connection.close()
    }

    private func setUp() throws {
        guard let handle = connection.handle else { return }
        if configuration.busyTimeoutMilliseconds > 0 {
            let waiter = BusyWaiter(timeoutMilliseconds: configuration.busyTimeoutMilliseconds)
            connection.busyWaiter = waiter
            sqlite3_busy_handler(handle, busyWaiterCallback, Unmanaged.passUnretained(waiter).toOpaque())
        }
        if let trace = configuration.trace {
            self.trace(options: configuration.traceOptions, trace)
        }
        if path != ":memory:" && !path.isEmpty {
            // Reading the header now reports a file that is not a database at
            // open time rather than at the first query.
            do {
                try execute("PRAGMA schema_version")
            } catch let error as SQLiteError where error.code == .notADatabase {
                throw SQLiteError(code: error.extendedCode, message: "file is not a database: \(path)")
            }
        }
        try execute(configuration.foreignKeysEnabled ? "PRAGMA foreign_keys = ON" : "PRAGMA foreign_keys = OFF")
        // A connection that cannot write keeps the file's journal mode.
        if let journalMode = configuration.journalMode, sqlite3_db_readonly(handle, "main") != 1 {
            let mode = try fetchOne(String.self, "PRAGMA journal_mode = \(unsafeLiteral: journalMode.rawValue)")
            guard mode?.lowercased() == journalMode.rawValue else {
                throw SQLiteError(
                    code: .error,
                    message: "could not set journal mode \(journalMode.rawValue): the database stays in "
                        + "\(mode ?? "an unknown") mode")
            }
        }
        if let synchronous = configuration.synchronous {
            // A setting of this connection, not a write: read-only ones take it too.
            try execute("PRAGMA synchronous = \(unsafeLiteral: synchronous.rawValue)")
        }
        if let frames = configuration.automaticCheckpointFrames {
            // A number, never text from outside: a negative count means zero.
            try execute("PRAGMA wal_autocheckpoint = \(unsafeLiteral: String(max(frames, 0)))")
        }
        try configuration.prepareDatabase?(self)
    }

    /// Whether `path` names an existing file that this process may not
    /// write. SQLite would open it read-only anyway, silently; knowing it
    /// from the start, the connection is read-only throughout.
    private static func isUnwritableFile(_ path: String) -> Bool {
        // In-memory, temporary and URI names are not plain paths.
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else { return false }
        guard access(path, W_OK) != 0 else { return false }
        let reason = errno
        return (reason == EACCES || reason == EROFS || reason == EPERM) && access(path, F_OK) == 0
    }

    private static func openFailureMessage(_ message: String, path: String) -> String {
        var text = "\(message): \(path)"
        let directory = (path as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        if !directory.isEmpty && !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            text += " (the directory \(directory) does not exist)"
        } else if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            text += " (it is a directory)"
        }
        return text
    }

    // MARK: - State

    /// The underlying `sqlite3*` handle, for use with the C API; nil once closed.
    public var sqliteConnection: OpaquePointer? { connection.handle }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { connection.isClosed }

    /// Closes the connection. Safe to call more than once. Statements still
    /// held elsewhere stay valid to release (they are finalized then) but
    /// throw if used.
    public func close() {
        statementCache.removeAll()
        recordPlans.removeAll()
        connection.close()
    }

    /// Rows changed by the last completed INSERT, UPDATE or DELETE
    /// (`sqlite3_changes64`).
    public var changesCount: Int {
        guard let handle = connection.handle else { return 0 }
        return Int(sqlite3_changes64(handle))
    }

    /// Rows changed by INSERT, UPDATE and DELETE statements since the
    /// connection opened (`sqlite3_total_changes64`).
    public var totalChangesCount: Int {
        guard let handle = connection.handle else { return 0 }
        return Int(sqlite3_total_changes64(handle))
    }

    /// The rowid of the last successful INSERT into a rowid table
    /// (`sqlite3_last_insert_rowid`), 0 if there was none.
    public var lastInsertedRowID: Int64 {
        guard let handle = connection.handle else { return 0 }
        return sqlite3_last_insert_rowid(handle)
    }

    /// Whether a transaction is open.
    public var isInsideTransaction: Bool {
        guard let handle = connection.handle else { return false }
        return sqlite3_get_autocommit(handle) == 0
    }

    /// Whether the main database is read-only.
    public var isReadOnly: Bool {
        guard let handle = connection.handle else { return true }
        return sqlite3_db_readonly(handle, "main") == 1
    }

    /// Makes the running statement, if any, stop as soon as possible with
    /// ``ResultCode/interrupt``.
    ///
    /// Internal: a `Database` is not `Sendable`, so this may only be called
    /// on the thread that uses the connection (from a progress handler, for
    /// instance). To interrupt from another thread, use
    /// ``DatabaseQueue/interrupt()`` or ``DatabasePool/interrupt()``.
    func interrupt() {
        guard let handle = connection.handle else { return }
        sqlite3_interrupt(handle)
    }

    // MARK: - Statements

    // The methods that run SQL take SQL text as a `String` labelled `sql:`,
    // used as written; the unlabeled forms take an `SQL` (Database+SQL.swift),
    // which binds what it interpolates. A `String` passed without the label
    // does not compile, so text is never mistaken for SQL with bound values.

    /// Prepares a statement that you own from SQL text used as written. The
    /// SQL must hold exactly one statement.
    ///
    /// Use it for SQL text your program holds in a `String` (read from a
    /// file, generated); write queries as an ``SQL`` and call
    /// ``makeStatement(_:)`` instead, so that values are bound.
    ///
    /// SQL text must not contain a NUL character (`\u{0}`): SQLite stops
    /// reading at the first one, so the rest would be silently ignored. Such
    /// text is refused with a ``ResultCode/misuse`` error naming the NUL's
    /// byte offset, before anything is prepared. A string value holding a
    /// NUL is fine as a bound argument.
    public func makeStatement(sql: String) throws -> Statement {
        try makeStatement(sql, flags: 0)
    }

    /// Prepares a statement with `sqlite3_prepare_v3` flags
    /// (`SQLITE_PREPARE_PERSISTENT` for the cache).
    private func makeStatement(_ sql: String, flags: UInt32) throws -> Statement {
        guard let handle = connection.handle else {
            throw SQLiteError.misuse("the database connection is closed", sql: sql)
        }
        return try sql.utf8CString.withUnsafeBufferPointer { buffer in
            let start = buffer.baseAddress!
            let length = buffer.count - 1
            try SQLScanner.checkNoNUL(buffer, sql: sql)
            try SQLScanner.checkLength(length, sql: sql)
            var tail: UnsafePointer<CChar>?
            var statement: OpaquePointer?
            connection.authorizer.beginPrepare()
            let code = sqlite3_prepare_v3(handle, start, Int32(length), flags, &statement, &tail)
            guard code == SQLITE_OK else {
                sqlite3_finalize(statement)
                throw SQLiteError.from(connection: handle, code: code, sql: sql)
            }
            guard let statement else {
                throw SQLiteError.misuse("the SQL holds no statement", sql: sql)
            }
            let consumed = tail.map { $0 - start } ?? length
            let rest = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[consumed..<length])
            guard SQLScanner.isBlank(rest.assumingMemoryBound(to: UInt8.self)) else {
                sqlite3_finalize(statement)
                throw SQLiteError.misuse(
                    "the SQL holds more than one statement; use execute(_:arguments:) to run several", sql: sql)
            }
            return Statement(connection: connection, sqliteStatement: statement, sql: sql)
        }
    }

    /// Returns a prepared statement for SQL text, used as written, from the
    /// connection's cache, preparing and caching it the first time. The same SQL returns the same
    /// statement, unless that one is being iterated by a cursor right now,
    /// in which case a fresh one is prepared.
    ///
    /// The cache holds up to ``Configuration/statementCacheCapacity``
    /// statements; when it is full, the least recently used one is dropped
    /// (finalized once nobody holds it). Cached statements are prepared with
    /// `SQLITE_PREPARE_PERSISTENT`, SQLite's hint for long-lived statements.
    public func cachedStatement(sql: String) throws -> Statement {
        if let statement = statementCache.statement(sql), !statement.isBusy { return statement }
        let isCacheable = statementCache.capacity > 0 && !statementCache.contains(sql)
        let statement = try makeStatement(sql, flags: isCacheable ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0)
        if isCacheable { statementCache.insert(statement, for: sql) }
        return statement
    }

    /// The SQL of the cached statements, most recently used first (for
    /// tests).
    var cachedStatementSQL: [String] { statementCache.sqlByRecentUse }

    /// Empties the statement cache.
    public func clearStatementCache() {
        statementCache.removeAll()
    }

    // MARK: - Execute

    /// Runs SQL text, used as written: one statement or several separated
    /// by semicolons.
    ///
    /// ```swift
    /// try db.execute(sql: try String(contentsOf: schemaFile, encoding: .utf8))
    /// ```
    ///
    /// With several statements, positional arguments are consumed in order
    /// and named ones matched by name. Argument errors are thrown before the
    /// statement that lacks them runs; statements before it have run, so
    /// wrap a script in ``transaction(_:_:)`` to make it all-or-nothing.
    ///
    /// Rows returned by a statement are discarded; use the `fetch` methods to
    /// read them.
    ///
    /// SQL text holding a NUL character (`\u{0}`) is refused with a
    /// ``ResultCode/misuse`` error before any of its statements runs (see
    /// ``makeStatement(sql:)``).
    public func execute(sql: String, arguments: StatementArguments = StatementArguments()) throws {
        if let statement = statementCache.statement(sql), !statement.isBusy {
            try statement.execute(arguments: arguments)
            return
        }
        guard let handle = connection.handle else {
            throw SQLiteError.misuse("the database connection is closed", sql: sql)
        }
        try sql.utf8CString.withUnsafeBufferPointer { buffer in
            let start = buffer.baseAddress!
            let end = buffer.count - 1
            try SQLScanner.checkNoNUL(buffer, sql: sql)
            try SQLScanner.checkLength(end, sql: sql)
            var offset = 0
            var positionalOffset = 0
            var usedNames = Set<String>()
            var isFirst = true
            // The first statement may be the only one, to be cached.
            let isCacheable = statementCache.capacity > 0 && !statementCache.contains(sql)
            while offset < end {
                var tail: UnsafePointer<CChar>?
                var prepared: OpaquePointer?
                let flags = isFirst && isCacheable ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
                connection.authorizer.beginPrepare()
                let code = sqlite3_prepare_v3(handle, start + offset, Int32(end - offset), flags, &prepared, &tail)
                guard code == SQLITE_OK else {
                    sqlite3_finalize(prepared)
                    throw SQLiteError.from(connection: handle, code: code, sql: sql)
                }
                let next = tail.map { $0 - start } ?? end
                // Every turn must move forward: SQLite not consuming any
                // text would otherwise loop forever. Unreachable once NULs
                // are refused, and kept as the loop's guarantee.
                guard next > offset, next <= end else {
                    sqlite3_finalize(prepared)
                    throw SQLiteError.misuse("SQLite could not read the SQL past byte \(offset)", sql: sql)
                }
                guard let prepared else {
                    offset = next  // whitespace or a comment
                    continue
                }
                let raw = UnsafeRawBufferPointer(buffer)
                let rest = UnsafeRawBufferPointer(rebasing: raw[next..<end]).assumingMemoryBound(to: UInt8.self)
                let isLast = SQLScanner.isBlank(rest)
                let text =
                    isFirst && isLast
                    ? sql
                    : String(decoding: UnsafeRawBufferPointer(rebasing: raw[offset..<next]), as: UTF8.self)
                let statement = Statement(connection: connection, sqliteStatement: prepared, sql: text)
                if isFirst && isLast {
                    // A single statement: keep it for the next time.
                    if isCacheable { statementCache.insert(statement, for: sql) }
                }
                if statement.isTransactionControl { try statement.checkTransactionControlAllowed() }
                if connection.isReadOnlyAccess { try statement.checkWriteAllowed() }
                statement.willRun()
                try statement.bind(
                    arguments, positionalOffset: &positionalOffset, usedNames: &usedNames, isLast: isLast)
                try statement.runToCompletion(arguments)
                isFirst = false
                offset = next
                if isLast { break }
            }
            if isFirst && !arguments.isEmpty {
                throw SQLiteError.misuse("arguments were given but the SQL holds no statement", sql: sql)
            }
        }
    }

    // MARK: - Fetch rows

    /// Returns a cursor over the rows of a query given as SQL text, read one
    /// at a time.
    public func fetchCursor(sql: String, arguments: StatementArguments = StatementArguments()) throws -> RowCursor {
        try cachedStatement(sql: sql).fetchCursor(arguments: arguments)
    }

    /// Returns all rows of a query given as SQL text.
    public func fetchAll(sql: String, arguments: StatementArguments = StatementArguments()) throws -> [Row] {
        try cachedStatement(sql: sql).fetchAll(arguments: arguments)
    }

    /// Returns the first row of a query given as SQL text, or nil if there
    /// is none.
    public func fetchOne(sql: String, arguments: StatementArguments = StatementArguments()) throws -> Row? {
        try cachedStatement(sql: sql).fetchOne(arguments: arguments)
    }

    // MARK: - Fetch values

    /// Returns a cursor over the first column of the rows of a query given
    /// as SQL text.
    public func fetchCursor<Value: SQLiteValueConvertible>(
        _ type: Value.Type, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> ValueCursor<Value> {
        let statement = try cachedStatement(sql: sql)
        guard statement.columnCount > 0 else {
            throw SQLiteError.misuse("the statement returns no columns to read values from", sql: sql)
        }
        try statement.prepareToRun(arguments)
        return ValueCursor(statement: statement, arguments: arguments)
    }

    /// Returns the first column of every row of a query given as SQL text.
    ///
    /// ```swift
    /// let query = "SELECT age FROM people"
    /// let ages = try db.fetchAll(Int?.self, sql: query)  // NULLs as nil
    /// ```
    public func fetchAll<Value: SQLiteValueConvertible>(
        _ type: Value.Type, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> [Value] {
        try Array(fetchCursor(type, sql: sql, arguments: arguments))
    }

    /// Returns the first column of the first row of a query given as SQL
    /// text, or nil when there is no row or the value is NULL.
    public func fetchOne<Value: SQLiteValueConvertible>(
        _ type: Value.Type, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> Value? {
        try fetchCursor(Value?.self, sql: sql, arguments: arguments).next() ?? nil
    }
}
