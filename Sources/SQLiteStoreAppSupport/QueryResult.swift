import SQLiteStore

/// The rows of a query loaded by ``DBManager/loadData(_:arguments:)``: the
/// column names and every row's typed values, NULLs in place.
///
/// ```swift
/// let result = try manager.loadData("SELECT firstname, age FROM peopleInfo")
/// result.columnNames          // ["firstname", "age"]
/// for row in result {
///     let name: String = try row["firstname"]
///     let age: Int? = try row["age"]      // NULL is nil, never a shorter row
/// }
/// ```
///
/// Unlike a `Row` read from a `Database`, a result is a value that can
/// be kept and sent across threads.
public struct QueryResult: Sendable, Equatable, RandomAccessCollection {
    /// The column names, in order.
    public var columnNames: [String] { columns.names }
    /// The rows, in the order the query returned them.
    public let rows: [ResultRow]
    let columns: ResultColumns

    /// Creates a result from column names and rows of values; each row must
    /// have one value per column.
    public init(columnNames: [String], rows: [[SQLiteValue]]) {
        precondition(rows.allSatisfy { $0.count == columnNames.count }, "each row needs one value per column")
        let columns = ResultColumns(columnNames)
        self.columns = columns
        self.rows = rows.map { ResultRow(columns: columns, values: $0) }
    }

    /// The index of the first column of that name (case-insensitive), as
    /// the original tutorials' `arrColumnNames.indexOfObject:`.
    public func index(ofColumn name: String) -> Int? { columns.index(of: name) }

    public var startIndex: Int { rows.startIndex }
    public var endIndex: Int { rows.endIndex }
    public subscript(position: Int) -> ResultRow { rows[position] }

    public static func == (lhs: QueryResult, rhs: QueryResult) -> Bool {
        lhs.columnNames == rhs.columnNames && lhs.rows == rhs.rows
    }
}

/// One row of a ``QueryResult``: a value per column, NULL included.
public struct ResultRow: Sendable, Equatable, CustomStringConvertible {
    /// The values, in column order; always one per column.
    public let values: [SQLiteValue]
    let columns: ResultColumns

    init(columns: ResultColumns, values: [SQLiteValue]) {
        self.columns = columns
        self.values = values
    }

    /// The column names, in order.
    public var columnNames: [String] { columns.names }

    /// The value at a column index. Throws when the index is out of range.
    public subscript(index: Int) -> SQLiteValue {
        get throws { try decode(SQLiteValue.self, at: index) }
    }

    /// The value of a column (case-insensitive name). Throws when there is
    /// no such column.
    public subscript(name: String) -> SQLiteValue {
        get throws { try decode(SQLiteValue.self, named: name) }
    }

    /// The value at a column index, converted. Throws when the index is out
    /// of range or the value does not convert (NULL into a non-optional, a
    /// wrong type, out of range).
    public subscript<Value: SQLiteValueConvertible>(index: Int) -> Value {
        get throws { try decode(Value.self, at: index) }
    }

    /// The value of a column, converted. Throws when there is no such column
    /// or the value does not convert.
    public subscript<Value: SQLiteValueConvertible>(name: String) -> Value {
        get throws { try decode(Value.self, named: name) }
    }

    /// The value at a column index, converted to `type`.
    public func decode<Value: SQLiteValueConvertible>(_ type: Value.Type = Value.self, at index: Int) throws -> Value {
        guard values.indices.contains(index) else {
            throw ValueConversionError(.indexOutOfRange(count: values.count), type: Value.self, columnIndex: index)
        }
        do {
            return try Value(sqliteValue: values[index])
        } catch var error as ValueConversionError {
            if error.column == nil { error.column = columns.names[index] }
            if error.columnIndex == nil { error.columnIndex = index }
            throw error
        }
    }

    /// The value of a column, converted to `type`.
    public func decode<Value: SQLiteValueConvertible>(_ type: Value.Type = Value.self, named name: String) throws
        -> Value
    {
        guard let index = columns.index(of: name) else {
            throw ValueConversionError(.columnNotFound, type: Value.self, column: name)
        }
        return try decode(Value.self, at: index)
    }

    public var description: String {
        "[" + zip(columnNames, values).map { "\($0): \($1)" }.joined(separator: ", ") + "]"
    }

    public static func == (lhs: ResultRow, rhs: ResultRow) -> Bool {
        lhs.columnNames == rhs.columnNames && lhs.values == rhs.values
    }
}

/// The column names of a ``QueryResult``, shared by all its rows.
///
/// Lookup by name is case-insensitive for ASCII letters, as SQLite compares
/// identifiers, and finds the first column of that name.
final class ResultColumns: Sendable {
    let names: [String]

    init(_ names: [String]) {
        self.names = names
    }

    func index(of name: String) -> Int? {
        if let exact = names.firstIndex(of: name) { return exact }
        let wanted = Self.asciiLowercased(name)
        return names.firstIndex { Self.asciiLowercased($0) == wanted }
    }

    /// `text` with only ASCII letters lowercased: SQLite folds no others.
    private static func asciiLowercased(_ text: String) -> [UInt8] {
        text.utf8.map { byte in (65...90).contains(byte) ? byte + 32 : byte }
    }
}
