/// A type that is built from a database row.
///
/// Write ``init(row:)`` by hand for the fastest decoding, reading columns by
/// index or by name:
///
/// ```swift
/// struct Person: FetchableRecord {
///     var id: Int64
///     var name: String
///     var age: Int?
///
///     init(row: Row) throws {
///         id = try row["id"]
///         name = try row["name"]
///         age = try row["age"]          // NULL gives nil
///     }
/// }
/// let adults = try db.fetchAll(Person.self, "SELECT * FROM people WHERE age >= ?", arguments: [18])
/// ```
///
/// or let a `Decodable` type decode itself by column name, with no code at
/// all (see `init(row:)` in the `Decodable` extension for how each property
/// type is read):
///
/// ```swift
/// struct Person: Decodable, FetchableRecord {
///     var id: Int64
///     var name: String
///     var age: Int?
/// }
/// ```
///
/// A missing column, a NULL read into a non-optional property, or a value of
/// the wrong type throws a ``ValueConversionError`` that names the column and
/// the Swift type.
public protocol FetchableRecord {
    /// Creates a record from a row.
    ///
    /// The row is only valid during the call when it comes from a cursor
    /// (it reads straight from SQLite); keeping it is allowed and turns it
    /// into a copy of its values.
    init(row: Row) throws
}

/// A cursor over the rows of a statement, decoded as records.
///
/// ```swift
/// let cursor = try db.fetchCursor(Person.self, "SELECT * FROM people")
/// while let person = try cursor.next() {
///     print(person.name)
/// }
/// ```
///
/// Records are decoded one at a time as the cursor advances, so memory stays
/// constant however many rows the query returns. Consume the cursor where it
/// was created; it resets its statement when it is exhausted or released.
public final class RecordCursor<Record: FetchableRecord>: Cursor {
    // Hot state of inlined code: see the note on Row's stored properties.
    @usableFromInline @exclusivity(unchecked) var stepper: StatementStepper
    /// The row handed to ``FetchableRecord/init(row:)``, reused from one
    /// record to the next unless a record kept it.
    @usableFromInline @exclusivity(unchecked) var row: Row

    @usableFromInline
    init(statement: Statement, arguments: StatementArguments) {
        stepper = StatementStepper(statement: statement, arguments: arguments)
        row = Row(columns: statement.currentColumns(), liveStatement: statement.sqliteStatement)
    }

    deinit {
        row.dropDecodingCache()
        if !stepper.isDone {
            if !isKnownUniquelyReferenced(&row) { row.detach() }
            stepper.finish()
        }
    }

    /// The statement the cursor steps.
    public var statement: Statement { stepper.statement }

    /// Returns the next record, or nil when there are no more rows.
    ///
    /// A decoding error names the column, the Swift type and the SQL; the
    /// cursor stays usable and the next call moves on to the next row.
    @inlinable
    public func next() throws -> Record? {
        if !isKnownUniquelyReferenced(&row) {
            // The previous record kept its row: freeze it before stepping.
            row.detach()
            row = Row(columns: stepper.statement.columns, liveStatement: stepper.statement.sqliteStatement)
        }
        guard try stepper.step() else { return nil }
        do {
            return try Record(row: row)
        } catch let error as ValueConversionError {
            throw error.located(column: nil, index: nil, sql: stepper.statement.sql)
        }
    }
}

extension Statement {
    /// Returns a cursor over the statement's rows, decoded as records.
    @inlinable
    public func fetchCursor<Record: FetchableRecord>(
        _ type: Record.Type, arguments: StatementArguments = StatementArguments()
    ) throws -> RecordCursor<Record> {
        try prepareToRun(arguments)
        return RecordCursor(statement: self, arguments: arguments)
    }

    /// Returns all the statement's rows, decoded as records.
    @inlinable
    public func fetchAll<Record: FetchableRecord>(
        _ type: Record.Type, arguments: StatementArguments = StatementArguments()
    ) throws -> [Record] {
        try Array(fetchCursor(type, arguments: arguments))
    }

    /// Returns the statement's first row decoded as a record, or nil if
    /// there is no row.
    @inlinable
    public func fetchOne<Record: FetchableRecord>(
        _ type: Record.Type, arguments: StatementArguments = StatementArguments()
    ) throws -> Record? {
        try fetchCursor(type, arguments: arguments).next()
    }
}

extension Database {
    /// Returns a cursor over the rows of a query given as SQL text, used as
    /// written, decoded as records one at a time.
    ///
    /// ```swift
    /// let cursor = try db.fetchCursor(Person.self, sql: "SELECT * FROM people ORDER BY name")
    /// while let person = try cursor.next() { print(person.name) }
    /// ```
    @inlinable
    public func fetchCursor<Record: FetchableRecord>(
        _ type: Record.Type, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> RecordCursor<Record> {
        try cachedStatement(sql: sql).fetchCursor(type, arguments: arguments)
    }

    /// Returns all rows of a query given as SQL text, used as written,
    /// decoded as records.
    ///
    /// ```swift
    /// let people = try db.fetchAll(Person.self, sql: "SELECT * FROM people WHERE age > ?", arguments: [30])
    /// ```
    @inlinable
    public func fetchAll<Record: FetchableRecord>(
        _ type: Record.Type, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> [Record] {
        try Array(fetchCursor(type, sql: sql, arguments: arguments))
    }

    /// Returns the first row of a query given as SQL text, used as written,
    /// decoded as a record, or nil if there is no row.
    ///
    /// ```swift
    /// let ada = try db.fetchOne(Person.self, sql: "SELECT * FROM people WHERE name = ?", arguments: ["Ada"])
    /// ```
    @inlinable
    public func fetchOne<Record: FetchableRecord>(
        _ type: Record.Type, sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> Record? {
        try fetchCursor(type, sql: sql, arguments: arguments).next()
    }
}
