import Foundation

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// How an online backup copies: how many pages per step, how long it rests
/// between steps, and how long it keeps retrying a step that finds a
/// database locked.
///
/// ```swift
/// var options = BackupOptions()
/// options.pagesPerStep = 1024                 // 4 MiB at a time with 4 KiB pages
/// options.pauseBetweenSteps = .milliseconds(20)
/// try db.backup(toPath: "copy.sqlite", options: options)
/// ```
public struct BackupOptions: Sendable, Equatable {
    /// Pages copied by each `sqlite3_backup_step`; at least 1. The source
    /// is locked only while a step runs (unless the source connection holds
    /// a read transaction, see ``Database/backup(to:options:progress:)``),
    /// so smaller steps let other connections write sooner. 256 by default
    /// (1 MiB with 4 KiB pages).
    public var pagesPerStep = 256

    /// How long the backup rests between two steps, so that writers waiting
    /// for the lock get it. 1 ms by default; `.zero` does not pause.
    public var pauseBetweenSteps: Duration = .milliseconds(1)

    /// How long the backup keeps retrying a step that fails with
    /// ``ResultCode/busy`` or ``ResultCode/locked`` (another connection
    /// holds a lock it needs) before it gives up with that error. Five
    /// seconds by default.
    public var busyTimeout: Duration = .seconds(5)

    /// The default options.
    public init() {}

    /// Options with the given values.
    public init(pagesPerStep: Int, pauseBetweenSteps: Duration = .milliseconds(1), busyTimeout: Duration = .seconds(5))
    {
        self.pagesPerStep = pagesPerStep
        self.pauseBetweenSteps = pauseBetweenSteps
        self.busyTimeout = busyTimeout
    }
}

/// Where a backup is: reported after every step.
public struct BackupProgress: Sendable, Equatable, CustomStringConvertible {
    /// Pages still to copy (`sqlite3_backup_remaining`).
    public let remainingPageCount: Int
    /// Pages in the source database (`sqlite3_backup_pagecount`).
    public let totalPageCount: Int

    /// Creates a progress report.
    public init(remainingPageCount: Int, totalPageCount: Int) {
        self.remainingPageCount = remainingPageCount
        self.totalPageCount = totalPageCount
    }

    /// Pages copied so far. It goes back down when the copy restarts
    /// because another connection wrote to the source.
    public var copiedPageCount: Int { max(0, totalPageCount - remainingPageCount) }

    /// The part copied, from 0 to 1.
    public var fractionCompleted: Double {
        totalPageCount == 0 ? 1 : Double(copiedPageCount) / Double(totalPageCount)
    }

    /// Whether every page is copied: the last report.
    public var isComplete: Bool { remainingPageCount == 0 }

    public var description: String { "\(copiedPageCount) of \(totalPageCount) pages" }
}

/// What a finished backup copied.
public struct BackupResult: Sendable, Equatable {
    /// Pages in the copy.
    public let pageCount: Int
    /// Bytes per page.
    public let pageSize: Int

    /// Creates a result.
    public init(pageCount: Int, pageSize: Int) {
        self.pageCount = pageCount
        self.pageSize = pageSize
    }

    /// The size of the copy's main file in bytes.
    public var byteCount: Int { pageCount * pageSize }
}

/// A backup or `VACUUM INTO` could not write its destination file.
///
/// The description names the file, so it can be shown as is:
///
/// ```text
/// cannot back up to /backups/people.sqlite: a file is already there
/// ```
public struct BackupError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// What kind of failure this is.
    public enum Kind: Sendable, Equatable {
        /// A file is already at the destination and replacing was not asked.
        case destinationExists
        /// The destination cannot receive the copy: its directory is
        /// missing or not writable, it is a directory or another thing
        /// than a regular file, or it is the database being copied.
        case destinationUnusable
        /// The finished copy failed SQLite's `integrity_check`; it was
        /// discarded.
        case integrityCheckFailed
        /// Writing, flushing or renaming the copy failed.
        case ioFailure
    }

    /// What kind of failure this is.
    public let kind: Kind
    /// The destination path.
    public let path: String
    /// A sentence that explains the failure, naming the path.
    public let message: String

    /// Creates an error.
    public init(_ kind: Kind, path: String, message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    public var description: String { message }

    public var errorDescription: String? { message }
}

// MARK: - Database to database

extension Database {
    /// Copies this database, page by page, into `destination`, replacing
    /// its content (SQLite's online backup, `sqlite3_backup_*`).
    ///
    /// The copy goes in steps of ``BackupOptions/pagesPerStep`` pages, with
    /// a pause between steps; `progress` is called after each step, the
    /// last time with ``BackupProgress/isComplete`` true. Throwing from
    /// `progress` (a `CancellationError`, say) stops the backup and is
    /// rethrown; the destination keeps what it had, except after the last
    /// report, when the copy is already committed.
    ///
    /// What the copy sees when the source changes meanwhile:
    /// - If this connection is in a transaction that has read, the backup
    ///   copies that transaction's snapshot, whatever others write
    ///   meanwhile. In WAL mode this blocks no writer: it is how
    ///   ``DatabasePool`` backs up.
    /// - Otherwise each step takes the source's read lock and releases it,
    ///   so other connections can write between steps. When one does,
    ///   SQLite restarts the copy from the first page at the next step (the
    ///   progress goes back), so the copy is always one committed state of
    ///   the source; under constant writes it may never finish.
    /// - Changes made through this connection itself during the copy
    ///   reach the destination as they happen.
    ///
    /// A step that finds a lock taken (``ResultCode/busy``,
    /// ``ResultCode/locked``) is retried for up to
    /// ``BackupOptions/busyTimeout``.
    ///
    /// ```swift
    /// let copy = try Database.inMemory()
    /// try db.backup(to: copy) { progress in
    ///     print("\(Int(progress.fractionCompleted * 100))%")
    /// }
    /// ```
    ///
    /// - Throws: ``SQLiteError``: ``ResultCode/misuse`` for a closed
    ///   connection, a `pagesPerStep` below 1, or a source connection in a
    ///   write transaction (the backup would wait for it forever); SQLite's
    ///   error when a step fails; what `progress` throws;
    ///   ``ResultCode/misuse`` when `progress` closes either connection
    ///   (the backup stops before its next step, and the other connection
    ///   stays usable).
    @discardableResult
    public func backup(
        to destination: Database, options: BackupOptions = BackupOptions(),
        progress: ((BackupProgress) throws -> Void)? = nil
    ) throws -> BackupResult {
        guard let source = sqliteConnection else {
            throw SQLiteError.misuse("cannot back up: the source database connection is closed")
        }
        guard let target = destination.sqliteConnection else {
            throw SQLiteError.misuse("cannot back up: the destination database connection is closed")
        }
        guard options.pagesPerStep >= 1 else {
            throw SQLiteError.misuse("a backup copies at least 1 page per step, not \(options.pagesPerStep)")
        }
        guard sqlite3_txn_state(source, "main") != SQLITE_TXN_WRITE else {
            throw SQLiteError.misuse(
                "cannot back up from a connection while it writes: the backup would wait for its own transaction; "
                    + "back up before or after the write")
        }
        guard let handle = sqlite3_backup_init(target, "main", source, "main") else {
            throw SQLiteError.from(connection: target, code: sqlite3_errcode(target), sql: nil)
        }
        // `progress` may close either connection. SQLite counts a running
        // backup against closing its source (the close waits), but not
        // against closing its destination: that connection would be freed
        // under the backup, and the next step would crash. So both
        // connections finish the backup before they close, and the loop
        // then stops with an error instead of stepping a finished backup.
        let backup = RunningBackup(handle)
        let sides = [(connection, "source"), (destination.connection, "destination")]
        for (side, name) in sides {
            side.closeHandlers[ObjectIdentifier(backup)] = { [backup] in backup.finish(closing: name) }
        }
        defer {
            for (side, _) in sides { side.closeHandlers[ObjectIdentifier(backup)] = nil }
            backup.finish(closing: nil)
        }

        let clock = ContinuousClock()
        var busySince: ContinuousClock.Instant?
        let pagesPerStep = Int32(clamping: options.pagesPerStep)
        while true {
            guard let step = backup.handle else {
                throw SQLiteError.misuse(
                    "the backup stopped: its \(backup.closedSide ?? "destination") database connection was closed "
                        + "during the copy")
            }
            let code = sqlite3_backup_step(step, pagesPerStep)
            let report = BackupProgress(
                remainingPageCount: Int(sqlite3_backup_remaining(step)),
                totalPageCount: Int(sqlite3_backup_pagecount(step)))
            switch code & 0xFF {
            case SQLITE_OK:
                busySince = nil
                try progress?(report)
                if backup.handle != nil { Self.pause(options.pauseBetweenSteps) }
            case SQLITE_DONE:
                let finish = backup.finish(closing: nil)
                guard finish == SQLITE_OK else {
                    throw SQLiteError.from(connection: target, code: finish, sql: nil)
                }
                let pageSize = try destination.fetchOne(Int.self, "PRAGMA page_size") ?? 0
                try progress?(report)
                return BackupResult(pageCount: report.totalPageCount, pageSize: pageSize)
            case SQLITE_BUSY, SQLITE_LOCKED:
                let now = clock.now
                let start = busySince ?? now
                busySince = start
                guard start.duration(to: now) < options.busyTimeout else {
                    backup.finish(closing: nil)
                    throw SQLiteError(
                        code: ResultCode(rawValue: code),
                        message: "the backup gave up after waiting \(options.busyTimeout) for a database that "
                            + "another connection keeps locked")
                }
                Self.pause(max(options.pauseBetweenSteps, .milliseconds(5)))
            default:
                backup.finish(closing: nil)
                throw SQLiteError.from(connection: target, code: code, sql: nil)
            }
        }
    }

    private static func pause(_ duration: Duration) {
        guard duration > .zero else { return }
        let (seconds, attoseconds) = duration.components
        Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// The file of the main database, or nil for an in-memory or temporary
    /// one.
    var mainFilePath: String? {
        guard let handle = sqliteConnection, let name = sqlite3_db_filename(handle, "main") else { return nil }
        let path = String(cString: name)
        return path.isEmpty ? nil : path
    }
}

/// A `sqlite3_backup` object between its init and its finish, which either
/// side's connection may end by closing.
private final class RunningBackup {
    private(set) var handle: OpaquePointer?
    /// "source" or "destination" once that connection closed mid-copy.
    private(set) var closedSide: String?

    init(_ handle: OpaquePointer) { self.handle = handle }

    /// Finishes the backup (once; later calls return `SQLITE_OK`), and
    /// records which connection's close ended it.
    @discardableResult
    func finish(closing side: String?) -> Int32 {
        guard let handle else { return SQLITE_OK }
        self.handle = nil
        closedSide = side
        return sqlite3_backup_finish(handle)
    }
}

// MARK: - Database to file

extension Database {
    /// Copies this database into a new file at `path` with SQLite's online
    /// backup (see ``backup(to:options:progress:)`` for steps, progress,
    /// cancellation and what the copy sees while others write).
    ///
    /// The file appears whole or not at all: the copy is written to a
    /// temporary file in the destination's directory, checked with
    /// `PRAGMA integrity_check`, flushed to disk, and only then given the
    /// destination's name. A failed or cancelled backup leaves nothing
    /// under that name.
    ///
    /// ```swift
    /// let result = try db.backup(toPath: "/backups/people.sqlite") { progress in
    ///     print(progress)                  // "120 of 480 pages"
    /// }
    /// print(result.byteCount)
    /// ```
    ///
    /// - Parameters:
    ///   - path: The copy's file. Its directory must exist.
    ///   - replace: Replace a regular file already at `path` (atomically:
    ///     the old file stays whole until the new one takes its name).
    ///     Without it, an existing file is an error and is left alone.
    ///   - options: Pages per step, the pause between steps and how long a
    ///     busy step is retried.
    ///   - progress: Called after each step; what it throws stops the
    ///     backup and leaves nothing at `path`.
    /// - Throws: ``BackupError`` for a destination that exists (without
    ///   `replace`), is unusable or is this database's own file, or a copy
    ///   that fails its integrity check; what
    ///   ``backup(to:options:progress:)`` throws.
    @discardableResult
    public func backup(
        toPath path: String, replace: Bool = false, options: BackupOptions = BackupOptions(),
        progress: ((BackupProgress) throws -> Void)? = nil
    ) throws -> BackupResult {
        guard !isClosed else { throw SQLiteError.misuse("cannot back up: the database connection is closed") }
        let staging = try BackupStaging(
            destination: path, replace: replace, sourceFile: mainFilePath, action: "back up to")
        defer { staging.discard() }
        let copy = try staging.openCopy()
        let result: BackupResult
        do {
            result = try backup(to: copy, options: options, progress: progress)
        } catch {
            copy.close()
            throw error
        }
        copy.close()
        try staging.publish()
        return result
    }

    /// Writes a compacted copy of this database into a new file at `path`
    /// (`VACUUM INTO`), without changing this one.
    ///
    /// The path is bound as a parameter (`VACUUM INTO ?`), so any file name
    /// works, quotes included. As with ``backup(toPath:replace:options:progress:)``,
    /// the copy is written beside the destination, checked with
    /// `integrity_check` and renamed into place only when complete.
    /// `VACUUM` cannot run inside a transaction.
    ///
    /// ```swift
    /// try db.vacuum(into: "/backups/people (compact).sqlite")
    /// ```
    ///
    /// - Parameters:
    ///   - path: The copy's file. Its directory must exist.
    ///   - replace: Replace a regular file already at `path`; without it,
    ///     an existing file is an error and is left alone.
    /// - Throws: ``BackupError`` as the backup does; ``SQLiteError`` when
    ///   SQLite cannot vacuum (inside a transaction, a full disk).
    public func vacuum(into path: String, replace: Bool = false) throws {
        guard !isClosed else { throw SQLiteError.misuse("cannot vacuum: the database connection is closed") }
        let staging = try BackupStaging(
            destination: path, replace: replace, sourceFile: mainFilePath, action: "vacuum into")
        defer { staging.discard() }
        // VACUUM INTO accepts an existing file only when it is empty, which
        // the freshly created temporary file is.
        try execute("VACUUM INTO ?", arguments: [staging.temporaryPath])
        try staging.publish()
    }
}
