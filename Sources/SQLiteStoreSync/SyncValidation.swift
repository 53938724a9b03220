import Foundation
import SQLiteStore

/// A synced row as a push leaves it on the server, handed to the server's
/// validation (``SyncServer/init(writer:schema:now:abandonedUploadAge:validate:)``) before the
/// push commits.
public struct SyncedRow: Sendable {
    /// The table.
    public let table: String
    /// The row's global identity.
    public let globalID: UUID
    /// Its local ID in the server's database.
    public let localID: Int64
    /// The row's synced columns and their values after the push (large
    /// columns left out).
    public let values: [String: SQLiteValue]
    /// The columns the push changed in this row: the values whose problems
    /// the device can fix (a column the push did not touch is left to
    /// whoever wrote it).
    public let changedColumns: Set<String>
}

/// A pushed value that the server's rules refuse: the whole push was
/// refused and nothing of it applied. The device fixes the record and
/// syncs again.
public struct SyncValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One column's problem.
    public struct Problem: Sendable, Equatable {
        /// The column.
        public let column: String
        /// What is wrong, a sentence for people.
        public let message: String

        /// A problem.
        public init(column: String, message: String) {
            self.column = column
            self.message = message
        }
    }

    /// The table of the refused row.
    public let table: String
    /// The refused row's global identity.
    public let globalID: UUID
    /// What is wrong with it, at least one problem.
    public let problems: [Problem]

    /// An error for one row.
    public init(table: String, globalID: UUID, problems: [Problem]) {
        self.table = table
        self.globalID = globalID
        self.problems = problems
    }

    /// "the push was refused: a row of people (…) is not valid: First name is required."
    public var description: String {
        "the push was refused: row \(globalID.uuidString) of \(table) is not valid: "
            + problems.map { "\($0.column): \($0.message)" }.joined(separator: "; ")
    }
}

extension SyncServer {
    /// Hands each row the push changed (and did not delete) to `validate`,
    /// inside the push's transaction: a throw rolls all of it back.
    static func validate(
        _ request: PushRequest, in context: ReplicaContext, with validate: @Sendable (SyncedRow) throws -> Void
    ) throws {
        let batch = request.changes
        for row in batch.rows {
            let name = batch.tables[row.table].name
            guard let table = context.table(name), let catalog = context.catalog(name),
                let state = try context.row(table: catalog.id, gid: row.gid), !state.deleted,
                let localID = state.localID
            else { continue }
            let changed = Set(
                row.cells.filter { $0.column != Bookkeeping.deleteColumn }.map {
                    batch.tables[row.table].columns[$0.column]
                })
            guard !changed.isEmpty else { continue }
            var values: [String: SQLiteValue] = [:]
            // A large value (a picture) is checked when it is stored, not
            // read whole here.
            for column in table.columns where !table.isLarge(column) {
                values[column] = try context.value(of: column, in: table, localID: localID)
            }
            try validate(
                SyncedRow(table: name, globalID: row.gid, localID: localID, values: values, changedColumns: changed))
        }
    }
}

extension ConflictLog {
    /// How many conflicts the log holds.
    static func count(_ db: Database) throws -> Int {
        try db.fetchOne(Int.self, "SELECT count(*) FROM \(identifier: Bookkeeping.conflicts)") ?? 0
    }
}

extension SyncSchema {
    /// The engine's own tables, which ``install(in:replicaID:)`` makes in
    /// the replica's database beside the app's (for an app that lists the
    /// tables it knows).
    public static let bookkeepingTables: [String] = [
        Bookkeeping.state, Bookkeeping.replicas, Bookkeeping.tables, Bookkeeping.columns, Bookkeeping.rows,
        Bookkeeping.cells, Bookkeeping.outbox, Bookkeeping.conflicts, Bookkeeping.staging, Bookkeeping.stagedBytes,
        Bookkeeping.large, Bookkeeping.backfill,
    ]
}

extension SyncConflict {
    /// The local ID of the synced row with the global identity `globalID`
    /// in `table`, nil when this replica has no such row (never had it, or
    /// it was deleted).
    public static func localID(ofRow globalID: UUID, in table: String, _ db: Database) throws -> Int64? {
        try db.fetchOne(
            Int64?.self,
            """
            SELECT r.local_id FROM \(identifier: Bookkeeping.rows) AS r
            JOIN \(identifier: Bookkeeping.tables) AS t ON t.id = r.tbl
            WHERE t.name = \(table) AND r.gid = \(globalID.bytes)
            """) ?? nil
    }
}

extension SyncClient {
    /// The number of the last local change captured in `db`, 0 before the
    /// first: it grows with every write to a synced table (and never
    /// shrinks, even once the changes are acknowledged), so a watcher that
    /// sees it move knows there is something to push.
    public static func lastLocalChange(_ db: Database) throws -> Int64 {
        try db.fetchOne(Int64.self, "SELECT seq FROM sqlite_sequence WHERE name = \(Bookkeeping.outbox)") ?? 0
    }
}
