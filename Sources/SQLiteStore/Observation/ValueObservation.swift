import Dispatch

/// One running value observation: its fetch, the region its last fetch
/// read, and where its values go.
final class ValueObservationRegistration<Value: Sendable>: RefetchingObserver {
    private struct State {
        var fetch: (@Sendable (Database) throws -> Value)?
        /// Every table until the first fetch has told what it reads.
        var region = DatabaseRegion.fullDatabase
        var isDirty = true
        /// Refetches scheduled and not finished: while one runs on a pool's
        /// reader, the region may be changing, so every table counts.
        var fetchesInFlight = 0
        /// The commit sequence of the last delivered value.
        var deliveredSequence: UInt64 = 0
        var lastValue: Value?
        var isFinished = false
    }

    private let state: Locked<State>
    /// Strong: a running observation keeps its queue's or pool's
    /// connections, as an access would; finishing unregisters it.
    private let center: ObservationCenter
    private let areEqual: (@Sendable (Value, Value) -> Bool)?
    /// Delivers values and the error in order, outside any access, so that
    /// the receiver may use the queue or pool.
    private let delivery = DispatchQueue(label: "SQLiteStore.ValueObservation")
    private let onChange: @Sendable (Value) -> Void
    private let onError: @Sendable (any Error) -> Void

    init(
        center: ObservationCenter, fetch: @escaping @Sendable (Database) throws -> Value,
        areEqual: (@Sendable (Value, Value) -> Bool)?, onChange: @escaping @Sendable (Value) -> Void,
        onError: @escaping @Sendable (any Error) -> Void
    ) {
        self.state = Locked(State(fetch: fetch))
        self.center = center
        self.areEqual = areEqual
        self.onChange = onChange
        self.onError = onError
    }

    var isValueObservation: Bool { true }

    var interest: TableInterest {
        state.withLock { state in
            if state.isFinished { return .tables([]) }
            if state.fetchesInFlight > 0 || state.region.isFullDatabase { return .all }
            return .tables(Set(state.region.tables.keys))
        }
    }

    func didCommit(_ transaction: CommittedTransaction, tables: Set<String>) -> Bool {
        state.withLock { state in
            guard !state.isFinished else { return false }
            guard state.fetchesInFlight > 0 || tables.contains(where: state.region.contains(table:)) else {
                return false
            }
            state.isDirty = true
            return true
        }
    }

    func takeDirty() -> Bool {
        state.withLock { state in
            guard state.isDirty, !state.isFinished else { return false }
            state.isDirty = false
            state.fetchesInFlight += 1
            return true
        }
    }

    func markDirty() {
        state.withLock { $0.isDirty = true }
    }

    func refetch(_ db: Database, sequence: UInt64) {
        guard let fetch = state.withLock({ $0.isFinished ? nil : $0.fetch }) else { return }
        let recorder = RegionRecorder()
        db.connection.regionRecorder = recorder
        db.connection.authorizer.regionRecorder = recorder
        let result = Result { try fetch(db) }
        db.connection.regionRecorder = nil
        db.connection.authorizer.regionRecorder = nil
        switch result {
        case .success(let value):
            state.withLock { state in
                state.fetchesInFlight -= 1
                guard !state.isFinished, sequence > state.deliveredSequence else { return }
                state.deliveredSequence = sequence
                state.region = recorder.region
                if let areEqual, let last = state.lastValue, areEqual(last, value) { return }
                if areEqual != nil { state.lastValue = value }
                // Dispatched under the lock, so values leave in the order of
                // their commits.
                delivery.async { [self] in
                    guard !self.state.withLock({ $0.isFinished }) else { return }
                    onChange(value)
                }
            }
            center.tracker.invalidate()
        case .failure(let error):
            state.withLock { $0.fetchesInFlight -= 1 }
            fail(error)
        }
    }

    func fail(_ error: any Error) {
        let wasFinished = finish()
        guard !wasFinished else { return }
        delivery.async { [onError] in onError(error) }
    }

    /// Stops the observation without a word (the consumer went away).
    func cancel() {
        _ = finish()
    }

    /// Marks the observation finished, drops its fetch closure (and what it
    /// holds), and unregisters it. Returns whether it was finished already.
    private func finish() -> Bool {
        let wasFinished = state.withLock { state -> Bool in
            defer {
                state.isFinished = true
                state.fetch = nil
                state.lastValue = nil
            }
            return state.isFinished
        }
        if !wasFinished { center.stop(self) }
        return wasFinished
    }
}

/// The values of an observed fetch, as an `AsyncSequence`: the current value
/// first, then a fresh one after each committed change of what the fetch
/// read. Returned by ``DatabaseWriter/observe(_:)``.
///
/// Each iteration (each `for try await` loop) starts its own observation,
/// which stops when the loop ends or its task is cancelled: the fetch
/// closure is released and no fetch runs any more.
///
/// A consumer slower than the commits skips values: when it asks for the
/// next value, it gets the most recent one, never an older one after a
/// newer one. The sequence ends by throwing the error of a failed fetch,
/// or a ``ResultCode/misuse`` error when the queue or pool closes.
public struct ObservedValues<Value: Sendable>: AsyncSequence, Sendable {
    public typealias Element = Value

    let writer: any DatabaseWriter
    let fetch: @Sendable (Database) throws -> Value
    let areEqual: (@Sendable (Value, Value) -> Bool)?

    /// Starts the observation.
    public func makeAsyncIterator() -> Iterator {
        let stream = AsyncThrowingStream<Value, any Error>(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let token = writer.startObservation(
                fetch, areEqual: areEqual,
                onError: { error in continuation.finish(throwing: error) },
                onChange: { value in continuation.yield(value) })
            continuation.onTermination = { _ in token.cancel() }
        }
        return Iterator(base: stream.makeAsyncIterator())
    }

    /// The iterator of ``ObservedValues``.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Value, any Error>.Iterator

        /// The next value: waits for a committed change of what the fetch
        /// read. Nil once the task is cancelled.
        public mutating func next() async throws -> Value? {
            try await base.next()
        }
    }
}

extension ObservedValues where Value: Equatable {
    /// The same observation, skipping a value equal to the one delivered
    /// before it (a change that left the fetched value as it was).
    public func removeDuplicates() -> ObservedValues {
        ObservedValues(writer: writer, fetch: fetch, areEqual: { $0 == $1 })
    }
}

extension DatabaseWriter {
    /// Observes the value `fetch` returns: the sequence yields it now, then
    /// again after every committed transaction that changed a table `fetch`
    /// read.
    ///
    /// ```swift
    /// for try await names in queue.observe({ db in
    ///     try db.fetchAll(String.self, "SELECT name FROM people ORDER BY name")
    /// }) {
    ///     print(names)  // at once, then after each change of `people`
    /// }
    /// ```
    ///
    /// What is observed is what `fetch` actually read, found by SQLite's
    /// authorizer as its statements were prepared (tables and columns), and
    /// found again at each fetch: declare nothing. A commit that changes
    /// no table `fetch` read causes no fetch. Changes committed by this
    /// queue or pool are seen at once; those of other connections and
    /// processes within ``Configuration/observationPollingInterval``.
    ///
    /// A ``DatabaseQueue`` fetches on its connection right after the write
    /// that changed the value; a ``DatabasePool`` on a reader whose
    /// snapshot is exactly the database that write committed, while the
    /// next writes go on. `fetch` runs in a read transaction and must not
    /// write.
    ///
    /// See ``ObservedValues`` for delivery, cancellation and errors, and
    /// ``ObservedValues/removeDuplicates()`` to skip unchanged values.
    public func observe<Value: Sendable>(
        _ fetch: @escaping @Sendable (Database) throws -> Value
    ) -> ObservedValues<Value> {
        ObservedValues(writer: self, fetch: fetch, areEqual: nil)
    }

    /// Observes the value `fetch` returns, calling `onChange` with it now
    /// and after every committed transaction that changed a table `fetch`
    /// read, until the returned token is cancelled or released.
    ///
    /// ```swift
    /// let token = pool.observe { db in
    ///     try db.fetchOne(Int.self, "SELECT COUNT(*) FROM people") ?? 0
    /// } onError: { error in
    ///     print("observation ended:", error)
    /// } onChange: { count in
    ///     print("people:", count)
    /// }
    /// ```
    ///
    /// Values come in the order of their commits, one at a time, on a
    /// dispatch queue of the observation (not inside an access, so
    /// `onChange` may use the queue or pool). A failed fetch, or the queue
    /// or pool closing, ends the observation with one call of `onError`.
    /// Observing works as ``observe(_:)`` describes.
    public func observe<Value: Sendable>(
        _ fetch: @escaping @Sendable (Database) throws -> Value,
        onError: @escaping @Sendable (any Error) -> Void,
        onChange: @escaping @Sendable (Value) -> Void
    ) -> ObservationToken {
        startObservation(fetch, areEqual: nil, onError: onError, onChange: onChange)
    }

    /// Calls `body` after each transaction the writer commits that changed
    /// a row, with the changed rows (table, insert/update/delete, rowid),
    /// until the returned token is cancelled or released.
    ///
    /// ```swift
    /// let token = try queue.addTransactionObserver(tables: ["people"]) { transaction in
    ///     for change in transaction.changes { print(change) }
    /// }
    /// ```
    ///
    /// Observes the transactions of the accesses that start after the call.
    /// What is reported, and what is not, is as
    /// ``Database/addTransactionObserver(tables:_:)`` describes. `body` runs
    /// on the writer's thread right after the commit, while the writer is
    /// held: keep it short, and do not use the queue or pool from it.
    ///
    /// Throws a ``ResultCode/misuse`` error when the writer is neither a
    /// ``DatabaseQueue`` nor a ``DatabasePool``.
    ///
    /// - Parameters:
    ///   - tables: the tables to report, by name (any case); nil for every
    ///     table.
    ///   - body: called with each committed transaction's changes of those
    ///     tables.
    public func addTransactionObserver(
        tables: Set<String>? = nil, _ body: @escaping @Sendable (CommittedTransaction) -> Void
    ) throws -> ObservationToken {
        guard let center = (self as? any ObservableWriter)?.observationCenter else {
            throw Self.notObservable
        }
        let observer = TransactionObserverEntry(tables: tables, body: body)
        _ = center.tracker.add(observer)
        return ObservationToken { [weak center] in center?.stop(observer) }
    }

    func startObservation<Value: Sendable>(
        _ fetch: @escaping @Sendable (Database) throws -> Value, areEqual: (@Sendable (Value, Value) -> Bool)?,
        onError: @escaping @Sendable (any Error) -> Void, onChange: @escaping @Sendable (Value) -> Void
    ) -> ObservationToken {
        guard let center = (self as? any ObservableWriter)?.observationCenter else {
            onError(Self.notObservable)
            return ObservationToken {}
        }
        let registration = ValueObservationRegistration(
            center: center, fetch: fetch, areEqual: areEqual, onChange: onChange, onError: onError)
        center.start(registration)
        return ObservationToken { registration.cancel() }
    }

    private static var notObservable: SQLiteError {
        SQLiteError.misuse("only a DatabaseQueue or a DatabasePool can be observed")
    }
}
