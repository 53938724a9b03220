/// How a ``Database`` connection is opened and set up.
///
/// ```swift
/// var configuration = Configuration()
/// configuration.journalMode = .wal
/// configuration.busyTimeout = .seconds(10)
/// let db = try Database(path: path, configuration: configuration)
/// ```
public struct Configuration: Sendable {
    /// Open the database read-only: every write fails with
    /// ``ResultCode/readOnly``. The file must exist. A file that the
    /// process may not write opens read-only without it.
    public var isReadOnly = false

    /// Create the file when it does not exist (the default). When false,
    /// opening a missing file fails with ``ResultCode/cantOpen``.
    public var createsMissingFile = true

    /// How long a statement waits for another connection's lock before it
    /// fails with ``ResultCode/busy``. Five seconds by default; zero fails
    /// at once.
    ///
    /// While it waits, the connection tries again after short random
    /// pauses that get shorter the longer it has waited (from at most 20 ms
    /// down to 2 ms), so that under sustained contention, even from other
    /// processes, the connections that have waited longest are the likeliest
    /// to get the lock next. An `async` access of a queue or pool that is
    /// cancelled stops waiting at once. Setting `PRAGMA busy_timeout` on
    /// the connection replaces this with SQLite's own handler.
    public var busyTimeout: Duration = .seconds(5)

    /// Enforce foreign keys (`PRAGMA foreign_keys`). On by default; SQLite's
    /// own default is off.
    public var foreignKeysEnabled = true

    /// The journal mode to set when the connection opens; nil keeps the
    /// file's mode (`delete` for a new file). A read-only connection (this
    /// option, or a file the process may not write) keeps the file's mode
    /// too: setting it would be a write.
    public var journalMode: JournalMode?

    /// How often the connection waits for the disk (`PRAGMA synchronous`)
    /// when it commits; nil keeps SQLite's default, ``SynchronousMode/full``.
    ///
    /// With ``JournalMode/wal``, ``SynchronousMode/normal`` commits without
    /// waiting for the disk and syncs the log at each checkpoint instead: a
    /// committed transaction survives the process crashing or being killed,
    /// but the last ones before a power failure or an operating-system crash
    /// may roll back. The file is never corrupted either way. Writes that
    /// each commit on their own get several times faster; choose it when
    /// losing the last second of writes to a power cut is acceptable (or the
    /// database is replicated), and keep the default when it is not.
    public var synchronous: SynchronousMode?

    /// Whether a ``DatabasePool``'s writes share their waits for the disk
    /// (group commit). Off by default; ignored by ``DatabaseQueue``.
    ///
    /// When on, the pool's writer commits without waiting for the disk (as
    /// ``SynchronousMode/normal``, whatever ``synchronous`` says), and each
    /// write method of the pool returns only after a sync of the
    /// write-ahead log that covers every commit made before its access
    /// ended (its own, and any other it could have read); writes that end
    /// while a sync runs share the next one, which runs beside the next
    /// writes rather than holding up the writer. A write access that
    /// committed nothing (it only read, or rolled back) waits for no sync
    /// of its own: only for the one covering the commits before it, if
    /// that is still running. The pool counts the commits with the
    /// writer's WAL hook (`sqlite3_wal_hook`), which also runs the
    /// automatic checkpoints (``automaticCheckpointFrames``): do not
    /// install another WAL hook on the writer, nor run
    /// `PRAGMA wal_autocheckpoint` on it, which would replace it. A write that returned
    /// survives a power failure, as with ``SynchronousMode/full``, and many
    /// writers at once wait for the disk once per group instead of once
    /// each: several times the commits per second on a disk whose sync is
    /// slow.
    ///
    /// The difference from ``SynchronousMode/full``: a commit is visible to
    /// readers (and observers) as soon as it is in the log, before its
    /// sync, so a reader may see a write that a power failure in the next
    /// milliseconds would undo, and whose writer was not yet answered. A
    /// failed sync fails the writes waiting for it and every later write of
    /// the pool (their commits are in the log, but the disk's state is not
    /// known): reopen the pool.
    public var groupCommit = false

    /// After how many frames in the write-ahead log a commit of this
    /// connection checkpoints it (`PRAGMA wal_autocheckpoint`, always a
    /// PASSIVE checkpoint); nil keeps SQLite's default, 1,000 pages. Zero
    /// switches automatic checkpoints off: set it when another program
    /// checkpoints the database instead, such as Litestream while it
    /// replicates (its documentation advises applications under write load
    /// to leave checkpoints to it, so that they do not race it).
    public var automaticCheckpointFrames: Int?

    /// How many prepared statements ``Database/cachedStatement(_:)`` keeps.
    public var statementCacheCapacity = 256

    /// Whether ``SQLiteError/description`` includes the statement's
    /// arguments. Off by default: arguments may hold private data.
    public var includesArgumentsInErrors = false

    /// A function that receives every statement the connection runs (see
    /// ``Database/trace(options:_:)``).
    public var trace: (@Sendable (TraceEvent) -> Void)?

    /// What ``trace`` receives.
    public var traceOptions: TraceOptions = .statements

    /// Runs on every new connection after it is set up, for custom pragmas,
    /// functions or collations.
    public var prepareDatabase: (@Sendable (Database) throws -> Void)?

    /// A name for the connection, used in messages.
    public var label: String?

    /// The name of a registered SQLite VFS (`sqlite3_vfs_register`) to open
    /// the database with, such as `"unix-excl"`; nil for the default one.
    /// Opening fails with ``ResultCode/error`` (`no such vfs`) when no VFS
    /// of that name is registered.
    public var vfs: String?

    /// How often a ``DatabaseQueue`` or ``DatabasePool`` with active value
    /// observations checks whether another connection or process committed
    /// a change (`PRAGMA data_version` on its writer connection): the
    /// longest such a change waits before the observations refetch, plus
    /// the time to get the writer. A quarter of a second by default; there
    /// is no polling while nothing is observed. The writer's own commits
    /// are seen at once, without polling.
    public var observationPollingInterval: Duration = .milliseconds(250)

    /// A check that a ``DatabaseQueue`` or ``DatabasePool`` runs on a
    /// connection before lending it to an access (at most once per the
    /// check's interval), replacing the connection when it finds it stale;
    /// nil (the default) for none. For VFSes that follow a database living
    /// elsewhere: see ``StaleConnectionCheck``.
    public var staleConnectionCheck: StaleConnectionCheck?

    /// The default configuration.
    public init() {}

    var busyTimeoutMilliseconds: Int32 {
        let (seconds, attoseconds) = busyTimeout.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(0, milliseconds))
    }
}

/// SQLite's journal modes (`PRAGMA journal_mode`).
public enum JournalMode: String, Sendable, CaseIterable {
    /// Rollback journal deleted at the end of each transaction.
    case delete
    /// Rollback journal truncated instead of deleted.
    case truncate
    /// Rollback journal kept, its header zeroed.
    case persist
    /// Rollback journal in memory.
    case memory
    /// Write-ahead log: readers do not block the writer nor the writer readers.
    case wal
    /// No journal: no rollback and no atomic commit.
    case off
}

/// How often SQLite waits for the disk when it commits (`PRAGMA synchronous`).
///
/// See ``Configuration/synchronous`` for what each costs and keeps.
public enum SynchronousMode: String, Sendable, CaseIterable {
    /// Never waits: a crash of the operating system or a power failure can
    /// corrupt the file. Only for data that can be rebuilt.
    case off
    /// With a write-ahead log, waits only at checkpoints: durable against the
    /// process dying, not against a power failure. With a rollback journal,
    /// waits less often than `full`.
    case normal
    /// Waits at every commit (SQLite's default): a commit that returned
    /// survives a power failure.
    case full
    /// Like `full`, and also syncs the directory after a rollback journal is
    /// deleted.
    case extra
}
