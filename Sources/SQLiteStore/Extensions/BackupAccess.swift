// Backups of the databases that apps hold, for either kind of access:
// ``DatabaseReader`` backs up, ``DatabaseWriter`` vacuums into a file.

extension DatabaseReader {
    /// Copies the database into a new file at `path` (see
    /// ``Database/backup(toPath:replace:options:progress:)`` for the atomic
    /// destination, `replace`, progress and cancellation).
    ///
    /// The copy runs inside one read access: a queue's other accesses wait
    /// until it is done, while a pool's writer and other readers go on.
    /// What it copies:
    /// - In WAL mode (always for a ``DatabasePool``), the access reads
    ///   first, so the copy is one snapshot: the database as committed when
    ///   the backup starts. That read transaction blocks no writer, so
    ///   writes go on during the whole copy, and the copy never restarts
    ///   for them. Only a checkpoint that would reset the WAL waits for the
    ///   backup to end.
    /// - In the rollback journal modes, each step locks the file only while
    ///   it runs, so other processes may write between steps; SQLite then
    ///   restarts the copy, so it is always one committed state. (A
    ///   snapshot would lock every writer out of the file for the whole
    ///   copy.)
    @discardableResult
    public func backup(
        toPath path: String, replace: Bool = false, options: BackupOptions = BackupOptions(),
        progress: ((BackupProgress) throws -> Void)? = nil
    ) throws -> BackupResult {
        try read { db in
            try db.backupInReadAccess(toPath: path, replace: replace, options: options, progress: progress)
        }
    }

    /// Backs up like the synchronous `backup(toPath:replace:options:progress:)`
    /// on the connection's own thread. Cancelling the task stops the copy
    /// at the next step and throws `CancellationError`; nothing is left at
    /// `path`.
    @discardableResult
    public func backup(
        toPath path: String, replace: Bool = false, options: BackupOptions = BackupOptions(),
        progress: (@Sendable (BackupProgress) throws -> Void)? = nil
    ) async throws -> BackupResult {
        try await BackupCancellation.run { cancellation in
            try await read { db in
                try db.backupInReadAccess(toPath: path, replace: replace, options: options) { report in
                    try cancellation.check()
                    try progress?(report)
                }
            }
        }
    }
}

extension DatabaseWriter {
    /// Writes a compacted copy into a new file at `path` (see
    /// ``Database/vacuum(into:replace:)``), on the writer connection
    /// outside a transaction, so that writes wait meanwhile.
    public func vacuum(into path: String, replace: Bool = false) throws {
        try writeWithoutTransaction { db in try db.vacuum(into: path, replace: replace) }
    }
}

extension Database {
    /// Backs up inside a read access: from the access's snapshot in WAL
    /// mode, step by step otherwise.
    fileprivate func backupInReadAccess(
        toPath path: String, replace: Bool, options: BackupOptions, progress: ((BackupProgress) throws -> Void)?
    ) throws -> BackupResult {
        if try fetchOne(String.self, "PRAGMA journal_mode")?.lowercased() == JournalMode.wal.rawValue {
            // The access's BEGIN takes no lock; a read does. Without it, the
            // backup would open and close a read transaction at every step.
            _ = try fetchOne(Int.self, "SELECT 1 FROM sqlite_master LIMIT 1")
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
