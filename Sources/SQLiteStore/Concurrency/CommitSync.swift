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
/// end while syncs run share the next one, so a busy writer waits for the
/// disk once for many commits instead of once each.
///
/// Once attached to the writer (``attach(to:checkpointFrames:)``), it
/// counts the commits that appended to the log, through the connection's
/// WAL hook: an access that appended nothing (a write transaction that
/// only read, as a sync server's pull mostly does) when every earlier
/// commit is synced already waits for nothing. Unattached, every access
/// that ends counts as a commit.
///
/// The syncs run on a queue of their own, never on the writer's: the
/// writer goes on with the next writes while the disk works. Two may run
/// at once: a commit made while a sync runs (which does not cover it)
/// starts the next sync at once, instead of waiting for the running one to
/// end first, which took a write up to two syncs' time; a third waits for
/// one of the two to end. Any sync that began after a commit covers it,
/// whichever ends first.
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
        /// What each sync running now covers: the number of the last
        /// access that had ended when it began.
        var running: [UInt64] = []
        var waiters: [(ticket: UInt64, waiter: Waiter)] = []
        /// The first failed sync, given to every later write.
        var failure: (any Error)?
        /// How many syncs ran (for tests).
        var syncCount = 0
    }

    private let state = Locked(State())
    /// The most syncs that run at once.
    static let maximumConcurrentSyncs = 2
    private let queue = DispatchQueue(label: "SQLiteStore.DatabasePool.commitSync", attributes: .concurrent)
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
        let (answer, start) = state.withLock { state -> (Result<Void, any Error>?, UInt64?) in
            if let failure = state.failure { return (.failure(failure), nil) }
            if state.synced >= ticket { return (.success(()), nil) }
            state.waiters.append((ticket, waiter))
            return (nil, Self.nextSync(&state))
        }
        if let answer { waiter(answer) }
        if let start { queue.async { self.runSync(covering: start) } }
    }

    /// Counts a sync that starts now and returns what it covers, when a
    /// waiter's access is covered by no sync running and fewer than
    /// ``maximumConcurrentSyncs`` run; else nil.
    private static func nextSync(_ state: inout State) -> UInt64? {
        guard state.failure == nil, state.running.count < maximumConcurrentSyncs,
            let latest = state.waiters.lazy.map(\.ticket).max(), state.running.allSatisfy({ $0 < latest })
        else { return nil }
        state.syncCount += 1
        state.running.append(state.ended)
        return state.ended
    }

    /// Syncs, which covers every access that ended before it began (up to
    /// `target`); answers the waiters it covers, and starts the next sync
    /// if some still wait.
    private func runSync(covering target: UInt64) {
        let result = Result { try sync() }
        let (answered, outcome, next) = state.withLock {
            state -> ([Waiter], Result<Void, any Error>, UInt64?) in
            if let index = state.running.firstIndex(of: target) { state.running.remove(at: index) }
            switch result {
            case .success: state.synced = max(state.synced, target)
            case .failure(let error): state.failure = state.failure ?? error
            }
            let failed = state.failure != nil
            let synced = state.synced
            let ready = state.waiters.filter { failed || $0.ticket <= synced }.map(\.waiter)
            state.waiters.removeAll { failed || $0.ticket <= synced }
            let outcome: Result<Void, any Error> = state.failure.map { .failure($0) } ?? .success(())
            return (ready, outcome, Self.nextSync(&state))
        }
        for waiter in answered { waiter(outcome) }
        if let next { queue.async { self.runSync(covering: next) } }
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
