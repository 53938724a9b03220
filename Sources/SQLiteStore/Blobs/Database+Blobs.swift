import Foundation
#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// Large values: BLOBs read and written in chunks, so that a 50 MB picture
/// is never held in memory whole.
///
/// ```swift
/// // Store a picture from a file, refusing anything over 64 MB before
/// // writing a byte.
/// try db.writeBlob(from: .file(pictureURL), table: "coffee", column: "picture",
///                  rowID: coffeeID, maximumSize: 64 << 20)
///
/// // Its size, without reading it (nil when the column is NULL).
/// let size = try db.blobSize(table: "coffee", column: "picture", rowID: coffeeID)
///
/// // Back to a file, byte for byte.
/// try db.readBlob(table: "coffee", column: "picture", rowID: coffeeID, to: .file(outputURL))
/// ```
///
/// Small values need none of this: `Data` binds and reads as a BLOB like
/// any other value. Reach for these methods when a value is large enough
/// that holding it in memory matters.
///
/// For SQLite to reserve a large blob without building it in memory, put
/// the blob column last in the table, or after it only columns that are
/// usually NULL: a zero-filled blob followed by other data is materialized
/// once, in full, when the row is written.
extension Database {
    // MARK: - Handles

    /// Opens the BLOB in `column` of the row with rowid `rowID` for
    /// incremental I/O (`sqlite3_blob_open`).
    ///
    /// Close the handle as soon as you are done (``BlobHandle/close()``);
    /// ``withBlob(table:column:rowID:schema:access:_:)`` does it for you.
    ///
    /// Throws ``BlobError`` with ``BlobError/Reason/rowNotFound``,
    /// ``BlobError/Reason/nullValue`` or ``BlobError/Reason/notABlob(found:)``
    /// when there is no blob to open; a ``SQLiteError`` for what SQLite
    /// refuses on its own terms (no such table or column, a write handle on
    /// an indexed column or a read-only database, a `WITHOUT ROWID` table).
    /// SQLite also opens TEXT values, whose UTF-8 bytes are then read.
    ///
    /// - Parameters:
    ///   - table: The table, unquoted.
    ///   - column: The column, unquoted.
    ///   - rowID: The rowid (the `INTEGER PRIMARY KEY`, if the table has one).
    ///   - schema: `main`, `temp`, or the name of an attached database.
    ///   - access: ``BlobAccess/readWrite`` to write.
    public func openBlob(
        table: String, column: String, rowID: Int64, schema: String = "main", access: BlobAccess = .readOnly
    ) throws -> BlobHandle {
        guard let handle = connection.handle else { throw SQLiteError.misuse("the database connection is closed") }
        let location = BlobLocation(schema: schema, table: table, column: column, rowID: rowID)
        var blob: OpaquePointer?
        let code = sqlite3_blob_open(handle, schema, table, column, rowID, access == .readWrite ? 1 : 0, &blob)
        guard code == SQLITE_OK, let blob else {
            let error = SQLiteError.from(connection: handle, code: code, sql: nil)
            sqlite3_blob_close(blob)
            if let reason = BlobDiagnosis.reason(for: error, connection: handle, location: location) {
                throw BlobError(reason, at: location)
            }
            throw error
        }
        return BlobHandle(connection: connection, blob: blob, location: location, access: access)
    }

    /// Opens a blob, runs `body` with it and closes it, even when `body`
    /// throws.
    ///
    /// ```swift
    /// let header = try db.withBlob(table: "coffee", column: "picture", rowID: id) { blob in
    ///     try blob.read(count: min(16, blob.size), at: 0)
    /// }
    /// ```
    ///
    /// A read-write handle opened outside a transaction commits its writes
    /// when it closes; if that fails, the error is thrown.
    public func withBlob<T>(
        table: String, column: String, rowID: Int64, schema: String = "main", access: BlobAccess = .readOnly,
        _ body: (BlobHandle) throws -> T
    ) throws -> T {
        let blob = try openBlob(table: table, column: column, rowID: rowID, schema: schema, access: access)
        let result: T
        do {
            result = try body(blob)
        } catch {
            try? blob.close()
            throw error
        }
        try blob.close()
        return result
    }

    // MARK: - Size

    /// The size in bytes of the BLOB in `column` of row `rowID`, read from
    /// the row's header without loading the value; nil when it is NULL.
    ///
    /// Throws ``BlobError/Reason/rowNotFound`` when there is no such row,
    /// ``BlobError/Reason/notABlob(found:)`` when the value is an INTEGER,
    /// REAL or TEXT.
    public func blobSize(table: String, column: String, rowID: Int64, schema: String = "main") throws -> Int? {
        let location = BlobLocation(schema: schema, table: table, column: column, rowID: rowID)
        let value = location.qualifiedColumn
        // typeof() and length() of a column are answered from the record
        // header: SQLite does not read the value's pages for them.
        let sql =
            "SELECT typeof(\(value)), length(\(value)) FROM \(location.qualifiedTable) WHERE rowid = ?"
        guard let row = try fetchOne(sql: sql, arguments: [rowID]) else {
            throw BlobError(.rowNotFound, at: location)
        }
        let type: String = try row[0]
        switch SQLiteValue.StorageClass(rawValue: type.uppercased()) {
        case .blob?: return try row[1] as Int
        case .null?: return nil
        case let other?: throw BlobError(.notABlob(found: other), at: location)
        case nil: throw SQLiteError(code: .error, message: "SQLite reported an unknown type \(type)", sql: sql)
        }
    }

    // MARK: - Streaming copies

    /// Stores a large value from a file or stream in `column` of row
    /// `rowID`, in chunks: memory stays at one chunk whatever the size.
    ///
    /// ```swift
    /// try db.writeBlob(from: .file(pictureURL), table: "coffee", column: "picture",
    ///                  rowID: coffeeID, maximumSize: 64 << 20)
    /// ```
    ///
    /// The row must exist; whatever the column held (NULL, an older
    /// picture) is replaced. The size is checked against `maximumSize`
    /// (and SQLite's own maximum length) before anything is written. The
    /// copy runs in a savepoint: if it fails for any reason (the source ends
    /// early or grows, the row is deleted meanwhile, the disk is full), the
    /// row is left as it was. Inside a transaction, only this write is undone.
    ///
    /// Throws ``BlobError``: ``BlobError/Reason/rowNotFound``,
    /// ``BlobError/Reason/tooLarge(size:limit:)``,
    /// ``BlobError/Reason/unreadableSource(_:)``,
    /// ``BlobError/Reason/shortRead(expected:received:)``,
    /// ``BlobError/Reason/sourceTooLong(expected:)``,
    /// ``BlobError/Reason/expired``; a ``SQLiteError`` for what SQLite refuses
    /// (no such table, a read-only database, a constraint).
    ///
    /// - Parameters:
    ///   - source: Where the bytes come from.
    ///   - table: The table holding the row.
    ///   - column: The column that receives the value.
    ///   - rowID: The row's `rowid`.
    ///   - schema: `main`, `temp` or an attached database's name.
    ///   - maximumSize: The largest value accepted, in bytes; nil for no
    ///     limit but SQLite's.
    ///   - chunkSize: The bytes copied at a time.
    /// - Returns: The number of bytes stored.
    @discardableResult
    public func writeBlob(
        from source: BlobSource, table: String, column: String, rowID: Int64, schema: String = "main",
        maximumSize: Int? = nil, chunkSize: Int = BlobHandle.defaultChunkSize
    ) throws -> Int {
        try BlobHandle.checkChunkSize(chunkSize)
        if let maximumSize, maximumSize < 0 {
            throw SQLiteError(code: .misuse, message: "the maximum size must not be negative, not \(maximumSize)")
        }
        guard let handle = connection.handle else { throw SQLiteError.misuse("the database connection is closed") }
        let location = BlobLocation(schema: schema, table: table, column: column, rowID: rowID)
        let sqliteLimit = Int(sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1))
        let limit = min(maximumSize ?? sqliteLimit, sqliteLimit)

        var reader = try source.makeReader(at: location)
        defer { reader.close() }
        if reader.size == nil { reader = try reader.spooled(limit: limit, chunkSize: chunkSize) }
        let size = reader.size ?? 0
        guard size <= limit else { throw BlobError(.tooLarge(size: size, limit: limit), at: location) }

        try savepoint { db in
            try db.execute(
                "UPDATE \(unsafeLiteral: location.qualifiedTable) SET \(identifier: column) = zeroblob(?) WHERE rowid = ?",
                arguments: [size, rowID])
            guard db.changesCount > 0 else { throw BlobError(.rowNotFound, at: location) }
            try db.withBlob(table: table, column: column, rowID: rowID, schema: schema, access: .readWrite) { blob in
                try blob.copy(from: reader, chunkSize: chunkSize)
            }
        }
        return size
    }

    /// Copies the BLOB in `column` of row `rowID` to a file or stream, in
    /// chunks: memory stays at one chunk whatever the size.
    ///
    /// ```swift
    /// try db.readBlob(table: "coffee", column: "picture", rowID: coffeeID, to: .file(outputURL))
    /// ```
    ///
    /// The value is read from one consistent snapshot. The row is checked
    /// before the destination is touched, so a missing row or value creates
    /// no file; a file destination is replaced only once the whole value
    /// has been written.
    ///
    /// Throws ``BlobError``: ``BlobError/Reason/rowNotFound``,
    /// ``BlobError/Reason/nullValue``, ``BlobError/Reason/notABlob(found:)``,
    /// ``BlobError/Reason/unwritableDestination(_:)``,
    /// ``BlobError/Reason/shortWrite(expected:written:)``; a ``SQLiteError``
    /// for what SQLite refuses (no such table or column).
    ///
    /// - Returns: The number of bytes copied.
    @discardableResult
    public func readBlob(
        table: String, column: String, rowID: Int64, schema: String = "main", to destination: BlobDestination,
        chunkSize: Int = BlobHandle.defaultChunkSize
    ) throws -> Int {
        try BlobHandle.checkChunkSize(chunkSize)
        let blob = try openBlob(table: table, column: column, rowID: rowID, schema: schema)
        // A read-only handle has nothing to commit, so closing cannot fail.
        defer { try? blob.close() }
        // The open handle holds the read transaction, so this sees the same
        // value. TEXT opens as bytes, but is not a blob.
        if let handle = connection.handle,
            try BlobDiagnosis.storageClass(connection: handle, location: blob.location) == .text
        {
            throw BlobError(.notABlob(found: .text), at: blob.location)
        }
        let writer = try destination.makeWriter(size: blob.size, at: blob.location)
        do {
            try blob.readChunks(ofSize: chunkSize) { try writer.write($0) }
            try writer.finish()
        } catch {
            writer.abandon()
            throw error
        }
        return blob.size
    }
}

extension BlobHandle {
    /// Fills the whole blob from `reader`, which must deliver exactly
    /// ``size`` bytes.
    func copy(from reader: BlobReader, chunkSize: Int) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(min(chunkSize, size), 1), alignment: 16)
        defer { buffer.deallocate() }
        var offset = 0
        while offset < size {
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(buffer.count, size - offset)])
            let count = try reader.fill(chunk)
            guard count == chunk.count else {
                throw BlobError(.shortRead(expected: size, received: offset + count), at: location, path: reader.path)
            }
            try write(UnsafeRawBufferPointer(chunk), at: offset)
            offset += count
        }
        // One byte more means the source was longer than announced (a file
        // that grew during the copy): storing a truncated value would be
        // silent data loss.
        if try reader.fill(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<1])) > 0 {
            throw BlobError(.sourceTooLong(expected: size), at: location, path: reader.path)
        }
    }
}
