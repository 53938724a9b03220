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
    private let running = Locked<InterruptibleConnection?>(nil)

    /// Whether the task awaiting the access was cancelled.
    var isCancelled: Bool { cancelled.withLock { $0 } }

    /// Marks the access cancelled and interrupts its running statement.
    func cancel() {
        cancelled.withLock { $0 = true }
        running.withLock { connection in
            // Under the lock, so that the connection cannot be handed to
            // another access between this check and the interrupt.
            if let connection { sqlite3_interrupt(connection.handle) }
        }
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
        running.withLock { $0 = InterruptibleConnection(handle: handle) }
        defer {
            running.withLock { $0 = nil }
            sqlite3_progress_handler(handle, 0, nil, nil)
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

/// A `sqlite3*` handle that another thread may interrupt.
///
/// `@unchecked Sendable` because the handle is a C pointer. It is safe: the
/// only use from another thread is `sqlite3_interrupt`, which SQLite
/// documents as callable from any thread, and it is made only while the
/// access that owns the connection runs (``AccessCancellation`` clears it
/// under its lock before the access ends), so the connection is open.
struct InterruptibleConnection: @unchecked Sendable {
    let handle: OpaquePointer
}

/// SQLite's progress callback: a non-zero result interrupts the statement.
private func accessProgressHandler(_ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    let cancellation = Unmanaged<AccessCancellation>.fromOpaque(context).takeUnretainedValue()
    return cancellation.isCancelled ? 1 : 0
}
