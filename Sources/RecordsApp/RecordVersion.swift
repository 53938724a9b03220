import Foundation
import SQLiteStore

/// The version of a stored record: 16 lowercase hexadecimal characters,
/// a 64-bit hash of the record's stored columns (see ``VersionInput``).
///
/// It is derived from what is stored, not kept beside it, so every program
/// that writes the table (the stores, the `records` command, the web
/// pages, `sqlite3`) changes it by changing a value, and two reads of the
/// same stored values give the same version. The HTTP API's `ETag` is the
/// version in quotes.
///
/// ```swift
/// let ada = try await store.person(id: 1)!
/// try await store.update(id: 1, with: PersonChanges(age: 37), ifVersion: ada.version)
/// // VersionConflictError if anyone changed Ada since she was read
/// ```
///
/// What is hashed: the record's kind ("person"), then each column the
/// record reads, in its table's order, as its storage class and its exact
/// value (an INTEGER `1`, a REAL `1.0` and the TEXT `'1'` are three
/// versions; NULL and the empty text two). A user's password hash is never
/// part of it; a coffee's picture counts by its size, type and picture
/// version, not its bytes.
public struct RecordVersion: Hashable, Sendable, Codable, CustomStringConvertible, LosslessStringConvertible {
    /// The hash.
    let value: UInt64

    init(value: UInt64) { self.value = value }

    /// The version written as ``description`` writes it: exactly 16
    /// lowercase hexadecimal characters; nil for anything else (upper
    /// case, quotes, spaces, another length).
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 16 else { return nil }
        var value: UInt64 = 0
        for byte in bytes {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        self.value = value
    }

    /// 16 lowercase hexadecimal characters: `0123456789abcdef`.
    public var description: String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Decodes the text ``description`` writes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let version = RecordVersion(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "a record version is 16 lowercase hexadecimal characters")
        }
        self = version
    }

    /// Encodes ``description``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// The version of a record of `kind` whose stored columns hold
    /// `values`, in the order the record reads them.
    static func of(kind: String, values: some Sequence<SQLiteValue>) -> RecordVersion {
        var input = VersionInput(kind: kind)
        for value in values { input.append(value) }
        return input.version()
    }

    /// The version of a record of `kind` read from the named columns of
    /// `row`, in that order. By name: a row may hold other columns too (a
    /// session's, a search's rank), before or after the record's.
    static func of(kind: String, row: Row, columns: [String]) throws -> RecordVersion {
        var input = VersionInput(kind: kind)
        for column in columns { input.append(try row[column]) }
        return input.version()
    }
}

/// The hash a version is: a canonical, typed encoding of the values (each
/// value is its storage class, then a length or fixed size, then its
/// bytes, so no two different lists of values encode alike), fed byte by
/// byte into 64-bit FNV-1a and finished with a 64-bit mix so every input
/// bit moves the whole result.
///
/// Not a cryptographic digest, on purpose: a version only has to change
/// when the stored values do. Two different rows share a version by
/// accident with a chance of about 2⁻⁶⁴; someone who could make them
/// collide on purpose can write the row anyway. Versions are made for every
/// record read, so this runs with no allocation and no call into OpenSSL.
struct VersionInput {
    private var hash: UInt64 = 0xcbf2_9ce4_8422_2325

    init(kind: String) { append(text: kind) }

    mutating func append(_ value: SQLiteValue) {
        switch value {
        case .null:
            appendNull()
        case .integer(let number):
            append(integer: number)
        case .real(let number):
            feed(2)
            appendInteger(number.bitPattern)
        case .text(let text):
            append(text: text)
        case .textBytes(let data):
            // The same TEXT as `.text` of these bytes would be.
            appendText(data)
        case .blob(let data):
            feed(4)
            appendInteger(UInt64(data.count))
            for byte in data { feed(byte) }
        }
    }

    // The typed appends below are what a record made in memory, or read
    // from a row whose values were all of their fields' storage classes,
    // feeds: the same bytes as `append(_:)` of the stored value, with no
    // `SQLiteValue` built.

    /// NULL, as `append(.null)`.
    mutating func appendNull() { feed(0) }

    /// An INTEGER, as `append(.integer(number))`.
    mutating func append(integer number: Int64) {
        feed(1)
        appendInteger(UInt64(bitPattern: number))
    }

    /// An INTEGER, or NULL for nil.
    mutating func append(integer number: Int64?) {
        if let number { append(integer: number) } else { appendNull() }
    }

    /// TEXT, as `append(.text(text))`.
    mutating func append(text: String) {
        // A native string's bytes in one buffer: iterating the UTF-8 view
        // byte by byte costs several times the hash itself.
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { appendText($0) }
        if done == nil { appendText(text.utf8) }
    }

    /// TEXT, or NULL for nil.
    mutating func append(text: String?) {
        if let text { append(text: text) } else { appendNull() }
    }

    private mutating func appendText(_ utf8: some Collection<UInt8>) {
        feed(3)
        appendInteger(UInt64(utf8.count))
        for byte in utf8 { feed(byte) }
    }

    /// The 8 bytes of `number`, most significant first.
    private mutating func appendInteger(_ number: UInt64) {
        // FNV-1a of a zero byte only multiplies by the prime, so the
        // leading zero bytes of a small number (an ID, an age, a length)
        // are one multiplication by a power of it: the same hash, for a
        // few instructions instead of a few per byte.
        let zeros = number.leadingZeroBitCount >> 3
        hash &*= Self.primePower(zeros)
        var remaining = 8 - zeros
        while remaining > 0 {
            remaining -= 1
            feed(UInt8(truncatingIfNeeded: number >> UInt64(remaining << 3)))
        }
    }

    /// The FNV prime to the power `count` (0 to 8), modulo 2⁶⁴.
    private static func primePower(_ count: Int) -> UInt64 {
        switch count {
        case 0: 1
        case 1: 0x0000_0100_0000_01B3
        case 2: 0x0003_6600_0002_E329
        case 3: 0x08A9_7B00_04E7_FEAB
        case 4: 0x9FFA_AC08_5635_BC91
        case 5: 0x0CAE_E32A_7D4F_6A63
        case 6: 0xDC96_6432_EDF1_C639
        case 7: 0xC552_7B8A_51D3_D2DB
        default: 0x1EFA_C709_0AEF_4A21
        }
    }

    @inline(__always) private mutating func feed(_ byte: UInt8) {
        hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
    }

    /// The version: the hash, mixed (MurmurHash3's 64-bit finalizer).
    func version() -> RecordVersion {
        var value = hash
        value ^= value >> 33
        value &*= 0xff51_afd7_ed55_8ccd
        value ^= value >> 33
        value &*= 0xc4ce_b9fe_1a85_ec53
        value ^= value >> 33
        return RecordVersion(value: value)
    }
}

/// A conditional write found the record at another version than the one
/// given: someone changed it since it was read. Nothing was written.
public struct VersionConflictError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of record ("person", "contact", "coffee", "user").
    public let kind: String
    /// The record's ID.
    public let id: Int64
    /// The version the write was conditional on.
    public let expected: RecordVersion
    /// The version the record has now.
    public let current: RecordVersion

    /// Creates an error.
    public init(kind: String, id: Int64, expected: RecordVersion, current: RecordVersion) {
        self.kind = kind
        self.id = id
        self.expected = expected
        self.current = current
    }

    public var description: String {
        "\(kind) \(id) was changed since version \(expected) was read (it is now version \(current)); "
            + "nothing was written: read it again and redo the change"
    }
}
