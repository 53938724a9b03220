import Foundation
import SQLiteStore

/// A column's version: a hybrid logical clock value, then the replica that
/// wrote it as the tie-break. The higher version wins.
///
/// The clock value holds milliseconds since 1970 in its high bits and a
/// counter in its low 16; a replica never issues a value below one it has
/// issued or seen, so an edit made after seeing another always carries the
/// higher version, whatever the two devices' clocks say.
public struct Version: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The hybrid logical clock value.
    public let clock: Int64
    /// The replica that wrote the value.
    public let replica: UUID

    /// A version.
    public init(clock: Int64, replica: UUID) {
        self.clock = clock
        self.replica = replica
    }

    /// The clock's wall-time part, in milliseconds since 1970.
    public var milliseconds: Int64 { clock >> 16 }

    /// Orders by clock, then by the replica's 16 bytes.
    public static func < (lhs: Version, rhs: Version) -> Bool {
        if lhs.clock != rhs.clock { return lhs.clock < rhs.clock }
        return lhs.replica.bytes.lexicographicallyPrecedes(rhs.replica.bytes)
    }

    /// `clock@replica`.
    public var description: String { "\(clock)@\(replica.uuidString)" }
}

/// Changes to synced rows as they travel between a device and the server,
/// in a compact binary form.
///
/// A batch names each table and column once, then gives per row its global
/// identity and per changed column its number, version and value;
/// versions are written as differences from the previous one, and a
/// CRC-32 closes the batch, so a batch that was cut short or garbled is
/// refused whole (``SyncError/Kind/malformedBatch``) before anything is
/// applied. `Codable` encodes the same bytes (base64 in JSON).
///
/// A device's push carries only its own changes; a server's pull answer
/// carries the current version of each cell changed since the device's
/// last position.
public struct ChangeBatch: Sendable, Equatable, Codable {
    struct Table: Sendable, Equatable {
        var name: String
        var columns: [String]
    }

    struct Cell: Sendable, Equatable {
        /// Index in the table's `columns`, or `Bookkeeping.deleteColumn`.
        var column: Int
        var clock: Int64
        /// Index in `replicas`.
        var replica: Int
        /// The server position the writer had seen (pushes only).
        var known: Int64
        /// The value; NULL when `reference` stands for it.
        var value: SQLiteValue
        /// A large value, sent apart in chunks.
        var reference: LargeValueReference? = nil
    }

    struct Row: Sendable, Equatable {
        var table: Int
        var gid: UUID
        var cells: [Cell]
    }

    var tables: [Table] = []
    var replicas: [UUID] = []
    var rows: [Row] = []

    /// An empty batch.
    public init() {}

    /// How many column changes (a row's delete counts as one) the batch
    /// holds.
    public var changeCount: Int { rows.reduce(0) { $0 + $1.cells.count } }

    /// Whether the batch holds no change.
    public var isEmpty: Bool { rows.isEmpty }

    // MARK: Building

    private var tableIndexes: [String: Int] = [:]
    private var columnIndexes: [String: [String: Int]] = [:]
    private var replicaIndexes: [UUID: Int] = [:]

    mutating func tableIndex(_ name: String) -> Int {
        if let index = tableIndexes[name] { return index }
        tables.append(Table(name: name, columns: []))
        tableIndexes[name] = tables.count - 1
        return tables.count - 1
    }

    mutating func columnIndex(_ column: String, table: Int) -> Int {
        let name = tables[table].name
        if let index = columnIndexes[name]?[column] { return index }
        tables[table].columns.append(column)
        columnIndexes[name, default: [:]][column] = tables[table].columns.count - 1
        return tables[table].columns.count - 1
    }

    mutating func replicaIndex(_ replica: UUID) -> Int {
        if let index = replicaIndexes[replica] { return index }
        replicas.append(replica)
        replicaIndexes[replica] = replicas.count - 1
        return replicas.count - 1
    }

    /// Whether two batches hold the same changes in the same order
    /// (the lookup tables used while building one do not count).
    public static func == (lhs: ChangeBatch, rhs: ChangeBatch) -> Bool {
        lhs.tables == rhs.tables && lhs.replicas == rhs.replicas && lhs.rows == rhs.rows
    }

    // MARK: Wire form

    static let formatVersion: UInt8 = 1

    /// The batch's bytes.
    public func encoded() -> Data {
        var writer = ByteWriter()
        writer.byte(Self.formatVersion)
        writer.varint(UInt64(replicas.count))
        for replica in replicas { writer.bytes(replica.bytes) }
        writer.varint(UInt64(tables.count))
        for table in tables {
            writer.string(table.name)
            writer.varint(UInt64(table.columns.count))
            for column in table.columns { writer.string(column) }
        }
        writer.varint(UInt64(rows.count))
        var clock: Int64 = 0
        var known: Int64 = 0
        for row in rows {
            writer.varint(UInt64(row.table))
            writer.bytes(row.gid.bytes)
            writer.varint(UInt64(row.cells.count))
            for cell in row.cells {
                writer.varint(UInt64(cell.column + 1))
                writer.varint(UInt64(cell.replica))
                writer.signed(cell.clock &- clock)
                writer.signed(cell.known &- known)
                if let reference = cell.reference {
                    writer.reference(reference)
                } else {
                    writer.value(cell.value)
                }
                clock = cell.clock
                known = cell.known
            }
        }
        writer.bytes(crc32(writer.data).littleEndianBytes)
        return writer.data
    }

    /// Reads a batch from its bytes.
    ///
    /// - Throws: ``SyncError/Kind/malformedBatch`` when the bytes are cut
    ///   short, garbled (the checksum differs), of another format, or name
    ///   a table, column or replica they do not list.
    public init(encoded data: Data) throws {
        guard data.count >= 5 else { throw Self.malformed("it has \(data.count) bytes, fewer than any batch") }
        let body = data.prefix(data.count - 4)
        let checksum = data.suffix(4).enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * $1.offset) }
        guard crc32(body) == checksum else {
            throw Self.malformed("its checksum does not match: it was cut short or changed on the way")
        }
        var reader = ByteReader(body)
        do {
            guard try reader.byte() == Self.formatVersion else {
                throw Self.malformed("it is not in format \(Self.formatVersion)")
            }
            for _ in 0..<(try reader.count()) {
                guard let replica = UUID(bytes: try reader.bytes(16)) else { throw ByteReader.End() }
                replicas.append(replica)
            }
            for _ in 0..<(try reader.count()) {
                var table = Table(name: try reader.string(), columns: [])
                for _ in 0..<(try reader.count()) { table.columns.append(try reader.string()) }
                tables.append(table)
            }
            var clock: Int64 = 0
            var known: Int64 = 0
            for _ in 0..<(try reader.count()) {
                let table = try reader.count()
                guard table < tables.count else {
                    throw Self.malformed("a row names table \(table) of \(tables.count)")
                }
                guard let gid = UUID(bytes: try reader.bytes(16)) else { throw ByteReader.End() }
                var row = Row(table: table, gid: gid, cells: [])
                for _ in 0..<(try reader.count()) {
                    let column = try reader.count() - 1
                    guard column < tables[table].columns.count else {
                        throw Self.malformed("a change names column \(column) of \(tables[table].columns.count)")
                    }
                    let replica = try reader.count()
                    guard replica < replicas.count else {
                        throw Self.malformed("a change names replica \(replica) of \(replicas.count)")
                    }
                    clock = clock &+ (try reader.signed())
                    known = known &+ (try reader.signed())
                    let (value, reference) = try reader.cellValue()
                    row.cells.append(
                        Cell(
                            column: column, clock: clock, replica: replica, known: known, value: value,
                            reference: reference))
                }
                rows.append(row)
            }
            guard reader.isAtEnd else { throw Self.malformed("bytes follow its last row") }
        } catch is ByteReader.End {
            throw Self.malformed("it ends in the middle of a change")
        }
    }

    private static func malformed(_ reason: String) -> SyncError {
        SyncError(.malformedBatch, "the change batch was refused: \(reason)")
    }

    /// Encodes the batch's bytes as one value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(encoded())
    }

    /// Decodes a batch from its bytes.
    public init(from decoder: any Decoder) throws {
        try self.init(encoded: try decoder.singleValueContainer().decode(Data.self))
    }
}

// MARK: - Bytes

private enum ValueTag: UInt8 {
    /// `reference`: a large value's SHA-256 (32 bytes) and size, its bytes
    /// sent apart.
    case null = 0, integer, real, text, blob, reference
}

struct ByteWriter {
    var data = Data()

    mutating func byte(_ byte: UInt8) { data.append(byte) }
    mutating func bytes(_ bytes: Data) { data.append(bytes) }
    mutating func bytes(_ bytes: [UInt8]) { data.append(contentsOf: bytes) }

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            data.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        data.append(UInt8(value))
    }

    /// Zigzag, so that small negative numbers stay short.
    mutating func signed(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func string(_ text: String) {
        varint(UInt64(text.utf8.count))
        data.append(contentsOf: text.utf8)
    }

    mutating func reference(_ reference: LargeValueReference) {
        byte(ValueTag.reference.rawValue)
        bytes(reference.sha256)
        varint(UInt64(reference.size))
    }

    mutating func value(_ value: SQLiteValue) {
        switch value {
        case .null: byte(ValueTag.null.rawValue)
        case .integer(let integer):
            byte(ValueTag.integer.rawValue)
            signed(integer)
        case .real(let real):
            byte(ValueTag.real.rawValue)
            bytes(real.bitPattern.littleEndianBytes)
        case .text(let text):
            byte(ValueTag.text.rawValue)
            string(text)
        case .textBytes(let bytes):
            byte(ValueTag.text.rawValue)
            varint(UInt64(bytes.count))
            self.bytes(bytes)
        case .blob(let blob):
            byte(ValueTag.blob.rawValue)
            varint(UInt64(blob.count))
            bytes(blob)
        }
    }
}

struct ByteReader {
    struct End: Error {}

    private let data: Data
    private var offset: Int

    init(_ data: Data) {
        self.data = data
        offset = data.startIndex
    }

    var isAtEnd: Bool { offset == data.endIndex }

    mutating func byte() throws -> UInt8 {
        guard offset < data.endIndex else { throw End() }
        defer { offset += 1 }
        return data[offset]
    }

    mutating func bytes(_ count: Int) throws -> Data {
        guard count >= 0, data.endIndex - offset >= count else { throw End() }
        defer { offset += count }
        return data[offset..<offset + count]
    }

    mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try byte()
            guard shift < 64 else { throw End() }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    /// A count or index: never more than the bytes left, so that garbage
    /// cannot ask for a huge allocation.
    mutating func count() throws -> Int {
        let value = try varint()
        guard value <= UInt64(data.endIndex - offset) + 1 else { throw End() }
        return Int(value)
    }

    mutating func signed() throws -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    mutating func string() throws -> String {
        let bytes = try bytes(try count())
        guard let text = String(data: bytes, encoding: .utf8) else { throw End() }
        return text
    }

    /// A cell's value, or the reference of a large one.
    mutating func cellValue() throws -> (SQLiteValue, LargeValueReference?) {
        guard let tag = ValueTag(rawValue: try byte()) else { throw End() }
        guard tag == .reference else { return (try value(tag), nil) }
        let hash = Data(try bytes(32))
        let size = try varint()
        guard size <= UInt64(Int64.max) else { throw End() }
        return (.null, LargeValueReference(sha256: hash, size: Int64(size)))
    }

    mutating func value() throws -> SQLiteValue {
        guard let tag = ValueTag(rawValue: try byte()) else { throw End() }
        return try value(tag)
    }

    private mutating func value(_ tag: ValueTag) throws -> SQLiteValue {
        switch tag {
        case .reference: throw End()
        case .null: return .null
        case .integer: return .integer(try signed())
        case .real:
            let bytes = try bytes(8)
            let bits = bytes.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * $1.offset) }
            return .real(Double(bitPattern: bits))
        case .text:
            let bytes = try bytes(try count())
            if let text = String(data: bytes, encoding: .utf8) { return .text(text) }
            return .textBytes(Data(bytes))
        case .blob: return .blob(Data(try bytes(try count())))
        }
    }
}

extension FixedWidthInteger {
    var littleEndianBytes: [UInt8] {
        withUnsafeBytes(of: littleEndian) { Array($0) }
    }
}

private let crcTable: [UInt32] = (0..<256).map { index in
    var crc = UInt32(index)
    for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    return crc
}

/// CRC-32 (IEEE), as zlib computes it.
func crc32(_ data: Data) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in data { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    return crc ^ 0xFFFF_FFFF
}
