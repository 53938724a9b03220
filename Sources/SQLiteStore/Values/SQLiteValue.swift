import Foundation

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// A value as SQLite stores it: one of its five storage classes.
///
/// NULL is a value like any other: rows keep it in place, and reading it into
/// a non-optional Swift type is a thrown error.
///
/// ```swift
/// let value: SQLiteValue = try row["age"]   // .integer(42) or .null
/// let age: Int? = try row["age"]            // 42 or nil
/// ```
///
/// TEXT that is not valid UTF-8 (which SQLite stores as given) cannot be a
/// Swift `String` without changing its bytes, so it is read as
/// ``textBytes(_:)``: the stored bytes exactly, still TEXT. Nothing is
/// lost, and nothing changes type: its ``storageClass`` is TEXT, as
/// `typeof()` says in SQL, and writing the value back stores the same bytes
/// as TEXT again, so a row read and written back keeps every column's type
/// and bytes. Reading such a column as `Data` or `[UInt8]` returns its
/// bytes; reading it as `String` throws a ``ValueConversionError`` rather
/// than replacing the bad bytes with U+FFFD.
public enum SQLiteValue: Sendable, Hashable, CustomStringConvertible {
    /// SQL NULL.
    case null
    /// A signed 64-bit integer.
    case integer(Int64)
    /// An IEEE 754 double. SQLite cannot store NaN.
    case real(Double)
    /// UTF-8 text, which may contain NUL characters. TEXT read from the
    /// database that is not valid UTF-8 is ``textBytes(_:)`` instead (see
    /// the type's overview).
    case text(String)
    /// TEXT given as its bytes: what reading TEXT that is not valid UTF-8
    /// produces, the bytes as stored. Bound or returned from a SQL
    /// function, it is TEXT with exactly these bytes (SQLite does not check
    /// them). Reading never produces it for valid UTF-8, which is
    /// ``text(_:)``; a value made by hand from valid UTF-8 bytes stores the
    /// same TEXT as ``text(_:)`` but does not compare equal to it.
    case textBytes(Data)
    /// Bytes.
    case blob(Data)

    /// SQLite's storage classes.
    public enum StorageClass: String, Sendable, CustomStringConvertible {
        case null = "NULL"
        case integer = "INTEGER"
        case real = "REAL"
        case text = "TEXT"
        case blob = "BLOB"
        public var description: String { rawValue }
    }

    /// The value's storage class.
    public var storageClass: StorageClass {
        switch self {
        case .null: .null
        case .integer: .integer
        case .real: .real
        case .text, .textBytes: .text
        case .blob: .blob
        }
    }

    /// Whether the value is NULL.
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// The value as an SQL literal, for display (values are never spliced
    /// into executed SQL by this library).
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let value): return quoted(value, in: "'")
        case .textBytes(let data): return "CAST(\(Self.hexLiteral(data)) AS TEXT)"
        case .blob(let data): return Self.hexLiteral(data)
        }
    }

    private static func hexLiteral(_ data: Data) -> String {
        let hex = data.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return byte < 16 ? "0" + digits : digits
        }.joined()
        return "X'\(hex)'"
    }

    /// Reads column `column` of the current row of a prepared statement.
    @inlinable
    public init(sqliteStatement statement: OpaquePointer, column: Int32) {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER:
            self = .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT:
            self = .real(sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            self = Self(sqliteTextColumn: column, of: statement)
        case SQLITE_BLOB:
            // sqlite3_column_blob must be called before sqlite3_column_bytes,
            // and returns NULL for an empty blob.
            let bytes = sqlite3_column_blob(statement, column)
            let count = Int(sqlite3_column_bytes(statement, column))
            if let bytes, count > 0 {
                self = .blob(Data(bytes: bytes, count: count))
            } else {
                self = .blob(Data())
            }
        default:
            self = .null
        }
    }

    /// A TEXT column: `.text` when its bytes are valid UTF-8, else
    /// `.textBytes` of the bytes as stored.
    @usableFromInline
    init(sqliteTextColumn column: Int32, of statement: OpaquePointer) {
        // sqlite3_column_text must be called before sqlite3_column_bytes.
        guard let text = sqlite3_column_text(statement, column) else {
            self = .text("")
            return
        }
        self.init(textBytes: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, column))))
    }

    /// The bytes of a TEXT value: `.text` when they are valid UTF-8, else
    /// `.textBytes` of the bytes as stored, never repaired.
    @usableFromInline
    init(textBytes bytes: UnsafeBufferPointer<UInt8>) {
        if let string = String(validUTF8: bytes) {
            self = .text(string)
        } else {
            self = .textBytes(Data(buffer: bytes))
        }
    }

    /// Binds the value to parameter `index` (1-based) of a prepared statement
    /// and returns SQLite's result code.
    ///
    /// Small enough to inline: for a value of a known case, such as the
    /// `.integer` of an `Int`, only the `sqlite3_bind_*` call remains.
    @inlinable
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        switch self {
        case .null: sqlite3_bind_null(statement, index)
        case .integer(let value): sqlite3_bind_int64(statement, index, value)
        case .real(let value): sqlite3_bind_double(statement, index, value)
        case .text(let value): Self.bind(text: value, to: statement, at: index)
        case .textBytes(let data): Self.bind(textBytes: data, to: statement, at: index)
        case .blob(let data): Self.bind(blob: data, to: statement, at: index)
        }
    }

    /// Whether the value is non-empty text or a non-empty blob: bytes that
    /// a write can lend to SQLite instead of having them copied (a null
    /// pointer, which empty bytes may have, would bind NULL).
    var isLendable: Bool {
        switch self {
        case .text(let text): !text.utf8.isEmpty
        case .textBytes(let data), .blob(let data): !data.isEmpty
        default: false
        }
    }

    @usableFromInline
    static func bind(text: String, to statement: OpaquePointer, at index: Int32) -> Int32 {
        var text = text
        // The explicit byte count keeps embedded NUL characters.
        return text.withUTF8 { buffer in
            guard let base = buffer.baseAddress, buffer.count > 0 else {
                return sqlite3_bind_text(statement, index, "", 0, sqliteTransient)
            }
            return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { chars in
                sqlite3_bind_text64(statement, index, chars, UInt64(buffer.count), sqliteTransient, UInt8(SQLITE_UTF8))
            }
        }
    }

    @usableFromInline
    static func bind(textBytes: Data, to statement: OpaquePointer, at index: Int32) -> Int32 {
        textBytes.withUnsafeBytes { buffer in
            // A NULL pointer would bind NULL: empty bytes are empty text.
            guard let base = buffer.baseAddress, buffer.count > 0 else {
                return sqlite3_bind_text(statement, index, "", 0, sqliteTransient)
            }
            return sqlite3_bind_text64(
                statement, index, base.assumingMemoryBound(to: CChar.self), UInt64(buffer.count), sqliteTransient,
                UInt8(SQLITE_UTF8))
        }
    }

    @usableFromInline
    static func bind(blob: Data, to statement: OpaquePointer, at index: Int32) -> Int32 {
        // A NULL pointer would bind NULL, so an empty blob is a zeroblob.
        if blob.isEmpty { return sqlite3_bind_zeroblob(statement, index, 0) }
        return blob.withUnsafeBytes { buffer in
            sqlite3_bind_blob64(statement, index, buffer.baseAddress, UInt64(buffer.count), sqliteTransient)
        }
    }
}

extension SQLiteValue: ExpressibleByNilLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByBooleanLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}

extension String {
    /// Decodes UTF-8 bytes, keeping embedded NUL characters; nil when they
    /// are not valid UTF-8 (decoding would have replaced some with U+FFFD).
    @usableFromInline
    init?(validUTF8 bytes: UnsafeBufferPointer<UInt8>) {
        var string = String(decoding: bytes, as: UTF8.self)
        // Repair changes the bytes, not always their count (a truncated
        // 3-byte sequence becomes one 3-byte U+FFFD), so compare them.
        let isSame = string.withUTF8 { decoded in
            decoded.count == bytes.count
                && (bytes.isEmpty || memcmp(decoded.baseAddress!, bytes.baseAddress!, bytes.count) == 0)
        }
        guard isSame else { return nil }
        self = string
    }
}
