import Foundation
import SQLiteStore

/// A large value named by its content: the SHA-256 of its bytes and its
/// size. A batch carries this in place of the bytes of a column the table
/// declares large (``SyncedTable/largeColumns``); the bytes travel apart,
/// in chunks (``ChunkUpload``, ``ChunkDownload``).
public struct LargeValueReference: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The SHA-256 of the value's bytes (32 bytes).
    public let sha256: Data
    /// The value's size in bytes.
    public let size: Int64

    /// A reference to the value with digest `sha256` and `size` bytes.
    public init(sha256: Data, size: Int64) {
        self.sha256 = sha256
        self.size = size
    }

    /// The reference of `bytes` (hashed here, in memory: for small values
    /// and tests; the engine hashes stored values chunk by chunk).
    public init(of bytes: Data) {
        self.init(sha256: ContentHasher.digest(bytes), size: Int64(bytes.count))
    }

    /// The reference of the value whose SHA-256 is `hexDigest` (64
    /// hexadecimal digits, as ``hexDigest`` writes it); nil for anything
    /// else.
    public init?(hexDigest: String, size: Int64) {
        let digits = Array(hexDigest.utf8)
        guard digits.count == 64 else { return nil }
        var digest = Data(capacity: 32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            digest.append(byte)
        }
        self.init(sha256: digest, size: size)
    }

    /// The SHA-256 in lowercase hexadecimal.
    public var hexDigest: String { sha256.map { String(format: "%02x", $0) }.joined() }

    /// `sha256:<hex> (<size> bytes)`, as the conflict log keeps a large
    /// value that lost.
    public var description: String { "sha256:" + hexDigest + " (\(size) bytes)" }

    /// What the conflict log records for a large value: its description.
    var loggedValue: SQLiteValue { .text(description) }

    func check() throws {
        guard sha256.count == 32, size >= 0 else {
            throw SyncError(.malformedChunk, "a large value's reference was refused: it is not a SHA-256 and a size")
        }
    }
}

/// A piece of a large value sent to the server, or, with no bytes, a
/// question: how much of it the server holds.
///
/// The server keeps what it received durably, so a device whose
/// connection broke asks again and resumes from the offset the server
/// answers; a value the server already has (another row holds the same
/// bytes) is answered as complete without a byte sent.
public struct ChunkUpload: Sendable, Equatable, Codable {
    /// The value.
    public var reference: LargeValueReference
    /// Where `bytes` start in it: the server's last answered `received`.
    public var offset: Int64
    /// The bytes; empty to ask for the server's progress.
    public var bytes: Data

    /// A chunk of `reference` at `offset`.
    public init(reference: LargeValueReference, offset: Int64, bytes: Data) {
        self.reference = reference
        self.offset = offset
        self.bytes = bytes
    }
}

/// The server's progress on an uploaded value.
public struct ChunkUploadResponse: Sendable, Equatable, Codable {
    /// How many bytes of the value the server holds, from the start; the
    /// value's size once it has all of it (checked against its hash).
    public var received: Int64

    /// An answer.
    public init(received: Int64) { self.received = received }
}

/// A device asking the server for a piece of a large value a pull
/// referenced.
public struct ChunkDownload: Sendable, Equatable, Codable {
    /// The value.
    public var reference: LargeValueReference
    /// Where the piece starts: how much of the value the device holds.
    public var offset: Int64
    /// At most how many bytes to send (the server may send fewer).
    public var maximumLength: Int

    /// A request for the piece of `reference` at `offset`.
    public init(reference: LargeValueReference, offset: Int64, maximumLength: Int = 1 << 20) {
        self.reference = reference
        self.offset = offset
        self.maximumLength = maximumLength
    }
}

/// A piece of a large value, from the server.
public struct ChunkDownloadResponse: Sendable, Equatable, Codable {
    /// The bytes at the request's offset; never empty unless the value is.
    public var bytes: Data

    /// An answer.
    public init(bytes: Data) { self.bytes = bytes }
}

/// How much of a large value a replica holds, while it is transferred.
public struct LargeValueProgress: Sendable, Equatable {
    /// The value.
    public var reference: LargeValueReference
    /// The bytes held, from the start.
    public var received: Int64

    /// A progress.
    public init(reference: LargeValueReference, received: Int64) {
        self.reference = reference
        self.received = received
    }
}

/// The largest piece a replica sends in one chunk.
let maximumChunkLength = 4 << 20

// MARK: - Storage

/// Where the bytes of a large value can be read in this database.
struct LargeValueSource {
    var table: String
    var column: String
    var rowID: Int64
}

extension ReplicaContext {
    /// Chunks copied between blobs at a time.
    static let copyChunk = BlobHandle.defaultChunkSize

    private var staging: String { Bookkeeping.staging }

    /// Where the bytes of the staged transfer `id` are.
    private func stagedBytes(_ id: Int64) -> LargeValueSource {
        LargeValueSource(table: Bookkeeping.stagedBytes, column: "bytes", rowID: id)
    }
    private var large: String { Bookkeeping.large }

    // MARK: References of stored values

    /// The reference of the BLOB in a large column of a row, for the cell's
    /// version (`clock`, `replica`): remembered in `large`, hashed from the
    /// table chunk by chunk when not known for that version. Nil when the
    /// value is not a BLOB (NULL, a number or text travel inline).
    func largeReference(
        table: SyncedTable, catalog: TableCatalog, column: String, gid: UUID, localID: Int64, clock: Int64,
        replica: Int64
    ) throws -> LargeValueReference? {
        let col = catalog.columnIDs[column]!
        if let known = try rememberedReference(table: catalog.id, gid: gid, column: col, clock: clock, replica: replica)
        {
            return known
        }
        guard
            try db.fetchOne(
                String.self,
                """
                SELECT typeof(\(identifier: column)) FROM \(identifier: table.name)
                WHERE \(identifier: table.primaryKey) = \(localID)
                """) == "blob"
        else { return nil }
        let reference = try hash(LargeValueSource(table: table.name, column: column, rowID: localID))
        try remember(reference, table: catalog.id, gid: gid, column: col, clock: clock, replica: replica)
        return reference
    }

    /// Records that the cell's value at version (`clock`, `replica`) is
    /// `reference`.
    func remember(
        _ reference: LargeValueReference, table: Int64, gid: UUID, column: Int64, clock: Int64, replica: Int64
    )
        throws
    {
        // Stale versions go; those of local writes still waiting in the outbox stay.
        try db.execute(
            """
            DELETE FROM \(identifier: large)
            WHERE tbl = \(table) AND gid = \(gid.bytes) AND col = \(column)
              AND NOT EXISTS (SELECT 1 FROM \(identifier: Bookkeeping.outbox) AS o
                              WHERE o.tbl = \(table) AND o.gid = \(gid.bytes) AND o.col = \(column)
                                AND o.clock = \(identifier: large).clock
                                AND \(identifier: large).replica = \(localReplica))
            """)
        try db.execute(
            """
            INSERT INTO \(identifier: large) (tbl, gid, col, clock, replica, hash, size)
            VALUES (\(table), \(gid.bytes), \(column), \(clock), \(replica), \(reference.sha256), \(reference.size))
            ON CONFLICT (tbl, gid, col, clock, replica) DO UPDATE SET hash = excluded.hash, size = excluded.size
            """)
    }

    /// The reference remembered for a cell's version, if any.
    func rememberedReference(table: Int64, gid: UUID, column: Int64, clock: Int64, replica: Int64) throws
        -> LargeValueReference?
    {
        guard
            let known = try db.fetchOne(
                """
                SELECT hash, size FROM \(identifier: large)
                WHERE tbl = \(table) AND gid = \(gid.bytes) AND col = \(column) AND clock = \(clock) AND replica = \(replica)
                """)
        else { return nil }
        return LargeValueReference(
            sha256: try known.decode(Data.self, at: 0), size: try known.decode(Int64.self, at: 1))
    }

    /// The value of a synced cell as a batch carries it: inline, or a
    /// reference for a BLOB in a large column.
    func outgoingValue(
        table: SyncedTable, catalog: TableCatalog, column: String, gid: UUID, localID: Int64, clock: Int64,
        replica: Int64
    ) throws -> (value: SQLiteValue, reference: LargeValueReference?) {
        if table.isLarge(column),
            let reference = try largeReference(
                table: table, catalog: catalog, column: column, gid: gid, localID: localID, clock: clock,
                replica: replica)
        {
            return (.null, reference)
        }
        return (try value(of: column, in: table, localID: localID), nil)
    }

    /// The value a conflict log entry records for a stored cell.
    func loggedValue(
        of column: String, in table: SyncedTable, catalog: TableCatalog, gid: UUID, localID: Int64, cell: CellState
    ) throws -> SQLiteValue {
        let (value, reference) = try outgoingValue(
            table: table, catalog: catalog, column: column, gid: gid, localID: localID, clock: cell.clock,
            replica: cell.replica)
        return loggedValue(value, reference)
    }

    /// The value a conflict log entry records for a cell: its own, or a
    /// large value's description.
    func loggedValue(_ value: SQLiteValue, _ reference: LargeValueReference?) -> SQLiteValue {
        reference?.loggedValue ?? value
    }

    private func hash(_ source: LargeValueSource) throws -> LargeValueReference {
        var hasher = ContentHasher()
        let size = try db.withBlob(table: source.table, column: source.column, rowID: source.rowID) { blob in
            try blob.readChunks(ofSize: Self.copyChunk) { hasher.update(Data($0)) }
            return blob.size
        }
        return LargeValueReference(sha256: hasher.finish(), size: Int64(size))
    }

    // MARK: Finding the bytes

    /// Where this database holds the whole of `reference`: a completed
    /// transfer, or a synced row whose current value it is.
    func source(of reference: LargeValueReference) throws -> LargeValueSource? {
        if let id = try db.fetchOne(
            Int64.self,
            """
            SELECT id FROM \(identifier: staging)
            WHERE hash = \(reference.sha256) AND size = \(reference.size) AND received = size
            """)
        {
            return stagedBytes(id)
        }
        let candidates = try db.fetchAll(
            """
            SELECT l.tbl, l.col, r.local_id FROM \(identifier: large) AS l
            JOIN \(identifier: Bookkeeping.rows) AS r ON r.tbl = l.tbl AND r.gid = l.gid
            JOIN \(identifier: Bookkeeping.cells) AS c
              ON c.row = r.id AND c.col = l.col AND c.clock = l.clock AND c.replica = l.replica
            WHERE l.hash = \(reference.sha256) AND l.size = \(reference.size) AND r.local_id IS NOT NULL
            """)
        for candidate in candidates {
            let table = try candidate.decode(Int64.self, at: 0)
            guard let name = tableName(table),
                let column = columnName(try candidate.decode(Int64.self, at: 1), table: table)
            else { continue }
            return LargeValueSource(table: name, column: column, rowID: try candidate.decode(Int64.self, at: 2))
        }
        return nil
    }

    /// Reads at most `maximumLength` bytes of `reference` from `offset`.
    func readChunk(of reference: LargeValueReference, at offset: Int64, maximumLength: Int) throws -> Data {
        try reference.check()
        guard let source = try source(of: reference) else {
            throw SyncError(
                .unknownLargeValue(reference),
                "the large value \(reference) is not held here (it was replaced or never arrived)")
        }
        guard offset >= 0, offset <= reference.size, maximumLength > 0 else {
            throw SyncError(
                .malformedChunk,
                "a chunk of \(reference) at offset \(offset) was refused: the value has \(reference.size) bytes")
        }
        let count = Int(min(Int64(min(maximumLength, maximumChunkLength)), reference.size - offset))
        guard count > 0 else { return Data() }
        return try db.withBlob(table: source.table, column: source.column, rowID: source.rowID) { blob in
            try blob.read(count: count, at: Int(offset))
        }
    }

    // MARK: Receiving

    /// How much of `reference` this database holds: all of it when a row or
    /// a completed transfer has it.
    func received(of reference: LargeValueReference) throws -> Int64 {
        try reference.check()
        if reference.size == 0 { return 0 }  // an empty value needs no byte
        if try source(of: reference) != nil { return reference.size }
        return try db.fetchOne(
            Int64.self,
            "SELECT received FROM \(identifier: staging) WHERE hash = \(reference.sha256) AND size = \(reference.size)"
        ) ?? 0
    }

    /// Stores a chunk in its own transaction, with the progress it moves;
    /// a value whose bytes do not match its hash is forgotten (that
    /// commits) and refused.
    ///
    /// - Parameters:
    ///   - touched: The time of the chunk's arrival (milliseconds since
    ///     1970), kept with the transfer.
    ///   - cutoff: When the chunk starts a transfer, the transfers last
    ///     touched before this time are abandoned and removed first (in
    ///     the same transaction, so their room serves this one); nil to
    ///     keep them.
    static func receive(
        _ bytes: Data, of reference: LargeValueReference, at offset: Int64, writer: any DatabaseWriter,
        schema: SyncSchema, touched: Int64, sweepingBefore cutoff: Int64? = nil,
        before: (ReplicaContext) throws -> Void = { _ in }
    ) throws -> Int64 {
        let held = try writer.write { db in
            let context = try ReplicaContext(db, schema: schema)
            try before(context)
            return try context.receive(bytes, of: reference, at: offset, touched: touched, sweepingBefore: cutoff)
        }
        guard let held else {
            throw SyncError(
                .largeValueMismatch(reference),
                "the large value \(reference) was refused: the bytes received do not hash to it; "
                    + "they are discarded, send it again")
        }
        return held
    }

    /// Stores a chunk of `reference` at `offset`, which must be where the
    /// transfer stands; checks the whole value against its hash once the
    /// last byte is in, and forgets it if it differs (returning nil).
    /// Returns the bytes held. Runs in the caller's transaction, with the
    /// progress it moves.
    private func receive(
        _ bytes: Data, of reference: LargeValueReference, at offset: Int64, touched: Int64,
        sweepingBefore cutoff: Int64?
    ) throws -> Int64? {
        try reference.check()
        let held = try received(of: reference)
        if held == reference.size { return held }
        guard offset == held else {
            throw SyncError(
                .chunkOutOfOrder(expectedOffset: held),
                "a chunk of \(reference) at offset \(offset) was refused: the transfer stands at \(held); send from there"
            )
        }
        guard !bytes.isEmpty, Int64(bytes.count) <= reference.size - offset else {
            throw SyncError(
                .malformedChunk,
                "a chunk of \(reference) was refused: \(bytes.count) bytes at offset \(offset) "
                    + "do not fit a value of \(reference.size) bytes")
        }
        let id: Int64
        if held == 0 {
            if let cutoff { try discardTransfers(untouchedSince: cutoff) }
            id = try startStaging(reference, received: 0, touched: touched)
        } else {
            id = try stagedIDs(of: reference)[0]
        }
        try db.withBlob(table: Bookkeeping.stagedBytes, column: "bytes", rowID: id, access: .readWrite) { blob in
            try blob.write(bytes, at: Int(offset))
        }
        let total = offset + Int64(bytes.count)
        try db.execute("UPDATE \(identifier: staging) SET received = \(total), touched = \(touched) WHERE id = \(id)")
        if total == reference.size {
            let arrived = try hash(stagedBytes(id))
            guard arrived == reference else {
                try forgetStaged([id])
                return nil
            }
        }
        return total
    }

    // MARK: Applying

    /// Makes sure every value in `references` is held whole in the staging
    /// table (copied there from a row that holds it, if need be), so that
    /// applying them cannot fail half-way.
    ///
    /// - Throws: ``SyncError/Kind/largeValueMissing(_:)`` for the first one
    ///   not held, before anything is applied.
    func stage(_ references: Set<LargeValueReference>) throws {
        for reference in references.sorted(by: { $0.sha256.lexicographicallyPrecedes($1.sha256) }) {
            try reference.check()
            if reference.size == 0 {
                if try stagedIDs(of: reference).isEmpty {
                    try startStaging(reference, received: 0, touched: 0)
                }
                continue
            }
            guard let source = try source(of: reference) else {
                throw SyncError(
                    .largeValueMissing(reference),
                    "the changes were refused: the large value \(reference) they reference has not arrived whole; "
                        + "nothing was applied")
            }
            guard source.table != Bookkeeping.stagedBytes else { continue }
            let id = try startStaging(reference, received: reference.size, touched: 0)
            try copy(reference, from: source, to: stagedBytes(id))
        }
    }

    /// Writes a staged large value into a row's column, chunk by chunk, and
    /// remembers it as the cell's value at version (`clock`, `replica`).
    func write(
        _ reference: LargeValueReference, to column: String, in table: SyncedTable, catalog: TableCatalog, gid: UUID,
        localID: Int64, clock: Int64, replica: Int64
    ) throws {
        guard
            let id = try db.fetchOne(
                Int64.self,
                "SELECT id FROM \(identifier: staging) WHERE hash = \(reference.sha256) AND received = size")
        else {
            throw SyncError(.largeValueMissing(reference), "the large value \(reference) is not staged")
        }
        try db.cachedStatement(
            sql: "UPDATE \(quotedIdentifier(table.name)) SET \(quotedIdentifier(column)) = zeroblob(?) "
                + "WHERE \(quotedIdentifier(table.primaryKey)) = ?"
        ).execute(arguments: [reference.size, localID])
        try copy(
            reference, from: stagedBytes(id),
            to: LargeValueSource(table: table.name, column: column, rowID: localID))
        try remember(
            reference, table: catalog.id, gid: gid, column: catalog.columnIDs[column]!, clock: clock, replica: replica)
    }

    /// Forgets staged values once applied (in the transaction that applied
    /// them).
    func unstage(_ references: Set<LargeValueReference>) throws {
        for reference in references {
            try forgetStaged(
                try stagedIDs(of: reference))
        }
    }

    /// Removes the transfers (staged chunks) that no chunk reached since
    /// `cutoff` (milliseconds since 1970): uploads a device started and
    /// never finished, or finished and never pushed. A device that comes
    /// back to one finds the server's copy at byte 0 and sends it again.
    func discardTransfers(untouchedSince cutoff: Int64) throws {
        try db.execute(
            """
            DELETE FROM \(identifier: Bookkeeping.stagedBytes)
            WHERE id IN (SELECT id FROM \(identifier: staging) WHERE touched < \(cutoff))
            """)
        try db.execute("DELETE FROM \(identifier: staging) WHERE touched < \(cutoff)")
    }

    /// Removes every transfer: on a device that has applied all the
    /// server's changes, a value still staged is one no change wants any
    /// more (its row was deleted, or the value replaced by a newer one,
    /// since its download started).
    func discardTransfers() throws {
        try db.execute("DELETE FROM \(identifier: Bookkeeping.stagedBytes)")
        try db.execute("DELETE FROM \(identifier: staging)")
    }

    /// The staging rows of `reference` (one, or none).
    private func stagedIDs(of reference: LargeValueReference) throws -> [Int64] {
        try db.fetchAll(Int64.self, "SELECT id FROM \(identifier: staging) WHERE hash = \(reference.sha256)")
    }

    /// Starts staging `reference` afresh, replacing any earlier transfer of
    /// it: its progress, and room for its bytes (zeros, reserved without
    /// building them in memory). Returns the transfer's number.
    ///
    /// The bytes have a table of their own so that moving the progress
    /// (an UPDATE of the progress row) never rewrites them: SQLite
    /// rewrites a whole row on any update, which would copy the value for
    /// each chunk, and need room for a second copy of it meanwhile.
    @discardableResult
    private func startStaging(_ reference: LargeValueReference, received: Int64, touched: Int64) throws -> Int64 {
        try forgetStaged(try stagedIDs(of: reference))
        try db.execute(
            """
            INSERT INTO \(identifier: staging) (hash, size, received, touched)
            VALUES (\(reference.sha256), \(reference.size), \(received), \(touched))
            """)
        let id = db.lastInsertedRowID
        try db.execute(
            """
            INSERT INTO \(identifier: Bookkeeping.stagedBytes) (id, bytes) VALUES (\(id), zeroblob(\(reference.size)))
            """)
        return id
    }

    /// Forgets the staged transfers `ids`: their progress and their bytes.
    private func forgetStaged(_ ids: [Int64]) throws {
        guard !ids.isEmpty else { return }
        try db.execute("DELETE FROM \(identifier: Bookkeeping.stagedBytes) WHERE id IN \(ids)")
        try db.execute("DELETE FROM \(identifier: staging) WHERE id IN \(ids)")
    }

    private func copy(_ reference: LargeValueReference, from source: LargeValueSource, to target: LargeValueSource)
        throws
    {
        let size = reference.size
        guard size > 0 else { return }
        try db.withBlob(table: source.table, column: source.column, rowID: source.rowID) { input in
            try db.withBlob(table: target.table, column: target.column, rowID: target.rowID, access: .readWrite) {
                output in
                guard input.size == Int(size), output.size == Int(size) else {
                    throw SyncError(
                        .largeValueMismatch(reference), "the large value \(reference) changed size while it was copied")
                }
                var offset = 0
                try input.readChunks(ofSize: Self.copyChunk) { chunk in
                    try output.write(chunk, at: offset)
                    offset += chunk.count
                }
            }
        }
    }

    /// Before an apply replaces or deletes a large value that still waits
    /// in the outbox, remembers its reference under the outbox entry's
    /// version: the push then still carries it, and the server logs it if
    /// it lost (its bytes are gone, and not needed: it lost).
    func keepOutboxReferences(
        of table: SyncedTable, catalog: TableCatalog, gid: UUID, row: Int64, localID: Int64, columns: [String]
    )
        throws
    {
        for column in columns where table.isLarge(column) {
            guard
                let clock = try db.fetchOne(
                    Int64.self,
                    """
                    SELECT clock FROM \(identifier: Bookkeeping.outbox)
                    WHERE tbl = \(catalog.id) AND gid = \(gid.bytes) AND col = \(catalog.columnIDs[column]!)
                    """)
            else { continue }
            let cell = try self.cell(row: row, column: catalog.columnIDs[column]!)
            guard let cell, cell.clock == clock, cell.replica == localReplica else { continue }
            if try largeReference(
                table: table, catalog: catalog, column: column, gid: gid, localID: localID, clock: clock,
                replica: localReplica) == nil
            {
                // Not a BLOB: the outbox keeps the value itself.
                try db.execute(
                    """
                    UPDATE \(identifier: Bookkeeping.outbox) SET value = \(try value(of: column, in: table, localID: localID))
                    WHERE tbl = \(catalog.id) AND gid = \(gid.bytes) AND col = \(catalog.columnIDs[column]!)
                    """)
            }
        }
    }
}
