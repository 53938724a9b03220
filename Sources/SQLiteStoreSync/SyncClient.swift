import Foundation
import SQLiteStore

/// What one ``SyncClient/sync(over:pushLimit:pullLimit:progress:)`` did.
public struct SyncReport: Sendable, Equatable {
    /// Column changes (and deletes) pushed and acknowledged.
    public var sent: Int = 0
    /// Column changes (and deletes) pulled and applied.
    public var received: Int = 0
    /// Values that lost a merge on the server while this device's pushes
    /// were applied (see ``SyncConflict``).
    public var conflicts: Int = 0
}

/// The device half: pushes local changes since the server's last
/// acknowledgement, pulls everything after the last server position seen.
///
/// Its positions live in the device's database and move in the same
/// transaction as the changes they cover, so a sync killed at any point
/// resumes with nothing applied twice and nothing lost: a push whose
/// acknowledgement never arrived is refused by the server as a replay and
/// the client moves on; a pull whose answer was not applied is asked again.
///
/// ```swift
/// let client = SyncClient(writer: queue, schema: schema)
/// let report = try await client.sync(over: transport)
/// print("sent \(report.sent), received \(report.received)")
/// ```
///
/// The steps are public too, for a transport that drives them itself:
/// ``makePush(limit:)``, ``acknowledge(_:for:)``, ``makePull(limit:)``,
/// ``apply(_:for:)``.
public final class SyncClient: Sendable {
    /// The device's database.
    public let writer: any DatabaseWriter
    /// The synced tables.
    public let schema: SyncSchema

    /// A client over `writer`, whose database has the schema installed.
    public init(writer: any DatabaseWriter, schema: SyncSchema) {
        self.writer = writer
        self.schema = schema
    }

    /// This replica's identity.
    public func replicaID() throws -> UUID {
        try writer.read { db in try ReplicaContext(db, schema: schema).localUUID }
    }

    /// Pushes, then pulls until the server has nothing more.
    ///
    /// Pushes go in batches of at most `pushLimit` changes, pulls of about
    /// `pullLimit`; after each, `progress` gets the counts so far, and a
    /// cancelled task stops there (`CancellationError`), keeping what was
    /// acknowledged and applied.
    ///
    /// - Throws: The transport's errors, or a ``SyncError`` the server
    ///   answered with (other than a replay, which is handled); whatever
    ///   was acknowledged or applied before stays so.
    public func sync(
        over transport: some SyncTransport, pushLimit: Int = 2_000, pullLimit: Int = 10_000,
        progress: (@Sendable (SyncReport) -> Void)? = nil
    ) async throws -> SyncReport {
        var report = SyncReport()
        let schema = schema
        while let request = try await writer.read({ db in try Self.makePush(db, schema, limit: pushLimit) }) {
            try Task.checkCancellation()
            do {
                let response = try await transport.push(request)
                let acknowledged = min(response.acknowledgedThrough, request.through)
                try await writer.write { db in try Self.resume(db, after: acknowledged) }
                report.sent += request.changes.changeCount
                report.conflicts += response.conflicts
            } catch let error as SyncError {
                guard case .replayedPush(let acknowledged) = error.kind, acknowledged > request.after else {
                    throw error
                }
                try await writer.write { db in try Self.resume(db, after: acknowledged) }
            }
            progress?(report)
        }
        while true {
            try Task.checkCancellation()
            let request = try await writer.read { db in try Self.makePull(db, schema, limit: pullLimit) }
            let response = try await transport.pull(request)
            report.received += try await writer.write { db in try Self.apply(response, for: request, db, schema) }
            progress?(report)
            if !response.hasMore { break }
        }
        return report
    }

    /// The local changes not yet acknowledged, at most `limit` of them, or
    /// nil when there are none.
    public func makePush(limit: Int = .max) throws -> PushRequest? {
        try writer.read { db in try Self.makePush(db, schema, limit: limit) }
    }

    private static func makePush(_ db: Database, _ schema: SyncSchema, limit: Int) throws -> PushRequest? {
        let context = try ReplicaContext(db, schema: schema)
        let after = try context.state("acknowledged")
        let entries = try db.fetchAll(
            """
            SELECT seq, tbl, gid, col, clock, known, value FROM \(identifier: Bookkeeping.outbox)
            WHERE seq > \(after) ORDER BY seq LIMIT \(Int64(clamping: max(1, limit)))
            """)
        guard let last = entries.last else { return nil }
        var batch = ChangeBatch()
        let replica = batch.replicaIndex(context.localUUID)
        var rowIndexes: [Data: Int] = [:]
        for entry in entries {
            let table = try entry.decode(Int64.self, at: 1)
            let gidBytes = try entry.decode(Data.self, at: 2)
            let column = try entry.decode(Int64.self, at: 3)
            guard let name = context.tableName(table), let gid = UUID(bytes: gidBytes) else { continue }
            let tableIndex = batch.tableIndex(name)
            var index = Bookkeeping.deleteColumn
            if column != Int64(Bookkeeping.deleteColumn) {
                guard let columnName = context.columnName(column, table: table) else { continue }
                index = batch.columnIndex(columnName, table: tableIndex)
            }
            let key = gidBytes + withUnsafeBytes(of: table) { Data($0) }
            if rowIndexes[key] == nil {
                rowIndexes[key] = batch.rows.count
                batch.rows.append(ChangeBatch.Row(table: tableIndex, gid: gid, cells: []))
            }
            batch.rows[rowIndexes[key]!].cells.append(
                ChangeBatch.Cell(
                    column: index, clock: try entry.decode(Int64.self, at: 4), replica: replica,
                    known: try entry.decode(Int64.self, at: 5), value: try entry[6]))
        }
        return PushRequest(
            replica: context.localUUID, after: after, through: try last.decode(Int64.self, at: 0),
            changes: batch)
    }

    /// Records the server's acknowledgement of `request`: its changes leave
    /// the outbox.
    public func acknowledge(_ response: PushResponse, for request: PushRequest) throws {
        try resume(after: min(response.acknowledgedThrough, request.through))
    }

    /// Records that the server has this device's changes through
    /// `acknowledged` (from an acknowledgement, or from the refusal of a
    /// replayed push), so that the next push starts after it.
    public func resume(after acknowledged: Int64) throws {
        try writer.write { db in try Self.resume(db, after: acknowledged) }
    }

    private static func resume(_ db: Database, after acknowledged: Int64) throws {
        try db.execute(
            """
            UPDATE \(identifier: Bookkeeping.state) SET acknowledged = max(acknowledged, \(acknowledged))
            """)
        try db.execute("DELETE FROM \(identifier: Bookkeeping.outbox) WHERE seq <= \(acknowledged)")
    }

    /// A pull from the last server position this device applied.
    public func makePull(limit: Int = 10_000) throws -> PullRequest {
        try writer.read { db in try Self.makePull(db, schema, limit: limit) }
    }

    private static func makePull(_ db: Database, _ schema: SyncSchema, limit: Int) throws -> PullRequest {
        let context = try ReplicaContext(db, schema: schema)
        return PullRequest(replica: context.localUUID, after: try context.state("known"), limit: limit)
    }

    /// Applies a pull's answer in one transaction, with the new position,
    /// and returns how many changes it held. An answer to an older
    /// position than the device's (a retry that crossed another) applies
    /// nothing.
    ///
    /// - Throws: ``SyncError/Kind/unknownTable(_:)`` or
    ///   ``SyncError/Kind/unknownColumn(table:column:)`` for a table or column this device does
    ///   not sync, with nothing applied.
    @discardableResult
    public func apply(_ response: PullResponse, for request: PullRequest) throws -> Int {
        try writer.write { db in try Self.apply(response, for: request, db, schema) }
    }

    private static func apply(
        _ response: PullResponse, for request: PullRequest, _ db: Database, _ schema: SyncSchema
    ) throws -> Int {
        let context = try ReplicaContext(db, schema: schema)
        guard try context.state("known") == request.after, response.through >= request.after else { return 0 }
        let batch = response.changes
        try context.checkNames(in: batch)
        var maximumClock: Int64 = 0
        try context.applying {
            for row in batch.rows {
                try Self.apply(row, of: batch, in: context)
                for cell in row.cells { maximumClock = max(maximumClock, cell.clock) }
            }
        }
        try context.observe(clock: maximumClock)
        try context.setState("known", response.through)
        return batch.changeCount
    }

    /// Applies one pulled row. The server sends each cell's current
    /// version, so the device keeps the higher of its own and the server's;
    /// a local value that loses here is still in the outbox and reaches the
    /// server, which logs it.
    private static func apply(_ row: ChangeBatch.Row, of batch: ChangeBatch, in context: ReplicaContext) throws {
        let name = batch.tables[row.table].name
        let table = context.table(name)!
        let catalog = context.catalog(name)!
        func columnName(_ cell: ChangeBatch.Cell) -> String { batch.tables[row.table].columns[cell.column] }
        let firstColumn = row.cells.first.flatMap { cell in
            cell.column == Bookkeeping.deleteColumn ? nil : catalog.columnIDs[columnName(cell)]
        }
        let (state, firstCell) = try context.row(table: catalog.id, gid: row.gid, withCell: firstColumn)

        if let delete = row.cells.first(where: { $0.column == Bookkeeping.deleteColumn }) {
            let replica = try context.number(ofReplica: batch.replicas[delete.replica])
            if let state, !state.deleted, let localID = state.localID {
                try context.deleteRow(of: table, localID: localID)
                try context.tombstone(
                    table: catalog.id, gid: row.gid, exists: true, clock: delete.clock, replica: replica, position: nil)
            } else if state == nil {
                try context.tombstone(
                    table: catalog.id, gid: row.gid, exists: false, clock: delete.clock, replica: replica,
                    position: nil)
            }
            return
        }
        if state?.deleted == true { return }  // deleted here: the delete wins at the server too

        guard let localID = state?.localID else {
            let values = row.cells.map { (column: columnName($0), value: $0.value) }
            _ = try context.insert(values, into: table, catalog: catalog, gid: row.gid, created: nil)
            for cell in row.cells {
                try context.setCell(
                    table: catalog.id, gid: row.gid, column: catalog.columnIDs[columnName(cell)]!, clock: cell.clock,
                    replica: try context.number(ofReplica: batch.replicas[cell.replica]), position: nil)
            }
            return
        }
        for (index, cell) in row.cells.enumerated() {
            let column = catalog.columnIDs[columnName(cell)]!
            let incoming = Version(clock: cell.clock, replica: batch.replicas[cell.replica])
            let existing =
                index == 0 ? firstCell : try context.cell(table: catalog.id, gid: row.gid, column: column)
            if let existing, try context.version(of: existing) >= incoming { continue }
            try context.write(cell.value, to: columnName(cell), in: table, localID: localID)
            try context.setCell(
                table: catalog.id, gid: row.gid, column: column, clock: cell.clock,
                replica: try context.number(ofReplica: batch.replicas[cell.replica]), position: nil)
        }
    }
}
