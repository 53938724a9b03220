import Foundation
import SQLiteStore

/// What one ``SyncClient/sync(over:pushLimit:pullLimit:chunkSize:progress:)`` did.
public struct SyncReport: Sendable, Equatable {
    /// Column changes (and deletes) pushed and acknowledged.
    public var sent: Int = 0
    /// Column changes (and deletes) pulled and applied.
    public var received: Int = 0
    /// Values that lost a merge on the server while this device's pushes
    /// were applied (see ``SyncConflict``).
    public var conflicts: Int = 0
    /// Bytes of large values uploaded.
    public var largeBytesSent: Int64 = 0
    /// Bytes of large values downloaded.
    public var largeBytesReceived: Int64 = 0
}

/// A step of a sync, reported as it happens (for a progress display).
public enum SyncProgress: Sendable, Equatable {
    /// A push was acknowledged or a pull applied: the counts so far.
    case batch(SyncReport)
    /// Part of a large value went up: `received` of its size is on the
    /// server.
    case uploading(LargeValueProgress)
    /// Part of a large value came down: `received` of its size is here.
    case downloading(LargeValueProgress)
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
    /// `pullLimit`; a cancelled task stops between them
    /// (`CancellationError`), keeping what was acknowledged and applied.
    ///
    /// Large values go up before the push that references them and come
    /// down before the pull answer that references them is applied, in
    /// chunks of `chunkSize` bytes; each chunk received is kept, so a sync
    /// stopped half-way resumes where the transfer stood.
    ///
    /// - Parameters:
    ///   - transport: How to reach the server.
    ///   - pushLimit: The most changes in one push.
    ///   - pullLimit: About the most changes in one pull's answer.
    ///   - chunkSize: The bytes of a large value sent or asked at a time.
    ///   - progress: Called after each batch (``SyncProgress/batch(_:)``,
    ///     with the counts so far) and each chunk of a large value.
    /// - Throws: The transport's errors, or a ``SyncError`` the server
    ///   answered with (other than a replay, which is handled), or
    ///   ``SyncError/Kind/storageFull`` when this device's database cannot
    ///   grow; whatever was acknowledged or applied before stays so, and
    ///   nothing of the step that failed.
    public func sync(
        over transport: some SyncTransport, pushLimit: Int = 2_000, pullLimit: Int = 10_000,
        chunkSize: Int = 1 << 20, progress: @escaping @Sendable (SyncProgress) -> Void = { _ in }
    ) async throws -> SyncReport {
        var report = SyncReport()
        let schema = schema
        var changedMeanwhile = 0
        while let request = try await SyncError.whenFull(
            Self.pushFull, { try await writer.write { db in try Self.makePush(db, schema, limit: pushLimit) } })
        {
            try Task.checkCancellation()
            do {
                for reference in try largeValues(toUpload: request) {
                    report.largeBytesSent += try await upload(
                        reference, over: transport, chunkSize: chunkSize, progress: progress)
                }
                let response = try await transport.push(request)
                let acknowledged = min(response.acknowledgedThrough, request.through)
                try await SyncError.whenFull(Self.resumeFull) {
                    try await writer.write { db in try Self.resume(db, after: acknowledged) }
                }
                report.sent += request.changes.changeCount
                report.conflicts += response.conflicts
            } catch let error as SyncError {
                if case .unknownLargeValue = error.kind, changedMeanwhile < 3 {
                    // The app replaced a picture since the push was made: make it again.
                    changedMeanwhile += 1
                    continue
                }
                guard case .replayedPush(let acknowledged) = error.kind, acknowledged > request.after else {
                    throw error
                }
                try await SyncError.whenFull(Self.resumeFull) {
                    try await writer.write { db in try Self.resume(db, after: acknowledged) }
                }
            }
            progress(.batch(report))
        }
        var replaced = 0
        while true {
            try Task.checkCancellation()
            let request = try await writer.read { db in try Self.makePull(db, schema, limit: pullLimit) }
            let response = try await transport.pull(request)
            do {
                for missing in try missingLargeValues(in: response) {
                    report.largeBytesReceived += try await download(
                        missing, over: transport, chunkSize: chunkSize, progress: progress)
                }
            } catch let error as SyncError {
                // Replaced on the server since this answer: ask again for the current one.
                guard case .unknownLargeValue = error.kind, replaced < 3 else { throw error }
                replaced += 1
                continue
            }
            report.received += try await SyncError.whenFull(Self.applyFull) {
                try await writer.write { db in try Self.apply(response, for: request, db, schema) }
            }
            progress(.batch(report))
            if !response.hasMore, request.columns == nil { break }
        }
        return report
    }

    private func upload(
        _ reference: LargeValueReference, over transport: some SyncTransport, chunkSize: Int,
        progress: @Sendable (SyncProgress) -> Void
    ) async throws -> Int64 {
        var sent: Int64 = 0
        var offset = try await transport.uploadChunk(ChunkUpload(reference: reference, offset: 0, bytes: Data()))
            .received
        while offset < reference.size {
            let bytes = try readChunk(of: reference, at: offset, maximumLength: chunkSize)
            do {
                offset = try await transport.uploadChunk(
                    ChunkUpload(reference: reference, offset: offset, bytes: bytes)
                )
                .received
                sent += Int64(bytes.count)
            } catch let error as SyncError {
                guard case .chunkOutOfOrder(let expected) = error.kind else { throw error }
                offset = expected
            }
            progress(.uploading(LargeValueProgress(reference: reference, received: offset)))
        }
        return sent
    }

    private func download(
        _ missing: LargeValueProgress, over transport: some SyncTransport, chunkSize: Int,
        progress: @Sendable (SyncProgress) -> Void
    ) async throws -> Int64 {
        var received = missing.received
        var fetched: Int64 = 0
        while received < missing.reference.size {
            let chunk = try await transport.downloadChunk(
                ChunkDownload(reference: missing.reference, offset: received, maximumLength: chunkSize))
            received = try receiveChunk(chunk.bytes, of: missing.reference, at: received)
            fetched += Int64(chunk.bytes.count)
            progress(.downloading(LargeValueProgress(reference: missing.reference, received: received)))
        }
        return fetched
    }

    // MARK: Large values, step by step

    /// The large values `request` references that this device holds, to
    /// upload (``SyncServer/uploadChunk(_:)``) before sending it. A value
    /// it no longer holds (replaced or deleted by a pull since it was
    /// written) lost on the server already and need not go.
    public func largeValues(toUpload request: PushRequest) throws -> [LargeValueReference] {
        try writer.read { db in
            let context = try ReplicaContext(db, schema: schema)
            var seen = Set<LargeValueReference>()
            var references: [LargeValueReference] = []
            for row in request.changes.rows {
                for cell in row.cells {
                    guard let reference = cell.reference, !seen.contains(reference) else { continue }
                    seen.insert(reference)
                    if try context.source(of: reference) != nil { references.append(reference) }
                }
            }
            return references
        }
    }

    /// Reads at most `maximumLength` bytes of a large value this device
    /// holds, from `offset`, to upload.
    ///
    /// - Throws: ``SyncError/Kind/unknownLargeValue(_:)`` when the device no
    ///   longer holds it (the row changed since the push was made: make it
    ///   again).
    public func readChunk(of reference: LargeValueReference, at offset: Int64, maximumLength: Int) throws -> Data {
        try writer.read { db in
            try ReplicaContext(db, schema: schema).readChunk(of: reference, at: offset, maximumLength: maximumLength)
        }
    }

    /// The large values `response` references that this device does not
    /// hold whole yet, each with how much of it has arrived: download the
    /// rest (``SyncServer/downloadChunk(_:)``, ``receiveChunk(_:of:at:)``)
    /// before applying the response.
    public func missingLargeValues(in response: PullResponse) throws -> [LargeValueProgress] {
        try writer.read { db in
            let context = try ReplicaContext(db, schema: schema)
            var seen = Set<LargeValueReference>()
            var missing: [LargeValueProgress] = []
            for row in response.changes.rows {
                for cell in row.cells {
                    guard let reference = cell.reference, !seen.contains(reference) else { continue }
                    seen.insert(reference)
                    let received = try context.received(of: reference)
                    if received < reference.size {
                        missing.append(LargeValueProgress(reference: reference, received: received))
                    }
                }
            }
            return missing
        }
    }

    /// Stores a downloaded chunk of a large value at `offset` (where the
    /// transfer stands), durably, and returns how many bytes of it are
    /// held. The last chunk completes it once its bytes hash to the
    /// reference.
    ///
    /// - Throws: ``SyncError/Kind/chunkOutOfOrder(expectedOffset:)``,
    ///   ``SyncError/Kind/malformedChunk``, ``SyncError/Kind/largeValueMismatch(_:)``
    ///   (the value is discarded: download it again), with nothing stored.
    @discardableResult
    public func receiveChunk(_ bytes: Data, of reference: LargeValueReference, at offset: Int64) throws -> Int64 {
        try SyncError.whenFull(SyncError.deviceFull("the piece of the large value \(reference) was not stored")) {
            try ReplicaContext.receive(
                bytes, of: reference, at: offset, writer: writer, schema: schema,
                touched: Int64(Date().timeIntervalSince1970 * 1000))
        }
    }

    /// The local changes not yet acknowledged, at most `limit` of them, or
    /// nil when there are none.
    public func makePush(limit: Int = .max) throws -> PushRequest? {
        try SyncError.whenFull(Self.pushFull) { try writer.write { db in try Self.makePush(db, schema, limit: limit) } }
    }

    /// What a device whose database cannot grow is told when it prepares a
    /// push (which notes the references of its large values).
    private static let pushFull = SyncError.deviceFull("the changes to send could not be prepared, none was sent")

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
        var states: [Data: ReplicaContext.RowState?] = [:]
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
            let clock = try entry.decode(Int64.self, at: 4)
            var value: SQLiteValue = try entry[6]
            var reference: LargeValueReference?
            if column != Int64(Bookkeeping.deleteColumn), let synced = context.table(name),
                let catalog = context.catalog(name), synced.isLarge(batch.tables[tableIndex].columns[index])
            {
                // Read from the table when pushed: the outbox entry is the cell's latest local write.
                let state: ReplicaContext.RowState?
                if let known = states[key] {
                    state = known
                } else {
                    state = try context.row(table: table, gid: gid)
                    states[key] = state
                }
                let cell = try state.flatMap { try context.cell(row: $0.id, column: column) }
                if let localID = state?.localID, let cell, cell.clock == clock, cell.replica == context.localReplica {
                    (value, reference) = try context.outgoingValue(
                        table: synced, catalog: catalog, column: batch.tables[tableIndex].columns[index], gid: gid,
                        localID: localID, clock: clock, replica: context.localReplica)
                } else {
                    // Replaced or deleted by a pull since: what the apply kept of it.
                    reference = try context.rememberedReference(
                        table: table, gid: gid, column: column, clock: clock, replica: context.localReplica)
                    if reference != nil { value = .null }
                }
            }
            batch.rows[rowIndexes[key]!].cells.append(
                ChangeBatch.Cell(
                    column: index, clock: clock, replica: replica, known: try entry.decode(Int64.self, at: 5),
                    value: value, reference: reference))
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
        try SyncError.whenFull(Self.resumeFull) { try writer.write { db in try Self.resume(db, after: acknowledged) } }
    }

    /// What a device whose database cannot grow is told when it records an
    /// acknowledgement (the server answers the next push as a replay).
    private static let resumeFull = SyncError.deviceFull(
        "the server's acknowledgement was not recorded (the next sync recovers it)")

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
        if let backfill = try Backfill.next(context) {
            return PullRequest(
                replica: context.localUUID, after: backfill.after, until: backfill.until, columns: backfill.columns,
                limit: limit)
        }
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
        try SyncError.whenFull(Self.applyFull) {
            try writer.write { db in try Self.apply(response, for: request, db, schema) }
        }
    }

    /// What a device whose database cannot grow is told when it applies.
    private static let applyFull = SyncError.deviceFull(
        "the changes pulled were not applied, nothing of them, and this device's position did not move")

    private static func apply(
        _ response: PullResponse, for request: PullRequest, _ db: Database, _ schema: SyncSchema
    ) throws -> Int {
        let context = try ReplicaContext(db, schema: schema)
        let backfill: Backfill?
        if request.columns != nil {
            backfill = try Backfill.next(context)
            guard let backfill, backfill.matches(request), response.through >= request.after else { return 0 }
        } else {
            backfill = nil
            guard try context.state("known") == request.after, response.through >= request.after else { return 0 }
        }
        let batch = response.changes
        // Tables and columns this device does not sync (yet: it is a migration
        // behind) are skipped; it fetches their values once it syncs them.
        var references = Set<LargeValueReference>()
        for row in batch.rows {
            guard let table = context.table(batch.tables[row.table].name) else { continue }
            for cell in row.cells {
                guard let reference = cell.reference,
                    table.columnIndex(batch.tables[row.table].columns[cell.column]) != nil
                else { continue }
                references.insert(reference)
            }
        }
        try context.stage(references)
        let replicas = try batch.replicas.map { try context.number(ofReplica: $0) }
        let tables = batch.tables.map { BatchTable($0, in: context) }
        var maximumClock: Int64 = 0
        try context.applying {
            for row in batch.rows {
                try Self.apply(row, of: batch, tables: tables, replicas: replicas, in: context)
                for cell in row.cells { maximumClock = max(maximumClock, cell.clock) }
            }
        }
        try context.unstage(references)
        try context.observe(clock: maximumClock)
        if let backfill {
            try backfill.advance(to: response.through, done: !response.hasMore, context)
        } else {
            try context.setState("known", response.through)
            // Caught up: whatever is still staged was downloaded for a value
            // the server has since replaced or deleted.
            if !response.hasMore { try context.discardTransfers() }
        }
        return batch.changeCount
    }

    /// Applies one pulled row. The server sends each cell's current
    /// version, so the device keeps the higher of its own and the server's;
    /// a local value that loses here is still in the outbox and reaches the
    /// server, which logs it.
    private static func apply(
        _ row: ChangeBatch.Row, of batch: ChangeBatch, tables: [BatchTable?], replicas: [Int64],
        in context: ReplicaContext
    ) throws {
        guard let resolved = tables[row.table] else { return }
        let table = resolved.table
        let catalog = resolved.catalog
        let names = batch.tables[row.table].columns
        func columnName(_ cell: ChangeBatch.Cell) -> String { names[cell.column] }
        func columnID(_ cell: ChangeBatch.Cell) -> Int64? { resolved.columnIDs[cell.column] }
        let cells = row.cells.filter { $0.column == Bookkeeping.deleteColumn || columnID($0) != nil }
        let firstColumn = cells.first.flatMap { cell in
            cell.column == Bookkeeping.deleteColumn ? nil : columnID(cell)
        }
        let (state, firstCell) = try context.row(table: catalog.id, gid: row.gid, withCell: firstColumn)

        if let delete = cells.first(where: { $0.column == Bookkeeping.deleteColumn }) {
            let replica = replicas[delete.replica]
            if let state, !state.deleted, let localID = state.localID {
                if !table.largeColumns.isEmpty {
                    try context.keepOutboxReferences(
                        of: table, catalog: catalog, gid: row.gid, row: state.id, localID: localID,
                        columns: table.columns)
                }
                try context.deleteRow(of: table, localID: localID)
                try context.tombstone(
                    table: catalog.id, gid: row.gid, row: state.id, clock: delete.clock, replica: replica,
                    position: nil)
            } else if state == nil {
                try context.tombstone(
                    table: catalog.id, gid: row.gid, row: nil, clock: delete.clock, replica: replica, position: nil)
            }
            return
        }
        if state?.deleted == true { return }  // deleted here: the delete wins at the server too
        if cells.isEmpty { return }

        guard let state, let localID = state.localID else {
            let values = cells.map { (column: columnName($0), value: $0.value) }
            let (localID, number) = try context.insert(
                values, into: table, catalog: catalog, gid: row.gid, created: nil)
            for cell in cells {
                guard let reference = cell.reference else { continue }
                try context.write(
                    reference, to: columnName(cell), in: table, catalog: catalog, gid: row.gid, localID: localID,
                    clock: cell.clock, replica: replicas[cell.replica])
            }
            try context.insertCells(
                row: number, cells.map { (columnID($0)!, $0.clock, replicas[$0.replica]) }, position: nil)
            return
        }
        for (index, cell) in cells.enumerated() {
            let column = columnID(cell)!
            let existing =
                index == 0 ? firstCell : try context.cell(row: state.id, column: column)
            if let existing, existing.clock >= cell.clock {
                // Versions order by clock first: the replicas decide only a tie.
                if existing.clock > cell.clock { continue }
                let incoming = Version(clock: cell.clock, replica: batch.replicas[cell.replica])
                if try context.version(of: existing) >= incoming { continue }
            }
            let replica = replicas[cell.replica]
            if table.isLarge(columnName(cell)) {
                try context.keepOutboxReferences(
                    of: table, catalog: catalog, gid: row.gid, row: state.id, localID: localID,
                    columns: [columnName(cell)])
            }
            if let reference = cell.reference {
                try context.write(
                    reference, to: columnName(cell), in: table, catalog: catalog, gid: row.gid, localID: localID,
                    clock: cell.clock, replica: replica)
            } else {
                try context.write(cell.value, to: columnName(cell), in: table, localID: localID)
            }
            try context.setCell(row: state.id, column: column, clock: cell.clock, replica: replica, position: nil)
        }
    }
}

/// A table of a pull's batch as this device syncs it, resolved once per
/// batch rather than by name for each change: nil for a table it does not
/// sync (yet).
struct BatchTable {
    let table: SyncedTable
    let catalog: TableCatalog
    /// The column numbers of the batch's columns, in the batch's order; nil
    /// for a column this device does not sync (yet).
    let columnIDs: [Int64?]

    init?(_ batchTable: ChangeBatch.Table, in context: ReplicaContext) {
        guard let table = context.table(batchTable.name), let catalog = context.catalog(batchTable.name) else {
            return nil
        }
        self.table = table
        self.catalog = catalog
        columnIDs = batchTable.columns.map { catalog.columnIDs[$0] }
    }
}

/// The catch-up of columns a device started syncing after it had pulled:
/// the next group of them (same range) and how far it has come.
struct Backfill {
    var entries: [(table: Int64, column: Int64)]
    var columns: [String: [String]]
    var after: Int64
    var until: Int64

    static func next(_ context: ReplicaContext) throws -> Backfill? {
        guard try context.db.tableExists(Bookkeeping.backfill) else { return nil }
        let rows = try context.db.fetchAll(
            "SELECT tbl, col, after, until FROM \(identifier: Bookkeeping.backfill) ORDER BY after, until, tbl, col")
        guard let first = rows.first else { return nil }
        let after = try first.decode(Int64.self, at: 2)
        let until = try first.decode(Int64.self, at: 3)
        var backfill = Backfill(entries: [], columns: [:], after: after, until: until)
        for row in rows where try row.decode(Int64.self, at: 2) == after && row.decode(Int64.self, at: 3) == until {
            let table = try row.decode(Int64.self, at: 0)
            let column = try row.decode(Int64.self, at: 1)
            guard let tableName = context.tableName(table), let columnName = context.columnName(column, table: table)
            else { continue }
            backfill.entries.append((table, column))
            backfill.columns[tableName, default: []].append(columnName)
        }
        return backfill.entries.isEmpty ? nil : backfill
    }

    func matches(_ request: PullRequest) -> Bool {
        request.after == after && request.until == until && request.columns == columns
    }

    func advance(to position: Int64, done: Bool, _ context: ReplicaContext) throws {
        for entry in entries {
            if done {
                try context.db.execute(
                    "DELETE FROM \(identifier: Bookkeeping.backfill) WHERE tbl = \(entry.table) AND col = \(entry.column)"
                )
            } else {
                try context.db.execute(
                    """
                    UPDATE \(identifier: Bookkeeping.backfill) SET after = \(position)
                    WHERE tbl = \(entry.table) AND col = \(entry.column)
                    """)
            }
        }
    }
}
