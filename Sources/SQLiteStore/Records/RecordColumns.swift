/// The column values a ``PersistableRecord`` writes, in the order it writes
/// them.
///
/// ```swift
/// func encode(to columns: inout RecordColumns) {
///     columns["id"] = id
///     columns["name"] = name
///     columns["age"] = age        // an Int?: nil is NULL
///     columns["note"] = nil       // NULL
/// }
/// ```
///
/// Setting a column twice keeps the last value. A value that SQLite cannot
/// store (a NaN, a `UInt64` above `Int64.max`, a date outside years
/// 0000-9999) makes the write that encoded it throw a
/// ``ValueConversionError`` naming the column, before anything runs.
public struct RecordColumns {
    /// The values written, in column order.
    @usableFromInline var values: ContiguousArray<SQLiteValue>
    /// The names written last time, in order and distinct. While a record
    /// writes them again in that order, which is the common case, only
    /// values are stored, and each name is checked against one entry.
    @usableFromInline let expected: ContiguousArray<String>
    /// The names written, once they differ from `expected`; nil before.
    @usableFromInline var names: ContiguousArray<String>?
    /// The first value that could not be converted (an existential, so that
    /// copying the columns stays cheap).
    @usableFromInline var conversionError: (any Error)?
    /// What the record type keeps for `Encodable` records, when the columns
    /// come from a connection.
    var encodingCache: RecordEncodingCache?

    /// An empty set of columns.
    public init() {
        self.init(reusing: [], expected: [])
    }

    @usableFromInline
    init(reusing values: ContiguousArray<SQLiteValue>, expected: ContiguousArray<String>) {
        self.values = values
        self.expected = expected
    }

    /// The value written for a column, converted to `Value`; nil when none
    /// was written or it does not convert. Setting a value converts it;
    /// setting nil writes NULL.
    ///
    /// The subscript a property is written through: `columns["age"] = age`.
    @inlinable
    public subscript<Value: SQLiteValueConvertible>(column: String) -> Value? {
        get { self[column].flatMap { try? Value(sqliteValue: $0) } }
        // Inlined into `encode(to:)`: called out of line, the setters of the
        // value types are merged into one that converts through a function
        // pointer (about 60 instructions a column in W5a).
        @inline(__always)
        set {
            guard let newValue else { return set(.null, forColumn: column) }
            do {
                set(try newValue.sqliteValue, forColumn: column)
            } catch {
                recordFailure(error, type: Value.self, column: column)
            }
        }
    }

    /// The value written for a column, or nil when none was. Setting nil
    /// writes NULL: `columns["note"] = nil`.
    public subscript(column: String) -> SQLiteValue? {
        get { columnNames.firstIndex(of: column).map { values[$0] } }
        set { set(newValue ?? .null, forColumn: column) }
    }

    /// The columns written, in order.
    public var columnNames: [String] {
        if let names { return Array(names) }
        return Array(expected[0..<values.count])
    }

    /// The number of columns written.
    public var count: Int { values.count }

    /// Whether the columns written are exactly the expected ones, in order.
    var isExpected: Bool { names == nil && values.count == expected.count }

    /// Writes a value.
    @inlinable @inline(__always)
    public mutating func set(_ value: SQLiteValue, forColumn column: String) {
        let position = values.count
        if names == nil && position < expected.count && expected[position] == column {
            values.append(value)
        } else {
            setNamed(value, forColumn: column)
        }
    }

    /// Writes a value whose column is not the next expected one.
    @usableFromInline
    mutating func setNamed(_ value: SQLiteValue, forColumn column: String) {
        if names == nil { names = ContiguousArray(expected[0..<values.count]) }
        if let existing = names?.firstIndex(of: column) {
            values[existing] = value
        } else {
            names?.append(column)
            values.append(value)
        }
    }

    /// Keeps the first conversion failure and writes NULL in its place.
    @usableFromInline
    mutating func recordFailure(_ error: any Error, type: Any.Type, column: String) {
        if conversionError == nil {
            conversionError =
                (error as? ValueConversionError)?.located(column: column, index: nil)
                ?? ValueConversionError(.notStorable(String(describing: error)), type: type, column: column)
        }
        set(.null, forColumn: column)
    }

    /// Whether the names written are `names`, in order.
    func hasNames(_ names: ContiguousArray<String>) -> Bool {
        if isExpected && names == expected { return true }
        return columnNames.elementsEqual(names)
    }
}
