import Foundation
import PasswordHashing
import SQLiteStore

/// The version of a stored record: 16 lowercase hexadecimal characters,
/// the first 8 bytes of the SHA-256 of the record's stored columns.
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
    /// The first 8 bytes of the digest, big-endian.
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

/// The bytes a version is the digest of: a canonical, typed encoding of
/// the values, so that no two different lists of values give the same
/// bytes (each value is its storage class and a length or fixed size).
struct VersionInput {
    private(set) var bytes: [UInt8] = []

    init(kind: String) {
        bytes.reserveCapacity(128)
        appendText(Array(kind.utf8))
    }

    mutating func append(_ value: SQLiteValue) {
        switch value {
        case .null:
            bytes.append(0)
        case .integer(let number):
            bytes.append(1)
            appendInteger(UInt64(bitPattern: number))
        case .real(let number):
            bytes.append(2)
            appendInteger(number.bitPattern)
        case .text(let text):
            appendText(Array(text.utf8))
        case .textBytes(let data):
            // The same TEXT as `.text` of these bytes would be.
            appendText(Array(data))
        case .blob(let data):
            bytes.append(4)
            appendInteger(UInt64(data.count))
            bytes.append(contentsOf: data)
        }
    }

    private mutating func appendText(_ utf8: [UInt8]) {
        bytes.append(3)
        appendInteger(UInt64(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    private mutating func appendInteger(_ number: UInt64) {
        withUnsafeBytes(of: number.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// The first 8 bytes of the SHA-256 of the input.
    func version() -> RecordVersion {
        // OpenSSL fails SHA-256 only without memory or without the
        // algorithm (a FIPS provider missing it): nothing a read can
        // recover from, and nothing a caller could do with an error here.
        guard let digest = try? SHA256.digest(bytes) else {
            preconditionFailure("SHA-256 is unavailable from OpenSSL")
        }
        var value: UInt64 = 0
        for byte in digest.prefix(8) { value = value << 8 | UInt64(byte) }
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
