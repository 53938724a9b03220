import Dispatch

/// One connection of a queue or pool, opened on first use, with the serial
/// dispatch queue that runs its `async` accesses.
///
/// `@unchecked Sendable` because it holds a `Database`, which is not
/// `Sendable`. It is safe because only the holder of the slot's lease
/// touches the database: ``ConnectionLeases`` lends each slot to one access
/// at a time, and every hand-over (release, then acquire) goes through the
/// leases' lock (then a semaphore or the dispatch queue that follows it), which
/// orders one holder's accesses before the next holder's. ``close()`` is
/// only called once the leases are drained, so no access holds the slot.
/// The one use from other threads, ``interrupt()``, goes through an
/// ``InterruptibleHandle``, which has its own lock.
final class ConnectionSlot: @unchecked Sendable {
    /// Runs this connection's `async` accesses, off the Swift cooperative
    /// thread pool.
    let queue: DispatchQueue
    private let open: @Sendable () throws -> Database
    private var database: Database?
    /// What to say when an access closed the connection and a new one
    /// cannot take its place (an in-memory database, gone with it); nil
    /// when a new connection to the same file is opened instead.
    private let lostConnectionMessage: String?
    /// The open connection's handle, for ``interrupt()`` from any thread.
    private let interruptible = InterruptibleHandle()
    /// What finds the connection stale, when the configuration has a check.
    private let staleness: StaleConnectionCheck?
    /// The open connection's check.
    private var freshness: ConnectionFreshness?

    /// A slot whose connection is opened by `open` on first use, or is
    /// `database` when one is given.
    ///
    /// - Parameters:
    ///   - lostConnectionMessage: nil when `open` gives a connection to the
    ///     same data, so that a connection closed by an access closure is
    ///     replaced; otherwise the message of the error every later access
    ///     throws.
    ///   - staleness: The configuration's check that replaces a connection
    ///     gone stale.
    init(
        label: String, database: Database? = nil, lostConnectionMessage: String? = nil,
        staleness: StaleConnectionCheck? = nil, open: @escaping @Sendable () throws -> Database
    ) {
        self.queue = DispatchQueue(label: label)
        self.database = database
        self.staleness = staleness
        if let database {
            interruptible.publish(database)
            freshness = staleness.map(ConnectionFreshness.init)
        }
        self.lostConnectionMessage = lostConnectionMessage
        self.open = open
    }

    /// The connection, opened now if needed. Lease holder only.
    ///
    /// A connection that an access closure closed (``Database/close()`` on
    /// the database it was lent) is replaced by a new one, or, when that
    /// would lose data, reported by a ``ResultCode/misuse`` error. So is
    /// one the configuration's ``StaleConnectionCheck`` finds stale.
    func connection() throws -> Database {
        if let database {
            if !database.isClosed {
                guard let reason = freshness?.staleReason(database) else { return database }
                staleness?.onReplace?(reason)
                database.close()
                self.database = nil
            } else if let lostConnectionMessage {
                throw SQLiteError.misuse(lostConnectionMessage)
            }
        }
        let database = try open()
        self.database = database
        interruptible.publish(database)
        freshness = staleness.map(ConnectionFreshness.init)
        return database
    }

    /// Interrupts the statements the connection is running, if it is open.
    /// Any thread.
    func interrupt() {
        interruptible.interrupt()
    }

    /// Closes the connection if it was opened. Only once the leases are
    /// drained.
    func close() {
        database?.close()
        database = nil
    }
}
