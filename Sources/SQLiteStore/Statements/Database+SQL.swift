// The `SQL` forms of the statement, execute and fetch methods: unlabeled,
// so a string literal, interpolated or not, builds an `SQL` and binds what
// it interpolates. SQL text in a `String` goes to the forms labelled `sql:`,
// and a `String` without the label does not compile (see
// UnavailableStringForms.swift). Each method here resolves the `SQL` to its
// text and arguments and calls the `sql:` one, so statements are cached by
// text.

extension Database {
    /// Prepares a statement that you own from the SQL's text.
    ///
    /// The interpolated values are not bound: pass ``SQL/arguments`` when
    /// running the statement. Throws when a value is interpolated inside
    /// quotes.
    public func makeStatement(_ sql: SQL) throws -> Statement {
        _ = try sql.resolvedArguments(StatementArguments())
        return try makeStatement(sql: sql.text)
    }

    /// Returns the cached statement for the SQL's text (see
    /// ``cachedStatement(sql:)``).
    ///
    /// The interpolated values are not bound: pass ``SQL/arguments`` when
    /// running the statement.
    public func cachedStatement(_ sql: SQL) throws -> Statement {
        _ = try sql.resolvedArguments(StatementArguments())
        return try cachedStatement(sql: sql.text)
    }

    /// Runs SQL, binding the values it interpolates.
    ///
    /// ```swift
    /// try db.execute("UPDATE people SET age = \(age) WHERE id = \(id)")
    /// ```
    ///
    /// `arguments` may be given only when the SQL interpolates no value.
    public func execute(_ sql: SQL, arguments: StatementArguments = StatementArguments()) throws {
        try execute(sql: sql.text, arguments: sql.resolvedArguments(arguments))
    }

    /// Returns a cursor over the rows of a query.
    public func fetchCursor(_ sql: SQL, arguments: StatementArguments = StatementArguments()) throws -> RowCursor {
        try fetchCursor(sql: sql.text, arguments: sql.resolvedArguments(arguments))
    }

    /// Returns all rows of a query.
    ///
    /// ```swift
    /// let rows = try db.fetchAll("SELECT * FROM people WHERE id IN \(ids)")
    /// ```
    public func fetchAll(_ sql: SQL, arguments: StatementArguments = StatementArguments()) throws -> [Row] {
        try fetchAll(sql: sql.text, arguments: sql.resolvedArguments(arguments))
    }

    /// Returns the first row of a query, or nil if there is none.
    public func fetchOne(_ sql: SQL, arguments: StatementArguments = StatementArguments()) throws -> Row? {
        try fetchOne(sql: sql.text, arguments: sql.resolvedArguments(arguments))
    }

    /// Returns a cursor over the first column of a query's rows.
    public func fetchCursor<Value: SQLiteValueConvertible>(
        _ type: Value.Type, _ sql: SQL, arguments: StatementArguments = StatementArguments()
    ) throws -> ValueCursor<Value> {
        try fetchCursor(type, sql: sql.text, arguments: sql.resolvedArguments(arguments))
    }

    /// Returns the first column of every row of a query.
    ///
    /// ```swift
    /// let names = try db.fetchAll(String.self, "SELECT name FROM people WHERE age >= \(18)")
    /// ```
    public func fetchAll<Value: SQLiteValueConvertible>(
        _ type: Value.Type, _ sql: SQL, arguments: StatementArguments = StatementArguments()
    ) throws -> [Value] {
        try fetchAll(type, sql: sql.text, arguments: sql.resolvedArguments(arguments))
    }

    /// Returns the first column of the first row of a query, or nil when
    /// there is no row or the value is NULL.
    public func fetchOne<Value: SQLiteValueConvertible>(
        _ type: Value.Type, _ sql: SQL, arguments: StatementArguments = StatementArguments()
    ) throws -> Value? {
        try fetchOne(type, sql: sql.text, arguments: sql.resolvedArguments(arguments))
    }

    /// Returns a cursor over the rows of a query, decoded as records one at
    /// a time.
    public func fetchCursor<Record: FetchableRecord>(
        _ type: Record.Type, _ sql: SQL, arguments: StatementArguments = StatementArguments()
    ) throws -> RecordCursor<Record> {
        try fetchCursor(type, sql: sql.text, arguments: sql.resolvedArguments(arguments))
    }

    /// Returns all rows of a query, decoded as records.
    ///
    /// ```swift
    /// let people = try db.fetchAll(Person.self, "SELECT * FROM people WHERE name = \(name)")
    /// ```
    public func fetchAll<Record: FetchableRecord>(
        _ type: Record.Type, _ sql: SQL, arguments: StatementArguments = StatementArguments()
    ) throws -> [Record] {
        try fetchAll(type, sql: sql.text, arguments: sql.resolvedArguments(arguments))
    }

    /// Returns the first row of a query decoded as a record, or nil if there
    /// is no row.
    public func fetchOne<Record: FetchableRecord>(
        _ type: Record.Type, _ sql: SQL, arguments: StatementArguments = StatementArguments()
    ) throws -> Record? {
        try fetchOne(type, sql: sql.text, arguments: sql.resolvedArguments(arguments))
    }
}
