import Foundation

/// One result row: its values in column order, NULLs included, and the column
/// names.
///
/// Read values by index or by column name (case-insensitive), as
/// ``SQLiteValue`` or as any ``SQLiteValueConvertible`` type:
///
/// ```swift
/// for row in try db.fetchAll("SELECT id, name, age FROM people") {
///     let id: Int64 = try row[0]
///     let name: String = try row["name"]
///     let age: Int? = try row["AGE"]      // NULL gives nil
///     let raw: SQLiteValue = try row[2]   // .null, .integer(42), ...
/// }
/// ```
///
/// Reading NULL into a non-optional type, a value of the wrong type, or a
/// column that does not exist throws a ``ValueConversionError`` that names
/// the column and the type.
///
/// Rows handed out by a ``RowCursor`` read straight from SQLite while they are
/// the cursor's current row; when the cursor moves on, a row you kept turns
/// into a copy of its values, so a row is always safe to keep.
public final class Row: CustomStringConvertible, Equatable {
    // The mutable state below is read for every value, by code inlined into
    // client modules, where the compiler cannot prove accesses exclusive and
    // would check each one at run time (`swift_beginAccess`, about as costly
    // as reading the value). The class only touches it from non-overlapping,
    // non-reentrant accesses, so the checks are turned off.
    @usableFromInline let columns: ColumnNames
    /// The statement this row reads from, while it is the current row of a cursor.
    @usableFromInline @exclusivity(unchecked) var sqliteStatement: OpaquePointer?
    /// The values, once the row is a copy.
    @usableFromInline @exclusivity(unchecked) var storage: ContiguousArray<SQLiteValue>
    /// Where the next lookup by name starts.
    @usableFromInline @exclusivity(unchecked) var lookupHint = 0
    /// While the row is live: what `Decodable` records decode it with, kept
    /// from one record to the next (see `Records/RowDecoder.swift`).
    @exclusivity(unchecked) var decodingCache: RowDecodingCache?

    /// Creates a row from column names and values, which must be as many.
    public init(columnNames: [String], values: [SQLiteValue]) {
        precondition(columnNames.count == values.count, "a row needs as many values as column names")
        self.columns = ColumnNames(columnNames)
        self.storage = ContiguousArray(values)
    }

    /// Creates a row from (column, value) pairs, in order.
    public convenience init(_ pairs: KeyValuePairs<String, SQLiteValue>) {
        self.init(columnNames: pairs.map(\.key), values: pairs.map(\.value))
    }

    init(columns: ColumnNames, values: ContiguousArray<SQLiteValue>) {
        self.columns = columns
        self.storage = values
    }

    /// A row that reads the current row of a statement.
    @usableFromInline
    init(columns: ColumnNames, liveStatement: OpaquePointer) {
        self.columns = columns
        self.sqliteStatement = liveStatement
        self.storage = []
    }

    /// Turns a row that reads from a statement into a copy of its values.
    @usableFromInline
    func detach() {
        dropDecodingCache()
        guard let statement = sqliteStatement else { return }
        var values = ContiguousArray<SQLiteValue>()
        values.reserveCapacity(columns.count)
        for index in 0..<columns.count {
            values.append(SQLiteValue(sqliteStatement: statement, column: Int32(index)))
        }
        storage = values
        sqliteStatement = nil
    }

    /// Returns the row after making it a copy of its values.
    func detached() -> Row {
        detach()
        return self
    }

    /// The number of columns.
    public var count: Int { columns.count }

    /// The column names, in order.
    public var columnNames: [String] { columns.names }

    /// The values, in column order.
    public var values: [SQLiteValue] {
        if let statement = sqliteStatement {
            return (0..<columns.count).map { SQLiteValue(sqliteStatement: statement, column: Int32($0)) }
        }
        return Array(storage)
    }

    /// Whether the row has a column of that name (case-insensitive).
    public func hasColumn(_ name: String) -> Bool { columns.index(of: name) != nil }

    /// The index of the first column of that name (case-insensitive).
    public func index(ofColumn name: String) -> Int? { columns.index(of: name) }

    /// The value at a column index. Throws when the index is out of range.
    public subscript(index: Int) -> SQLiteValue {
        get throws { try decode(SQLiteValue.self, at: index) }
    }

    /// The value of a column. Throws when there is no such column.
    public subscript(name: String) -> SQLiteValue {
        get throws { try decode(SQLiteValue.self, named: name) }
    }

    /// The value at a column index, converted. Throws when the index is out
    /// of range or the value does not convert (NULL into a non-optional, a
    /// wrong type, out of range).
    @inlinable
    public subscript<Value: SQLiteValueConvertible>(index: Int) -> Value {
        // Inlined into the caller, like `decode`: called out of line, each
        // read costs a call and its register spills (W4a).
        @inline(__always) get throws { try decode(Value.self, at: index) }
    }

    /// The value of a column, converted. Throws when there is no such column
    /// or the value does not convert.
    @inlinable
    public subscript<Value: SQLiteValueConvertible>(name: String) -> Value {
        @inline(__always) get throws { try decode(Value.self, named: name) }
    }

    /// The value at a column index, converted to `type`.
    @inlinable @inline(__always)
    public func decode<Value: SQLiteValueConvertible>(_ type: Value.Type = Value.self, at index: Int) throws -> Value {
        guard index >= 0 && index < columns.count else { throw indexOutOfRange(index, type: Value.self) }
        return try decodeUnchecked(Value.self, at: index)
    }

    /// The value of a column, converted to `type`.
    @inlinable @inline(__always)
    public func decode<Value: SQLiteValueConvertible>(_ type: Value.Type = Value.self, named name: String) throws
        -> Value
    {
        guard let index = columns.index(of: name, hint: &lookupHint) else {
            throw columnNotFound(name, type: Value.self)
        }
        return try decodeUnchecked(Value.self, at: index)
    }

    // Errors are made out of line, so that reading a value stays small
    // enough to inline.

    @usableFromInline
    func indexOutOfRange(_ index: Int, type: Any.Type) -> ValueConversionError {
        ValueConversionError(.indexOutOfRange(count: columns.count), type: type, columnIndex: index)
    }

    @usableFromInline
    func columnNotFound(_ name: String, type: Any.Type) -> ValueConversionError {
        ValueConversionError(.columnNotFound, type: type, column: name)
    }

    @inlinable @inline(__always)
    func decodeUnchecked<Value: SQLiteValueConvertible>(_ type: Value.Type, at index: Int) throws -> Value {
        do {
            if let statement = sqliteStatement {
                return try Value.read(sqliteStatement: statement, column: Int32(truncatingIfNeeded: index))
            }
            return try Value(sqliteValue: storage[index])
        } catch {
            throw locate(error, index: index)
        }
    }

    /// Adds the column to a conversion error. Out of line, so that reading
    /// a value stays small enough to inline.
    @usableFromInline
    func locate(_ error: any Error, index: Int) -> any Error {
        guard let error = error as? ValueConversionError else { return error }
        return error.located(column: columns.names[index], index: index)
    }

    public var description: String {
        "[" + zip(columnNames, values).map { "\($0): \($1)" }.joined(separator: ", ") + "]"
    }

    /// Rows are equal when they have the same column names and values.
    public static func == (lhs: Row, rhs: Row) -> Bool {
        lhs.columnNames == rhs.columnNames && lhs.values == rhs.values
    }
}
