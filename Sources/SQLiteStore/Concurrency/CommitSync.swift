import Foundation

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A pool's group commit (``Configuration/groupCommit``): the writer
/// commits without waiting for the disk, and each write access waits for
/// a sync of the write-ahead log that covers every commit made before the
/// access ended (its own, and any other it could have read). Accesses that
/// end while a sync runs share the next one, so a busy writer waits for
/// the disk once for many commits instead of once each.
///
/// Once attached to the writer (``attach(to:checkpointFrames:)``), it
/// counts the commits that appended to the log, through the connection's
/// WAL hook: an access that appended nothing (a write transaction that
/// only read, as a sync server's pull mostly does) when every earlier
/// commit is synced already waits for nothing. Unattached, every access
/// that ends counts as a commit.
///
/// The syncs run one at a time on a queue of their own, never on the
/// writer's: the writer goes on with the next writes while the disk works.
/// A sync that fails fails every write waiting for it, and every write
/// after it: once the system reported a write-back error, a later sync
/// that succeeds does not prove the earlier data reached the disk.
final class CommitSync: Sendable {
    /// What a waiter is told: its commit is on the disk, or why not.
    typealias Waiter = @Sendable (Result<Void, any Error>) -> Void

    private struct State {
        /// How many commits appended to the log (counted by the WAL hook),
        /// or, without it, how many write accesses ended: each takes the
        /// next number.
        var ended: UInt64 = 0
        /// Whether the writer's WAL hook counts the commits.
        var countsCommits = false
        /// The log's length in frames at which a commit checkpoints it (0:
        /// never), for the WAL hook.
        var checkpointFrames: Int32 = 0
        /// Every access numbered up to this one is on the disk.
        var synced: UInt64 = 0
        var isSyncing = false
        var waiters: [(ticket: UInt64, waiter: Waiter)] = []
        /// The first failed sync, given to every later write.
        var failure: (any Error)?
        /// How many syncs ran (for tests).
        var syncCount = 0
    }

    private let state = Locked(State())
    private let queue = DispatchQueue(label: "SQLiteStore.DatabasePool.commitSync")
    private let sync: @Sendable () throws -> Void

    /// Syncs with `sync`, which makes every commit so far durable.
    init(sync: @escaping @Sendable () throws -> Void) {
        self.sync = sync
    }

    /// The syncs of a database file's write-ahead log (`PATH-wal`) and,
    /// when the log is a new file, of its directory (as SQLite does at a
    /// new log's first sync), so that the log's name survives too.
    convenience init(databasePath path: String) {
        let log = WriteAheadLogSync(databasePath: path)
        self.init(sync: { try log.sync() })
    }

    /// Counts a write access that ended (committed, rolled back or
    /// failed): its number, to wait for with ``waitUntilSynced(_:)``. Once
    /// the WAL hook counts commits, the number is that of the last commit,
    /// which a sync may already cover.
    func accessEnded() -> UInt64 {
        state.withLock { state in
            if !state.countsCommits { state.ended += 1 }
            return state.ended
        }
    }

    /// Counts a commit that appended to the log: the next sync covers it.
    func logAppended() {
        state.withLock { $0.ended += 1 }
    }

    /// Counts the commits of `database`, the pool's writer connection in
    /// WAL mode, with its WAL hook, and checkpoints as SQLite's automatic
    /// checkpoint would (which the hook replaces): PASSIVE, once the log
    /// holds `checkpointFrames` frames (nil: SQLite's default, 1,000;
    /// 0: never). Called for each writer connection the pool opens; the
    /// pool keeps this object alive as long as its connections.
    func attach(to database: Database, checkpointFrames: Int?) {
        guard let handle = database.connection.handle else { return }
        state.withLock { state in
            state.countsCommits = true
            state.checkpointFrames = Int32(clamping: max(checkpointFrames ?? 1_000, 0))
        }
        sqlite3_wal_hook(handle, walHookCallback, Unmanaged.passUnretained(self).toOpaque())
    }

    /// A commit of `handle` appended to the log of database `name`, now
    /// `frames` long.
    fileprivate func walCommitted(_ handle: OpaquePointer?, name: UnsafePointer<CChar>?, frames: Int32) {
        let threshold = state.withLock { state in
            state.ended += 1
            return state.checkpointFrames
        }
        if threshold > 0, frames >= threshold { sqlite3_wal_checkpoint(handle, name) }
    }

    /// Returns once a sync that began after access `ticket` ended has
    /// succeeded; throws that sync's error, or an earlier one's.
    func waitUntilSynced(_ ticket: UInt64) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            wait(for: ticket) { continuation.resume(with: $0) }
        }
    }

    /// ``waitUntilSynced(_:)`` blocking the calling thread.
    func waitUntilSyncedBlocking(_ ticket: UInt64) throws {
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<Void, any Error>?>(nil)
        wait(for: ticket) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        try outcome.withLock { $0 }?.get()
    }

    /// How many syncs ran (for tests).
    var syncCount: Int { state.withLock { $0.syncCount } }

    private func wait(for ticket: UInt64, _ waiter: @escaping Waiter) {
        enum Next {
            case answer(Result<Void, any Error>)
            case startSyncing
            case waitInLine
        }
        let next = state.withLock { state -> Next in
            if let failure = state.failure { return .answer(.failure(failure)) }
            if state.synced >= ticket { return .answer(.success(())) }
            state.waiters.append((ticket, waiter))
            guard !state.isSyncing else { return .waitInLine }
            state.isSyncing = true
            return .startSyncing
        }
        switch next {
        case .answer(let result): waiter(result)
        case .startSyncing: queue.async { self.runSyncs() }
        case .waitInLine: break
        }
    }

    /// Syncs until no one waits: each sync covers every access that ended
    /// before it began.
    private func runSyncs() {
        while true {
            let target = state.withLock { state in
                state.syncCount += 1
                return state.ended
            }
            let result = Result { try sync() }
            let (answered, isDone) = state.withLock { state -> ([Waiter], Bool) in
                switch result {
                case .success: state.synced = max(state.synced, target)
                case .failure(let error): state.failure = state.failure ?? error
                }
                let ready = state.waiters.filter { state.failure != nil || $0.ticket <= state.synced }
                state.waiters.removeAll { state.failure != nil || $0.ticket <= state.synced }
                if state.waiters.isEmpty { state.isSyncing = false }
                return (ready.map(\.waiter), state.waiters.isEmpty)
            }
            let outcome: Result<Void, any Error> = state.withLock { state in
                state.failure.map { .failure($0) } ?? .success(())
            }
            for waiter in answered { waiter(outcome) }
            if isDone { return }
        }
    }
}

private func walHookCallback(
    _ context: UnsafeMutableRawPointer?, _ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ frames: Int32
) -> Int32 {
    guard let context else { return 0 }
    Unmanaged<CommitSync>.fromOpaque(context).takeUnretainedValue().walCommitted(handle, name: name, frames: frames)
    return 0  // SQLITE_OK
}

/// Syncs a database's write-ahead log file, opened for each sync by its
/// name: the file may be removed and made again while the pool lives
/// (when every connection closed), and an old descriptor would then sync
/// a file nobody reads.
private final class WriteAheadLogSync: Sendable {
    private let logPath: String
    private let directoryPath: String
    /// The log file last synced (device and inode): a new one needs its
    /// directory synced.
    private let lastFile = Locked<(device: UInt64, inode: UInt64)?>(nil)

    init(databasePath: String) {
        logPath = databasePath + "-wal"
        directoryPath =
            (databasePath as NSString).deletingLastPathComponent.isEmpty
            ? "." : (databasePath as NSString).deletingLastPathComponent
    }

    func sync() throws {
        let descriptor = open(logPath, O_RDONLY | O_CLOEXEC)
        // No log: the last connection closed, which checkpointed the log
        // into the database file, synced it, and removed the log.
        if descriptor < 0 && errno == ENOENT { return }
        guard descriptor >= 0 else { throw Self.failure("open", logPath) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw Self.failure("stat", logPath) }
        // The log's data and what finds it (its size), not its times, as
        // SQLite syncs it: a log rewritten in place then needs no commit of
        // the file system's journal, which on a disk busy with other files'
        // writes waits for theirs.
        #if os(Linux)
            guard fdatasync(descriptor) == 0 else { throw Self.failure("fdatasync", logPath) }
        #else
            guard fsync(descriptor) == 0 else { throw Self.failure("fsync", logPath) }
        #endif
        let file = (device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        guard lastFile.withLock({ $0.map { $0 != file } ?? true }) else { return }
        let directory = open(directoryPath, O_RDONLY | O_CLOEXEC)
        guard directory >= 0 else { throw Self.failure("open", directoryPath) }
        defer { close(directory) }
        guard fsync(directory) == 0 else { throw Self.failure("fsync", directoryPath) }
        lastFile.withLock { $0 = file }
    }

    private static func failure(_ call: String, _ path: String) -> SQLiteError {
        let code = errno
        // SQLITE_IOERR_FSYNC, as SQLite reports its own failed syncs.
        return SQLiteError(
            code: ResultCode(rawValue: 1034),
            message: "the commit is in the write-ahead log but could not be synced to the disk: \(call) \(path): "
                + String(cString: strerror(code)))
    }
}
