import Foundation
#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// How a `Codable` property that is not a plain SQLite value is stored in one
/// column, for both record coding directions.
///
/// - A ``SQLiteValueConvertible`` type (numbers, `String`, `Data`, `Date`,
///   `UUID`, `Decimal`, ...) uses its own conversion; a `URL` is stored as
///   its absolute string.
/// - A type that codes itself as a single value (an enum with a raw value, a
///   wrapper around a `String`, `URL`) is stored as that value.
/// - Anything else (a struct, an array, a dictionary) is stored as JSON text,
///   with keys sorted and dates written as ISO-8601 UTC text with
///   milliseconds (`2026-11-30T09:41:05.250Z`), the form JSON readers
///   expect; columns themselves store dates as SQLite does, with a space
///   and no `Z` (see `Date.sqliteValue`). Either form is read back.
enum ColumnCoding {
    // MARK: Decoding

    /// Reads column `index` of `row` as `T`.
    static func decode<T: Decodable>(_ type: T.Type, from row: Row, at index: Int) throws -> T {
        if let convertible = T.self as? any SQLiteValueConvertible.Type {
            return try decodeConvertible(convertible, from: row, at: index) as! T
        }
        if T.self == URL.self {
            let text: String
            do { text = try row.decode(String.self, at: index) } catch var error as ValueConversionError {
                error.type = "URL"
                throw error
            }
            guard let url = URL(string: text) else {
                throw ValueConversionError(
                    .invalidFormat("text is not a URL"), type: URL.self, column: row.columnNames[index],
                    columnIndex: index)
            }
            return url as! T
        }
        do {
            return try T(from: ColumnDecoder(row: row, index: index))
        } catch is NeedsJSON {
            return try decodeJSON(T.self, from: row, at: index)
        } catch let error as DecodingError {
            throw conversionError(error, type: T.self, row: row, index: index)
        } catch var error as ValueConversionError {
            // Name the property's type, not the one it decodes itself from.
            error.type = String(describing: T.self)
            throw error
        }
    }

    private static func decodeConvertible<V: SQLiteValueConvertible>(_ type: V.Type, from row: Row, at index: Int)
        throws -> V
    {
        try row.decode(V.self, at: index)
    }

    private static func decodeJSON<T: Decodable>(_ type: T.Type, from row: Row, at index: Int) throws -> T {
        let data: Data
        switch try row.decode(SQLiteValue.self, at: index) {
        case .text(let text): data = Data(text.utf8)
        case .blob(let blob): data = blob
        case .null:
            throw ValueConversionError(
                .unexpectedNull, type: T.self, column: row.columnNames[index], columnIndex: index)
        case let other:
            throw ValueConversionError(
                .typeMismatch(found: other.storageClass), type: T.self, column: row.columnNames[index],
                columnIndex: index)
        }
        do {
            return try makeJSONDecoder().decode(T.self, from: data)
        } catch {
            throw ValueConversionError(
                .invalidFormat("the text is not JSON for this type (\(describe(error)))"), type: T.self,
                column: row.columnNames[index], columnIndex: index)
        }
    }

    /// A decoding error turned into a ``ValueConversionError`` that names the
    /// column. The message never includes the value, which may be private.
    static func conversionError(_ error: DecodingError, type: Any.Type, row: Row, index: Int)
        -> ValueConversionError
    {
        ValueConversionError(
            .invalidFormat("the value does not decode as this type (\(describe(error)))"), type: type,
            column: row.columnNames[index], columnIndex: index)
    }

    /// The kind of a coding error, without its debug description, which
    /// often quotes the value.
    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted: "data corrupted"
        case DecodingError.keyNotFound(let key, _): "missing key \"\(key.stringValue)\""
        case DecodingError.typeMismatch(let type, _): "expected \(type)"
        case DecodingError.valueNotFound(let type, _): "missing \(type)"
        case EncodingError.invalidValue: "invalid value"
        default: String(describing: type(of: error))
        }
    }

    // MARK: Encoding

    /// The value to store for `value` in column `column`.
    static func encode<T: Encodable>(_ value: T, column: String) throws -> SQLiteValue {
        if let convertible = value as? any SQLiteValueConvertible {
            do {
                return try convertible.sqliteValue
            } catch let error as ValueConversionError {
                throw error.located(column: column, index: nil)
            }
        }
        if let url = value as? URL { return .text(url.absoluteString) }
        let encoder = ColumnEncoder(column: column)
        try value.encode(to: encoder)
        if encoder.needsJSON {
            do {
                let data = try makeJSONEncoder().encode(value)
                return .text(String(decoding: data, as: UTF8.self))
            } catch {
                throw ValueConversionError(
                    .notStorable("cannot encode it as JSON (\(describe(error)))"), type: T.self, column: column)
            }
        }
        return encoder.value ?? .null
    }

    // MARK: JSON

    static func makeJSONEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(try ISO8601Text.format(date, style: .iso8601))
        }
        return encoder
    }

    static func makeJSONDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            if let seconds = try? container.decode(Double.self) { return Date(timeIntervalSince1970: seconds) }
            return try Date(sqliteValue: .text(try container.decode(String.self)))
        }
        return decoder
    }
}

/// Thrown by ``ColumnDecoder`` when the type asks for a keyed or unkeyed
/// container: the column holds JSON.
struct NeedsJSON: Error {}

/// Decodes one column as a single value; see ``ColumnCoding``.
struct ColumnDecoder: Decoder {
    let row: Row
    let index: Int

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw NeedsJSON()
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw NeedsJSON()
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }
}

extension ColumnDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool { row.isNull(atColumn: index) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try ColumnCoding.decode(T.self, from: row, at: index)
    }
}

/// Encodes one value into a column: records a single value, or notes that
/// the value needs a keyed or unkeyed container and so must be stored as
/// JSON. See ``ColumnCoding``.
final class ColumnEncoder: Encoder {
    let column: String
    var value: SQLiteValue?
    var needsJSON = false

    init(column: String) { self.column = column }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        needsJSON = true
        return KeyedEncodingContainer(DiscardingKeyedContainer<Key>())
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        needsJSON = true
        return DiscardingUnkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { ColumnValueContainer(encoder: self) }
}

struct ColumnValueContainer: SingleValueEncodingContainer {
    let encoder: ColumnEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws { encoder.value = .null }

    mutating func encode<T: Encodable>(_ value: T) throws {
        encoder.value = try ColumnCoding.encode(value, column: encoder.column)
    }
}

/// Accepts and drops whatever is encoded: used while finding out how a value
/// encodes, and after an error has been recorded.
struct DiscardingKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        KeyedEncodingContainer(DiscardingKeyedContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        DiscardingUnkeyedContainer()
    }
    mutating func superEncoder() -> any Encoder { DiscardingEncoder() }
    mutating func superEncoder(forKey key: Key) -> any Encoder { DiscardingEncoder() }
}

/// See ``DiscardingKeyedContainer``.
struct DiscardingUnkeyedContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        KeyedEncodingContainer(DiscardingKeyedContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { DiscardingUnkeyedContainer() }
    mutating func superEncoder() -> any Encoder { DiscardingEncoder() }
}

/// See ``DiscardingKeyedContainer``.
struct DiscardingEncoder: Encoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(DiscardingKeyedContainer<Key>())
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { DiscardingUnkeyedContainer() }
    func singleValueContainer() -> any SingleValueEncodingContainer { DiscardingUnkeyedContainer() }
}

extension Row {
    /// Whether a column holds NULL, without reading its value.
    func isNull(atColumn index: Int) -> Bool {
        if let statement = sqliteStatement {
            return sqlite3_column_type(statement, Int32(truncatingIfNeeded: index)) == SQLITE_NULL
        }
        return storage[index].isNull
    }
}
