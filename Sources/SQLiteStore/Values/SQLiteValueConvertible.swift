import Foundation

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// A Swift type that converts to and from a ``SQLiteValue``.
///
/// The library provides conversions for every integer type, `Double`,
/// `Float`, `Bool`, `String`, `Data`, `[UInt8]`, `Date`, `UUID`, `Decimal`,
/// ``SQLiteValue`` itself, and `Optional` of any of them (nil is NULL).
///
/// Conform your own types by converting to and from one of those:
///
/// ```swift
/// struct Email: SQLiteValueConvertible {
///     var address: String
///     var sqliteValue: SQLiteValue { .text(address) }
///     init(sqliteValue: SQLiteValue) throws { address = try String(sqliteValue: sqliteValue) }
/// }
/// ```
///
/// Conversions never wrap, truncate or trap: a value that does not fit is a
/// thrown ``ValueConversionError``.
public protocol SQLiteValueConvertible {
    /// The value to store. Throws when SQLite cannot represent the value
    /// (a `UInt64` above `Int64.max`, a NaN).
    var sqliteValue: SQLiteValue { get throws }

    /// Creates a value from what SQLite returned. Throws a
    /// ``ValueConversionError`` for NULL (unless the type is optional), for a
    /// storage class the type does not accept, or for a value out of range.
    init(sqliteValue: SQLiteValue) throws
}

/// The library's fast path: reading a column of the current row of a
/// prepared statement without building a ``SQLiteValue`` first. The
/// library's numeric and text types conform; other types go through
/// ``SQLiteValueConvertible/init(sqliteValue:)``.
///
/// A separate protocol, so that conforming a type to
/// ``SQLiteValueConvertible`` means the two value-level requirements only.
/// The check in `read(sqliteStatement:column:)` is
/// a dynamic cast that the optimizer resolves at compile time once generic
/// code is specialized for a concrete type, so the fast path costs nothing.
@usableFromInline
protocol SQLiteColumnReadable {
    /// Reads the value straight from column `column` (from 0) of the current
    /// row of a prepared statement (`sqlite3_stmt*`).
    static func readColumn(sqliteStatement: OpaquePointer, column: Int32) throws -> Self
}

extension SQLiteValueConvertible {
    /// Reads column `column` of the current row of a prepared statement:
    /// directly for the types with a fast path, through a ``SQLiteValue``
    /// for the others.
    @inlinable @inline(__always)
    static func read(sqliteStatement: OpaquePointer, column: Int32) throws -> Self {
        if let fast = Self.self as? any SQLiteColumnReadable.Type {
            // Cannot fail: `fast` is `Self.self`.
            return try fast.readColumn(sqliteStatement: sqliteStatement, column: column) as! Self
        }
        return try Self(sqliteValue: SQLiteValue(sqliteStatement: sqliteStatement, column: column))
    }
}

// MARK: - SQLiteValue

extension SQLiteValue: SQLiteValueConvertible, SQLiteColumnReadable {
    public var sqliteValue: SQLiteValue { self }
    public init(sqliteValue: SQLiteValue) { self = sqliteValue }

    // Conforming makes `read(sqliteStatement:column:)`'s cast succeed at
    // compile time: for a type that does not conform, code inlined into
    // another module cannot rule the conformance out and asks the runtime
    // on every read (about 300 instructions, more than the read itself).
    @inlinable static func readColumn(sqliteStatement: OpaquePointer, column: Int32) throws -> SQLiteValue {
        SQLiteValue(sqliteStatement: sqliteStatement, column: column)
    }
}

// MARK: - Optional

extension Optional: SQLiteValueConvertible where Wrapped: SQLiteValueConvertible {
    public var sqliteValue: SQLiteValue {
        get throws {
            switch self {
            case .none: .null
            case .some(let wrapped): try wrapped.sqliteValue
            }
        }
    }

    public init(sqliteValue: SQLiteValue) throws {
        if case .null = sqliteValue {
            self = .none
        } else {
            self = .some(try Wrapped(sqliteValue: sqliteValue))
        }
    }

}

extension Optional: SQLiteColumnReadable where Wrapped: SQLiteColumnReadable {
    @inlinable
    static func readColumn(sqliteStatement: OpaquePointer, column: Int32) throws -> Self {
        if sqlite3_column_type(sqliteStatement, column) == SQLITE_NULL { return .none }
        return .some(try Wrapped.readColumn(sqliteStatement: sqliteStatement, column: column))
    }
}

// MARK: - Integers

/// Converts an integer value from SQLite: INTEGER as is, REAL only when it is
/// a whole number in range.
@inlinable
func integerFromSQLite<T: FixedWidthInteger>(_ value: SQLiteValue, as type: T.Type) throws -> T {
    switch value {
    case .integer(let integer):
        guard let result = T(exactly: integer) else { throw ValueConversionError(.outOfRange, type: T.self) }
        return result
    case .real(let real):
        guard let result = T(exactly: real) else {
            if real.isFinite && real.rounded() == real { throw ValueConversionError(.outOfRange, type: T.self) }
            throw ValueConversionError(.invalidFormat("found a REAL that is not a whole number"), type: T.self)
        }
        return result
    case .null:
        throw ValueConversionError(.unexpectedNull, type: T.self)
    default:
        throw ValueConversionError(.typeMismatch(found: value.storageClass), type: T.self)
    }
}

/// Reads an integer column without building a ``SQLiteValue`` in the common case.
@inlinable
func readInteger<T: FixedWidthInteger>(_ statement: OpaquePointer, _ column: Int32, as type: T.Type) throws -> T {
    if let value = sqlite3_column_value(statement, column), sqlite3_value_type(value) == SQLITE_INTEGER,
        let result = T(exactly: sqlite3_value_int64(value))
    {
        return result
    }
    return try readIntegerSlowly(statement, column, as: T.self)
}

/// The uncommon cases of ``readInteger(_:_:as:)``, kept out of line so that
/// the common one inlines into the caller. Inlinable nonetheless: a
/// non-inlinable generic function called from a conformance's inlinable
/// witness keeps client modules from devirtualizing that witness, which then
/// costs an indirect call per value.
@inlinable @inline(never)
func readIntegerSlowly<T: FixedWidthInteger>(_ statement: OpaquePointer, _ column: Int32, as type: T.Type) throws
    -> T
{
    try integerFromSQLite(SQLiteValue(sqliteStatement: statement, column: column), as: T.self)
}

/// Reads a column through one `sqlite3_column_value` call: the value's type
/// and content then come from the cheap `sqlite3_value_*` accessors, instead
/// of a second `sqlite3_column_*` call that would look the column up again.
///
/// The value is "unprotected" in SQLite's terms, which only matters to a
/// connection shared by threads without a mutex; a ``Database`` is used by
/// one thread at a time.
@inlinable
func columnValue(_ statement: OpaquePointer, _ column: Int32) -> (value: OpaquePointer, type: Int32)? {
    guard let value = sqlite3_column_value(statement, column) else { return nil }
    return (value, sqlite3_value_type(value))
}

/// Converts an integer to SQLite's 64-bit signed integer, throwing when it
/// does not fit (a `UInt64` or `UInt` above `Int64.max`).
@inlinable
func integerToSQLite<T: FixedWidthInteger>(_ value: T) throws -> SQLiteValue {
    guard let integer = Int64(exactly: value) else {
        throw ValueConversionError(
            .notStorable("\(value) is outside SQLite's 64-bit signed integer range"), type: T.self)
    }
    return .integer(integer)
}

extension Int: SQLiteValueConvertible, SQLiteColumnReadable {
    @inlinable public var sqliteValue: SQLiteValue { .integer(Int64(self)) }
    @inlinable public init(sqliteValue: SQLiteValue) throws { self = try integerFromSQLite(sqliteValue, as: Int.self) }
    @inlinable static func readColumn(sqliteStatement: OpaquePointer, column: Int32) throws -> Int {
        try readInteger(sqliteStatement, column, as: Int.self)
    }
}

extension Int8: SQLiteValueConvertible, SQLiteColumnReadable {
    public var sqliteValue: SQLiteValue { .integer(Int64(self)) }
    public init(sqliteValue: SQLiteValue) throws { self = try integerFromSQLite(sqliteValue, as: Int8.self) }
    @inlinable static func readColumn(sqliteStatement: OpaquePointer, column: Int32) throws -> Int8 {
        try readInteger(sqliteStatement, column, as: Int8.self)
    }
}

extension Int16: SQLiteValueConvertible, SQLiteColumnReadable {
    public var sqliteValue: SQLiteValue { .integer(Int64(self)) }
    public init(sqliteValue: SQLiteValue) throws { self = try integerFromSQLite(sqliteValue, as: Int16.self) }
    @inlinable static func readColumn(sqliteStatement: OpaquePointer, column: Int32) throws -> Int16 {
        try readInteger(sqliteStatement, column, as: Int16.self)
    }
}

extension Int32: SQLiteValueConvertible, SQLiteColumnReadable {
    public var sqliteValue: SQLiteValue { .integer(Int64(self)) }
    public init(sqliteValue: SQLiteValue) throws { self = try integerFromSQLite(sqliteValue, as: Int32.self) }
    @inlinable static func readColumn(sqliteStatement: OpaquePointer, column: Int32) throws -> Int32 {
        try readInteger(sqliteStatement, column, as: Int32.self)
    }
}

extension Int64: SQLiteValueConvertible, SQLiteColumnReadable {
    @inlinable public var sqliteValue: SQLiteValue { .integer(self) }
    public init(sqliteValue: SQLiteValue) throws { self = try integerFromSQLite(sqliteValue, as: Int64.self) }
    @inlinable static func readColumn(sqliteStatement: OpaquePointer, column: Int32) throws -> Int64 {
        try readInteger(sqliteStatement, column, as: Int64.self)
    }
}

extension UInt: SQLiteValueConvertible, SQLiteColumnReadable {
    public var sqliteValue: SQLiteValue { get throws { try integerToSQLite(self) } }
    public init(sqliteValue: SQLiteValue) throws { self = try integerFromSQLite(sqliteValue, as: UInt.self) }
    @inlinable static func readColumn(sqliteStatement: OpaquePointer, column: Int32) throws -> UInt {
        try readInteger(sqliteStatement, column, as: UInt.self)
    }
}

extension UInt8: SQLiteValueConvertible, SQLiteColumnReadable {
    public var sqliteValue: SQLiteValue { .integer(Int64(self)) }
    public init(sqliteValue: SQLiteValue) throws { self = try integerFromSQLite(sqliteValue, as: UInt8.self) }
    @inlinable static func readColumn(sqliteStatement: OpaquePointer, column: Int32) throws -> UInt8 {
        try readInteger(sqliteStatement, column, as: UInt8.self)
    }
}

extension UInt16: SQLiteValueConvertible, SQLiteColumnReadable {
    public var sqliteValue: SQLiteValue { .integer(Int64(self)) }
    public init(sqliteValue: SQLiteValue) throws { self = try integerFromSQLite(sqliteValue, as: UInt16.self) }
    @inlinable static func readColumn(sqliteStatement: OpaquePointer, column: Int32) throws -> UInt16 {
        try readInteger(sqliteStatement, column, as: UInt16.self)
    }
}

extension UInt32: SQLiteValueConvertible, SQLiteColumnReadable {
    public var sqliteValue: SQLiteValue { .integer(Int64(self)) }
    public init(sqliteValue: SQLiteValue) throws { self = try integerFromSQLite(sqliteValue, as: UInt32.self) }
    @inlinable static func readColumn(sqliteStatement: OpaquePointer, column: Int32) throws -> UInt32 {
        try readInteger(sqliteStatement, column, as: UInt32.self)
    }
}

extension UInt64: SQLiteValueConvertible, SQLiteColumnReadable {
    public var sqliteValue: SQLiteValue { get throws { try integerToSQLite(self) } }
    public init(sqliteValue: SQLiteValue) throws { self = try integerFromSQLite(sqliteValue, as: UInt64.self) }
    @inlinable static func readColumn(sqliteStatement: OpaquePointer, column: Int32) throws -> UInt64 {
        try readInteger(sqliteStatement, column, as: UInt64.self)
    }
}

// MARK: - Floating point

extension Double: SQLiteValueConvertible, SQLiteColumnReadable {
    /// The value as REAL. NaN throws: SQLite would silently store it as NULL.
    public var sqliteValue: SQLiteValue {
        get throws {
            if isNaN { throw ValueConversionError(.notStorable("NaN would be stored as NULL"), type: Double.self) }
            return .real(self)
        }
    }

    public init(sqliteValue: SQLiteValue) throws {
        switch sqliteValue {
        case .real(let real): self = real
        case .integer(let integer): self = Double(integer)
        case .null: throw ValueConversionError(.unexpectedNull, type: Double.self)
        default: throw ValueConversionError(.typeMismatch(found: sqliteValue.storageClass), type: Double.self)
        }
    }

    @inlinable static func readColumn(sqliteStatement: OpaquePointer, column: Int32) throws -> Double {
        if let (value, type) = columnValue(sqliteStatement, column), type == SQLITE_FLOAT || type == SQLITE_INTEGER {
            return sqlite3_value_double(value)
        }
        return try readSlowly(sqliteStatement, column)
    }

    @usableFromInline static func readSlowly(_ statement: OpaquePointer, _ column: Int32) throws -> Double {
        try Double(sqliteValue: SQLiteValue(sqliteStatement: statement, column: column))
    }
}

extension Float: SQLiteValueConvertible {
    /// The value as REAL. NaN throws: SQLite would silently store it as NULL.
    public var sqliteValue: SQLiteValue {
        get throws {
            if isNaN { throw ValueConversionError(.notStorable("NaN would be stored as NULL"), type: Float.self) }
            return .real(Double(self))
        }
    }

    public init(sqliteValue: SQLiteValue) throws {
        let double: Double
        do { double = try Double(sqliteValue: sqliteValue) } catch var error as ValueConversionError {
            error.type = "Float"
            throw error
        }
        let float = Float(double)
        if double.isFinite && !float.isFinite { throw ValueConversionError(.outOfRange, type: Float.self) }
        self = float
    }
}

// MARK: - Bool

extension Bool: SQLiteValueConvertible, SQLiteColumnReadable {
    /// The value as INTEGER 1 or 0.
    @inlinable public var sqliteValue: SQLiteValue { .integer(self ? 1 : 0) }

    /// Zero is false and any other number true; text and blobs are refused.
    public init(sqliteValue: SQLiteValue) throws {
        switch sqliteValue {
        case .integer(let integer): self = integer != 0
        case .real(let real): self = real != 0
        case .null: throw ValueConversionError(.unexpectedNull, type: Bool.self)
        default: throw ValueConversionError(.typeMismatch(found: sqliteValue.storageClass), type: Bool.self)
        }
    }

    @inlinable static func readColumn(sqliteStatement: OpaquePointer, column: Int32) throws -> Bool {
        if let (value, type) = columnValue(sqliteStatement, column), type == SQLITE_INTEGER {
            return sqlite3_value_int64(value) != 0
        }
        return try readSlowly(sqliteStatement, column)
    }

    @usableFromInline static func readSlowly(_ statement: OpaquePointer, _ column: Int32) throws -> Bool {
        try Bool(sqliteValue: SQLiteValue(sqliteStatement: statement, column: column))
    }
}

// MARK: - Text and bytes

extension String: SQLiteValueConvertible, SQLiteColumnReadable {
    @inlinable public var sqliteValue: SQLiteValue { .text(self) }

    /// Only TEXT is accepted: numbers are not silently turned into text.
    public init(sqliteValue: SQLiteValue) throws {
        switch sqliteValue {
        case .text(let text): self = text
        case .textBytes:
            throw ValueConversionError(
                .invalidFormat("found TEXT that is not valid UTF-8 (read it as Data or [UInt8] for its bytes)"),
                type: String.self)
        case .null: throw ValueConversionError(.unexpectedNull, type: String.self)
        default: throw ValueConversionError(.typeMismatch(found: sqliteValue.storageClass), type: String.self)
        }
    }

    /// TEXT that is not valid UTF-8 throws rather than being repaired: read
    /// it as `Data` or `[UInt8]` to get its bytes.
    @inlinable static func readColumn(sqliteStatement: OpaquePointer, column: Int32) throws -> String {
        if let (value, type) = columnValue(sqliteStatement, column), type == SQLITE_TEXT {
            // sqlite3_value_text must be called before sqlite3_value_bytes.
            guard let text = sqlite3_value_text(value) else { return "" }
            let count = Int(sqlite3_value_bytes(value))
            guard let string = String(validUTF8: UnsafeBufferPointer(start: text, count: count)) else {
                throw ValueConversionError(
                    .invalidFormat("found TEXT that is not valid UTF-8 (read it as Data or [UInt8] for its bytes)"),
                    type: String.self)
            }
            return string
        }
        return try readSlowly(sqliteStatement, column)
    }

    @usableFromInline static func readSlowly(_ statement: OpaquePointer, _ column: Int32) throws -> String {
        try String(sqliteValue: SQLiteValue(sqliteStatement: statement, column: column))
    }
}

extension Data: SQLiteValueConvertible {
    public var sqliteValue: SQLiteValue { .blob(self) }

    /// BLOB as is; TEXT as its bytes (its UTF-8, or the bytes as stored
    /// when they are not valid UTF-8).
    ///
    /// `Data` is written as a BLOB: to write TEXT bytes back as TEXT, keep
    /// the ``SQLiteValue`` (``SQLiteValue/textBytes(_:)``) instead.
    public init(sqliteValue: SQLiteValue) throws {
        switch sqliteValue {
        case .blob(let data): self = data
        case .textBytes(let data): self = data
        case .text(let text): self = Data(text.utf8)
        case .null: throw ValueConversionError(.unexpectedNull, type: Data.self)
        default: throw ValueConversionError(.typeMismatch(found: sqliteValue.storageClass), type: Data.self)
        }
    }
}

extension Array: SQLiteValueConvertible where Element == UInt8 {
    public var sqliteValue: SQLiteValue { .blob(Data(self)) }

    /// BLOB as is; TEXT as its UTF-8 bytes.
    public init(sqliteValue: SQLiteValue) throws {
        do { self = [UInt8](try Data(sqliteValue: sqliteValue)) } catch var error as ValueConversionError {
            error.type = "Array<UInt8>"
            throw error
        }
    }
}
