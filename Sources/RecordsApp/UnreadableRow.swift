import Foundation
import SQLiteStore

/// A stored value that the app cannot read as the field it holds: text in
/// an age, a blob in a name, a price no decimal can hold. The value stays
/// in the database as it is.
public struct UnreadableValue: Sendable, Hashable, CustomStringConvertible {
    /// The field, as people call it ("first name").
    public let field: String
    /// Where it is stored: `table.column`.
    public let column: String
    /// What is stored, described for people ("the text 'abc'", "a blob of
    /// 3 bytes"); text is shortened and control characters are escaped.
    public let stored: String
    /// What the field must be ("a whole number", "text").
    public let expected: String

    /// Creates a description of an unreadable value.
    public init(field: String, column: String, stored: String, expected: String) {
        self.field = field
        self.column = column
        self.stored = stored
        self.expected = expected
    }

    /// "its age (peopleInfo.age) is the text 'abc', not a whole number"
    public var description: String { "its \(field) (\(column)) is \(stored), not \(expected)" }

    /// Describes a stored value for a message: short, one line, no control
    /// characters.
    static func describe(_ value: SQLiteValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let number): return "the integer \(number)"
        case .real(let number): return "the real number \(number)"
        case .blob(let bytes): return "a blob of \(bytes.count) byte\(bytes.count == 1 ? "" : "s")"
        case .textBytes(let bytes):
            return "text of \(bytes.count) byte\(bytes.count == 1 ? "" : "s") that is not valid UTF-8"
        case .text(let text): return "the text '\(excerpt(text))'"
        }
    }

    /// At most 40 characters of `text`, with control and bidirectional
    /// characters written as `\u{...}`, so that a message cannot break a
    /// line or steer a terminal.
    static func excerpt(_ text: String) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == 40 {
                result += "..."
                break
            }
            let value = scalar.value
            let isBidi = (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
            if scalar.properties.generalCategory == .control || isBidi {
                result += "\\u{" + String(value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return result
    }
}

/// A stored row that the app cannot read, with every value at fault. The
/// row itself is left as it is: editing the fields named, or deleting the
/// row, is how it is mended.
///
/// ```swift
/// do {
///     _ = try store.person(id: 3)
/// } catch let error as UnreadableRowError {
///     print(error)   // person 3 cannot be read: its age (peopleInfo.age) is the text 'abc', not a whole number; ...
/// }
/// ```
public struct UnreadableRowError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What the row is ("person", "contact", "coffee", "user").
    public let kind: String
    /// The row's ID.
    public let id: Int64
    /// The values that cannot be read, in column order.
    public let values: [UnreadableValue]

    /// Creates an error.
    public init(kind: String, id: Int64, values: [UnreadableValue]) {
        self.kind = kind
        self.id = id
        self.values = values
    }

    /// The fields at fault ("age").
    public var fields: [String] { values.map(\.field) }

    public var description: String {
        "\(kind) \(id) cannot be read: " + values.map(\.description).joined(separator: "; ")
            + "; give \(values.count == 1 ? "it a new value" : "them new values"), or delete the \(kind)"
    }
}

/// What a list read: every row that could be read, in order, and the rows
/// that could not, so that one odd row never hides the others.
///
/// ```swift
/// let listed = try store.list(sortedBy: .name)
/// show(listed.records)
/// for problem in listed.unreadable { warn(problem) }   // names the row and the column
/// ```
public struct RecordList<Record: Sendable>: Sendable {
    /// The rows that were read, in the list's order.
    public var records: [Record]
    /// The rows that could not be read, in the list's order.
    public var unreadable: [UnreadableRowError]

    /// Creates a list.
    public init(records: [Record], unreadable: [UnreadableRowError] = []) {
        self.records = records
        self.unreadable = unreadable
    }

    /// Whether every row was read.
    public var isComplete: Bool { unreadable.isEmpty }

    /// The records, or the first unreadable row as the error.
    public func get() throws -> [Record] {
        if let first = unreadable.first { throw first }
        return records
    }
}

extension RecordList: Equatable where Record: Equatable {}

/// Reads a row's columns into a model's fields, collecting every value that
/// does not fit instead of stopping at the first.
struct RowReader {
    let row: Row
    let table: String
    private(set) var problems: [UnreadableValue] = []
    /// Whether every value read so far was of its field's own storage
    /// class (TEXT or NULL for text, INTEGER or NULL for a number), so the
    /// fields, with NULL kept apart from empty text, are the stored values
    /// and give the record's version without reading the row again. False
    /// after anything converted or unreadable: such a row's version is
    /// hashed from its stored values (`RecordVersion.of(kind:row:columns:)`).
    private(set) var readsAsStored = true

    init(_ row: Row, table: String) {
        self.row = row
        self.table = table
    }

    /// The record's key: an INTEGER; anything else converts as `Int64`
    /// reads it (and throws as that does).
    mutating func key(_ column: some TableColumn) throws -> Int64 {
        if let value = try? row[column] as SQLiteValue, case .integer(let id) = value { return id }
        readsAsStored = false
        return try row[column]
    }

    /// TEXT, or nil for NULL; anything else is a problem (and nil).
    mutating func text(_ column: some TableColumn, field: String) throws -> String? {
        // The common case straight from the statement, as the type it is:
        // only valid UTF-8 TEXT or NULL read as `String?`.
        if let text = try? row.decode(String?.self, named: column.rawValue) { return text }
        readsAsStored = false
        let value: SQLiteValue = try row[column]
        switch value {
        case .null: return nil
        case .text(let text): return text
        default:
            fail(value, column: column, field: field, expected: "text")
            return nil
        }
    }

    /// TEXT as it is, and a number as its text (a date a tool stored as
    /// 20000101); nil for NULL; a blob is a problem (and nil).
    mutating func textOrNumber(_ column: some TableColumn, field: String) throws -> String? {
        let value: SQLiteValue = try row[column]
        switch value {
        case .null: return nil
        case .text(let text): return text
        case .integer(let number):
            readsAsStored = false
            return String(number)
        case .real(let number):
            readsAsStored = false
            return String(number)
        case .textBytes, .blob:
            fail(value, column: column, field: field, expected: "text")
            return nil
        }
    }

    /// An INTEGER (or a REAL that is a whole number in range), or nil for
    /// NULL; anything else is a problem (and nil).
    mutating func integer(_ column: some TableColumn, field: String) throws -> Int? {
        // As a value first, not as `Int?`: that would read a whole REAL as
        // well, which the version must tell from an INTEGER.
        let value: SQLiteValue = try row[column]
        if case .null = value { return nil }
        if case .integer(let number) = value, let exact = Int(exactly: number) { return exact }
        readsAsStored = false
        guard let number = try? Int(sqliteValue: value) else {
            fail(value, column: column, field: field, expected: "a whole number")
            return nil
        }
        return number
    }

    /// Records a value that does not fit.
    mutating func fail(_ value: SQLiteValue, column: some TableColumn, field: String, expected: String) {
        readsAsStored = false
        problems.append(
            UnreadableValue(
                field: field, column: "\(table).\(column.rawValue)", stored: UnreadableValue.describe(value),
                expected: expected))
    }

    /// Throws the row's problems, if any.
    func check(kind: String, id: Int64) throws {
        if !problems.isEmpty { throw UnreadableRowError(kind: kind, id: id, values: problems) }
    }
}

/// Reads every row of a query into records, keeping the rows that cannot
/// be read apart.
func readList<Record>(
    _ db: Database, _ sql: SQL, arguments: StatementArguments = StatementArguments(),
    _ read: (Row) throws -> Record
) throws -> RecordList<Record> {
    var list = RecordList<Record>(records: [])
    let cursor = try db.fetchCursor(sql, arguments: arguments)
    while let row = try cursor.next() {
        do {
            list.records.append(try read(row))
        } catch let error as UnreadableRowError {
            list.unreadable.append(error)
        }
    }
    return list
}
