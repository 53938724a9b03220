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
final class ConnectionSlot: @unchecked Sendable {
    /// Runs this connection's `async` accesses, off the Swift cooperative
    /// thread pool.
    let queue: DispatchQueue
    private let open: @Sendable () throws -> Database
    private var database: Database?

    /// A slot whose connection is opened by `open` on first use, or is
    /// `database` when one is given.
    init(label: String, database: Database? = nil, open: @escaping @Sendable () throws -> Database) {
        self.queue = DispatchQueue(label: label)
        self.database = database
        self.open = open
    }

    /// The connection, opened now if needed. Lease holder only.
    func connection() throws -> Database {
        if let database { return database }
        let database = try open()
        self.database = database
        return database
    }

    /// Closes the connection if it was opened. Only once the leases are
    /// drained.
    func close() {
        database?.close()
        database = nil
    }
}
