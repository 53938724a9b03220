#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// The cancellation state of one `async` access, shared between the task
/// that awaits it and the thread that runs it.
///
/// When the task is cancelled, ``cancel()`` marks the access cancelled and,
/// if the access closure is running, calls `sqlite3_interrupt` so that the
/// running statement stops at once. `sqlite3_interrupt` does nothing when no
/// statement is running at the moment it is called, so a progress handler
/// installed for the duration of the closure also checks the mark every few
/// hundred virtual-machine instructions: a statement started just after the
/// cancellation stops too. Between statements the closure runs on; the
/// access checks the mark when the closure returns and turns the outcome
/// into a `CancellationError` (rolling back a write).
final class AccessCancellation: Sendable {
    /// How many SQLite virtual-machine instructions run between two checks
    /// of the mark: small enough to stop within microseconds, large enough
    /// to cost nothing measurable.
    static let progressInterval: Int32 = 500

    /// The mark. A lock, not an atomic, so that the package does not need
    /// the `Synchronization` module (macOS 15, iOS 18); the progress handler
    /// takes it every few hundred instructions, uncontended but for the
    /// moment of a cancellation.
    private let cancelled = Locked(false)
    /// The connection running the access closure, while it runs.
    private let running = InterruptibleHandle()

    /// Whether the task awaiting the access was cancelled.
    var isCancelled: Bool { cancelled.withLock { $0 } }

    /// Marks the access cancelled and interrupts its running statement.
    func cancel() {
        cancelled.withLock { $0 = true }
        // Under the handle's lock, so that the connection cannot be handed
        // to another access, nor closed, between the check and the interrupt.
        running.interrupt()
    }

    /// Runs a whole access on `db`, its `BEGIN` included, so that a
    /// cancellation also ends a wait for another connection's lock: such a
    /// statement runs no instructions for the progress handler to stop, so
    /// the connection's busy handler checks the mark instead. A statement
    /// that gave up waiting because of the cancellation fails with
    /// ``ResultCode/busy``, turned here into `CancellationError`.
    func endingLockWaits<T>(on db: Database, _ body: () throws -> T) throws -> T {
        guard let waiter = db.connection.busyWaiter else { return try body() }
        waiter.cancellation = self
        defer { waiter.cancellation = nil }
        do {
            return try body()
        } catch {
            try check()
            throw error
        }
    }

    /// Throws `CancellationError` if the access was cancelled.
    func check() throws {
        if isCancelled { throw CancellationError() }
    }

    /// Runs an access closure on `db`, interruptible by ``cancel()``.
    ///
    /// Throws `CancellationError` without running `body` when the access
    /// was already cancelled, and in place of any error `body` throws once
    /// the access is cancelled (typically `SQLITE_INTERRUPT`).
    func interruptible<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        guard let handle = db.sqliteConnection else { return try body() }
        // Installed before the mark is first checked: a cancellation that
        // comes after the check is caught by the handler.
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_progress_handler(handle, Self.progressInterval, accessProgressHandler, context)
        running.publish(db)
        defer {
            running.withdraw(from: db)
            if !db.isClosed { sqlite3_progress_handler(handle, 0, nil, nil) }
        }
        do {
            try check()
            return try body()
        } catch {
            try check()
            throw error
        }
    }
}

/// The `sqlite3*` handle of a connection, published so that other threads
/// may interrupt it: the only safe use of a connection from a thread that
/// does not own it.
///
/// The handle is read and interrupted under a lock, and cleared under the
/// same lock just before the connection closes (a close handler of the
/// connection, so a close by an access closure counts too), so
/// ``interrupt()`` never reaches a closed handle. A connection's owner
/// publishes and withdraws it; any thread interrupts.
final class InterruptibleHandle: Sendable {
    private let handle = Locked<InterruptibleConnection?>(nil)

    /// Publishes `db`'s handle until `db` closes or ``withdraw(from:)``.
    /// Only on the thread that owns `db`.
    func publish(_ db: Database) {
        guard let raw = db.sqliteConnection else { return }
        handle.withLock { $0 = InterruptibleConnection(handle: raw) }
        db.connection.closeHandlers[ObjectIdentifier(self)] = { [handle] in
            handle.withLock { $0 = nil }
        }
    }

    /// Stops publishing `db`'s handle. Only on the thread that owns `db`.
    func withdraw(from db: Database) {
        handle.withLock { $0 = nil }
        db.connection.closeHandlers[ObjectIdentifier(self)] = nil
    }

    /// Calls `sqlite3_interrupt` on the published handle, if any. Any thread.
    func interrupt() {
        handle.withLock { connection in
            if let connection { sqlite3_interrupt(connection.handle) }
        }
    }
}

/// A `sqlite3*` handle that another thread may interrupt.
///
/// `@unchecked Sendable` because the handle is a C pointer. It is safe: the
/// only use from another thread is `sqlite3_interrupt`, which SQLite
/// documents as callable from any thread, and only under the lock of an
/// ``InterruptibleHandle``, which clears it before the connection closes.
struct InterruptibleConnection: @unchecked Sendable {
    let handle: OpaquePointer
}

/// SQLite's progress callback: a non-zero result interrupts the statement.
private func accessProgressHandler(_ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    let cancellation = Unmanaged<AccessCancellation>.fromOpaque(context).takeUnretainedValue()
    return cancellation.isCancelled ? 1 : 0
}
