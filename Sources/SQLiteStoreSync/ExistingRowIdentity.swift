import Foundation
import SQLiteStore

/// How ``SyncSchema/install(in:replicaID:existingRows:)`` identifies the
/// rows already in a synced table.
///
/// Rows written before the engine was installed have no history to tell
/// where they came from. When every replica starts from the same shipped
/// database (an app's sample records), random identities would make each
/// replica's copy of a sample row a record of its own, and every device
/// would end with one copy per replica. ``fromContents`` gives a row an
/// identity made from its table, its local ID and its synced values, so
/// that copies of one row that no one has changed are one record
/// everywhere, while rows that differ in any value, or in their ID, stay
/// apart.
public enum ExistingRowIdentity: Sendable {
    /// A new identity for each row, as the capture gives a new row (a
    /// version 7 UUID: the replica's clock, then random bits): every
    /// existing row is a record of this replica alone.
    case random
    /// An identity made from the table's name, the row's local ID and its
    /// synced values (two 64-bit FNV-1a hashes of their wire form).
    case fromContents

    /// The identity of an existing row, recorded when the replica's clock
    /// stood at `clock`.
    func globalID(table: String, localID: Int64, values: [SQLiteValue], clock: Int64) -> UUID {
        switch self {
        case .random: return Self.timeOrdered(clock: clock)
        case .fromContents:
            var writer = ByteWriter()
            writer.string(table)
            writer.signed(localID)
            for value in values { writer.value(value) }
            var bytes = Data()
            for seed in [UInt64(0xCBF2_9CE4_8422_2325), 0x8422_2325_CBF2_9CE4] {
                bytes.append(contentsOf: fnv1a(writer.data, seed: seed).littleEndianBytes)
            }
            // An RFC 9562 version 8 (custom) UUID.
            bytes[6] = bytes[6] & 0x0F | 0x80
            bytes[8] = bytes[8] & 0x3F | 0x80
            return UUID(bytes: bytes)!
        }
    }

    /// The identity ``Bookkeeping/newIdentity(clock:)`` makes in SQL, for
    /// `clock`: its milliseconds, 12 bits of its counter, 62 random bits.
    static func timeOrdered(clock: Int64) -> UUID {
        var bytes = Data(count: 16)
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: (clock >> 16) >> (40 - 8 * index)) }
        bytes[6] = 0x70 | UInt8(truncatingIfNeeded: (clock >> 8) & 0x0F)
        bytes[7] = UInt8(truncatingIfNeeded: clock)
        var random = SystemRandomNumberGenerator()
        let bits = random.next() as UInt64
        bytes[8] = 0x80 | UInt8(truncatingIfNeeded: bits & 0x3F)
        for index in 9..<16 { bytes[index] = UInt8(truncatingIfNeeded: bits >> (8 * (index - 8))) }
        return UUID(bytes: bytes)!
    }

    private func fnv1a(_ data: Data, seed: UInt64) -> UInt64 {
        var hash = seed
        for byte in data {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
