import SQLiteStore

/// A column of an app's table, named once: each record declares its
/// columns as the cases of its `Columns` enum, whose raw values are the
/// names in the schema (unquoted), and its SQL, `init(row:)`, `encode(to:)`, search
/// index and sort keys name them through those cases.
///
/// ```swift
/// extension Person {
///     enum Columns: String, TableColumn {
///         case id = "peopleInfoID", firstName = "firstname", lastName = "lastname", age
///     }
/// }
/// let order: SQL = "\(Person.Columns.age), \(Person.Columns.id)"   // "age", "peopleInfoID"
/// let first: String = try row[Person.Columns.firstName]
/// columns[Person.Columns.age] = 36
/// ```
///
/// A column interpolated into ``SQL`` is an identifier, quoted by the
/// library (``SQL/StringInterpolation/appendInterpolation(identifier:)``),
/// never a value. The migrations that made a table keep their SQL as it
/// shipped: a test checks that each record's cases are its table's columns.
protocol TableColumn: RawRepresentable, CaseIterable, Sendable, Hashable where RawValue == String {}

extension SQL.StringInterpolation {
    /// Appends a column's name, quoted as an identifier.
    mutating func appendInterpolation(_ column: some TableColumn) {
        appendInterpolation(identifier: column.rawValue)
    }

    /// Appends columns' names, each quoted, separated by commas.
    mutating func appendInterpolation<Column: TableColumn>(columns: [Column]) {
        appendInterpolation(identifiers: columns.map(\.rawValue))
    }
}

extension Row {
    /// The value of a column, converted. Throws when there is no such
    /// column or the value does not convert.
    subscript<Value: SQLiteValueConvertible>(column: some TableColumn) -> Value {
        @inline(__always) get throws { try decode(Value.self, named: column.rawValue) }
    }

    /// Whether the row has that column.
    func hasColumn(_ column: some TableColumn) -> Bool { hasColumn(column.rawValue) }
}

extension RecordColumns {
    /// The value written for a column; setting nil writes NULL.
    subscript<Value: SQLiteValueConvertible>(column: some TableColumn) -> Value? {
        @inline(__always) get { self[column.rawValue] }
        // Inlined into `encode(to:)`, as the library's own setter is: called
        // out of line, the value types' setters merge into one that converts
        // through a function pointer (W6a: about 350 instructions a row).
        @inline(__always) set { self[column.rawValue] = newValue }
    }
}

extension FullTextIndex {
    /// The full-text index `name` of some of a record's columns, keyed by
    /// its `rowID` column.
    init<Column: TableColumn>(_ name: String, on table: String, columns: [Column], rowID: Column) {
        self.init(name, on: table, columns: columns.map(\.rawValue), rowID: rowID.rawValue)
    }
}
