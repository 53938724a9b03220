/// One database connection shared safely between threads and tasks: every
/// access waits for its turn and runs alone.
///
/// ```swift
/// let queue = try DatabaseQueue(path: "people.sqlite")
/// try queue.write { db in
///     try db.execute("INSERT INTO people (name) VALUES (?)", arguments: ["Ada"])
/// }
/// let count = try await queue.read { db in
///     try db.fetchOne(Int.self, "SELECT COUNT(*) FROM people") ?? 0
/// }
/// ```
///
/// Use a queue when accesses are short or the database is in memory; use a
/// ``DatabasePool`` to let reads run while another access is in progress.
///
/// Accesses are served in the order they ask, synchronous and `async` ones
/// alike. Synchronous accesses run on the calling thread; `async` ones run
/// on a dispatch queue of the connection, so they never block the Swift
/// cooperative thread pool, and can be cancelled. Calling an access method
/// from inside an access closure of the same queue throws a
/// ``ResultCode/misuse`` error rather than deadlocking.
///
/// The queue owns its connection: an access whose closure calls
/// ``Database/close()`` throws a ``ResultCode/misuse`` error (a write is
/// rolled back), and the next access gets a new connection to the same
/// file. An in-memory or temporary database is gone with its connection,
/// so every later access of such a queue throws a ``ResultCode/misuse``
/// error saying so.
public final class DatabaseQueue: DatabaseWriter, ObservableWriter {
    /// The path the database was opened with.
    public let path: String
    /// The configuration of the connection.
    public let configuration: Configuration
    private let leases: ConnectionLeases
    private let runner: AccessRunner
    let observationCenter: ObservationCenter

    /// Opens (and by default creates) the database at `path`, as
    /// ``Database/init(path:configuration:)`` does, and shares its
    /// connection.
    public init(path: String, configuration: Configuration = Configuration()) throws {
        self.path = path
        self.configuration = configuration
        let database = try Database(path: path, configuration: configuration)
        let isPrivate =
            path.isEmpty || path == ":memory:" || path.hasPrefix("file::memory:") || path.contains("mode=memory")
        let slot = ConnectionSlot(
            label: "SQLiteStore.DatabaseQueue", database: database,
            lostConnectionMessage: isPrivate
                ? "the DatabaseQueue's connection was closed by an access closure, and its "
                    + "\(path.isEmpty ? "temporary" : "in-memory") database is gone with it; open a new queue"
                : nil,
            staleness: isPrivate ? nil : configuration.staleConnectionCheck
        ) {
            // Only reached if an access closure closed the connection, or
            // the configuration's check found it stale; a queue otherwise
            // keeps the one it opened until it is closed, after which
            // nothing opens again.
            try Database(path: path, configuration: configuration)
        }
        self.leases = ConnectionLeases(slots: [slot], ownerName: "database queue")
        let runner = AccessRunner(ownerName: "DatabaseQueue")
        observationCenter = ObservationCenter(
            writer: leases, readers: nil, runner: runner,
            pollingInterval: configuration.observationPollingInterval, ownerName: "database queue")
        self.runner = runner.observed(by: observationCenter)
    }

    /// A queue over a private in-memory database, gone when the queue closes.
    public static func inMemory(configuration: Configuration = Configuration()) throws -> DatabaseQueue {
        try DatabaseQueue(path: ":memory:", configuration: configuration)
    }

    // MARK: - Reading

    /// Runs `body` in a deferred transaction and returns its result,
    /// blocking the calling thread until the connection is free.
    ///
    /// A read must not write: a statement that would write throws
    /// ``ResultCode/readOnly`` before it runs, and statements that would end
    /// the read's transaction (`COMMIT`, `ROLLBACK`, `BEGIN`) throw
    /// ``ResultCode/misuse``. A change made some other way (through the C
    /// handle) is rolled back and the call throws ``ResultCode/readOnly``
    /// after `body` returns.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try runner.sync(leases, method: "read") { db in
            try db.readAccess(nil, enforcingReadOnly: true, body)
        }
    }

    /// Runs `body` like `read(_:)` on the connection's own
    /// thread; cancelling the task interrupts it with `CancellationError`.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await runner.async(leases, mayRunHere: true) { db, cancellation in
            try db.readAccess(cancellation, enforcingReadOnly: true, body)
        }
    }

    // MARK: - Writing

    /// Runs `body` in an immediate transaction, committed when it returns
    /// and rolled back when it throws.
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try runner.sync(leases, method: "write") { db in try db.writeAccess(nil, body) }
    }

    /// Runs `body` like `write(_:)` on the connection's own
    /// thread; cancelling the task interrupts it, rolls it back and throws
    /// `CancellationError`.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await runner.async(leases) { db, cancellation in try db.writeAccess(cancellation, body) }
    }

    /// Runs `body` outside any transaction (see
    /// `DatabaseWriter.writeWithoutTransaction(_:)`).
    public func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try runner.sync(leases, method: "writeWithoutTransaction") { db in
            try db.writeAccessWithoutTransaction(nil, body)
        }
    }

    /// Runs `body` outside any transaction on the connection's own thread.
    public func writeWithoutTransaction<T: Sendable>(
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await runner.async(leases) { db, cancellation in
            try db.writeAccessWithoutTransaction(cancellation, body)
        }
    }

    // MARK: - Interrupting

    /// Makes the statements the queue's connection is running right now
    /// stop as soon as possible. Safe to call from any thread or task, and
    /// while the queue closes.
    ///
    /// The interrupted access throws a ``SQLiteError`` with the code
    /// ``ResultCode/interrupt`` (unless its closure catches it); a write is
    /// rolled back. The queue stays usable.
    ///
    /// Only what runs at the moment of the call is affected, as with
    /// `sqlite3_interrupt`: a statement running then stops, and so does any
    /// statement the same connection starts before all of those have
    /// finished. An access that is waiting for its turn, or whose closure is
    /// between two statements, is not interrupted, and neither is any
    /// access that starts later. With nothing running the call does nothing.
    /// To stop one `async` access whenever it runs, cancel its task instead.
    public func interrupt() {
        leases.interruptConnections()
    }

    // MARK: - Closing

    /// Waits for the accesses already started or waiting, then closes the
    /// connection. Later accesses throw a ``ResultCode/misuse`` error.
    /// Throws that error too when called from inside an access closure.
    public func close() throws {
        try runner.close([leases])
        observationCenter.close()
    }

    /// Closes like `close()` without blocking a thread.
    public func close() async {
        await runner.close([leases])
        observationCenter.close()
    }

    /// How many accesses wait for the connection (for tests).
    var waitingCount: Int { leases.waitingCount }
    /// Whether closing has begun (for tests).
    var isClosing: Bool { leases.isClosing }
}
