#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// A sequence of values read from the database one at a time.
///
/// Cursors stream: each ``next()`` steps the underlying statement, so a
/// query over millions of rows runs in constant memory. Consume a cursor
/// where it was created (inside the same database access); it resets its
/// statement when it is exhausted or released.
///
/// ```swift
/// let cursor = try db.fetchCursor("SELECT name FROM people")
/// while let row = try cursor.next() {
///     print(try row["name"] as String)
/// }
/// ```
public protocol Cursor<Element>: AnyObject {
    /// The type of the values.
    associatedtype Element
    /// Returns the next value, or nil when there are no more.
    func next() throws -> Element?
}

extension Cursor {
    /// Calls `body` with each remaining element.
    @inlinable
    public func forEach(_ body: (Element) throws -> Void) throws {
        while let element = try next() { try body(element) }
    }

    /// Combines the remaining elements into an accumulating value.
    @inlinable
    public func reduce<Result>(into initial: Result, _ update: (inout Result, Element) throws -> Void) throws
        -> Result
    {
        var result = initial
        while let element = try next() { try update(&result, element) }
        return result
    }
}

extension Array {
    /// Collects the remaining elements of a cursor.
    @inlinable
    public init<C: Cursor>(_ cursor: C) throws where C.Element == Element {
        self.init()
        while let element = try cursor.next() { append(element) }
    }
}

/// Steps a statement for a cursor: binds nothing itself, marks the statement
/// busy until done, resets it on completion, error or release.
@usableFromInline
struct StatementStepper {
    @usableFromInline let statement: Statement
    @usableFromInline let arguments: StatementArguments
    @usableFromInline var isDone = false

    @usableFromInline
    init(statement: Statement, arguments: StatementArguments) {
        self.statement = statement
        self.arguments = arguments
        statement.isBusy = true
    }

    /// Steps once: true for a row, false when done; throws on error.
    @inlinable
    mutating func step() throws -> Bool {
        if isDone { return false }
        if statement.connection.isClosed { return try stepOnClosedConnection() }
        let code = sqlite3_step(statement.sqliteStatement)
        if code == SQLITE_ROW { return true }
        return try stepDidEnd(code: code)
    }

    /// Done or failed: kept out of line so that ``step()`` inlines into
    /// cursors.
    @usableFromInline
    mutating func stepDidEnd(code: Int32) throws -> Bool {
        if code == SQLITE_DONE {
            finish()
            statement.didComplete()
            return false
        }
        let error = statement.error(code: code, arguments: arguments)
        finish()
        throw error
    }

    @usableFromInline
    mutating func stepOnClosedConnection() throws -> Bool {
        finish()
        throw SQLiteError.misuse("the database connection is closed", sql: statement.sql)
    }

    @usableFromInline
    mutating func finish() {
        guard !isDone else { return }
        isDone = true
        sqlite3_reset(statement.sqliteStatement)
        statement.isBusy = false
    }
}

/// A cursor over the rows of a statement.
public final class RowCursor: Cursor {
    // Hot state of inlined code: see the note on Row's stored properties.
    @usableFromInline @exclusivity(unchecked) var stepper: StatementStepper
    @usableFromInline @exclusivity(unchecked) var row: Row?

    init(statement: Statement, arguments: StatementArguments) {
        stepper = StatementStepper(statement: statement, arguments: arguments)
    }

    deinit {
        row?.dropDecodingCache()
        if !stepper.isDone {
            if !isKnownUniquelyReferenced(&row), let row { row.detach() }
            stepper.finish()
        }
    }

    /// The statement the cursor steps.
    public var statement: Statement { stepper.statement }

    /// The column names of the rows, up to date once the cursor has
    /// stepped (see ``Statement/columnNames``).
    public var columnNames: [String] { stepper.statement.columnNames }

    /// Returns the next row, or nil when there are no more.
    @inlinable
    public func next() throws -> Row? {
        // A row the caller kept from the previous step becomes a copy before
        // the statement moves on; a row nobody kept is reused.
        if !isKnownUniquelyReferenced(&row), let row {
            row.detach()
            self.row = nil
        }
        guard try stepper.step() else { return nil }
        if let row { return row }
        let newRow = Row(columns: stepper.statement.currentColumns(), liveStatement: stepper.statement.sqliteStatement)
        row = newRow
        return newRow
    }
}

/// A cursor over the first column of a statement's rows, as values of one type.
public final class ValueCursor<Value: SQLiteValueConvertible>: Cursor {
    @usableFromInline @exclusivity(unchecked) var stepper: StatementStepper

    init(statement: Statement, arguments: StatementArguments) {
        stepper = StatementStepper(statement: statement, arguments: arguments)
    }

    deinit { stepper.finish() }

    /// Returns the next value, or nil when there are no more rows.
    @inlinable
    public func next() throws -> Value? {
        guard try stepper.step() else { return nil }
        do {
            return try Value.read(sqliteStatement: stepper.statement.sqliteStatement, column: 0)
        } catch let error as ValueConversionError {
            throw error.located(column: stepper.statement.columnNames.first, index: 0, sql: stepper.statement.sql)
        }
    }
}
