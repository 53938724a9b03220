extension PersistableRecord where Self: Encodable {
    /// Writes the record's properties as columns: each coding key is a
    /// column name.
    ///
    /// - Numbers, `Bool`, `String`, `Data`, `[UInt8]`, `Date`, `UUID`,
    ///   `Decimal` and every other ``SQLiteValueConvertible`` type are
    ///   stored with their SQLite conversion. A `URL` is stored as the text of
    ///   its absolute string.
    /// - An enum with a raw value, or any type that encodes itself as a
    ///   single value, is stored as that value.
    /// - Any other `Encodable` type (a struct, an array, a dictionary) is
    ///   stored as JSON text, keys sorted. Dates inside it are ISO-8601 UTC
    ///   text with milliseconds (`2026-11-30T09:41:05.250Z`), as JSON
    ///   readers expect, not the column form (`2026-11-30 09:41:05.250`):
    ///   to compare one in SQL, convert it
    ///   (`strftime('%Y-%m-%d %H:%M:%f', json_extract(col, '$.since'))`).
    /// - A nil optional is written as NULL (not left out, so that an update
    ///   clears the column).
    /// - A class's `super.encode(to:)` writes into the same row.
    public func encode(to columns: inout RecordColumns) throws {
        // The record type's cache, unless this is a nested use of it (a
        // record written while another of its type encodes itself).
        let cache = columns.encodingCache.flatMap { $0.isEncoding ? nil : $0 }
        let slot = cache?.slot ?? ColumnsSlot()
        swap(&columns, &slot.columns)
        cache?.isEncoding = true
        defer {
            swap(&columns, &slot.columns)
            cache?.isEncoding = false
        }
        try encode(to: RecordEncoder(slot: slot, cache: cache))
    }
}

/// Where a record's columns are while it encodes itself, so that containers
/// can refer to them without pointers.
final class ColumnsSlot {
    @exclusivity(unchecked) var columns = RecordColumns()
}

/// What a record type keeps from one record to the next for `Encodable`
/// records: its slot, and the keyed container of its last record.
///
/// Making a container costs an allocation and several run-time lookups of
/// generic metadata, as much as encoding a few columns. The container refers
/// to the slot, not to a record, so reusing it is safe, and one that escaped
/// its record only ever writes into the idle slot.
final class RecordEncodingCache {
    let slot = ColumnsSlot()
    var keys: ObjectIdentifier?
    var container: AnyObject?
    var isEncoding = false
}

/// A keyed container kept by a ``RecordEncodingCache``.
final class CachedEncodingContainer<Key: CodingKey> {
    let container: KeyedEncodingContainer<Key>
    init(_ container: KeyedEncodingContainer<Key>) { self.container = container }
}

/// The encoder behind the `Encodable` default of
/// ``PersistableRecord/encode(to:)``: two references, so that passing it as
/// `any Encoder` does not allocate.
struct RecordEncoder: Encoder {
    let slot: ColumnsSlot
    let cache: RecordEncodingCache?

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        guard let cache else { return KeyedEncodingContainer(RecordKeyedEncodingContainer<Key>(slot: slot)) }
        let keys = ObjectIdentifier(Key.self)
        if cache.keys == keys, let cached = cache.container {
            // Safe: the container was stored below for this very type of keys.
            return unsafeDowncast(cached, to: CachedEncodingContainer<Key>.self).container
        }
        let container = KeyedEncodingContainer(RecordKeyedEncodingContainer<Key>(slot: slot))
        cache.keys = keys
        cache.container = CachedEncodingContainer(container)
        return container
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        fail("a record encodes its properties by name (a keyed container), not as a list")
        return DiscardingUnkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        fail("a record encodes its properties by name (a keyed container), not as a single value")
        return DiscardingUnkeyedContainer()
    }

    /// Records a misuse, thrown once encoding returns: these methods cannot
    /// throw.
    func fail(_ reason: String) {
        if slot.columns.conversionError == nil {
            slot.columns.conversionError = ValueConversionError(.notStorable(reason), type: RecordColumns.self)
        }
    }
}

struct RecordKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let slot: ColumnsSlot

    var codingPath: [any CodingKey] { [] }

    // The overloads for the library's value types skip the dynamic casts of
    // the generic method; they are what synthesized `encode(to:)` calls.
    // They are written out for each type because this container is only
    // ever used unspecialized (through `KeyedEncodingContainer`'s box).

    // Inlined into each `encode` overload: called out of line, the value
    // is passed borrowed, copied into the columns and destroyed by the
    // caller (about 35 instructions a column in W5b).
    @inline(__always)
    private func set(_ value: SQLiteValue, _ key: Key) {
        slot.columns.set(value, forColumn: key.stringValue)
    }

    private func set(_ value: some FixedWidthInteger, _ key: Key) {
        if let integer = Int64(exactly: value) { return set(.integer(integer), key) }
        slot.columns.recordFailure(
            ValueConversionError(
                .notStorable("\(value) is outside SQLite's 64-bit signed integer range"), type: type(of: value)),
            type: type(of: value), column: key.stringValue)
    }

    private func set(_ value: some BinaryFloatingPoint, _ key: Key) {
        if value.isNaN {
            return slot.columns.recordFailure(
                ValueConversionError(.notStorable("NaN would be stored as NULL"), type: type(of: value)),
                type: type(of: value), column: key.stringValue)
        }
        set(.real(Double(value)), key)
    }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.integer(value ? 1 : 0), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.text(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(value, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(value, key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.integer(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(value, key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let column = key.stringValue
        slot.columns.set(try ColumnCoding.encode(value, column: column), forColumn: column)
    }

    // Synthesized code leaves nil optionals out through these; a record
    // writes them as NULL so that an update clears the column.
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.null, key) }
    }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.null, key) }
    }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.null, key) }
    }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.null, key) }
    }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.null, key) }
    }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.null, key) }
    }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.null, key) }
    }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.null, key) }
    }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.null, key) }
    }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.null, key) }
    }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.null, key) }
    }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.null, key) }
    }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.null, key) }
    }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.null, key) }
    }

    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.null, key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        RecordEncoder(slot: slot, cache: nil).fail(Self.nestingMessage(key))
        return KeyedEncodingContainer(DiscardingKeyedContainer<NestedKey>())
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        RecordEncoder(slot: slot, cache: nil).fail(Self.nestingMessage(key))
        return DiscardingUnkeyedContainer()
    }

    /// The same row: a superclass writes its own properties into it (with
    /// containers of its own, not kept).
    mutating func superEncoder() -> any Encoder { RecordEncoder(slot: slot, cache: nil) }

    /// The same row: a superclass writes its own properties into it.
    mutating func superEncoder(forKey key: Key) -> any Encoder { RecordEncoder(slot: slot, cache: nil) }

    private static func nestingMessage(_ key: Key) -> String {
        "column \"\(key.stringValue)\" holds one value: encode an Encodable value into it (stored as JSON) "
            + "instead of a nested container"
    }
}
