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
    ///   stored as JSON text.
    /// - A nil optional is written as NULL (not left out, so that an update
    ///   clears the column).
    /// - A class's `super.encode(to:)` writes into the same row.
    public func encode(to columns: inout RecordColumns) throws {
        try withUnsafeMutablePointer(to: &columns) { pointer in
            try encode(to: RecordEncoder(columns: pointer))
        }
    }
}

/// The encoder behind the `Encodable` default of
/// ``PersistableRecord/encode(to:)``. It points at the columns being
/// written, so that passing it as `any Encoder` does not allocate; the only
/// allocation per record is the keyed container's box.
struct RecordEncoder: Encoder {
    let columns: UnsafeMutablePointer<RecordColumns>

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RecordKeyedEncodingContainer<Key>(columns: columns))
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
        if columns.pointee.conversionError == nil {
            columns.pointee.conversionError = ValueConversionError(.notStorable(reason), type: RecordColumns.self)
        }
    }
}

struct RecordKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let columns: UnsafeMutablePointer<RecordColumns>

    var codingPath: [any CodingKey] { [] }

    // The overloads for the library's value types skip the dynamic casts of
    // the generic method; they are what synthesized `encode(to:)` calls.
    // They are written out for each type because this container is only
    // ever used unspecialized (through `KeyedEncodingContainer`'s box).

    private func set(_ value: SQLiteValue, _ key: Key) {
        columns.pointee.set(value, forColumn: key.stringValue)
    }

    private func set(_ value: some FixedWidthInteger, _ key: Key) {
        if let integer = Int64(exactly: value) { return set(.integer(integer), key) }
        columns.pointee.recordFailure(
            ValueConversionError(
                .notStorable("\(value) is outside SQLite's 64-bit signed integer range"), type: type(of: value)),
            type: type(of: value), column: key.stringValue)
    }

    private func set(_ value: some BinaryFloatingPoint, _ key: Key) {
        if value.isNaN {
            return columns.pointee.recordFailure(
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
        columns.pointee.set(try ColumnCoding.encode(value, column: column), forColumn: column)
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
        RecordEncoder(columns: columns).fail(Self.nestingMessage(key))
        return KeyedEncodingContainer(DiscardingKeyedContainer<NestedKey>())
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        RecordEncoder(columns: columns).fail(Self.nestingMessage(key))
        return DiscardingUnkeyedContainer()
    }

    /// The same row: a superclass writes its own properties into it.
    mutating func superEncoder() -> any Encoder { RecordEncoder(columns: columns) }

    /// The same row: a superclass writes its own properties into it.
    mutating func superEncoder(forKey key: Key) -> any Encoder { RecordEncoder(columns: columns) }

    private static func nestingMessage(_ key: Key) -> String {
        "column \"\(key.stringValue)\" holds one value: encode an Encodable value into it (stored as JSON) "
            + "instead of a nested container"
    }
}
