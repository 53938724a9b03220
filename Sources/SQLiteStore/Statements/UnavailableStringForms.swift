// The unlabeled `String` forms that SQL text once went through, kept only so
// that a `String` passed where an `SQL` is expected fails to compile with a
// fix-it to the `sql:` form, instead of "cannot convert String to SQL".
// They are disfavored, so a string literal still builds an `SQL`.

extension Database {
    /// Unavailable: SQL text in a `String` is labelled `sql:`.
    @available(
        *, unavailable, renamed: "makeStatement(sql:)",
        message:
            "SQL text in a String is used as written; label it sql:, or write the query as an SQL literal, which binds its values"
    )
    @_disfavoredOverload
    public func makeStatement(_ sql: String) throws -> Statement {
        try makeStatement(sql: sql)
    }

    /// Unavailable: SQL text in a `String` is labelled `sql:`.
    @available(
        *, unavailable, renamed: "cachedStatement(sql:)",
        message:
            "SQL text in a String is used as written; label it sql:, or write the query as an SQL literal, which binds its values"
    )
    @_disfavoredOverload
    public func cachedStatement(_ sql: String) throws -> Statement {
        try cachedStatement(sql: sql)
    }

    /// Unavailable: SQL text in a `String` is labelled `sql:`.
    @available(
        *, unavailable, renamed: "execute(sql:arguments:)",
        message:
            "SQL text in a String is used as written; label it sql:, or write the query as an SQL literal, which binds its values"
    )
    @_disfavoredOverload
    public func execute(_ sql: String, arguments: StatementArguments = StatementArguments()) throws {
        try execute(sql: sql, arguments: arguments)
    }

    /// Unavailable: SQL text in a `String` is labelled `sql:`.
    @available(
        *, unavailable, renamed: "fetchCursor(sql:arguments:)",
        message:
            "SQL text in a String is used as written; label it sql:, or write the query as an SQL literal, which binds its values"
    )
    @_disfavoredOverload
    public func fetchCursor(_ sql: String, arguments: StatementArguments = StatementArguments()) throws -> RowCursor {
        try fetchCursor(sql: sql, arguments: arguments)
    }

    /// Unavailable: SQL text in a `String` is labelled `sql:`.
    @available(
        *, unavailable, renamed: "fetchAll(sql:arguments:)",
        message:
            "SQL text in a String is used as written; label it sql:, or write the query as an SQL literal, which binds its values"
    )
    @_disfavoredOverload
    public func fetchAll(_ sql: String, arguments: StatementArguments = StatementArguments()) throws -> [Row] {
        try fetchAll(sql: sql, arguments: arguments)
    }

    /// Unavailable: SQL text in a `String` is labelled `sql:`.
    @available(
        *, unavailable, renamed: "fetchOne(sql:arguments:)",
        message:
            "SQL text in a String is used as written; label it sql:, or write the query as an SQL literal, which binds its values"
    )
    @_disfavoredOverload
    public func fetchOne(_ sql: String, arguments: StatementArguments = StatementArguments()) throws -> Row? {
        try fetchOne(sql: sql, arguments: arguments)
    }

    /// Unavailable: SQL text in a `String` is labelled `sql:`.
    @available(
        *, unavailable, renamed: "fetchCursor(_:sql:arguments:)",
        message:
            "SQL text in a String is used as written; label it sql:, or write the query as an SQL literal, which binds its values"
    )
    @_disfavoredOverload
    public func fetchCursor<Value: SQLiteValueConvertible>(
        _ type: Value.Type, _ sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> ValueCursor<Value> {
        try fetchCursor(type, sql: sql, arguments: arguments)
    }

    /// Unavailable: SQL text in a `String` is labelled `sql:`.
    @available(
        *, unavailable, renamed: "fetchAll(_:sql:arguments:)",
        message:
            "SQL text in a String is used as written; label it sql:, or write the query as an SQL literal, which binds its values"
    )
    @_disfavoredOverload
    public func fetchAll<Value: SQLiteValueConvertible>(
        _ type: Value.Type, _ sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> [Value] {
        try fetchAll(type, sql: sql, arguments: arguments)
    }

    /// Unavailable: SQL text in a `String` is labelled `sql:`.
    @available(
        *, unavailable, renamed: "fetchOne(_:sql:arguments:)",
        message:
            "SQL text in a String is used as written; label it sql:, or write the query as an SQL literal, which binds its values"
    )
    @_disfavoredOverload
    public func fetchOne<Value: SQLiteValueConvertible>(
        _ type: Value.Type, _ sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> Value? {
        try fetchOne(type, sql: sql, arguments: arguments)
    }

    /// Unavailable: SQL text in a `String` is labelled `sql:`.
    @available(
        *, unavailable, renamed: "fetchCursor(_:sql:arguments:)",
        message:
            "SQL text in a String is used as written; label it sql:, or write the query as an SQL literal, which binds its values"
    )
    @_disfavoredOverload
    public func fetchCursor<Record: FetchableRecord>(
        _ type: Record.Type, _ sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> RecordCursor<Record> {
        try fetchCursor(type, sql: sql, arguments: arguments)
    }

    /// Unavailable: SQL text in a `String` is labelled `sql:`.
    @available(
        *, unavailable, renamed: "fetchAll(_:sql:arguments:)",
        message:
            "SQL text in a String is used as written; label it sql:, or write the query as an SQL literal, which binds its values"
    )
    @_disfavoredOverload
    public func fetchAll<Record: FetchableRecord>(
        _ type: Record.Type, _ sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> [Record] {
        try fetchAll(type, sql: sql, arguments: arguments)
    }

    /// Unavailable: SQL text in a `String` is labelled `sql:`.
    @available(
        *, unavailable, renamed: "fetchOne(_:sql:arguments:)",
        message:
            "SQL text in a String is used as written; label it sql:, or write the query as an SQL literal, which binds its values"
    )
    @_disfavoredOverload
    public func fetchOne<Record: FetchableRecord>(
        _ type: Record.Type, _ sql: String, arguments: StatementArguments = StatementArguments()
    ) throws -> Record? {
        try fetchOne(type, sql: sql, arguments: arguments)
    }
}
