import Foundation
#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// A prepared SQL statement, reusable with new arguments.
///
/// Get one from ``Database/makeStatement(_:)`` (yours to keep) or
/// ``Database/cachedStatement(_:)`` (shared through the connection's cache).
///
/// ```swift
/// let insert = try db.makeStatement("INSERT INTO t (a, b) VALUES (?, ?)")
/// for i in 0..<1000 {
///     try insert.execute(arguments: [i, "row \(i)"])
/// }
/// ```
///
/// A statement belongs to its connection and is used on that connection's
/// thread. It is finalized when it is released, even after the connection
/// has been closed.
public final class Statement {
    /// The SQL text of the statement.
    public let sql: String
    /// The underlying `sqlite3_stmt`, for use with the C API.
    public let sqliteStatement: OpaquePointer
    @usableFromInline let connection: SQLiteConnection
    @usableFromInline @exclusivity(unchecked) var columns: ColumnNames
    var columnsGeneration: Int
    /// The statement's re-preparation count when `columns` was read.
    var columnsReprepareCount: Int32 = 0
    /// The number of parameters (`?`, `:name`, ...), which is also the
    /// largest `?NNN` index.
    public let parameterCount: Int
    /// Parameter names without prefix, by index - 1; nil for `?` and `?NNN`.
    let parameterNames: [String?]
    /// Whether a cursor is iterating this statement right now.
    @usableFromInline @exclusivity(unchecked) var isBusy = false
    private let changesSchema: Bool
    /// Whether a read access refuses to run the statement: it would write.
    private let writes: Bool
    /// Whether the statement begins, ends or nests a transaction (`BEGIN`,
    /// `COMMIT`, `END`, `ROLLBACK`, `SAVEPOINT`, `RELEASE`).
    @usableFromInline let isTransactionControl: Bool
    /// What the statement reads, recorded by the authorizer when it was
    /// prepared: a cached statement is not prepared again, so an observed
    /// fetch that runs it learns its region from here.
    let readRegion: DatabaseRegion
    /// The savepoint operation of a `SAVEPOINT`, `RELEASE` or `ROLLBACK TO`.
    let savepointControl: SavepointControl?

    init(connection: SQLiteConnection, sqliteStatement: OpaquePointer, sql: String) {
        self.connection = connection
        self.sqliteStatement = sqliteStatement
        self.sql = sql
        self.columns = ColumnNames(statement: sqliteStatement)
        self.columnsGeneration = connection.schemaGeneration
        let count = Int(sqlite3_bind_parameter_count(sqliteStatement))
        self.parameterCount = count
        var names: [String?] = []
        names.reserveCapacity(count)
        for index in 0..<count {
            if let cName = sqlite3_bind_parameter_name(sqliteStatement, Int32(index + 1)) {
                let name = String(cString: cName)
                names.append(name.hasPrefix("?") ? nil : StatementArguments.normalize(name))
            } else {
                names.append(nil)
            }
        }
        self.parameterNames = names
        let keyword = SQLScanner.firstKeyword(sql)
        self.changesSchema =
            sqlite3_stmt_readonly(sqliteStatement) == 0
            && (keyword == "CREATE" || keyword == "ALTER" || keyword == "DROP")
        self.isTransactionControl = Self.transactionControlKeywords.contains(keyword)
        (self.readRegion, self.savepointControl) = connection.authorizer.takeRecord()
        // SQLite counts a PRAGMA that only reports a setting, such as
        // `PRAGMA journal_mode`, as writing: one without an argument is a
        // query, and reads may run it.
        self.writes =
            sqlite3_stmt_readonly(sqliteStatement) == 0
            && !(keyword == "PRAGMA" && !sql.contains("=") && !sql.contains("("))
    }

    private static let transactionControlKeywords: Set<String> = [
        "BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE",
    ]

    deinit {
        sqlite3_finalize(sqliteStatement)
    }

    /// The names of the result columns, in order.
    ///
    /// Up to date after a schema change (`ALTER TABLE` on this connection
    /// or another): SQLite re-prepares the statement when it next runs, and
    /// the names are read again then, rows or no rows. Before the statement
    /// has run since another connection changed the schema, they are the
    /// names it was prepared with.
    public var columnNames: [String] { currentColumns().names }

    /// The number of result columns (see ``columnNames``).
    public var columnCount: Int { currentColumns().count }

    /// Whether the statement leaves the database unchanged
    /// (`sqlite3_stmt_readonly`).
    public var isReadOnly: Bool { sqlite3_stmt_readonly(sqliteStatement) != 0 }

    /// Binds arguments and runs the statement to completion, discarding any
    /// rows it returns.
    public func execute(arguments: StatementArguments = StatementArguments()) throws {
        try prepareToRun(arguments)
        try runToCompletion(arguments)
    }

    /// Binds values to the parameters in order (1, 2, ...) and runs the
    /// statement to completion, discarding any rows it returns.
    ///
    /// The fastest way to run a statement many times: each value is bound
    /// straight from its Swift type, with no ``StatementArguments`` built.
    /// For one to ten values, Swift picks an overload with a type parameter
    /// per value, which binds an `Int` with nothing around
    /// `sqlite3_bind_int64`; this variadic version takes any other count.
    ///
    /// ```swift
    /// let insert = try db.makeStatement("INSERT INTO point (x, y, label) VALUES (?, ?, ?)")
    /// for point in points {
    ///     try insert.execute(values: point.x, point.y, point.label)
    /// }
    /// ```
    ///
    /// Throws, before the statement runs, when the number of values is not
    /// the statement's number of parameters or a value cannot be stored
    /// (``ValueConversionError``).
    @inlinable
    public func execute<each Value: SQLiteValueConvertible>(values: repeat each Value) throws {
        var count = 0
        for _ in repeat each values { count += 1 }
        try prepareToBind(valueCount: count)
        func all() -> [SQLiteValue] { Self.argumentValues(repeat each values) }
        var index: Int32 = 0
        for value in repeat each values {
            index += 1
            try bind(value, at: index, of: all)
        }
        try runToCompletion(StatementArguments(values: all()))
    }

    /// The values as bound, for error messages.
    @usableFromInline
    static func argumentValues<each Value: SQLiteValueConvertible>(_ values: repeat each Value) -> [SQLiteValue] {
        var array: [SQLiteValue] = []
        for value in repeat each values { array.append((try? value.sqliteValue) ?? .null) }
        return array
    }

    /// Checks that the statement can run now with that many positional values.
    @usableFromInline
    func prepareToBind(valueCount: Int) throws {
        guard !connection.isClosed else { throw SQLiteError.misuse("the database connection is closed", sql: sql) }
        guard !isBusy else {
            throw SQLiteError.misuse("the statement is in use by a cursor that has not finished", sql: sql)
        }
        if isTransactionControl { try checkTransactionControlAllowed() }
        if connection.isReadOnlyAccess { try checkWriteAllowed() }
        willRun()
        guard valueCount == parameterCount else {
            throw argumentError(
                "wrong number of arguments: the SQL has \(parameterCount) parameter\(parameterCount == 1 ? "" : "s"), "
                    + "\(valueCount) value\(valueCount == 1 ? "" : "s") given")
        }
    }

    /// A value that could not be converted for binding, with the statement.
    @usableFromInline
    func bindingError(_ error: any Error) -> any Error {
        guard let error = error as? ValueConversionError else { return error }
        return error.located(column: nil, index: nil, sql: sql)
    }

    /// Returns a cursor over the rows of the statement.
    ///
    /// Rows are read one at a time as the cursor advances, so memory stays
    /// constant however many rows the query returns. The statement cannot
    /// run anything else until the cursor is done or released.
    public func fetchCursor(arguments: StatementArguments = StatementArguments()) throws -> RowCursor {
        try prepareToRun(arguments)
        return RowCursor(statement: self, arguments: arguments)
    }

    /// Returns all rows of the statement.
    public func fetchAll(arguments: StatementArguments = StatementArguments()) throws -> [Row] {
        try Array(fetchCursor(arguments: arguments))
    }

    /// Returns the first row of the statement, or nil if there is none.
    public func fetchOne(arguments: StatementArguments = StatementArguments()) throws -> Row? {
        let cursor = try fetchCursor(arguments: arguments)
        return try cursor.next()?.detached()
    }

    // MARK: - Running

    /// Checks that the statement can run now, then binds the arguments.
    @usableFromInline
    func prepareToRun(_ arguments: StatementArguments) throws {
        guard !connection.isClosed else { throw SQLiteError.misuse("the database connection is closed", sql: sql) }
        guard !isBusy else {
            throw SQLiteError.misuse("the statement is in use by a cursor that has not finished", sql: sql)
        }
        if isTransactionControl { try checkTransactionControlAllowed() }
        if connection.isReadOnlyAccess { try checkWriteAllowed() }
        willRun()
        var offset = 0
        var usedNames = Set<String>()
        try bind(arguments, positionalOffset: &offset, usedNames: &usedNames, isLast: true)
    }

    /// Binds the values this statement takes from `arguments`.
    ///
    /// Positional values are consumed from `positionalOffset`; named ones are
    /// looked up by name. When `isLast`, every value must have been used.
    /// Everything is checked before anything is bound.
    func bind(
        _ arguments: StatementArguments, positionalOffset: inout Int, usedNames: inout Set<String>, isLast: Bool
    ) throws {
        if let error = arguments.conversionError { throw error.located(column: nil, index: nil, sql: sql) }
        let handle = sqliteStatement
        if !arguments.positional.isEmpty && !arguments.named.isEmpty {
            throw argumentError("cannot mix positional and named arguments")
        }
        if arguments.named.isEmpty {
            let available = arguments.positional.count - positionalOffset
            if available < parameterCount || (isLast && available > parameterCount) {
                let expected = positionalOffset + parameterCount
                throw argumentError(
                    "wrong number of arguments: the SQL has \(expected) parameter\(expected == 1 ? "" : "s"), "
                        + "\(arguments.positional.count) value\(arguments.positional.count == 1 ? "" : "s") given")
            }
            var index: Int32 = 1
            for value in arguments.positional[positionalOffset..<positionalOffset + parameterCount] {
                let code = value.bind(to: handle, at: index)
                if code != SQLITE_OK { throw error(code: code, arguments: arguments) }
                index += 1
            }
            positionalOffset += parameterCount
        } else {
            for (index, name) in parameterNames.enumerated() {
                guard let name else {
                    throw argumentError("parameter \(index + 1) has no name, but only named arguments were given")
                }
                guard arguments.named[name] != nil else {
                    throw argumentError("missing argument for parameter :\(name)")
                }
                usedNames.insert(name)
            }
            if isLast, let unknown = arguments.named.keys.sorted().first(where: { !usedNames.contains($0) }) {
                let known = parameterNames.compactMap { $0.map { ":" + $0 } }
                throw argumentError(
                    "unknown argument name '\(unknown)'; the SQL's parameters are "
                        + (known.isEmpty ? "none" : known.joined(separator: ", ")))
            }
            for (index, name) in parameterNames.enumerated() {
                let code = arguments.named[name!]!.bind(to: handle, at: Int32(index + 1))
                if code != SQLITE_OK { throw error(code: code, arguments: arguments) }
            }
        }
    }

    /// Steps until SQLite reports DONE, then resets the statement. The
    /// arguments are only built for an error's message.
    @usableFromInline
    func runToCompletion(_ arguments: @autoclosure () -> StatementArguments) throws {
        let handle = sqliteStatement
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { break }
            if code == SQLITE_ROW { continue }
            let failure = error(code: code, arguments: arguments())
            sqlite3_reset(handle)
            throw failure
        }
        sqlite3_reset(handle)
        didComplete()
    }

    /// Tells observation that the statement is about to run: an observed
    /// fetch adds what it reads, and a savepoint statement marks or undoes
    /// the changes recorded for transaction observers. Two nil checks when
    /// nothing is observed.
    func willRun() {
        if let recorder = connection.regionRecorder { recorder.region.formUnion(readRegion) }
        if let changes = connection.changeRecorder { changes.willRun(savepointControl) }
    }

    /// The column names of the current execution; refreshed when the schema
    /// may have changed since they were read: SQLite re-prepares the
    /// statement on its own when any connection changed the schema
    /// (`SQLITE_STMTSTATUS_REPREPARE` counts it), and `SELECT *` may then
    /// return other columns; a schema change made through this connection
    /// bumps its ``SQLiteConnection/schemaGeneration`` at once.
    @usableFromInline
    func currentColumns() -> ColumnNames {
        let reprepared = sqlite3_stmt_status(sqliteStatement, SQLITE_STMTSTATUS_REPREPARE, 0)
        if columnsGeneration != connection.schemaGeneration || reprepared != columnsReprepareCount {
            columns = ColumnNames(statement: sqliteStatement)
            columnsGeneration = connection.schemaGeneration
            columnsReprepareCount = reprepared
        }
        return columns
    }

    /// Counts a completed run of a schema-changing statement (`CREATE`,
    /// `ALTER`, `DROP`) on the connection, whichever way it was run.
    @usableFromInline
    func didComplete() {
        if changesSchema { connection.schemaGeneration &+= 1 }
        // A statement that committed (COMMIT, RELEASE, or one outside a
        // transaction) notifies the transaction observers now.
        if let changes = connection.changeRecorder { changes.statementDidEnd() }
    }

    /// The error for a failed SQLite call on this statement.
    @usableFromInline
    func error(code: Int32, arguments: StatementArguments? = nil) -> SQLiteError {
        SQLiteError.from(
            connection: connection.handle, code: code, sql: sql, arguments: arguments,
            includesArguments: connection.includesArgumentsInErrors)
    }

    private func argumentError(_ message: String) -> SQLiteError {
        SQLiteError(code: .misuse, message: message, sql: sql)
    }

    /// Throws ``ResultCode/readOnly`` when this statement would write
    /// (`sqlite3_stmt_readonly` is false, except a PRAGMA without argument
    /// that only reports a setting) and a read access is running on its
    /// connection. Nothing has run then.
    @usableFromInline
    func checkWriteAllowed() throws {
        guard connection.isReadOnlyAccess, writes else { return }
        throw SQLiteError(
            code: .readOnly, message: "a read access cannot write (use write for changes); nothing was run",
            sql: sql)
    }

    /// How many times SQLite has re-prepared this statement on its own
    /// after a schema change (`SQLITE_STMTSTATUS_REPREPARE`).
    var repreparedCount: Int {
        Int(sqlite3_stmt_status(sqliteStatement, SQLITE_STMTSTATUS_REPREPARE, 0))
    }

    /// Throws when this statement would begin, end or nest a transaction
    /// inside a ``Database/transaction(_:_:)`` or ``Database/savepoint(_:)``
    /// closure: ending the transaction behind the closure's back would make
    /// the closure's outcome (returned or thrown) lie about what was kept.
    @usableFromInline
    func checkTransactionControlAllowed() throws {
        guard connection.transactionScopeDepth > 0, !connection.isRunningScopeControl else { return }
        let keyword = SQLScanner.firstKeyword(sql)
        throw SQLiteError.misuse(
            "\(keyword) is refused inside transaction(_:) and savepoint(_:): it would end or nest the "
                + "transaction behind the closure's back. Return from the closure to commit, throw to roll back, "
                + "and use savepoint(_:) to nest",
            sql: sql)
    }
}

/// Small lexical helpers over SQL text.
enum SQLScanner {
    /// The first word of the SQL, uppercased, after whitespace and comments.
    static func firstKeyword(_ sql: String) -> String {
        let bytes = Array(sql.utf8)
        var index = skipBlank(bytes, from: 0)
        let start = index
        while index < bytes.count, (bytes[index] | 0x20) >= UInt8(ascii: "a"),
            (bytes[index] | 0x20) <= UInt8(ascii: "z")
        {
            index += 1
        }
        return String(decoding: bytes[start..<index], as: UTF8.self).uppercased()
    }

    /// Throws a ``ResultCode/misuse`` error when the SQL text (a
    /// NUL-terminated UTF-8 buffer) holds a NUL before its terminator:
    /// SQLite would stop reading there and ignore the rest.
    static func checkNoNUL(_ buffer: UnsafeBufferPointer<CChar>, sql: String) throws {
        let length = buffer.count - 1
        guard length > 0, let base = buffer.baseAddress,
            let found = memchr(base, 0, length)
        else { return }
        let offset = UnsafeRawPointer(found) - UnsafeRawPointer(base)
        throw SQLiteError.misuse(
            "the SQL holds a NUL character at byte \(offset); SQLite would ignore the text after it "
                + "(bind text containing NUL as an argument instead)",
            sql: sql)
    }

    /// Throws ``ResultCode/tooBig`` for SQL text longer than the C API can
    /// take (its length is an `Int32`), instead of trapping on the
    /// conversion. SQLite's own limit (`SQLITE_MAX_SQL_LENGTH`) is lower.
    static func checkLength(_ length: Int, sql: String) throws {
        guard length > Int(Int32.max) else { return }
        throw SQLiteError(
            code: .tooBig, message: "the SQL text is \(length) bytes, more than SQLite can read",
            sql: String(sql.prefix(200)))
    }

    /// Whether the text holds nothing but whitespace, comments and semicolons.
    static func isBlank(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        skipBlank(bytes, from: 0) == bytes.count
    }

    static func skipBlank<C: RandomAccessCollection>(_ bytes: C, from start: Int) -> Int
    where C.Element == UInt8, C.Index == Int {
        var index = start
        let end = bytes.endIndex
        while index < end {
            let byte = bytes[index]
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\t")
                || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: ";") || byte == 0x0C
            {
                index += 1
            } else if byte == UInt8(ascii: "-"), index + 1 < end, bytes[index + 1] == UInt8(ascii: "-") {
                while index < end, bytes[index] != UInt8(ascii: "\n") { index += 1 }
            } else if byte == UInt8(ascii: "/"), index + 1 < end, bytes[index + 1] == UInt8(ascii: "*") {
                index += 2
                while index < end,
                    !(bytes[index] == UInt8(ascii: "*") && index + 1 < end && bytes[index + 1] == UInt8(ascii: "/"))
                {
                    index += 1
                }
                index = min(index + 2, end)
            } else {
                break
            }
        }
        return index
    }
}
