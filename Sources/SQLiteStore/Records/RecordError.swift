/// A record operation that could not be done: the row it targets does not
/// exist, or the record type is not set up for the operation.
///
/// Errors from SQLite itself (a duplicate primary key, a NOT NULL column
/// left out) are ``SQLiteError``s, and values that do not convert are
/// ``ValueConversionError``s.
///
/// ```swift
/// do {
///     try person.update(db)
/// } catch let error as RecordError where error.isNotFound {
///     // deleted meanwhile
/// }
/// ```
public enum RecordError: Error, Sendable, Equatable, CustomStringConvertible {
    /// ``PersistableRecord/update(_:)`` found no row with the record's
    /// primary key (the key is shown: keys identify rows, they are not
    /// expected to be private).
    case recordNotFound(table: String, primaryKey: String, key: SQLiteValue)
    /// The record type cannot do the operation as declared: it encodes no
    /// columns, or not its primary key column.
    case invalidRecord(type: String, reason: String)

    /// Whether this is ``recordNotFound(table:primaryKey:key:)``.
    public var isNotFound: Bool {
        if case .recordNotFound = self { true } else { false }
    }

    public var description: String {
        switch self {
        case .recordNotFound(let table, let primaryKey, let key):
            "record not found: no row in \(quotedIdentifier(table)) with \(quotedIdentifier(primaryKey)) = \(key)"
        case .invalidRecord(let type, let reason):
            "invalid record \(type): \(reason)"
        }
    }
}
