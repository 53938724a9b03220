import Foundation

/// A value could not be converted between SQLite and Swift: a NULL where a
/// value is required, a value of the wrong type or out of range, a missing
/// column.
///
/// The description names the column and the Swift type but never the value,
/// which may be private:
///
/// ```text
/// cannot read column "age" (index 3) as Int: found NULL
/// ```
public struct ValueConversionError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// Why the conversion failed.
    public enum Reason: Sendable, Equatable {
        /// NULL was found where the Swift type cannot hold it.
        case unexpectedNull
        /// A value of a storage class that the Swift type does not accept.
        case typeMismatch(found: SQLiteValue.StorageClass)
        /// The value does not fit the Swift type (or SQLite's 64-bit integer).
        case outOfRange
        /// The value has the right storage class but an unreadable format,
        /// such as text that is not a date.
        case invalidFormat(String)
        /// The row has no column of that name.
        case columnNotFound
        /// The row has no column at that index.
        case indexOutOfRange(count: Int)
        /// A Swift value that SQLite cannot store (such as NaN).
        case notStorable(String)
    }

    /// Why the conversion failed.
    public var reason: Reason
    /// The Swift type that was asked for (or written).
    public var type: String
    /// The column name, when the value came from a row.
    public var column: String?
    /// The column index, when the value came from a row.
    public var columnIndex: Int?
    /// The SQL of the statement that produced the row, when known.
    public var sql: String?

    /// Creates an error.
    public init(
        _ reason: Reason, type: Any.Type, column: String? = nil, columnIndex: Int? = nil, sql: String? = nil
    ) {
        self.reason = reason
        self.type = String(describing: type)
        self.column = column
        self.columnIndex = columnIndex
        self.sql = sql
    }

    /// Returns the error with the column it happened in.
    @usableFromInline
    func located(column: String?, index: Int?, sql: String? = nil) -> ValueConversionError {
        var copy = self
        if copy.column == nil { copy.column = column }
        if copy.columnIndex == nil { copy.columnIndex = index }
        if copy.sql == nil { copy.sql = sql }
        return copy
    }

    public var description: String {
        var text: String
        switch reason {
        case .notStorable(let why):
            return "cannot store \(type) in SQLite: \(why)"
        case .columnNotFound:
            text = "no column \"\(column ?? "?")\" in row"
            if let sql { text += " of: \(sql)" }
            return text + " (asked for \(type))"
        case .indexOutOfRange(let count):
            return "column index \(columnIndex ?? -1) out of range: the row has \(count) columns (asked for \(type))"
        default:
            break
        }
        text = "cannot read "
        if let column {
            text += "column \"\(column)\""
            if let columnIndex { text += " (index \(columnIndex))" }
        } else if let columnIndex {
            text += "column \(columnIndex)"
        } else {
            text += "value"
        }
        text += " as \(type): "
        switch reason {
        case .unexpectedNull: text += "found NULL"
        case .typeMismatch(let found): text += "found \(found)"
        case .outOfRange: text += "value out of range"
        case .invalidFormat(let what): text += what
        default: break
        }
        return text
    }

    public var errorDescription: String? { description }
}
