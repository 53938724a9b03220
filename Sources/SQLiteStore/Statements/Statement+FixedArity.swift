#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

// Overloads of `execute(values:)` for one to ten values. Swift prefers them
// to the variadic version, which stays for longer lists. They exist for
// speed: the variadic version iterates over its parameter pack at run time,
// so even when it is specialized, each value is copied, converted and
// destroyed through its type's witnesses (about 23 instructions a value,
// 230 of W1's 700 over the raw C loop). Here each value has its own type
// parameter, and the conversion of an `Int` inlines to
// `sqlite3_bind_int64`.

extension Statement {
    /// Binds `value` to parameter `index`. `arguments` lists every value of
    /// the call, for the error message if SQLite refuses it.
    @inlinable
    func bind<Value: SQLiteValueConvertible>(
        _ value: Value, at index: Int32, of arguments: () -> [SQLiteValue]
    ) throws {
        let code: Int32
        do {
            code = try value.sqliteValue.bind(to: sqliteStatement, at: index)
        } catch {
            throw bindingError(error)
        }
        if code != SQLITE_OK { throw self.error(code: code, arguments: StatementArguments(values: arguments())) }
    }

    /// Binds one value to the statement's parameter and runs it to completion,
    /// like the variadic `execute(values:)`, binding each value straight
    /// from its type.
    @inlinable
    public func execute<V1: SQLiteValueConvertible>(values v1: V1) throws {
        func all() -> [SQLiteValue] { Self.argumentValues(v1) }
        try prepareToBind(valueCount: 1)
        try bind(v1, at: 1, of: all)
        try runToCompletion(StatementArguments(values: all()))
    }

    /// Binds two values to the statement's parameters and runs it to completion,
    /// like the variadic `execute(values:)`, binding each value straight
    /// from its type.
    @inlinable
    public func execute<V1: SQLiteValueConvertible, V2: SQLiteValueConvertible>(values v1: V1, _ v2: V2) throws {
        func all() -> [SQLiteValue] { Self.argumentValues(v1, v2) }
        try prepareToBind(valueCount: 2)
        try bind(v1, at: 1, of: all)
        try bind(v2, at: 2, of: all)
        try runToCompletion(StatementArguments(values: all()))
    }

    /// Binds three values to the statement's parameters and runs it to completion,
    /// like the variadic `execute(values:)`, binding each value straight
    /// from its type.
    @inlinable
    public func execute<V1: SQLiteValueConvertible, V2: SQLiteValueConvertible, V3: SQLiteValueConvertible>(
        values v1: V1, _ v2: V2, _ v3: V3
    ) throws {
        func all() -> [SQLiteValue] { Self.argumentValues(v1, v2, v3) }
        try prepareToBind(valueCount: 3)
        try bind(v1, at: 1, of: all)
        try bind(v2, at: 2, of: all)
        try bind(v3, at: 3, of: all)
        try runToCompletion(StatementArguments(values: all()))
    }

    /// Binds four values to the statement's parameters and runs it to completion,
    /// like the variadic `execute(values:)`, binding each value straight
    /// from its type.
    @inlinable
    public func execute<
        V1: SQLiteValueConvertible, V2: SQLiteValueConvertible, V3: SQLiteValueConvertible, V4: SQLiteValueConvertible
    >(values v1: V1, _ v2: V2, _ v3: V3, _ v4: V4) throws {
        func all() -> [SQLiteValue] { Self.argumentValues(v1, v2, v3, v4) }
        try prepareToBind(valueCount: 4)
        try bind(v1, at: 1, of: all)
        try bind(v2, at: 2, of: all)
        try bind(v3, at: 3, of: all)
        try bind(v4, at: 4, of: all)
        try runToCompletion(StatementArguments(values: all()))
    }

    /// Binds five values to the statement's parameters and runs it to completion,
    /// like the variadic `execute(values:)`, binding each value straight
    /// from its type.
    @inlinable
    public func execute<
        V1: SQLiteValueConvertible, V2: SQLiteValueConvertible, V3: SQLiteValueConvertible, V4: SQLiteValueConvertible,
        V5: SQLiteValueConvertible
    >(values v1: V1, _ v2: V2, _ v3: V3, _ v4: V4, _ v5: V5) throws {
        func all() -> [SQLiteValue] { Self.argumentValues(v1, v2, v3, v4, v5) }
        try prepareToBind(valueCount: 5)
        try bind(v1, at: 1, of: all)
        try bind(v2, at: 2, of: all)
        try bind(v3, at: 3, of: all)
        try bind(v4, at: 4, of: all)
        try bind(v5, at: 5, of: all)
        try runToCompletion(StatementArguments(values: all()))
    }

    /// Binds six values to the statement's parameters and runs it to completion,
    /// like the variadic `execute(values:)`, binding each value straight
    /// from its type.
    @inlinable
    public func execute<
        V1: SQLiteValueConvertible, V2: SQLiteValueConvertible, V3: SQLiteValueConvertible, V4: SQLiteValueConvertible,
        V5: SQLiteValueConvertible, V6: SQLiteValueConvertible
    >(values v1: V1, _ v2: V2, _ v3: V3, _ v4: V4, _ v5: V5, _ v6: V6) throws {
        func all() -> [SQLiteValue] { Self.argumentValues(v1, v2, v3, v4, v5, v6) }
        try prepareToBind(valueCount: 6)
        try bind(v1, at: 1, of: all)
        try bind(v2, at: 2, of: all)
        try bind(v3, at: 3, of: all)
        try bind(v4, at: 4, of: all)
        try bind(v5, at: 5, of: all)
        try bind(v6, at: 6, of: all)
        try runToCompletion(StatementArguments(values: all()))
    }

    /// Binds seven values to the statement's parameters and runs it to completion,
    /// like the variadic `execute(values:)`, binding each value straight
    /// from its type.
    @inlinable
    public func execute<
        V1: SQLiteValueConvertible, V2: SQLiteValueConvertible, V3: SQLiteValueConvertible, V4: SQLiteValueConvertible,
        V5: SQLiteValueConvertible, V6: SQLiteValueConvertible, V7: SQLiteValueConvertible
    >(values v1: V1, _ v2: V2, _ v3: V3, _ v4: V4, _ v5: V5, _ v6: V6, _ v7: V7) throws {
        func all() -> [SQLiteValue] { Self.argumentValues(v1, v2, v3, v4, v5, v6, v7) }
        try prepareToBind(valueCount: 7)
        try bind(v1, at: 1, of: all)
        try bind(v2, at: 2, of: all)
        try bind(v3, at: 3, of: all)
        try bind(v4, at: 4, of: all)
        try bind(v5, at: 5, of: all)
        try bind(v6, at: 6, of: all)
        try bind(v7, at: 7, of: all)
        try runToCompletion(StatementArguments(values: all()))
    }

    /// Binds eight values to the statement's parameters and runs it to completion,
    /// like the variadic `execute(values:)`, binding each value straight
    /// from its type.
    @inlinable
    public func execute<
        V1: SQLiteValueConvertible, V2: SQLiteValueConvertible, V3: SQLiteValueConvertible, V4: SQLiteValueConvertible,
        V5: SQLiteValueConvertible, V6: SQLiteValueConvertible, V7: SQLiteValueConvertible, V8: SQLiteValueConvertible
    >(values v1: V1, _ v2: V2, _ v3: V3, _ v4: V4, _ v5: V5, _ v6: V6, _ v7: V7, _ v8: V8) throws {
        func all() -> [SQLiteValue] { Self.argumentValues(v1, v2, v3, v4, v5, v6, v7, v8) }
        try prepareToBind(valueCount: 8)
        try bind(v1, at: 1, of: all)
        try bind(v2, at: 2, of: all)
        try bind(v3, at: 3, of: all)
        try bind(v4, at: 4, of: all)
        try bind(v5, at: 5, of: all)
        try bind(v6, at: 6, of: all)
        try bind(v7, at: 7, of: all)
        try bind(v8, at: 8, of: all)
        try runToCompletion(StatementArguments(values: all()))
    }

    /// Binds nine values to the statement's parameters and runs it to completion,
    /// like the variadic `execute(values:)`, binding each value straight
    /// from its type.
    @inlinable
    public func execute<
        V1: SQLiteValueConvertible, V2: SQLiteValueConvertible, V3: SQLiteValueConvertible, V4: SQLiteValueConvertible,
        V5: SQLiteValueConvertible, V6: SQLiteValueConvertible, V7: SQLiteValueConvertible, V8: SQLiteValueConvertible,
        V9: SQLiteValueConvertible
    >(values v1: V1, _ v2: V2, _ v3: V3, _ v4: V4, _ v5: V5, _ v6: V6, _ v7: V7, _ v8: V8, _ v9: V9) throws {
        func all() -> [SQLiteValue] { Self.argumentValues(v1, v2, v3, v4, v5, v6, v7, v8, v9) }
        try prepareToBind(valueCount: 9)
        try bind(v1, at: 1, of: all)
        try bind(v2, at: 2, of: all)
        try bind(v3, at: 3, of: all)
        try bind(v4, at: 4, of: all)
        try bind(v5, at: 5, of: all)
        try bind(v6, at: 6, of: all)
        try bind(v7, at: 7, of: all)
        try bind(v8, at: 8, of: all)
        try bind(v9, at: 9, of: all)
        try runToCompletion(StatementArguments(values: all()))
    }

    /// Binds ten values to the statement's parameters and runs it to completion,
    /// like the variadic `execute(values:)`, binding each value straight
    /// from its type.
    @inlinable
    public func execute<
        V1: SQLiteValueConvertible, V2: SQLiteValueConvertible, V3: SQLiteValueConvertible, V4: SQLiteValueConvertible,
        V5: SQLiteValueConvertible, V6: SQLiteValueConvertible, V7: SQLiteValueConvertible, V8: SQLiteValueConvertible,
        V9: SQLiteValueConvertible, V10: SQLiteValueConvertible
    >(values v1: V1, _ v2: V2, _ v3: V3, _ v4: V4, _ v5: V5, _ v6: V6, _ v7: V7, _ v8: V8, _ v9: V9, _ v10: V10) throws
    {
        func all() -> [SQLiteValue] { Self.argumentValues(v1, v2, v3, v4, v5, v6, v7, v8, v9, v10) }
        try prepareToBind(valueCount: 10)
        try bind(v1, at: 1, of: all)
        try bind(v2, at: 2, of: all)
        try bind(v3, at: 3, of: all)
        try bind(v4, at: 4, of: all)
        try bind(v5, at: 5, of: all)
        try bind(v6, at: 6, of: all)
        try bind(v7, at: 7, of: all)
        try bind(v8, at: 8, of: all)
        try bind(v9, at: 9, of: all)
        try bind(v10, at: 10, of: all)
        try runToCompletion(StatementArguments(values: all()))
    }
}
