import Foundation
import SQLiteStore

/// The server half: accepts devices' pushes into one total order and
/// answers their pulls.
///
/// The server's database is a replica like the devices' (the same tables,
/// ``SyncSchema/install(in:replicaID:)`` run on it); what the server's own
/// users write there is captured by the same triggers and takes its place
/// in the order before the next push or pull is handled.
///
/// ```swift
/// let server = SyncServer(writer: pool, schema: schema)
/// let answer = try server.push(request)      // from a device, through any transport
/// let changes = try server.pull(pullRequest)
/// ```
///
/// Every accepted change gets the next server position, one increasing
/// number; a device that has applied everything through position `n` asks
/// for what follows `n`. Each push and pull runs in one transaction, with
/// the positions it moves: a crash at any point leaves either all of it or
/// none of it.
public final class SyncServer: Sendable {
    /// The server's database.
    public let writer: any DatabaseWriter
    /// The synced tables and limits.
    public let schema: SyncSchema
    /// How long the chunks of an upload are kept when none arrives: an
    /// upload untouched for longer is abandoned, and its chunks are
    /// removed when another upload starts.
    public let abandonedUploadAge: Duration
    private let now: @Sendable () -> Int64
    private let validate: (@Sendable (SyncedRow) throws -> Void)?

    /// A server over `writer`.
    ///
    /// - Parameters:
    ///   - writer: The server's database, with the schema installed.
    ///   - schema: The synced tables and the clock skew bound.
    ///   - now: The server's clock in milliseconds since 1970, against
    ///     which changes from the future are refused and uploads age (the
    ///     system clock by default).
    ///   - abandonedUploadAge: How long an upload's chunks are kept with no
    ///     new chunk arriving (24 hours by default). There is no timer: the
    ///     first chunk of each new upload removes those older than this, in
    ///     its own transaction, which is when their room is wanted.
    ///   - validate: The app's rules for its rows, or nil for none. Called
    ///     once for each row a push changed and left in place, with the
    ///     row's values after the merge, inside the push's transaction,
    ///     before it commits: whatever it throws (a
    ///     ``SyncValidationError`` says which row and column, and why)
    ///     refuses the whole push, with nothing applied.
    public init(
        writer: any DatabaseWriter, schema: SyncSchema,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        abandonedUploadAge: Duration = .seconds(24 * 60 * 60),
        validate: (@Sendable (SyncedRow) throws -> Void)? = nil
    ) {
        self.writer = writer
        self.schema = schema
        self.now = now
        self.abandonedUploadAge = abandonedUploadAge
        self.validate = validate
    }

    /// Applies a device's push, merging each column by the rules in
    /// <doc:MergeRules>, and acknowledges it.
    ///
    /// - Throws: A ``SyncError``, with nothing applied: ``SyncError/Kind/replayedPush(acknowledgedThrough:)``
    ///   for a push already applied (the device resumes after the position
    ///   it carries), ``SyncError/Kind/pushOutOfOrder(acknowledgedThrough:)``,
    ///   ``SyncError/Kind/unknownTable(_:)``, ``SyncError/Kind/unknownColumn(table:column:)``,
    ///   ``SyncError/Kind/clockSkew``, ``SyncError/Kind/foreignChanges``, ``SyncError/Kind/malformedBatch``.
    public func push(_ request: PushRequest) throws -> PushResponse {
        let limit = now() + schema.maximumClockSkew.milliseconds
        let validate = validate
        return try SyncError.whenFull(SyncError.serverFull("the push was refused, nothing of it was applied")) {
            try writer.write { db in
                try Self.push(request, in: ReplicaContext(db, schema: schema), clockLimit: limit, validate: validate)
            }
        }
    }

    /// The changes after the device's position, at most about
    /// `request.limit` of them.
    public func pull(_ request: PullRequest) throws -> PullResponse {
        try SyncError.whenFull(SyncError.serverFull("the pull could not be answered")) {
            try writer.write { db in try Self.pull(request, in: ReplicaContext(db, schema: schema)) }
        }
    }

    /// The server's position: the number of the last change it accepted.
    public func position() throws -> Int64 {
        try writer.write { db in
            let context = try ReplicaContext(db, schema: schema)
            try Self.absorbLocalChanges(context)
            return try context.state("known")
        }
    }

    /// Stores a chunk of a large value a device is about to push (or,
    /// with no bytes, tells how much of it the server holds). The progress
    /// is durable: after a broken connection the device asks again and
    /// resumes from `received`. A value the server already holds (in
    /// another row) is answered as complete at once.
    ///
    /// - Throws: ``SyncError/Kind/chunkOutOfOrder(expectedOffset:)`` for a
    ///   chunk that does not start where the transfer stands,
    ///   ``SyncError/Kind/malformedChunk`` for one that does not fit the
    ///   value, ``SyncError/Kind/largeValueMismatch(_:)`` when the whole
    ///   value does not hash to its reference (it is discarded),
    ///   ``SyncError/Kind/storageFull`` when the server's database cannot
    ///   grow; nothing is stored then.
    ///
    /// The first chunk of a value the server holds none of starts an
    /// upload, and first removes the uploads no chunk reached for
    /// ``abandonedUploadAge``.
    public func uploadChunk(_ request: ChunkUpload) throws -> ChunkUploadResponse {
        let full = SyncError.serverFull("the piece of the large value \(request.reference) was not stored")
        if request.bytes.isEmpty {
            return try SyncError.whenFull(full) {
                try writer.write { db in
                    let context = try ReplicaContext(db, schema: schema)
                    try Self.absorbLocalChanges(context)
                    return ChunkUploadResponse(received: try context.received(of: request.reference))
                }
            }
        }
        let now = now()
        return ChunkUploadResponse(
            received: try SyncError.whenFull(full) {
                try ReplicaContext.receive(
                    request.bytes, of: request.reference, at: request.offset, writer: writer, schema: schema,
                    touched: now, sweepingBefore: now - abandonedUploadAge.milliseconds,
                    before: Self.absorbLocalChanges)
            })
    }

    /// A chunk of a large value a pull referenced, read from the row that
    /// holds it.
    ///
    /// - Throws: ``SyncError/Kind/unknownLargeValue(_:)`` when no row holds
    ///   it any more (it was replaced since the pull: pull again),
    ///   ``SyncError/Kind/malformedChunk`` for an offset outside it.
    public func downloadChunk(_ request: ChunkDownload) throws -> ChunkDownloadResponse {
        try SyncError.whenFull(
            SyncError.serverFull("the piece of the large value \(request.reference) could not be sent")
        ) {
            try writer.write { db in
                let context = try ReplicaContext(db, schema: schema)
                try Self.absorbLocalChanges(context)
                return ChunkDownloadResponse(
                    bytes: try context.readChunk(
                        of: request.reference, at: request.offset, maximumLength: request.maximumLength))
            }
        }
    }

    // MARK: - Push

    private static func push(
        _ request: PushRequest, in context: ReplicaContext, clockLimit: Int64,
        validate: (@Sendable (SyncedRow) throws -> Void)?
    ) throws -> PushResponse {
        try absorbLocalChanges(context)
        let db = context.db
        let pusher = try context.number(ofReplica: request.replica)
        let acknowledged = try db.fetchOne(
            Int64.self, "SELECT acknowledged FROM \(identifier: Bookkeeping.replicas) WHERE id = \(pusher)")!
        if request.after < acknowledged {
            throw SyncError(
                .replayedPush(acknowledgedThrough: acknowledged),
                "the push was refused: changes through \(acknowledged) of this device were already applied; "
                    + "send those after \(acknowledged)")
        }
        if request.after > acknowledged {
            throw SyncError(
                .pushOutOfOrder(acknowledgedThrough: acknowledged),
                "the push was refused: it starts after change \(request.after), but the server has this device's "
                    + "changes only through \(acknowledged)")
        }
        guard request.through >= request.after else {
            throw SyncError(.malformedBatch, "the push was refused: its range ends before it starts")
        }
        try check(request, in: context, clockLimit: clockLimit)
        let needed = try largeValuesNeeded(by: request, from: pusher, in: context)
        try context.stage(needed)

        var maximumClock: Int64 = 0
        let conflictsBefore = try ConflictLog.count(db)
        try context.applying {
            for row in request.changes.rows {
                try merge(row, of: request.changes, from: pusher, in: context)
                for cell in row.cells { maximumClock = max(maximumClock, cell.clock) }
            }
        }
        if let validate { try Self.validate(request, in: context, with: validate) }
        try context.unstage(needed)
        try context.observe(clock: maximumClock)
        try db.execute(
            """
            UPDATE \(identifier: Bookkeeping.replicas) SET acknowledged = \(request.through) WHERE id = \(pusher)
            """)
        return PushResponse(
            acknowledgedThrough: request.through, serverPosition: try context.state("known"),
            conflicts: try ConflictLog.count(db) - conflictsBefore)
    }

    /// Everything that can be checked before applying, so that a bad batch
    /// is refused whole.
    private static func check(_ request: PushRequest, in context: ReplicaContext, clockLimit: Int64) throws {
        let batch = request.changes
        guard batch.replicas.allSatisfy({ $0 == request.replica }) else {
            throw SyncError(.foreignChanges, "the push was refused: it carries changes of another device")
        }
        try context.checkNames(in: batch)
        for row in batch.rows {
            for cell in row.cells where cell.clock >> 16 > clockLimit {
                throw SyncError(
                    .clockSkew,
                    "the push was refused: a change to \(batch.tables[row.table].name) is dated "
                        + "\(cell.clock >> 16 - clockLimit) ms beyond the allowed clock skew; "
                        + "check this device's clock")
            }
        }
    }

    /// The large values of a push that would be written: those of new
    /// rows and those newer than the server's cell. Values that lose (to a
    /// later edit or to the row's delete) are logged by reference and
    /// need not arrive.
    private static func largeValuesNeeded(by request: PushRequest, from pusher: Int64, in context: ReplicaContext)
        throws -> Set<LargeValueReference>
    {
        let batch = request.changes
        var needed = Set<LargeValueReference>()
        for row in batch.rows where row.cells.contains(where: { $0.reference != nil }) {
            let name = batch.tables[row.table].name
            let catalog = context.catalog(name)!
            guard let state = try context.row(table: catalog.id, gid: row.gid) else {
                needed.formUnion(row.cells.compactMap(\.reference))
                continue
            }
            guard !state.deleted else { continue }
            for cell in row.cells {
                guard let reference = cell.reference else { continue }
                let column = catalog.columnIDs[batch.tables[row.table].columns[cell.column]]!
                if let existing = try context.cell(row: state.id, column: column),
                    try context.version(of: existing) >= Version(clock: cell.clock, replica: request.replica)
                {
                    continue
                }
                needed.insert(reference)
            }
        }
        return needed
    }

    private static func nextPosition(_ context: ReplicaContext) throws -> Int64 {
        try context.db.execute("UPDATE \(identifier: Bookkeeping.state) SET known = known + 1")
        return try context.state("known")
    }

    /// Merges one pushed row: a row new to the server is inserted whole,
    /// then each column by version, a delete last.
    private static func merge(
        _ row: ChangeBatch.Row, of batch: ChangeBatch, from pusher: Int64, in context: ReplicaContext
    ) throws {
        let name = batch.tables[row.table].name
        let table = context.table(name)!
        let catalog = context.catalog(name)!
        let pusherUUID = try context.uuid(ofReplica: pusher)
        let updates = row.cells.filter { $0.column != Bookkeeping.deleteColumn }
        var state = try context.row(table: catalog.id, gid: row.gid)

        func columnName(_ cell: ChangeBatch.Cell) -> String { batch.tables[row.table].columns[cell.column] }
        func columnID(_ cell: ChangeBatch.Cell) -> Int64 { catalog.columnIDs[columnName(cell)]! }

        if state == nil, !updates.isEmpty {
            let position = try nextPosition(context)
            let values = updates.map { (column: columnName($0), value: $0.value) }
            let (localID, number) = try context.insert(
                values, into: table, catalog: catalog, gid: row.gid, created: position)
            for cell in updates {
                if let reference = cell.reference {
                    try context.write(
                        reference, to: columnName(cell), in: table, catalog: catalog, gid: row.gid, localID: localID,
                        clock: cell.clock, replica: pusher)
                }
                try context.setCell(
                    row: number, column: columnID(cell), clock: cell.clock, replica: pusher, position: position)
            }
            state = ReplicaContext.RowState(id: number, localID: localID, deleted: false, created: position)
        } else if let current = state {
            for cell in updates {
                let incoming = Version(clock: cell.clock, replica: pusherUUID)
                let log = ConflictLog(context: context, table: table, gid: row.gid)
                guard let localID = current.localID, !current.deleted else {
                    // Delete wins: an edit of a deleted row is kept only in the log.
                    let delete = try context.cell(row: current.id, column: Int64(Bookkeeping.deleteColumn))
                    try log.record(
                        column: columnName(cell), losing: (context.loggedValue(cell.value, cell.reference), incoming),
                        winning: (.null, try delete.map(context.version) ?? incoming), winnerDeleted: true)
                    continue
                }
                let column = columnID(cell)
                let existing = try context.cell(row: current.id, column: column)
                let currentVersion = try existing.map(context.version)
                let incomingValue = context.loggedValue(cell.value, cell.reference)
                if let existing, let currentVersion, incoming <= currentVersion {
                    guard incoming < currentVersion, existing.replica != pusher else { continue }
                    let value = try context.loggedValue(
                        of: columnName(cell), in: table, catalog: catalog, gid: row.gid, localID: localID,
                        cell: existing)
                    if value != incomingValue {
                        try log.record(
                            column: columnName(cell), losing: (incomingValue, incoming),
                            winning: (value, currentVersion), winnerDeleted: false)
                    }
                    continue
                }
                if let existing, let currentVersion, existing.replica != pusher,
                    (existing.position ?? 0) > cell.known
                {
                    // The device had not seen the value it overwrites: concurrent edits.
                    let value = try context.loggedValue(
                        of: columnName(cell), in: table, catalog: catalog, gid: row.gid, localID: localID,
                        cell: existing)
                    if value != incomingValue {
                        try log.record(
                            column: columnName(cell), losing: (value, currentVersion),
                            winning: (incomingValue, incoming), winnerDeleted: false)
                    }
                }
                if let reference = cell.reference {
                    try context.write(
                        reference, to: columnName(cell), in: table, catalog: catalog, gid: row.gid, localID: localID,
                        clock: cell.clock, replica: pusher)
                } else {
                    try context.write(cell.value, to: columnName(cell), in: table, localID: localID)
                }
                try context.setCell(
                    row: current.id, column: column, clock: cell.clock, replica: pusher,
                    position: try nextPosition(context))
            }
        }

        guard let delete = row.cells.first(where: { $0.column == Bookkeeping.deleteColumn }) else { return }
        let deleteVersion = Version(clock: delete.clock, replica: pusherUUID)
        guard let current = state else {
            try context.tombstone(
                table: catalog.id, gid: row.gid, row: nil, clock: delete.clock, replica: pusher,
                position: try nextPosition(context))
            return
        }
        guard !current.deleted, let localID = current.localID else { return }
        // Edits the deleting device had not seen lose to the delete: logged.
        let log = ConflictLog(context: context, table: table, gid: row.gid)
        let concurrent = try context.db.fetchAll(
            """
            SELECT col, clock, replica, position FROM \(identifier: Bookkeeping.cells)
            WHERE row = \(current.id) AND col >= 0
              AND replica <> \(pusher) AND coalesce(position, 0) > \(delete.known)
            ORDER BY col
            """)
        for cell in concurrent {
            guard let column = context.columnName(try cell.decode(Int64.self, at: 0), table: catalog.id) else {
                continue
            }
            let version = Version(
                clock: try cell.decode(Int64.self, at: 1),
                replica: try context.uuid(ofReplica: try cell.decode(Int64.self, at: 2)))
            let value = try context.loggedValue(
                of: column, in: table, catalog: catalog, gid: row.gid, localID: localID,
                cell: ReplicaContext.CellState(
                    clock: version.clock, replica: try cell.decode(Int64.self, at: 2),
                    position: try cell.decode(Int64?.self, at: 3)))
            try log.record(
                column: column, losing: (value, version), winning: (.null, deleteVersion), winnerDeleted: true)
        }
        try context.deleteRow(of: table, localID: localID)
        try context.tombstone(
            table: catalog.id, gid: row.gid, row: current.id, clock: delete.clock, replica: pusher,
            position: try nextPosition(context))
    }

    /// Gives the server's own captured writes their positions, before any
    /// push or pull is handled. They need no merge: the server's clock is
    /// above every version it has accepted, so they are the latest.
    private static func absorbLocalChanges(_ context: ReplicaContext) throws {
        let db = context.db
        let entries = try db.fetchAll(
            "SELECT tbl, gid, col, clock FROM \(identifier: Bookkeeping.outbox) ORDER BY seq")
        guard !entries.isEmpty else { return }
        for entry in entries {
            let table = try entry.decode(Int64.self, at: 0)
            let gid = try entry.decode(Data.self, at: 1)
            let column = try entry.decode(Int64.self, at: 2)
            let position = try nextPosition(context)
            try db.execute(
                """
                UPDATE \(identifier: Bookkeeping.cells) SET position = \(position)
                WHERE row = (SELECT id FROM \(identifier: Bookkeeping.rows) WHERE tbl = \(table) AND gid = \(gid))
                  AND col = \(column)
                  AND clock = \(try entry.decode(Int64.self, at: 3)) AND replica = \(context.localReplica)
                """)
            try db.execute(
                """
                UPDATE \(identifier: Bookkeeping.rows) SET created = \(position)
                WHERE tbl = \(table) AND gid = \(gid) AND created IS NULL
                """)
        }
        try db.execute("DELETE FROM \(identifier: Bookkeeping.outbox)")
    }

    // MARK: - Pull

    private static func pull(_ request: PullRequest, in context: ReplicaContext) throws -> PullResponse {
        try absorbLocalChanges(context)
        let db = context.db
        let limit = max(1, request.limit)
        let page: [PageCell]
        if let columns = request.columns {
            page = try backfillPage(columns, after: request.after, until: request.until ?? 0, limit: limit, context)
        } else {
            // Each cell with its row's state, in one query (cells before
            // rows: the position index gives the order).
            page = try db.makeStatement(
                sql: """
                    SELECT \(PageCell.columns) FROM \(Bookkeeping.cells) AS c
                    CROSS JOIN \(Bookkeeping.rows) AS r ON r.id = c.row
                    WHERE c.position > ? ORDER BY c.position LIMIT ?
                    """
            ).fetchAll(arguments: StatementArguments(values: [.integer(request.after), .integer(Int64(limit))]))
                .map(PageCell.init)
        }
        let serverPosition = try context.state("known")
        guard let last = page.last else {
            let through =
                request.columns == nil ? max(request.after, serverPosition) : max(request.after, request.until ?? 0)
            return PullResponse(changes: ChangeBatch(), through: through, hasMore: false)
        }
        let through = last.position
        let requester = try context.number(ofReplica: request.replica)

        // Rows in the order of their first change in the page. A row's
        // cells mostly follow one another: only a change of row looks it up.
        var groups: [[PageCell]] = []
        var groupIndexes: [Int64: Int] = [:]
        var previous: (key: Int64, group: Int)?
        for cell in page {
            let key = cell.row
            let group: Int
            if let previous, previous.key == key {
                group = previous.group
            } else if let index = groupIndexes[key] {
                group = index
            } else {
                group = groups.count
                groupIndexes[key] = group
                groups.append([])
            }
            groups[group].append(cell)
            previous = (key, group)
        }

        var batch = ChangeBatch()
        let wholeRow = try db.makeStatement(
            sql: """
                SELECT \(PageCell.columns) FROM \(Bookkeeping.cells) AS c
                CROSS JOIN \(Bookkeeping.rows) AS r ON r.id = c.row
                WHERE c.row = ? ORDER BY c.col
                """)
        for var cells in groups {
            let first = cells[0]
            guard let name = context.tableName(first.table), let table = context.table(name), let gid = first.gid
            else { continue }
            if request.columns == nil, !first.deleted, (first.created ?? 0) > request.after,
                cells.count < table.columns.count
            {
                // New to the device: send the whole row, so it can be inserted at once.
                cells = try wholeRow.fetchAll(arguments: StatementArguments(values: [.integer(first.row)]))
                    .map(PageCell.init)
            }
            let values = try first.localID.map { try context.rowValues(of: table, localID: $0) }
            var row = ChangeBatch.Row(table: batch.tableIndex(name), gid: gid, cells: [])
            for cell in cells {
                let replica = cell.replica
                guard replica != requester else { continue }
                let column = cell.column
                let clock = cell.clock
                var value = SQLiteValue.null
                var reference: LargeValueReference?
                var index = Bookkeeping.deleteColumn
                if column != Int64(Bookkeeping.deleteColumn) {
                    guard let columnName = context.columnName(column, table: first.table), let localID = first.localID,
                        let catalog = context.catalog(name), let values, let position = table.columnIndex(columnName)
                    else { continue }
                    if table.isLarge(columnName) {
                        (value, reference) = try context.outgoingValue(
                            table: table, catalog: catalog, column: columnName, gid: gid, localID: localID,
                            clock: clock, replica: replica)
                    } else {
                        value = values[position]
                    }
                    index = batch.columnIndex(columnName, table: row.table)
                }
                row.cells.append(
                    ChangeBatch.Cell(
                        column: index, clock: clock, replica: batch.replicaIndex(try context.uuid(ofReplica: replica)),
                        known: 0, value: value, reference: reference))
            }
            if !row.cells.isEmpty { batch.rows.append(row) }
        }
        return PullResponse(changes: batch, through: through, hasMore: page.count == limit)
    }

    /// A cell of a pull's page, with its row's state (a cell always has
    /// its row: the join drops none).
    private struct PageCell {
        /// The columns to select, from `cells AS c` joined with `rows AS r`.
        static let columns =
            "r.tbl, r.gid, c.col, c.clock, c.replica, c.position, r.local_id, r.deleted, r.created, c.row"

        var table: Int64
        /// Nil for a damaged identity (not 16 bytes): such a row is left out.
        var gid: UUID?
        var column: Int64
        var clock: Int64
        var replica: Int64
        var position: Int64
        var localID: Int64?
        var deleted: Bool
        var created: Int64?
        /// The row's number, which groups a page's cells by row.
        var row: Int64

        init(_ row: Row) throws {
            table = try row.decode(Int64.self, at: 0)
            gid = UUID(bytes: try row.decode(Data.self, at: 1))
            column = try row.decode(Int64.self, at: 2)
            clock = try row.decode(Int64.self, at: 3)
            replica = try row.decode(Int64.self, at: 4)
            position = try row.decode(Int64.self, at: 5)
            localID = try row.decode(Int64?.self, at: 6)
            deleted = try row.decode(Bool.self, at: 7)
            created = try row.decode(Int64?.self, at: 8)
            self.row = try row.decode(Int64.self, at: 9)
        }
    }

    /// The cells of the asked columns at positions after `after` through
    /// `until`, in order, at most `limit`.
    private static func backfillPage(
        _ columns: [String: [String]], after: Int64, until: Int64, limit: Int, _ context: ReplicaContext
    ) throws -> [PageCell] {
        var page: [PageCell] = []
        for (name, names) in columns.sorted(by: { $0.key < $1.key }) {
            guard let catalog = context.catalog(name) else {
                throw SyncError(.unknownTable(name), "the pull was refused: table \(name) is not synced here")
            }
            var ids: [SQLiteValue] = []
            for column in names {
                guard let id = catalog.columnIDs[column] else {
                    throw SyncError(
                        .unknownColumn(table: name, column: column),
                        "the pull was refused: column \(column) of table \(name) is not synced here")
                }
                ids.append(.integer(id))
            }
            guard !ids.isEmpty else { continue }
            let placeholders = Array(repeating: "?", count: ids.count).joined(separator: ", ")
            page += try context.db.makeStatement(
                sql: """
                    SELECT \(PageCell.columns) FROM \(Bookkeeping.cells) AS c
                    CROSS JOIN \(Bookkeeping.rows) AS r ON r.id = c.row
                    WHERE c.position > ? AND c.position <= ? AND r.tbl = ? AND c.col IN (\(placeholders))
                    ORDER BY c.position LIMIT ?
                    """
            ).fetchAll(
                arguments: StatementArguments(
                    values: [.integer(after), .integer(until), .integer(catalog.id)] + ids + [.integer(Int64(limit))])
            ).map(PageCell.init)
        }
        return Array(page.sorted { $0.position < $1.position }.prefix(limit))
    }
}

extension Duration {
    /// The whole milliseconds of this duration.
    var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
