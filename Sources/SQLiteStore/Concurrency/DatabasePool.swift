import Foundation

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// A database file shared between threads and tasks through several
/// connections: one writer and up to ``maximumReaderCount`` readers, in WAL
/// mode, so that reads run at the same time as each other and as the write.
///
/// ```swift
/// let pool = try DatabasePool(path: "people.sqlite")
/// try await pool.write { db in
///     try db.execute("INSERT INTO people (name) VALUES (?)", arguments: ["Ada"])
/// }
/// // Any number of these run at once, each on its own snapshot.
/// let names = try await pool.read { db in
///     try db.fetchAll(String.self, "SELECT name FROM people ORDER BY name")
/// }
/// ```
///
/// - Writes are serialized on the writer connection, each in an
///   `IMMEDIATE` transaction.
/// - Each read runs in a transaction on a read-only connection and sees one
///   committed snapshot, taken at its first statement, for its whole
///   duration: writes committed meanwhile are not visible to it.
/// - A read that starts after a write has returned sees that write. To read
///   the state a write left, excluding any later write, while letting the
///   next writes go on, use `write(_:thenRead:)`.
///
/// Accesses wait for a connection in the order they ask. Synchronous
/// accesses run on the calling thread; `async` ones on a dispatch queue of
/// their connection, so they never block the Swift cooperative thread pool,
/// and can be cancelled. Calling an access method of the pool from inside
/// one of its access closures throws a ``ResultCode/misuse`` error rather
/// than risking a deadlock.
///
/// The pool sets the file's journal mode to WAL (unless the configuration
/// is read-only). ``Configuration/prepareDatabase`` runs on every
/// connection, readers included, which are read-only.
///
/// The pool owns its connections: an access whose closure calls
/// ``Database/close()`` throws a ``ResultCode/misuse`` error (a write is
/// rolled back), and the next access gets a new connection.
public final class DatabasePool: DatabaseWriter, ObservableWriter {
    /// The path of the database file.
    public let path: String
    /// The configuration of the writer; readers use it read-only.
    public let configuration: Configuration
    /// How many reader connections the pool opens at most, so how many
    /// reads run at once.
    public let maximumReaderCount: Int
    private let writer: ConnectionLeases
    private let readers: ConnectionLeases
    private let runner: AccessRunner
    let observationCenter: ObservationCenter
    /// The group commit's syncs (``Configuration/groupCommit``); nil
    /// without it.
    let commitSync: CommitSync?

    /// The reader count a pool gets unless told otherwise: one per
    /// processor, at least 4 (so that a few long reads do not hold up short
    /// ones) and at most 16 (more connections than cores add memory, not
    /// throughput).
    public static var defaultMaximumReaderCount: Int {
        min(16, max(4, ProcessInfo.processInfo.activeProcessorCount))
    }

    /// Opens (and by default creates) the database file at `path`, in WAL
    /// mode. Reader connections are opened when reads first need them.
    ///
    /// Throws a ``ResultCode/misuse`` error for an in-memory or temporary
    /// database (`:memory:`, empty path), which other connections cannot
    /// share (use ``DatabaseQueue`` for those), or a `maximumReaderCount`
    /// below 1; and what ``Database/init(path:configuration:)`` throws.
    public convenience init(
        path: String, configuration: Configuration = Configuration(),
        maximumReaderCount: Int = DatabasePool.defaultMaximumReaderCount
    ) throws {
        try self.init(path: path, configuration: configuration, maximumReaderCount: maximumReaderCount, sync: nil)
    }

    /// Opens the pool; with group commit, `sync` (when given) replaces the
    /// sync of the file's write-ahead log, so that tests can make it fail.
    init(
        path: String, configuration: Configuration, maximumReaderCount: Int,
        sync: (@Sendable () throws -> Void)?
    ) throws {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file::memory:") else {
            throw SQLiteError.misuse(
                "a DatabasePool needs a database file that several connections can open, not \"\(path)\"; "
                    + "use DatabaseQueue for an in-memory or temporary database")
        }
        guard maximumReaderCount >= 1 else {
            throw SQLiteError.misuse("a DatabasePool needs at least one reader, not \(maximumReaderCount)")
        }
        self.path = path
        self.configuration = configuration
        self.maximumReaderCount = maximumReaderCount

        let writerConfiguration = Self.writerConfiguration(configuration)
        let database = try Database(path: path, configuration: writerConfiguration)
        if writerConfiguration.groupCommit, let handle = database.connection.handle,
            let name = sqlite3_db_filename(handle, "main"), name.pointee != 0
        {
            let commits = sync.map { CommitSync(sync: $0) } ?? CommitSync(databasePath: String(cString: name))
            commits.attach(to: database, checkpointFrames: writerConfiguration.automaticCheckpointFrames)
            commitSync = commits
        } else {
            commitSync = nil
        }
        let commits = commitSync
        let writerSlot = ConnectionSlot(
            label: "SQLiteStore.DatabasePool.writer", database: database,
            staleness: configuration.staleConnectionCheck
        ) {
            // Only reached if an access closure closed the connection, or the
            // configuration's check found it stale; the writer is otherwise
            // opened above and kept until the pool closes.
            let database = try Database(path: path, configuration: writerConfiguration)
            commits?.attach(to: database, checkpointFrames: writerConfiguration.automaticCheckpointFrames)
            return database
        }
        writer = ConnectionLeases(slots: [writerSlot], ownerName: "database pool")

        let readerConfiguration = Self.readerConfiguration(configuration)
        let readerSlots = (1...maximumReaderCount).map { index in
            ConnectionSlot(
                label: "SQLiteStore.DatabasePool.reader\(index)", staleness: configuration.staleConnectionCheck
            ) {
                try Database(path: path, configuration: readerConfiguration)
            }
        }
        readers = ConnectionLeases(slots: readerSlots, ownerName: "database pool")
        let runner = AccessRunner(ownerName: "DatabasePool")
        observationCenter = ObservationCenter(
            writer: writer, readers: readers, runner: runner,
            pollingInterval: configuration.observationPollingInterval, ownerName: "database pool")
        self.runner = runner.observed(by: observationCenter)
    }

    private static func writerConfiguration(_ configuration: Configuration) -> Configuration {
        var writerConfiguration = configuration
        if !configuration.isReadOnly { writerConfiguration.journalMode = .wal }
        // The group commit syncs the log itself, after the commit.
        if configuration.groupCommit && !configuration.isReadOnly { writerConfiguration.synchronous = .normal }
        writerConfiguration.groupCommit = configuration.groupCommit && !configuration.isReadOnly
        return writerConfiguration
    }

    private static func readerConfiguration(_ configuration: Configuration) -> Configuration {
        var readerConfiguration = configuration
        readerConfiguration.isReadOnly = true
        readerConfiguration.journalMode = nil
        return readerConfiguration
    }

    // MARK: - Reading

    /// Runs `body` on a reader connection, in a transaction that sees one
    /// committed snapshot, and returns its result. Blocks the calling
    /// thread until a reader is free. Writing from `body` fails with
    /// ``ResultCode/readOnly``.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try runner.sync(readers, method: "read") { db in
            try db.readAccess(nil, enforcingReadOnly: false, body)
        }
    }

    /// Runs `body` like `read(_:)` on the reader's own
    /// thread; cancelling the task interrupts it with `CancellationError`.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await runner.async(readers, mayRunHere: true) { db, cancellation in
            try db.readAccess(cancellation, enforcingReadOnly: false, body)
        }
    }

    // MARK: - Writing

    /// Runs `body` on the writer connection in an immediate transaction,
    /// committed when it returns and rolled back when it throws. Reads go on
    /// meanwhile, seeing the database as it was before.
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try synced { try runner.sync(writer, method: "write") { db in try db.writeAccess(nil, body) } }
    }

    /// Runs `body` like `write(_:)` on the writer's own
    /// thread; cancelling the task interrupts it, rolls it back and throws
    /// `CancellationError`.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await synced {
            try await runner.async(writer) { db, cancellation in try db.writeAccess(cancellation, body) }
        }
    }

    /// Runs `body` on the writer connection outside any transaction (see
    /// `DatabaseWriter.writeWithoutTransaction(_:)`).
    public func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try synced {
            try runner.sync(writer, method: "writeWithoutTransaction") { db in
                try db.writeAccessWithoutTransaction(nil, body)
            }
        }
    }

    /// Runs `body` outside any transaction on the writer's own thread.
    public func writeWithoutTransaction<T: Sendable>(
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await synced {
            try await runner.async(writer) { db, cancellation in
                try db.writeAccessWithoutTransaction(cancellation, body)
            }
        }
    }

    // MARK: - Group commit

    /// Runs a write access, then, with ``Configuration/groupCommit``,
    /// waits for a sync of the log that began after it ended (also when
    /// it threw: a write without a transaction may have committed first).
    /// The access's own error wins over the sync's.
    private func synced<T>(_ access: () throws -> T) throws -> T {
        guard let commitSync else { return try access() }
        let result = Result { try access() }
        do {
            try commitSync.waitUntilSyncedBlocking(commitSync.accessEnded())
        } catch {
            if case .success = result { throw error }
        }
        return try result.get()
    }

    /// ``synced(_:)`` for an `async` access, waiting without a thread.
    private func synced<T: Sendable>(_ access: () async throws -> T) async throws -> T {
        guard let commitSync else { return try await access() }
        let result: Result<T, any Error>
        do {
            result = .success(try await access())
        } catch {
            result = .failure(error)
        }
        do {
            try await commitSync.waitUntilSynced(commitSync.accessEnded())
        } catch {
            if case .success = result { throw error }
        }
        return try result.get()
    }

    // MARK: - Reading what a write left

    /// Runs `write` like `write(_:)`, then `read` on a
    /// reader connection whose snapshot is exactly the database `write`
    /// committed: it sees that write, and no later one. The writer is free
    /// for the next write as soon as the snapshot is taken, so `read` runs
    /// alongside later writes.
    ///
    /// ```swift
    /// let (id, people) = try pool.write { db in
    ///     try db.execute("INSERT INTO people (name) VALUES (?)", arguments: ["Ada"])
    ///     return db.lastInsertedRowID
    /// } thenRead: { db, id in
    ///     (id, try db.fetchAll(String.self, "SELECT name FROM people"))
    /// }
    /// ```
    ///
    /// If `write` throws, nothing is committed and `read` does not run. If
    /// `read` throws, the write stays committed.
    public func write<W, R>(_ write: (Database) throws -> W, thenRead read: (Database, W) throws -> R) throws -> R {
        try synced { try writeThenRead(write, read) }
    }

    private func writeThenRead<W, R>(_ write: (Database) throws -> W, _ read: (Database, W) throws -> R) throws -> R {
        try runner.checkNotReentrant("write(_:thenRead:)")
        let writerSlot = try writer.acquire()
        var isWriterHeld = true
        defer { if isWriterHeld { writer.release(writerSlot) } }
        let written = try runner.run(on: writerSlot) { db in try db.writeAccess(nil, write) }
        let readerSlot = try readers.acquire(whileClosing: true)
        defer { readers.release(readerSlot) }
        return try readSnapshot(on: readerSlot, nil, releasingWriter: writerSlot, isWriterHeld: &isWriterHeld) {
            db in try read(db, written)
        }
    }

    /// Runs `write` then `read` like
    /// `write(_:thenRead:)`, on the connections' own
    /// threads.
    ///
    /// Cancelling the task before `write` returns rolls the write back;
    /// cancelling it later leaves the write committed. Either way the call
    /// throws `CancellationError`.
    public func write<W: Sendable, R: Sendable>(
        _ write: @escaping @Sendable (Database) throws -> W,
        thenRead read: @escaping @Sendable (Database, W) throws -> R
    ) async throws -> R {
        try await synced { try await writeThenRead(write, read) }
    }

    private func writeThenRead<W: Sendable, R: Sendable>(
        _ write: @escaping @Sendable (Database) throws -> W, _ read: @escaping @Sendable (Database, W) throws -> R
    ) async throws -> R {
        try await runner.withCancellation(withdrawingFrom: [writer, readers]) { cancellation, continuation in
            let writeJob = LeaseJob(
                cancellation: cancellation,
                start: { [writer, readers, runner] writerSlot in
                    let written: W
                    do {
                        written = try runner.run(on: writerSlot) { db in try db.writeAccess(cancellation, write) }
                    } catch {
                        writer.release(writerSlot)
                        continuation.resume(throwing: error)
                        return
                    }
                    // The writer is kept until the reader has its snapshot.
                    let readJob = LeaseJob(
                        cancellation: cancellation,
                        start: { readerSlot in
                            var isWriterHeld = true
                            let result = Result {
                                try self.readSnapshot(
                                    on: readerSlot, cancellation, releasingWriter: writerSlot,
                                    isWriterHeld: &isWriterHeld
                                ) { db in try read(db, written) }
                            }
                            if isWriterHeld { writer.release(writerSlot) }
                            readers.release(readerSlot)
                            continuation.resume(with: result)
                        },
                        fail: { error in
                            writer.release(writerSlot)
                            continuation.resume(throwing: error)
                        })
                    readers.schedule(readJob, whileClosing: true)
                },
                fail: { error in continuation.resume(throwing: error) })
            writer.schedule(writeJob)
        }
    }

    /// Runs a read on `readerSlot` whose snapshot is taken before the
    /// writer, still held by the caller, is released.
    private func readSnapshot<R>(
        on readerSlot: ConnectionSlot, _ cancellation: AccessCancellation?, releasingWriter writerSlot: ConnectionSlot,
        isWriterHeld: inout Bool, _ body: (Database) throws -> R
    ) throws -> R {
        var isReleased = false
        defer { if isReleased { isWriterHeld = false } }
        return try runner.run(on: readerSlot) { db in
            try db.readAccess(
                cancellation, enforcingReadOnly: false,
                afterSnapshot: { [writer] in
                    writer.release(writerSlot)
                    isReleased = true
                }, body)
        }
    }

    // MARK: - Interrupting

    /// Makes the statements the pool's connections are running right now
    /// (the writer's and every reader's) stop as soon as possible. Safe to
    /// call from any thread or task, and while the pool closes.
    ///
    /// The interrupted access throws a ``SQLiteError`` with the code
    /// ``ResultCode/interrupt`` (unless its closure catches it); a write is
    /// rolled back. The pool stays usable.
    ///
    /// Only what runs at the moment of the call is affected, as with
    /// `sqlite3_interrupt`: a statement running then stops, and so does any
    /// statement the same connection starts before all of those have
    /// finished. An access that is waiting for its turn, or whose closure is
    /// between two statements, is not interrupted, and neither is any
    /// access that starts later. With nothing running the call does nothing.
    /// To stop one `async` access whenever it runs, cancel its task instead.
    public func interrupt() {
        writer.interruptConnections()
        readers.interruptConnections()
    }

    // MARK: - Closing

    /// Waits for the accesses already started or waiting, then closes every
    /// connection. Later accesses throw a ``ResultCode/misuse`` error.
    /// Throws that error too when called from inside an access closure.
    public func close() throws {
        // The writer drains first: a write(_:thenRead:) still writing needs
        // a reader afterwards. It closes last, to checkpoint the WAL.
        try runner.close([writer, readers])
        observationCenter.close()
    }

    /// Closes like `close()` without blocking a thread.
    public func close() async {
        await runner.close([writer, readers])
        observationCenter.close()
    }

    /// How many accesses wait for a reader (for tests).
    var waitingReaderCount: Int { readers.waitingCount }
    /// How many accesses wait for the writer (for tests).
    var waitingWriterCount: Int { writer.waitingCount }
    /// Whether closing has begun (for tests).
    var isClosing: Bool { writer.isClosing }
}
