import Dispatch

/// The observation machinery of one ``DatabaseQueue`` or ``DatabasePool``:
/// its observers, the refetches that follow its commits, and the polling
/// that notices other connections' commits.
///
/// After each access of the writer connection that committed a change of
/// an observed region (or noticed another connection's commit), while the
/// access still holds the writer:
/// - a queue refetches the values there, in one read transaction, before
///   the next access starts;
/// - a pool takes a reader, starts its read transaction (its snapshot is
///   then exactly the database the writer committed), releases the writer
///   and refetches on the reader. Values from several refetches are
///   delivered in the order of their commits, an older one never after a
///   newer one.
final class ObservationCenter: Sendable {
    let tracker = ChangeTracker()
    private let writer: ConnectionLeases
    /// The pool's readers; nil for a queue, which refetches on its one
    /// connection.
    private let readers: ConnectionLeases?
    /// Runs accesses of the same owner, for reentrancy checks (without this
    /// center, so that it holds no reference to itself).
    private let runner: AccessRunner
    /// How often other connections' commits are looked for.
    let pollingInterval: Duration
    private let ownerName: String

    private struct State {
        var sequence: UInt64 = 0
        var polling: Task<Void, Never>?
        var isClosed = false
    }

    private let state = Locked(State())

    init(
        writer: ConnectionLeases, readers: ConnectionLeases?, runner: AccessRunner, pollingInterval: Duration,
        ownerName: String
    ) {
        self.writer = writer
        self.readers = readers
        self.runner = runner
        self.pollingInterval = pollingInterval
        self.ownerName = ownerName
    }

    deinit {
        state.withLock { $0.polling?.cancel() }
    }

    private var writerSlot: ConnectionSlot { writer.slots[0] }

    // MARK: - Around the writer's accesses

    /// Before an access: installs the hooks on the writer connection once
    /// something is observed.
    func willAccess(_ db: Database, on slot: ConnectionSlot) {
        guard slot === writerSlot, db.connection.changeRecorder == nil, tracker.isActive else { return }
        db.installChangeRecorder(tracker)
    }

    /// After an access, the writer still held: refetches what the access's
    /// commits (or another connection's) changed.
    func didAccess(_ db: Database, on slot: ConnectionSlot) {
        guard slot === writerSlot, let recorder = db.connection.changeRecorder else { return }
        recorder.statementDidEnd()
        guard recorder.needsRefetch else { return }
        recorder.needsRefetch = false
        let dirty = tracker.takeDirty().compactMap { $0 as? any RefetchingObserver }
        guard !dirty.isEmpty else { return }
        let sequence = state.withLock { state -> UInt64 in
            state.sequence += 1
            return state.sequence
        }
        if let readers {
            refetchOnReader(dirty, sequence: sequence, readers: readers)
        } else {
            refetch(dirty, on: db, sequence: sequence)
        }
    }

    /// A queue's refetch, on its connection, after the write.
    private func refetch(_ observers: [any RefetchingObserver], on db: Database, sequence: UInt64) {
        do {
            try runner.withReentrancyGuard {
                try db.readAccess(nil, enforcingReadOnly: true) { db in
                    for observer in observers { observer.refetch(db, sequence: sequence) }
                }
            }
        } catch {
            for observer in observers { observer.fail(error) }
        }
    }

    /// A pool's refetch: the reader's snapshot is taken while the caller
    /// still holds the writer, then the fetch runs on the reader's queue.
    private func refetchOnReader(_ observers: [any RefetchingObserver], sequence: UInt64, readers: ConnectionLeases) {
        let readerSlot: ConnectionSlot
        do {
            readerSlot = try readers.acquire(whileClosing: true)
        } catch {
            for observer in observers { observer.fail(error) }
            return
        }
        let snapshotTaken = DispatchSemaphore(value: 0)
        readerSlot.queue.async { [runner] in
            var isSignalled = false
            do {
                try runner.run(on: readerSlot) { db in
                    try db.readAccess(
                        nil, enforcingReadOnly: false,
                        afterSnapshot: {
                            isSignalled = true
                            snapshotTaken.signal()
                        }
                    ) { db in
                        for observer in observers { observer.refetch(db, sequence: sequence) }
                    }
                }
            } catch {
                for observer in observers { observer.fail(error) }
            }
            if !isSignalled { snapshotTaken.signal() }
            readers.release(readerSlot)
        }
        snapshotTaken.wait()
    }

    /// Runs `body` as an access of the writer, with the observation steps
    /// around it (for the center's own accesses: starting an observation,
    /// polling).
    private func writerAccess(on slot: ConnectionSlot, _ body: (Database) throws -> Void) throws {
        try runner.run(on: slot) { db in
            willAccess(db, on: slot)
            defer { didAccess(db, on: slot) }
            try body(db)
        }
    }

    /// Runs `body` as an `async`-style access of the writer: in line with
    /// the others, on the writer's queue. `completion` is called once,
    /// with the error if `body` failed or could not run.
    private func scheduleWriterAccess(
        _ body: @escaping @Sendable (Database) throws -> Void,
        completion: @escaping @Sendable ((any Error)?) -> Void
    ) {
        let job = LeaseJob(
            cancellation: AccessCancellation(),
            start: { [self] slot in
                let failure: (any Error)?
                do {
                    try writerAccess(on: slot, body)
                    failure = nil
                } catch {
                    failure = error
                }
                writer.release(slot)
                completion(failure)
            },
            fail: { error in completion(error) })
        writer.schedule(job)
    }

    // MARK: - Value observations

    /// Starts a value observation: registers it, then fetches its first
    /// value as if it followed a commit.
    func start(_ observation: any RefetchingObserver) {
        guard !state.withLock({ $0.isClosed }) else {
            observation.fail(closedError)
            return
        }
        if tracker.add(observation) { startPolling() }
        scheduleWriterAccess({ db in db.connection.changeRecorder?.needsRefetch = true }) { error in
            if let error { observation.fail(error) }
        }
    }

    /// Stops a value observation (cancelled, or ended by an error).
    func stop(_ observation: any CommitObserver) {
        if tracker.remove(observation) { stopPolling() }
    }

    // MARK: - Other connections' commits

    private func startPolling() {
        let interval = pollingInterval
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, let self else { return }
                await self.poll()
            }
        }
        let previous = state.withLock { state -> Task<Void, Never>? in
            defer { state.polling = task }
            return state.polling
        }
        previous?.cancel()
    }

    private func stopPolling() {
        state.withLock { state in
            state.polling?.cancel()
            state.polling = nil
        }
    }

    /// Checks `PRAGMA data_version` on the writer, between its own
    /// accesses: it changes when another connection (of this process or
    /// another) commits, and not for the writer's own commits, which the
    /// hooks report with their details.
    private func poll() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            scheduleWriterAccess(
                { [tracker] db in
                    guard let recorder = db.connection.changeRecorder else { return }
                    let version = try db.fetchOne(Int64.self, "PRAGMA data_version")
                    if version != recorder.lastDataVersion {
                        recorder.lastDataVersion = version
                        tracker.markAllDirty()
                        recorder.needsRefetch = true
                    }
                },
                completion: { _ in continuation.resume() })
        }
    }

    // MARK: - Closing

    private var closedError: SQLiteError {
        SQLiteError.misuse("the \(ownerName) was closed, which ended the observation")
    }

    /// Ends every value observation with an error: the queue or pool
    /// closed.
    func close() {
        let wasClosed = state.withLock { state -> Bool in
            defer { state.isClosed = true }
            return state.isClosed
        }
        guard !wasClosed else { return }
        stopPolling()
        for observation in tracker.valueObservations {
            (observation as? any RefetchingObserver)?.fail(closedError)
        }
    }
}

/// A value observation, as the center drives it.
protocol RefetchingObserver: CommitObserver {
    /// Fetches the value on `db` (in a read transaction) and delivers it,
    /// unless a value of a later commit was delivered already.
    func refetch(_ db: Database, sequence: UInt64)
    /// Ends the observation with `error`.
    func fail(_ error: any Error)
}

/// A queue or pool, which can be observed.
protocol ObservableWriter: DatabaseWriter {
    var observationCenter: ObservationCenter { get }
}
