import Foundation
import SQLiteStore

/// A value that lost a merge, with the value that beat it.
///
/// The server keeps one for every value that loses to a concurrent edit or
/// delete (see <doc:MergeRules>), in its database, in the order the merges
/// happened:
///
/// ```swift
/// for conflict in try pool.read({ db in try SyncConflict.fetchAll(db) }) {
///     print("\(conflict.table).\(conflict.column): \(conflict.losingValue) lost to \(conflict.winningValue)")
/// }
/// ```
public struct SyncConflict: Sendable, Hashable {
    /// The table.
    public var table: String
    /// The row's global identity.
    public var globalID: UUID
    /// The column.
    public var column: String
    /// The value that lost.
    public var losingValue: SQLiteValue
    /// Its version (clock and the replica that wrote it).
    public var losingVersion: Version
    /// The value that won: NULL when the row's delete won.
    public var winningValue: SQLiteValue
    /// Its version.
    public var winningVersion: Version
    /// Whether the row's delete won (the row is gone).
    public var winnerIsDelete: Bool
    /// The server position at which the merge happened.
    public var position: Int64

    /// All recorded conflicts, oldest first.
    public static func fetchAll(_ db: Database) throws -> [SyncConflict] {
        try db.fetchAll(
            """
            SELECT table_name, gid, column_name, losing_value, losing_clock, losing_replica,
                   winning_value, winning_clock, winning_replica, winner_deleted, position
            FROM \(identifier: Bookkeeping.conflicts) ORDER BY id
            """
        ).map { row in
            func uuid(_ index: Int) throws -> UUID {
                guard let uuid = UUID(bytes: try row.decode(Data.self, at: index)) else {
                    throw SyncError(.notInstalled, "the conflict log holds a damaged identity")
                }
                return uuid
            }
            return SyncConflict(
                table: try row.decode(String.self, at: 0), globalID: try uuid(1),
                column: try row.decode(String.self, at: 2), losingValue: try row[3],
                losingVersion: Version(clock: try row.decode(Int64.self, at: 4), replica: try uuid(5)),
                winningValue: try row[6],
                winningVersion: Version(clock: try row.decode(Int64.self, at: 7), replica: try uuid(8)),
                winnerIsDelete: try row.decode(Bool.self, at: 9), position: try row.decode(Int64.self, at: 10))
        }
    }

    /// The global identity of a synced row, from its local ID (nil when the
    /// row is not synced or unknown).
    public static func globalID(ofRow localID: Int64, in table: String, _ db: Database) throws -> UUID? {
        let bytes = try db.fetchOne(
            Data.self,
            """
            SELECT r.gid FROM \(identifier: Bookkeeping.rows) AS r
            JOIN \(identifier: Bookkeeping.tables) AS t ON t.id = r.tbl
            WHERE t.name = \(table) AND r.local_id = \(localID)
            """)
        return bytes.flatMap(UUID.init(bytes:))
    }
}

/// Writes conflicts for one row during a merge.
struct ConflictLog {
    let context: ReplicaContext
    let table: SyncedTable
    let gid: UUID

    func record(
        column: String, losing: (SQLiteValue, Version), winning: (SQLiteValue, Version), winnerDeleted: Bool
    ) throws {
        try context.db.execute(
            """
            INSERT INTO \(identifier: Bookkeeping.conflicts)
                (table_name, gid, column_name, losing_value, losing_clock, losing_replica,
                 winning_value, winning_clock, winning_replica, winner_deleted, position)
            SELECT \(table.name), \(gid.bytes), \(column), \(losing.0), \(losing.1.clock), \(losing.1.replica.bytes),
                   \(winning.0), \(winning.1.clock), \(winning.1.replica.bytes), \(winnerDeleted), known
            FROM \(identifier: Bookkeeping.state)
            """)
    }
}
