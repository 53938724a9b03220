// Backups of the databases that apps hold: queues and pools.

extension DatabasePool {
    /// Copies the database into a new file at `path` (see
    /// ``Database/backup(toPath:replace:options:progress:)`` for the atomic
    /// destination, `replace`, progress and cancellation).
    ///
    /// The copy runs on a reader connection inside a read transaction that
    /// has read, so it copies one snapshot: the database as committed when
    /// the backup starts. In WAL mode that transaction blocks no writer, so
    /// writes go on during the whole copy, and the copy never restarts for
    /// them. Only a checkpoint that would reset the WAL waits for the
    /// backup to end.
    @discardableResult
    public func backup(
        toPath path: String, replace: Bool = false, options: BackupOptions = BackupOptions(),
        progress: ((BackupProgress) throws -> Void)? = nil
    ) throws -> BackupResult {
        try read { db in
            try db.backupFromSnapshot(toPath: path, replace: replace, options: options, progress: progress)
        }
    }

    /// Backs up like the synchronous `backup(toPath:replace:options:progress:)` on the
    /// reader's own thread. Cancelling the task stops the copy at the next
    /// step and throws `CancellationError`; nothing is left at `path`.
    @discardableResult
    public func backup(
        toPath path: String, replace: Bool = false, options: BackupOptions = BackupOptions(),
        progress: (@Sendable (BackupProgress) throws -> Void)? = nil
    ) async throws -> BackupResult {
        try await BackupCancellation.run { cancellation in
            try await read { db in
                try db.backupFromSnapshot(toPath: path, replace: replace, options: options) { report in
                    try cancellation.check()
                    try progress?(report)
                }
            }
        }
    }

    /// Writes a compacted copy into a new file at `path` (see
    /// ``Database/vacuum(into:replace:)``), on the writer connection
    /// outside a transaction, so that writes wait meanwhile.
    public func vacuum(into path: String, replace: Bool = false) throws {
        try writeWithoutTransaction { db in try db.vacuum(into: path, replace: replace) }
    }
}

extension DatabaseQueue {
    /// Copies the database into a new file at `path` (see
    /// ``Database/backup(toPath:replace:options:progress:)`` for the atomic
    /// destination, `replace`, progress and cancellation).
    ///
    /// Other accesses of the queue wait until the copy is done. Other
    /// processes may write meanwhile: in WAL mode the copy keeps the
    /// snapshot it started from (blocking no writer); in the rollback
    /// journal modes each step locks the file only while it runs, and SQLite
    /// restarts the copy after another process's write, so the copy is
    /// always one committed state.
    @discardableResult
    public func backup(
        toPath path: String, replace: Bool = false, options: BackupOptions = BackupOptions(),
        progress: ((BackupProgress) throws -> Void)? = nil
    ) throws -> BackupResult {
        try read { db in
            try db.backupFromQueue(toPath: path, replace: replace, options: options, progress: progress)
        }
    }

    /// Backs up like the synchronous `backup(toPath:replace:options:progress:)` on the
    /// connection's own thread. Cancelling the task stops the copy at the
    /// next step and throws `CancellationError`; nothing is left at `path`.
    @discardableResult
    public func backup(
        toPath path: String, replace: Bool = false, options: BackupOptions = BackupOptions(),
        progress: (@Sendable (BackupProgress) throws -> Void)? = nil
    ) async throws -> BackupResult {
        try await BackupCancellation.run { cancellation in
            try await read { db in
                try db.backupFromQueue(toPath: path, replace: replace, options: options) { report in
                    try cancellation.check()
                    try progress?(report)
                }
            }
        }
    }

    /// Writes a compacted copy into a new file at `path` (see
    /// ``Database/vacuum(into:replace:)``).
    public func vacuum(into path: String, replace: Bool = false) throws {
        try writeWithoutTransaction { db in try db.vacuum(into: path, replace: replace) }
    }
}

extension Database {
    /// Backs up inside a read access, with its snapshot taken first.
    fileprivate func backupFromSnapshot(
        toPath path: String, replace: Bool, options: BackupOptions, progress: ((BackupProgress) throws -> Void)?
    ) throws -> BackupResult {
        // The access's BEGIN takes no lock; a read does. Without it, the
        // backup would open and close a read transaction at every step.
        _ = try fetchOne(Int.self, "SELECT 1 FROM sqlite_master LIMIT 1")
        return try backup(toPath: path, replace: replace, options: options, progress: progress)
    }

    /// Backs up inside a queue's read access: from a snapshot in WAL mode,
    /// step by step otherwise (a snapshot would lock writers out of the
    /// file for the whole copy).
    fileprivate func backupFromQueue(
        toPath path: String, replace: Bool, options: BackupOptions, progress: ((BackupProgress) throws -> Void)?
    ) throws -> BackupResult {
        if try fetchOne(String.self, "PRAGMA journal_mode")?.lowercased() == JournalMode.wal.rawValue {
            return try backupFromSnapshot(toPath: path, replace: replace, options: options, progress: progress)
        }
        return try backup(toPath: path, replace: replace, options: options, progress: progress)
    }
}

/// The cancellation of an `async` backup: set when the task is cancelled,
/// checked between steps (an interrupt does not stop a backup step).
final class BackupCancellation: Sendable {
    private let isCancelled = Locked(false)

    func check() throws {
        if isCancelled.withLock({ $0 }) { throw CancellationError() }
    }

    static func run<T: Sendable>(_ body: (BackupCancellation) async throws -> T) async throws -> T {
        let cancellation = BackupCancellation()
        return try await withTaskCancellationHandler {
            try await body(cancellation)
        } onCancel: {
            cancellation.isCancelled.withLock { $0 = true }
        }
    }
}
