extension FetchableRecord where Self: Decodable {
    /// Decodes the record from the row's columns by name: each coding key
    /// is a column name (case-insensitive).
    ///
    /// - Numbers, `Bool`, `String`, `Data`, `[UInt8]`, `Date`, `UUID`,
    ///   `Decimal` and every other ``SQLiteValueConvertible`` type are read
    ///   with their SQLite conversion, exactly as ``Row`` reads them. A `URL`
    ///   is read from text.
    /// - An enum with a raw value, or any type that decodes itself from a
    ///   single value, is read from that value.
    /// - Any other `Decodable` type (a struct, an array, a dictionary) is read
    ///   from JSON text, the way ``PersistableRecord`` stores it.
    /// - An optional property is nil when its column is NULL or absent; a
    ///   non-optional one throws for NULL and for a missing column.
    /// - A class's `super.init(from:)` reads the same row.
    ///
    /// Errors are ``ValueConversionError``s that name the column and type.
    @inlinable
    public init(row: Row) throws {
        try self.init(from: RowDecoder(row: row))
    }
}

/// The decoder behind ``FetchableRecord/init(row:)`` for `Decodable` types.
/// A struct of one reference, so that passing it as `any Decoder` does not
/// allocate; the only allocation per record is the keyed container's box,
/// which `KeyedDecodingContainer` makes.
@usableFromInline
struct RowDecoder: Decoder {
    let row: Row

    @usableFromInline
    init(row: Row) { self.row = row }

    @usableFromInline var codingPath: [any CodingKey] { [] }
    @usableFromInline var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// The container for the row.
    ///
    /// Making one costs an allocation and several run-time lookups of
    /// generic metadata, as much as decoding a few columns. A cursor hands
    /// the same live row object to every record, so a live row keeps the
    /// last container it made (see ``RowDecodingCache``).
    @usableFromInline
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard let statement = row.sqliteStatement else {
            return KeyedDecodingContainer(RowKeyedDecodingContainer<Key>(row: row))
        }
        let keys = ObjectIdentifier(Key.self)
        let cache: RowDecodingCache
        if let existing = row.decodingCache {
            if existing.keys == keys, let cached = existing.container {
                // Safe: the container was stored below for this very type of keys.
                return unsafeDowncast(cached, to: CachedContainer<Key>.self).container
            }
            cache = existing
        } else {
            cache = RowDecodingCache(shadow: Row(columns: row.columns, liveStatement: statement))
            row.decodingCache = cache
        }
        let container = KeyedDecodingContainer(RowKeyedDecodingContainer<Key>(row: cache.shadow))
        cache.keys = keys
        cache.container = CachedContainer(container)
        return container
    }

    @usableFromInline
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self,
            DecodingError.Context(
                codingPath: [], debugDescription: "a row decodes by column name: use a keyed container"))
    }

    @usableFromInline
    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(
            SQLiteValue.self,
            DecodingError.Context(
                codingPath: [], debugDescription: "a row decodes by column name: use a keyed container"))
    }
}

/// What a live row keeps for `Decodable` records: a keyed container, and
/// the row it reads.
///
/// That row is a second live row over the same statement, the "shadow":
/// were the container to refer to the cursor's row itself, the row would
/// never be uniquely referenced, and the cursor would take it for a row
/// kept by a record and copy it at every step. When the cache is dropped
/// (the cursor's row is detached or its cursor released) the shadow is
/// detached too, so that a container that outlived its record never reads
/// a statement that moved on.
final class RowDecodingCache {
    let shadow: Row
    var keys: ObjectIdentifier?
    var container: AnyObject?

    init(shadow: Row) { self.shadow = shadow }
}

/// A keyed container kept by a ``RowDecodingCache``.
final class CachedContainer<Key: CodingKey> {
    let container: KeyedDecodingContainer<Key>
    init(_ container: KeyedDecodingContainer<Key>) { self.container = container }
}

extension Row {
    /// Drops what `Decodable` records kept, turning it into a copy.
    func dropDecodingCache() {
        guard let cache = decodingCache else { return }
        decodingCache = nil
        cache.shadow.detach()
    }
}

struct RowKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let row: Row

    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] { row.columnNames.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { row.hasColumn(key.stringValue) }

    /// The index of the key's column; throws when there is none.
    private func index<T>(of key: Key, for type: T.Type) throws -> Int {
        let name = key.stringValue
        guard let index = row.columns.index(of: name, hint: &row.lookupHint) else {
            throw ValueConversionError(.columnNotFound, type: T.self, column: name)
        }
        return index
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        row.isNull(atColumn: try index(of: key, for: Never?.self))
    }

    // The overloads for the library's value types skip the dynamic dispatch
    // of the generic method; they are what synthesized `init(from:)` calls.
    // They call `Row` methods that are generic over the value type only:
    // this container is only ever used unspecialized (through
    // `KeyedDecodingContainer`'s box), and a helper generic over `Key` too
    // would not be specialized for the value type.

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try row.decode(type, named: key.stringValue) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try row.decode(type, named: key.stringValue) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try row.decode(type, named: key.stringValue) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try row.decode(type, named: key.stringValue) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try row.decode(type, named: key.stringValue) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try row.decode(type, named: key.stringValue) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try row.decode(type, named: key.stringValue) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try row.decode(type, named: key.stringValue) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try row.decode(type, named: key.stringValue) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try row.decode(type, named: key.stringValue) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try row.decode(type, named: key.stringValue) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try row.decode(type, named: key.stringValue) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try row.decode(type, named: key.stringValue) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try row.decode(type, named: key.stringValue) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try ColumnCoding.decode(T.self, from: row, at: try index(of: key, for: T.self))
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try row.decodeIfPresent(type, named: key.stringValue)
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try row.decodeIfPresent(type, named: key.stringValue)
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try row.decodeIfPresent(type, named: key.stringValue)
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try row.decodeIfPresent(type, named: key.stringValue)
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try row.decodeIfPresent(type, named: key.stringValue)
    }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
        try row.decodeIfPresent(type, named: key.stringValue)
    }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
        try row.decodeIfPresent(type, named: key.stringValue)
    }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        try row.decodeIfPresent(type, named: key.stringValue)
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try row.decodeIfPresent(type, named: key.stringValue)
    }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
        try row.decodeIfPresent(type, named: key.stringValue)
    }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
        try row.decodeIfPresent(type, named: key.stringValue)
    }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        try row.decodeIfPresent(type, named: key.stringValue)
    }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        try row.decodeIfPresent(type, named: key.stringValue)
    }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        try row.decodeIfPresent(type, named: key.stringValue)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let index = row.columns.index(of: key.stringValue, hint: &row.lookupHint), !row.isNull(atColumn: index)
        else { return nil }
        return try ColumnCoding.decode(T.self, from: row, at: index)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        throw Self.nestingError(key)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw Self.nestingError(key)
    }

    /// The same row: a superclass decodes its own properties from it.
    func superDecoder() throws -> any Decoder { RowDecoder(row: row) }

    /// The same row: a superclass decodes its own properties from it.
    func superDecoder(forKey key: Key) throws -> any Decoder { RowDecoder(row: row) }

    private static func nestingError(_ key: Key) -> DecodingError {
        DecodingError.typeMismatch(
            SQLiteValue.self,
            DecodingError.Context(
                codingPath: [key],
                debugDescription: "column \"\(key.stringValue)\" holds one value: decode a Decodable type "
                    + "from it (stored as JSON) instead of a nested container"))
    }
}

extension Row {
    /// The value of a column, converted; nil when the row has no such column
    /// or the value is NULL.
    func decodeIfPresent<Value: SQLiteValueConvertible>(_ type: Value.Type, named name: String) throws -> Value? {
        guard let index = columns.index(of: name, hint: &lookupHint) else { return nil }
        return try decodeUnchecked(Value?.self, at: index)
    }
}
