import Foundation
#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// Whether a ``BlobHandle`` may write.
public enum BlobAccess: Sendable {
    /// Reads only.
    case readOnly
    /// Reads and writes (in place: a blob's size cannot change).
    case readWrite
}

/// An open BLOB in one row of a table, read and written in pieces without
/// loading the whole value (SQLite's incremental BLOB I/O, `sqlite3_blob_*`).
///
/// Open one with ``Database/openBlob(table:column:rowID:schema:access:)``,
/// or let ``Database/withBlob(table:column:rowID:schema:access:_:)`` close
/// it for you. To copy a whole value from or to a file or stream, use
/// ``Database/writeBlob(from:table:column:rowID:schema:maximumSize:chunkSize:)``
/// and ``Database/readBlob(table:column:rowID:schema:to:chunkSize:)``, which
/// are built on this type.
///
/// ```swift
/// // Reserve 1 MB, then fill it in place.
/// try db.execute("UPDATE doc SET body = zeroblob(?) WHERE id = ?", arguments: [1 << 20, id])
/// try db.withBlob(table: "doc", column: "body", rowID: id, access: .readWrite) { blob in
///     try blob.write(header, at: 0)
///     let magic = try blob.read(count: 4, at: 0)
/// }
/// ```
///
/// What to know:
/// - A blob's size is fixed: reads and writes past ``size`` throw
///   ``BlobError/Reason/outOfBounds(offset:count:size:)``. Reserve the size
///   first with `zeroblob(N)` in SQL.
/// - If the row is updated or deleted, through any statement of the same
///   connection, the handle expires: later reads and writes throw
///   ``BlobError/Reason/expired``.
/// - The handle belongs to its ``Database`` and is used on that database's
///   thread. It keeps a read (or write) lock while open, so close it as soon
///   as you are done: ``close()``, or releasing the handle, or closing the
///   database, which closes every handle still open. A closed handle throws
///   on use; it never outlives its connection's resources.
/// - A read-write handle opened outside a transaction commits its writes
///   when it closes; ``close()`` throws if that commit fails.
public final class BlobHandle {
    /// The chunk size used when none is given: 256 KiB, large enough that
    /// per-call overhead vanishes, small enough to stay out of the way.
    public static let defaultChunkSize = 256 * 1024

    /// The schema of the table, such as `main`.
    public let schema: String
    /// The table of the blob.
    public let table: String
    /// The column of the blob.
    public let column: String
    /// The rowid of the row currently open (see ``reopen(rowID:)``).
    public private(set) var rowID: Int64
    /// Whether the handle may write.
    public let access: BlobAccess
    /// The size of the blob in bytes (`sqlite3_blob_bytes`), fixed while it
    /// is open.
    public private(set) var size: Int

    private var blob: OpaquePointer?
    /// Set when SQLite aborted the handle (a failed reopen, an expiry):
    /// from then on only close works.
    private var isAborted = false
    private let connection: SQLiteConnection

    init(connection: SQLiteConnection, blob: OpaquePointer, location: BlobLocation, access: BlobAccess) {
        self.connection = connection
        self.blob = blob
        self.schema = location.schema
        self.table = location.table
        self.column = location.column
        self.rowID = location.rowID
        self.access = access
        self.size = Int(sqlite3_blob_bytes(blob))
        connection.closeHandlers[ObjectIdentifier(self)] = { [weak self] in self?.closeQuietly() }
    }

    deinit {
        // Nothing can be thrown from here: a read-only handle cannot fail to
        // close, and a read-write one is closed by the caller (or by
        // withBlob) when its commit matters.
        closeQuietly()
    }

    var location: BlobLocation { BlobLocation(schema: schema, table: table, column: column, rowID: rowID) }

    /// The underlying `sqlite3_blob`, for use with the C API; nil once closed.
    public var sqliteBlob: OpaquePointer? { blob }

    /// Whether the handle is closed, by ``close()`` or because its database
    /// was closed.
    public var isClosed: Bool { blob == nil }

    /// Closes the handle. Safe to call more than once.
    ///
    /// Throws a ``SQLiteError`` when the handle wrote outside a transaction
    /// and committing those writes failed (SQLite then rolls them back);
    /// the handle is closed either way.
    public func close() throws {
        guard let blob else { return }
        self.blob = nil
        connection.closeHandlers[ObjectIdentifier(self)] = nil
        let code = sqlite3_blob_close(blob)
        if code != SQLITE_OK {
            throw SQLiteError.from(connection: connection.handle, code: code, sql: nil)
        }
    }

    private func closeQuietly() {
        try? close()
    }

    // MARK: - Reading

    /// Reads `buffer.count` bytes starting at `offset` into `buffer`.
    ///
    /// Throws ``BlobError/Reason/outOfBounds(offset:count:size:)`` when the
    /// range does not lie within the blob, ``BlobError/Reason/expired`` when
    /// the row changed since the handle was opened.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws {
        let pointer = try usable()
        let (start, count) = try checkedRange(offset: offset, count: buffer.count)
        guard count > 0, let base = buffer.baseAddress else { return }
        let code = sqlite3_blob_read(pointer, base, count, start)
        if code != SQLITE_OK { throw failure(code) }
    }

    /// Reads `count` bytes starting at `offset`.
    ///
    /// The range is checked before any memory is set aside for it: a
    /// negative or oversized `count` or `offset` (even `Int.max`) throws
    /// ``BlobError/Reason/outOfBounds(offset:count:size:)``.
    public func read(count: Int, at offset: Int = 0) throws -> Data {
        _ = try usable()
        _ = try checkedRange(offset: offset, count: count)
        var data = Data(count: count)
        try data.withUnsafeMutableBytes { try read(into: $0, at: offset) }
        return data
    }

    /// Calls `body` with the whole blob, in order, one chunk of at most
    /// `chunkSize` bytes at a time. The buffer is valid only during the call
    /// and is reused for the next chunk, so memory stays at one chunk
    /// whatever the blob's size. An empty blob calls `body` no time.
    ///
    /// A `chunkSize` of zero or less is a ``ResultCode/misuse`` error (like
    /// every misuse of the API, see ``BlobError``), thrown before anything
    /// is read; a chunk size larger than the blob reads it in one piece.
    public func readChunks(
        ofSize chunkSize: Int = BlobHandle.defaultChunkSize, _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try Self.checkChunkSize(chunkSize)
        _ = try usable()
        let bufferSize = min(chunkSize, size)
        guard bufferSize > 0 else { return }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset = 0
        while offset < size {
            let count = min(bufferSize, size - offset)
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
            try read(into: chunk, at: offset)
            try body(UnsafeRawBufferPointer(chunk))
            offset += count
        }
    }

    // MARK: - Writing

    /// Writes `bytes` starting at `offset`, in place.
    ///
    /// The handle must have been opened with ``BlobAccess/readWrite``.
    /// Throws ``BlobError/Reason/outOfBounds(offset:count:size:)`` when the
    /// bytes would not fit (a blob never grows), ``BlobError/Reason/expired``
    /// when the row changed since the handle was opened.
    public func write<Bytes: ContiguousBytes>(_ bytes: Bytes, at offset: Int = 0) throws {
        try bytes.withUnsafeBytes { buffer in
            let pointer = try usable()
            guard access == .readWrite else {
                throw SQLiteError.misuse(
                    "the blob \(quotedIdentifier(table)).\(quotedIdentifier(column)) was opened read-only; "
                        + "open it with access: .readWrite to write")
            }
            let (start, count) = try checkedRange(offset: offset, count: buffer.count)
            guard count > 0, let base = buffer.baseAddress else { return }
            let code = sqlite3_blob_write(pointer, base, count, start)
            if code != SQLITE_OK { throw failure(code) }
        }
    }

    // MARK: - Moving

    /// Points the handle at the same column of another row of the same
    /// table (`sqlite3_blob_reopen`), which is faster than opening a new
    /// handle.
    ///
    /// Throws ``BlobError/Reason/rowNotFound``, ``BlobError/Reason/nullValue``
    /// or ``BlobError/Reason/notABlob(found:)`` when that row has no blob
    /// there. SQLite then aborts the handle: like an expired one, it throws
    /// ``BlobError/Reason/expired`` on any use but ``close()``; open a new
    /// one.
    public func reopen(rowID newRowID: Int64) throws {
        let pointer = try open()
        guard !isAborted else { throw BlobError(.expired, at: location) }
        let code = sqlite3_blob_reopen(pointer, newRowID)
        guard code == SQLITE_OK else {
            isAborted = true
            var target = location
            target.rowID = newRowID
            if code & 0xFF == SQLITE_ABORT { throw BlobError(.expired, at: target) }
            let error = SQLiteError.from(connection: connection.handle, code: code, sql: nil)
            guard let handle = connection.handle,
                let reason = BlobDiagnosis.reason(for: error, connection: handle, location: target)
            else { throw error }
            throw BlobError(reason, at: target)
        }
        rowID = newRowID
        size = Int(sqlite3_blob_bytes(pointer))
    }

    // MARK: - Helpers

    static func checkChunkSize(_ chunkSize: Int) throws {
        guard chunkSize > 0 else {
            throw SQLiteError(code: .misuse, message: "the chunk size must be positive, not \(chunkSize)")
        }
    }

    /// The open `sqlite3_blob`, or a misuse error naming what is closed.
    private func open() throws -> OpaquePointer {
        guard !connection.isClosed else { throw SQLiteError.misuse("the database connection is closed") }
        guard let blob else { throw SQLiteError.misuse("the blob handle is closed") }
        return blob
    }

    /// The open `sqlite3_blob`, if it can still read and write.
    private func usable() throws -> OpaquePointer {
        let blob = try open()
        guard !isAborted else { throw BlobError(.expired, at: location) }
        return blob
    }

    /// Checks that `count` bytes at `offset` lie inside the blob, and
    /// returns them as the `Int32`s that the C API takes. Written so that
    /// no arithmetic can overflow: `offset + count` is never computed.
    private func checkedRange(offset: Int, count: Int) throws -> (Int32, Int32) {
        guard offset >= 0, count >= 0, offset <= size, count <= size - offset,
            let start = Int32(exactly: offset), let length = Int32(exactly: count)
        else {
            throw BlobError(.outOfBounds(offset: offset, count: count, size: size), at: location)
        }
        return (start, length)
    }

    private func failure(_ code: Int32) -> Error {
        if code & 0xFF == SQLITE_ABORT {
            isAborted = true
            return BlobError(.expired, at: location)
        }
        return SQLiteError.from(connection: connection.handle, code: code, sql: nil)
    }
}

/// Explains why SQLite refused to open a blob, from the row itself.
enum BlobDiagnosis {
    /// The reason a blob at `location` cannot be opened, when SQLite's
    /// `error` says the row or its value is the problem: no row, NULL, or
    /// not a blob. The value's type is then read with a query (`typeof`,
    /// which does not load the value). Nil when the problem is elsewhere (a
    /// view, an indexed column, ...), so that SQLite's error stands.
    static func reason(
        for error: SQLiteError, connection: OpaquePointer, location: BlobLocation
    ) -> BlobError.Reason? {
        // sqlite3_blob_open's messages for a missing row and a value of the
        // wrong type; its other refusals are left as SQLite words them.
        guard error.code == .error,
            error.message.hasPrefix("no such rowid") || error.message.hasPrefix("cannot open value of type")
        else { return nil }
        let found: SQLiteValue.StorageClass?
        do {
            found = try storageClass(connection: connection, location: location)
        } catch {
            return nil
        }
        switch found {
        case nil: return .rowNotFound
        case .null?: return .nullValue
        case .integer?: return .notABlob(found: .integer)
        case .real?: return .notABlob(found: .real)
        case .text?, .blob?: return nil
        }
    }

    /// The storage class of the value, or nil when there is no such row.
    /// Uses the C API directly so that it can run from anywhere, even while
    /// a statement of the `Database` is busy.
    static func storageClass(connection: OpaquePointer, location: BlobLocation) throws -> SQLiteValue.StorageClass? {
        let sql = "SELECT typeof(\(location.qualifiedColumn)) FROM \(location.qualifiedTable) WHERE rowid = ?"
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        guard code == SQLITE_OK, let statement else {
            throw SQLiteError.from(connection: connection, code: code, sql: sql)
        }
        sqlite3_bind_int64(statement, 1, location.rowID)
        let step = sqlite3_step(statement)
        if step == SQLITE_DONE { return nil }
        guard step == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else {
            throw SQLiteError.from(connection: connection, code: step, sql: sql)
        }
        return SQLiteValue.StorageClass(rawValue: String(cString: text).uppercased())
    }
}
