#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// Identifies one queue or pool, for ``ReentrancyGuard``.
final class AccessOwner: Sendable {}

/// The ways into a queue's or pool's connections, shared by both: refusing
/// re-entrant use, leasing a connection, and for `async` accesses running
/// the work on the connection's dispatch queue with cancellation.
struct AccessRunner: Sendable {
    private let owner = AccessOwner()
    /// The type's name for messages: "DatabaseQueue", "DatabasePool".
    let ownerName: String
    /// The queue's or pool's observation center, told before and after each
    /// access so that commits reach observers; nil in the center's own copy.
    private var center: ObservationCenter?

    init(ownerName: String) {
        self.ownerName = ownerName
    }

    /// This runner, same owner, telling `center` about every access.
    func observed(by center: ObservationCenter) -> AccessRunner {
        var runner = self
        runner.center = center
        return runner
    }

    /// Runs `body` marked as inside an access of this owner.
    func withReentrancyGuard<T>(_ body: () throws -> T) rethrows -> T {
        try ReentrancyGuard.withAccess(of: ownerID, body)
    }

    private var ownerID: ObjectIdentifier { ObjectIdentifier(owner) }

    /// Throws when the current thread is inside an access closure of the
    /// same queue or pool, where waiting for a connection could deadlock.
    func checkNotReentrant(_ method: String) throws {
        guard ReentrancyGuard.isInsideAccess(of: ownerID) else { return }
        throw SQLiteError.misuse(
            "\(ownerName).\(method) was called from inside one of the same \(ownerName)'s access closures, "
                + "which could deadlock; use the Database that the closure received")
    }

    /// A synchronous access: blocks until a connection is free, runs `body`
    /// on the calling thread.
    func sync<T>(_ leases: ConnectionLeases, method: String, _ body: (Database) throws -> T) throws -> T {
        try checkNotReentrant(method)
        let slot = try leases.acquire()
        defer { leases.release(slot) }
        return try run(on: slot, body)
    }

    /// Runs `body` on a slot's connection, marked as an access of this owner.
    ///
    /// An access whose closure closed the connection throws: its
    /// transaction, if any, was rolled back by the close, and the slot
    /// replaces the connection for the next access (see
    /// ``ConnectionSlot/connection()``).
    func run<T>(on slot: ConnectionSlot, _ body: (Database) throws -> T) throws -> T {
        let db = try slot.connection()
        center?.willAccess(db, on: slot)
        // The observers hear about a commit even when the closure throws
        // after it (writeWithoutTransaction).
        let result = Result { try ReentrancyGuard.withAccess(of: ownerID) { try body(db) } }
        if db.isClosed {
            // The closure's own error, when it threw one, says more.
            if case .failure(let error) = result { throw error }
            throw SQLiteError.misuse(
                "an access closure closed the Database it was given; the \(ownerName) owns its connections "
                    + "(call its close() to close them)")
        }
        center?.didAccess(db, on: slot)
        return try result.get()
    }

    /// An `async` access: waits in line without holding a thread, runs
    /// `body` on the connection's dispatch queue, and interrupts it when the
    /// task is cancelled.
    ///
    /// With `mayRunHere`, inside ``CallingThreadReads/$areAllowed``, an
    /// access that finds a connection free runs `body` at once on the
    /// calling thread instead, sparing two thread switches.
    func async<T: Sendable>(
        _ leases: ConnectionLeases, mayRunHere: Bool = false,
        _ body: @escaping @Sendable (Database, AccessCancellation) throws -> T
    ) async throws -> T {
        if mayRunHere, CallingThreadReads.areAllowed, let slot = try leases.acquireIfIdle() {
            defer { leases.release(slot) }
            let cancellation = AccessCancellation()
            return try await withTaskCancellationHandler {
                try Task.checkCancellation()
                return try run(on: slot) { db in try body(db, cancellation) }
            } onCancel: {
                cancellation.cancel()
            }
        }
        return try await withCancellation(withdrawingFrom: [leases]) { cancellation, continuation in
            let job = LeaseJob(
                cancellation: cancellation,
                start: { slot in
                    let result = Result { try run(on: slot) { db in try body(db, cancellation) } }
                    leases.release(slot)
                    continuation.resume(with: result)
                },
                fail: { error in continuation.resume(throwing: error) })
            leases.schedule(job)
        }
    }

    /// Creates the cancellation of an `async` access and hands it, with the
    /// continuation to resume, to `submit`. When the task is cancelled, the
    /// access's jobs still in line at `leases` are withdrawn and its running
    /// statement is interrupted. A task cancelled before the call throws
    /// `CancellationError` without submitting anything.
    func withCancellation<T: Sendable>(
        withdrawingFrom leases: [ConnectionLeases],
        _ submit: (AccessCancellation, CheckedContinuation<T, any Error>) -> Void
    ) async throws -> T {
        try Task.checkCancellation()
        let cancellation = AccessCancellation()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                submit(cancellation, continuation)
            }
        } onCancel: {
            cancellation.cancel()
            for lease in leases { lease.withdraw(cancellation) }
        }
    }

    /// Closes: refuses new accesses, waits for accepted ones (in the order
    /// of `leases`), then closes every connection in the reverse order. A
    /// pool lists its writer first: it closes last, when no reader is left,
    /// so that SQLite can checkpoint the WAL into the database file and
    /// delete it.
    func close(_ leases: [ConnectionLeases]) throws {
        try checkNotReentrant("close")
        for lease in leases { lease.beginClose() }
        for lease in leases { lease.waitUntilDrained() }
        for lease in leases.reversed() { lease.closeConnections() }
    }

    /// Closes without blocking a thread; see ``close(_:)``.
    func close(_ leases: [ConnectionLeases]) async {
        for lease in leases { lease.beginClose() }
        for lease in leases { await lease.waitUntilDrained() }
        for lease in leases.reversed() { lease.closeConnections() }
    }
}

// MARK: - What an access does on its connection

extension Database {
    /// Runs the closure of a write access in an immediate transaction, so
    /// that the write lock is taken (waiting up to the busy timeout) before
    /// anything runs: the closure cannot fail half-way with `SQLITE_BUSY`.
    /// Rolled back when the closure throws or its access is cancelled.
    func writeAccess<T>(_ cancellation: AccessCancellation?, _ body: (Database) throws -> T) throws -> T {
        try endingLockWaits(cancellation) {
            try transaction(.immediate) { db in
                let value = try db.accessBody(cancellation, body)
                try cancellation?.check()
                return value
            }
        }
    }

    /// Runs the closure of a write access as is. A transaction it leaves
    /// open is rolled back, so that the next access finds the connection
    /// clean, and reported as an error.
    func writeAccessWithoutTransaction<T>(
        _ cancellation: AccessCancellation?, _ body: (Database) throws -> T
    ) throws -> T {
        let value: T
        do {
            value = try endingLockWaits(cancellation) { try accessBody(cancellation, body) }
        } catch {
            if isInsideTransaction { try? execute("ROLLBACK TRANSACTION") }
            throw error
        }
        if isInsideTransaction {
            try execute("ROLLBACK TRANSACTION")
            throw SQLiteError.misuse(
                "writeWithoutTransaction's closure returned with a transaction open; it was rolled back")
        }
        return value
    }

    /// Runs the closure of a read access in a deferred transaction: the
    /// closure sees one committed snapshot, taken at its first read, for
    /// its whole duration.
    ///
    /// - Parameters:
    /// Every statement that would write is refused with
    /// ``ResultCode/readOnly`` before it runs (see
    /// ``Statement/checkWriteAllowed()``), and statements that end the
    /// transaction (`COMMIT`, `ROLLBACK`, ...) are refused as in any
    /// transaction closure, so a read cannot commit anything. Neither
    /// `PRAGMA query_only` nor an authorizer is used: switching either
    /// expires every prepared statement of the connection, which would
    /// re-prepare the whole statement cache on each access.
    ///
    /// - Parameters:
    ///   - enforcingReadOnly: for a connection that also writes, also roll
    ///     back and throw ``ResultCode/readOnly`` when the closure wrote
    ///     some other way (through the C handle).
    ///   - afterSnapshot: when given, the snapshot is taken at once, before
    ///     the closure runs, and then `afterSnapshot` is called.
    func readAccess<T>(
        _ cancellation: AccessCancellation?, enforcingReadOnly: Bool, afterSnapshot: (() -> Void)? = nil,
        _ body: (Database) throws -> T
    ) throws -> T {
        try endingLockWaits(cancellation) { try readTransaction(cancellation, enforcingReadOnly, afterSnapshot, body) }
    }

    private func readTransaction<T>(
        _ cancellation: AccessCancellation?, _ enforcingReadOnly: Bool, _ afterSnapshot: (() -> Void)?,
        _ body: (Database) throws -> T
    ) throws -> T {
        try transaction(.deferred) { db in
            let wasReadOnly = db.connection.isReadOnlyAccess
            db.connection.isReadOnlyAccess = true
            defer { db.connection.isReadOnlyAccess = wasReadOnly }
            if let afterSnapshot {
                // Reading starts the read transaction: its snapshot is the
                // database as committed now.
                _ = try db.fetchOne(Int.self, "SELECT 1 FROM sqlite_master LIMIT 1")
                afterSnapshot()
            }
            let value = try db.accessBody(cancellation, body)
            try cancellation?.check()
            if enforcingReadOnly, let handle = db.sqliteConnection, sqlite3_txn_state(handle, nil) == SQLITE_TXN_WRITE {
                throw SQLiteError(
                    code: .readOnly,
                    message: "a read access cannot write; its changes were rolled back (use write for changes)")
            }
            return value
        }
    }

    /// Runs a whole access so that cancelling it also ends a wait for
    /// another connection's lock.
    private func endingLockWaits<T>(_ cancellation: AccessCancellation?, _ body: () throws -> T) throws -> T {
        guard let cancellation else { return try body() }
        return try cancellation.endingLockWaits(on: self, body)
    }

    /// Runs the user's closure of an access, interruptible when the access
    /// is `async`.
    private func accessBody<T>(_ cancellation: AccessCancellation?, _ body: (Database) throws -> T) throws -> T {
        guard let cancellation else { return try body(self) }
        return try cancellation.interruptible(self) { try body(self) }
    }
}
