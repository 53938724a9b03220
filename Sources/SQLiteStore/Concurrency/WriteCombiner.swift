import Foundation

/// Write combining: small writes that wait for the writer connection at
/// the same time run together in one transaction, each in a savepoint of
/// its own, so that a busy writer begins, commits and (with
/// ``Configuration/groupCommit``) syncs once for many writes.
///
/// ```swift
/// let writes = WriteCombiner(pool)
/// // Called from many tasks at once: they share transactions.
/// let id = try await writes.write { db in
///     try db.execute("INSERT INTO people (name) VALUES (\(name))")
///     return db.lastInsertedRowID
/// }
/// ```
///
/// Each write is answered on its own, as if it had its own transaction:
///
/// - A write whose closure throws is rolled back to its savepoint and
///   throws; the others in the transaction commit.
/// - A write returns only once the transaction holding it committed and,
///   with ``Configuration/groupCommit``, once a sync of the log covers it.
///   A failed commit or sync fails every write of that transaction.
/// - If a write's error ends the whole transaction (SQLite rolls back on
///   some errors, such as a full disk), every write of that transaction
///   fails with it, as none of them is committed.
///
/// A write never waits for a timer: when the writer is free, it starts at
/// once, alone. The writes that arrive while a transaction runs wait for
/// the next, which takes up to ``maximumBatchSize`` of them in the order
/// they came.
///
/// Cancelling a write's task before its transaction took it removes it
/// and throws `CancellationError`; the other writes go on. Once taken, a
/// write runs to the end of its transaction (interrupting it would roll
/// back the others too), and its task gets its result.
///
/// Use it for short writes that do not depend on running alone: a write's
/// savepoint sees the changes of the writes before it in the same
/// transaction, and a long write holds up the others of its transaction.
public final class WriteCombiner: Sendable {
    /// The most writes one transaction takes.
    public let maximumBatchSize: Int
    private let writer: any DatabaseWriter
    /// Runs at the end of each transaction (see ``init(_:maximumBatchSize:finishing:)``).
    private let finishing: (@Sendable (Database) throws -> Void)?
    private let state = Locked(State())

    /// A write waiting for its transaction, type-erased.
    private final class Job: Sendable {
        let number: UInt64
        /// Runs the write in its savepoint; returns its error when it
        /// ended the transaction.
        let run: @Sendable (Database) -> (any Error)?
        /// Answers the write's task: with its own result, unless `failure`
        /// (the transaction's) is given and the write itself succeeded.
        let finish: @Sendable (_ failure: (any Error)?) -> Void

        init(
            number: UInt64, run: @escaping @Sendable (Database) -> (any Error)?,
            finish: @escaping @Sendable ((any Error)?) -> Void
        ) {
            self.number = number
            self.run = run
            self.finish = finish
        }
    }

    private struct State {
        var waiting: [Job] = []
        var lastNumber: UInt64 = 0
        /// Whether a transaction that will take the waiting writes is
        /// started and has not taken them yet.
        var isDrainScheduled = false
        /// How many transactions ran, and how many writes the largest held
        /// (for tests).
        var transactionCount = 0
        var largestBatch = 0
    }

    /// Combines the writes given to ``write(_:)`` on `writer`'s
    /// transactions.
    ///
    /// - Parameters:
    ///   - writer: The database whose writes are combined: a
    ///     ``DatabasePool`` or a ``DatabaseQueue``. Writes made on it
    ///     directly, not through this combiner, run in their own
    ///     transactions as before.
    ///   - maximumBatchSize: The most writes one transaction takes (at
    ///     least 1): a bound on how long a write waits behind the others of
    ///     its transaction.
    ///   - finishing: When given, runs once in each transaction, after its
    ///     writes and before the commit, outside their savepoints: for work
    ///     the writes leave that is cheaper done once for all of them (such
    ///     as bringing a full-text index up to date: FTS5 writes what it
    ///     has pending at every savepoint). When it throws, the transaction
    ///     is rolled back and every write of it throws its error.
    public init(
        _ writer: any DatabaseWriter, maximumBatchSize: Int = 64,
        finishing: (@Sendable (Database) throws -> Void)? = nil
    ) {
        self.writer = writer
        self.maximumBatchSize = max(1, maximumBatchSize)
        self.finishing = finishing
    }

    /// Runs `body` in a savepoint of a write transaction that other
    /// waiting writes may share, and returns its result once the
    /// transaction committed (and, with ``Configuration/groupCommit``, is
    /// on the disk).
    ///
    /// - Throws: What `body` throws (its changes are undone, the other
    ///   writes' kept); the commit's or sync's error (nothing of the
    ///   transaction is kept); `CancellationError` when the task was
    ///   cancelled before the write began.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let outcome = Locked<Result<T, any Error>?>(nil)
        let number = state.withLock { state in
            state.lastNumber += 1
            return state.lastNumber
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let job = Job(
                    number: number,
                    run: { db in
                        let result = Result { try db.savepoint { db in try body(db) } }
                        outcome.withLock { $0 = result }
                        if case .failure(let error) = result, !db.isInsideTransaction { return error }
                        return nil
                    },
                    finish: { failure in
                        let result = outcome.withLock { $0 }
                        switch (result, failure) {
                        case (.failure(let error)?, _): continuation.resume(throwing: error)
                        case (_, let failure?): continuation.resume(throwing: failure)
                        case (.success(let value)?, nil): continuation.resume(returning: value)
                        case (nil, nil): continuation.resume(throwing: CancellationError())
                        }
                    })
                enqueue(job)
            }
        } onCancel: {
            cancel(number)
        }
    }

    /// How many transactions ran, and the most writes one held (for tests).
    var statistics: (transactions: Int, largestBatch: Int) {
        state.withLock { ($0.transactionCount, $0.largestBatch) }
    }

    /// How many writes wait for a transaction to take them (for tests).
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    private func enqueue(_ job: Job) {
        let startsDrain = state.withLock { state -> Bool? in
            // Checked under the lock that cancel(_:) takes: a cancellation
            // either sees the job waiting or is seen here.
            if Task.isCancelled { return nil }
            state.waiting.append(job)
            guard !state.isDrainScheduled else { return false }
            state.isDrainScheduled = true
            return true
        }
        switch startsDrain {
        case nil: job.finish(CancellationError())
        case true?: startDrain()
        case false?: break
        }
    }

    private func cancel(_ number: UInt64) {
        let removed = state.withLock { state -> Job? in
            guard let index = state.waiting.firstIndex(where: { $0.number == number }) else { return nil }
            return state.waiting.remove(at: index)
        }
        removed?.finish(CancellationError())
    }

    /// Takes the next batch of waiting writes; schedules another drain
    /// when some are left.
    private func takeBatch() -> (jobs: [Job], startsAnother: Bool) {
        state.withLock { state in
            let jobs = Array(state.waiting.prefix(maximumBatchSize))
            state.waiting.removeFirst(jobs.count)
            state.isDrainScheduled = !state.waiting.isEmpty
            if !jobs.isEmpty {
                state.transactionCount += 1
                state.largestBatch = max(state.largestBatch, jobs.count)
            }
            return (jobs, state.isDrainScheduled)
        }
    }

    /// Runs one transaction for the writes waiting when the writer is
    /// free, in a task of its own: no single write's cancellation may
    /// interrupt the others'.
    private func startDrain() {
        Task { await drain() }
    }

    private func drain() async {
        let taken = Locked<[Job]?>(nil)
        let failure: (any Error)?
        do {
            try await writer.write { db in
                let (jobs, startsAnother) = self.takeBatch()
                taken.withLock { $0 = jobs }
                if startsAnother { self.startDrain() }
                for job in jobs {
                    if let error = job.run(db) { throw error }
                }
                try self.finishing?(db)
            }
            failure = nil
        } catch {
            failure = error
        }
        var jobs = taken.withLock { $0 }
        if jobs == nil {
            // The write failed before its transaction began (the pool
            // closed): the writes it would have taken fail with it.
            let (batch, startsAnother) = takeBatch()
            if startsAnother { startDrain() }
            jobs = batch
        }
        for job in jobs ?? [] { job.finish(failure) }
    }
}
