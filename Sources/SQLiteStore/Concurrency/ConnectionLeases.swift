import Dispatch

/// Lends a fixed set of connections, each to one access at a time, in the
/// order the accesses asked for them.
///
/// Synchronous accesses block their thread until a connection is theirs.
/// `async` accesses do not wait on a thread: they leave a ``LeaseJob`` in
/// line, and the connection is handed to the job by whoever releases it, on
/// the connection's own dispatch queue. The awaiting task therefore needs no
/// thread of the cooperative pool until its access is over, so synchronous
/// callers blocking cooperative threads cannot starve it of the connection
/// they wait for.
///
/// Closing happens in three steps: ``beginClose()`` refuses new accesses,
/// ``waitUntilDrained()`` waits until every access already accepted is over,
/// and ``closeConnections()`` closes the connections.
final class ConnectionLeases: Sendable {
    /// What is waiting for a connection.
    private enum Waiter {
        case thread(ThreadWaiter)
        case job(LeaseJob)
    }

    /// What is waiting for the leases to drain.
    private enum DrainWaiter {
        case thread(DispatchSemaphore)
        case task(CheckedContinuation<Void, Never>)

        func resume() {
            switch self {
            case .thread(let semaphore): semaphore.signal()
            case .task(let continuation): continuation.resume()
            }
        }
    }

    private struct State {
        /// Connections nobody holds, the most recently used last.
        var idle: [ConnectionSlot]
        /// Accesses waiting, first come first served. Only non-empty while
        /// `idle` is empty.
        var waiters: [Waiter] = []
        var leasedCount = 0
        var isClosing = false
        var isClosed = false
        var drainWaiters: [DrainWaiter] = []

        var isDrained: Bool { leasedCount == 0 && waiters.isEmpty }

        /// Leases the most recently used idle connection, if any.
        mutating func leaseIdle() -> ConnectionSlot? {
            guard let slot = idle.popLast() else { return nil }
            leasedCount += 1
            return slot
        }
    }

    /// Every connection, opened or not.
    let slots: [ConnectionSlot]
    /// Names the owner in errors: "database queue", "database pool".
    private let ownerName: String
    private let state: Locked<State>

    init(slots: [ConnectionSlot], ownerName: String) {
        precondition(!slots.isEmpty, "leases need at least one connection")
        self.slots = slots
        self.ownerName = ownerName
        // Reversed so that the first slot is used first.
        self.state = Locked(State(idle: slots.reversed()))
    }

    private var closedError: SQLiteError {
        SQLiteError.misuse("the \(ownerName) is closed")
    }

    // MARK: - Synchronous accesses

    /// Blocks until a connection is free, and returns it. Release it with
    /// ``release(_:)``.
    ///
    /// - Parameter whileClosing: serve the request after ``beginClose()``,
    ///   for the second half of an access that was accepted before it.
    func acquire(whileClosing: Bool = false) throws -> ConnectionSlot {
        enum Outcome {
            case acquired(ConnectionSlot)
            case waiting(ThreadWaiter)
        }
        let outcome = try state.withLock { state -> Outcome in
            if state.isClosed || (state.isClosing && !whileClosing) { throw closedError }
            if let slot = state.leaseIdle() {
                return .acquired(slot)
            }
            let waiter = ThreadWaiter()
            state.waiters.append(.thread(waiter))
            return .waiting(waiter)
        }
        switch outcome {
        case .acquired(let slot): return slot
        case .waiting(let waiter): return waiter.wait()
        }
    }

    /// A connection if one is free now, without waiting (nil when every
    /// one is leased, so that an access that cannot wait goes in line);
    /// throws when the leases are closing. Release it with ``release(_:)``.
    func acquireIfIdle() throws -> ConnectionSlot? {
        try state.withLock { state -> ConnectionSlot? in
            if state.isClosed || state.isClosing { throw closedError }
            return state.leaseIdle()
        }
    }

    /// Gives a connection back: to the next waiting access, or to the idle
    /// ones.
    func release(_ slot: ConnectionSlot) {
        enum Next {
            case thread(ThreadWaiter)
            case job(LeaseJob)
            case drained([DrainWaiter])
            case nothing
        }
        let next = state.withLock { state -> Next in
            if !state.waiters.isEmpty {
                switch state.waiters.removeFirst() {
                case .thread(let waiter): return .thread(waiter)
                case .job(let job): return .job(job)
                }
            }
            state.leasedCount -= 1
            state.idle.append(slot)
            if state.isClosing && state.isDrained {
                defer { state.drainWaiters = [] }
                return .drained(state.drainWaiters)
            }
            return .nothing
        }
        switch next {
        case .thread(let waiter): waiter.hand(slot)
        case .job(let job): start(job, on: slot)
        case .drained(let waiters): waiters.forEach { $0.resume() }
        case .nothing: break
        }
    }

    // MARK: - Asynchronous accesses

    /// Starts `job` on a free connection's queue, or puts it in line. Fails
    /// the job at once when the leases are closing or the job is cancelled.
    func schedule(_ job: LeaseJob, whileClosing: Bool = false) {
        enum Outcome {
            case start(ConnectionSlot)
            case fail(any Error)
            case queued
        }
        let outcome = state.withLock { state -> Outcome in
            if state.isClosed || (state.isClosing && !whileClosing) { return .fail(closedError) }
            if job.cancellation.isCancelled { return .fail(CancellationError()) }
            if let slot = state.leaseIdle() {
                return .start(slot)
            }
            state.waiters.append(.job(job))
            return .queued
        }
        switch outcome {
        case .start(let slot): start(job, on: slot)
        case .fail(let error): job.fail(error)
        case .queued: break
        }
    }

    /// Takes the jobs of a cancelled access out of line and fails them with
    /// `CancellationError`. Jobs already running are left alone; their
    /// ``AccessCancellation`` stops them.
    func withdraw(_ cancellation: AccessCancellation) {
        let withdrawn = state.withLock { state -> [LeaseJob] in
            var withdrawn: [LeaseJob] = []
            state.waiters.removeAll { waiter in
                guard case .job(let job) = waiter, job.cancellation === cancellation else { return false }
                withdrawn.append(job)
                return true
            }
            // Waiters only exist while every connection is leased, so
            // removing some cannot drain the leases.
            return withdrawn
        }
        for job in withdrawn { job.fail(CancellationError()) }
    }

    private func start(_ job: LeaseJob, on slot: ConnectionSlot) {
        slot.queue.async { job.start(slot) }
    }

    // MARK: - Closing

    /// Refuses every access asked for from now on (except the second half
    /// of accepted ones). Those already accepted, running or in line, go on.
    func beginClose() {
        state.withLock { $0.isClosing = true }
    }

    /// Blocks until no access holds or waits for a connection. Only after
    /// ``beginClose()``.
    func waitUntilDrained() {
        let semaphore = DispatchSemaphore(value: 0)
        let isDrained = state.withLock { state -> Bool in
            if state.isDrained { return true }
            state.drainWaiters.append(.thread(semaphore))
            return false
        }
        if !isDrained { semaphore.wait() }
    }

    /// Suspends until no access holds or waits for a connection. Only after
    /// ``beginClose()``.
    func waitUntilDrained() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isDrained = state.withLock { state -> Bool in
                if state.isDrained { return true }
                state.drainWaiters.append(.task(continuation))
                return false
            }
            if isDrained { continuation.resume() }
        }
    }

    /// Closes every connection. Only once drained; later accesses throw.
    func closeConnections() {
        let shouldClose = state.withLock { state -> Bool in
            defer { state.isClosed = true }
            return !state.isClosed
        }
        guard shouldClose else { return }
        for slot in slots { slot.close() }
    }

    /// Interrupts the statements every open connection is running. Any
    /// thread.
    func interruptConnections() {
        for slot in slots { slot.interrupt() }
    }

    // MARK: - For tests

    /// How many accesses wait for a connection.
    var waitingCount: Int { state.withLock { $0.waiters.count } }

    /// Whether ``beginClose()`` was called.
    var isClosing: Bool { state.withLock { $0.isClosing } }
}

/// A thread blocked until a connection is handed to it.
private final class ThreadWaiter: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let slot = Locked<ConnectionSlot?>(nil)

    func hand(_ slot: ConnectionSlot) {
        self.slot.withLock { $0 = slot }
        semaphore.signal()
    }

    func wait() -> ConnectionSlot {
        semaphore.wait()
        guard let slot = slot.withLock({ $0 }) else {
            preconditionFailure("a waiting thread was woken without a connection")
        }
        return slot
    }
}

/// The work of an `async` access, waiting for a connection.
///
/// Exactly one of ``start`` and ``fail`` is called, once: the leases take
/// the job out of line (under their lock) before calling either.
final class LeaseJob: Sendable {
    let cancellation: AccessCancellation
    /// Runs on the connection's queue. Must release the slot.
    let start: @Sendable (ConnectionSlot) -> Void
    /// Reports that the job will never run.
    let fail: @Sendable (any Error) -> Void

    init(
        cancellation: AccessCancellation, start: @escaping @Sendable (ConnectionSlot) -> Void,
        fail: @escaping @Sendable (any Error) -> Void
    ) {
        self.cancellation = cancellation
        self.start = start
        self.fail = fail
    }
}
