import Foundation

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// One row changed by a committed transaction.
public struct DatabaseChange: Sendable, Hashable, CustomStringConvertible {
    /// What happened to the row.
    public enum Kind: Sendable, Hashable {
        /// The row was inserted.
        case insert
        /// The row was updated.
        case update
        /// The row was deleted.
        case delete
    }

    /// What happened to the row.
    public let kind: Kind
    /// The table's name, as its schema spells it.
    public let table: String
    /// The row's rowid.
    public let rowID: Int64

    /// Creates a change (for tests of code that receives them).
    public init(kind: Kind, table: String, rowID: Int64) {
        self.kind = kind
        self.table = table
        self.rowID = rowID
    }

    public var description: String { "\(kind) \(table) rowid \(rowID)" }
}

/// What one committed transaction changed, as a transaction observer
/// receives it (see ``Database/addTransactionObserver(tables:_:)``).
public struct CommittedTransaction: Sendable {
    /// The changed rows, in the order they changed. Changes undone by a
    /// rolled-back savepoint are not included.
    public let changes: [DatabaseChange]

    /// Creates a committed transaction (for tests of code that receives
    /// them).
    public init(changes: [DatabaseChange]) {
        self.changes = changes
    }

    /// The names of the changed tables, as their schema spells them.
    public var tables: Set<String> { Set(changes.map(\.table)) }
}

/// Keeps an observation running; cancel it, or let it go, to stop the
/// observation.
///
/// Returned by ``DatabaseWriter/addTransactionObserver(tables:_:)``,
/// ``Database/addTransactionObserver(tables:_:)`` and
/// ``DatabaseWriter/observe(_:onError:onChange:)``. Releasing the token
/// cancels the observation, as ``cancel()`` does; cancelling from any
/// thread is safe, and more than once does nothing more.
public final class ObservationToken: Sendable {
    private let onCancel: Locked<(@Sendable () -> Void)?>

    init(_ onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Locked(onCancel)
    }

    /// Stops the observation: nothing is delivered once this returns,
    /// except a value or change already being handed over on another
    /// thread.
    public func cancel() {
        let body = onCancel.withLock { body -> (@Sendable () -> Void)? in
            defer { body = nil }
            return body
        }
        body?()
    }

    deinit { cancel() }
}

extension Database {
    /// Calls `body` after each transaction this connection commits that
    /// changed a row, with the changed rows (table, insert/update/delete,
    /// rowid), until the returned token is cancelled or released.
    ///
    /// ```swift
    /// let token = db.addTransactionObserver(tables: ["people"]) { transaction in
    ///     for change in transaction.changes { print(change) }
    /// }
    /// try db.execute("INSERT INTO people (name) VALUES ('Ada')")  // prints "insert people rowid 1"
    /// token.cancel()
    /// ```
    ///
    /// Only committed changes are reported: nothing for a transaction that
    /// is rolled back, and not the changes undone by `ROLLBACK TO` a
    /// savepoint inside a transaction that commits. Changes come from
    /// SQLite's update hook, so they do not include changes made by other
    /// connections, changes to `WITHOUT ROWID` tables, nor rows that
    /// `INSERT OR REPLACE` deletes to make room (SQLite's documented
    /// limits of `sqlite3_update_hook`).
    ///
    /// `body` runs on the connection's thread right after the commit, and
    /// must not use the connection. On a ``DatabaseQueue`` or
    /// ``DatabasePool``, use ``DatabaseWriter/addTransactionObserver(tables:_:)``
    /// instead, which survives a connection replaced by the queue or pool.
    ///
    /// - Parameters:
    ///   - tables: the tables to report, by name (any case); nil for every
    ///     table.
    ///   - body: called with each committed transaction's changes of those
    ///     tables.
    public func addTransactionObserver(
        tables: Set<String>? = nil, _ body: @escaping @Sendable (CommittedTransaction) -> Void
    ) -> ObservationToken {
        let tracker: ChangeTracker
        if let recorder = connection.changeRecorder {
            tracker = recorder.tracker
        } else {
            tracker = ChangeTracker()
            installChangeRecorder(tracker)
        }
        let observer = TransactionObserverEntry(tables: tables, body: body)
        _ = tracker.add(observer)
        return ObservationToken { [weak tracker] in _ = tracker?.remove(observer) }
    }

    /// Installs the hooks that report this connection's commits to
    /// `tracker`, unless they are installed already.
    func installChangeRecorder(_ tracker: ChangeTracker) {
        guard let handle = connection.handle, connection.changeRecorder == nil else { return }
        let recorder = ChangeRecorder(tracker: tracker, handle: handle)
        recorder.install()
        connection.changeRecorder = recorder
        // Installing the authorizer again expires the prepared statements:
        // a cached `DELETE FROM t` is prepared again without the truncate
        // optimization, which would hide its rows from the update hook.
        connection.authorizer.reportsEveryDeletedRow = true
        sqlite3_set_authorizer(
            handle, libraryAuthorizerCallback, Unmanaged.passUnretained(connection.authorizer).toOpaque())
        recorder.lastDataVersion = try? fetchOne(Int64.self, "PRAGMA data_version")
    }
}

// MARK: - Registry

/// Which tables some observer cares about, lowercased.
enum TableInterest: Sendable {
    case all
    case tables(Set<String>)

    func contains(_ table: String) -> Bool {
        switch self {
        case .all: true
        case .tables(let tables): tables.contains(table)
        }
    }
}

/// Something told about committed transactions: a transaction observer or
/// a value observation.
protocol CommitObserver: AnyObject, Sendable {
    /// Whether the observer refetches a value (and keeps polling alive).
    var isValueObservation: Bool { get }
    /// The tables whose changes it needs now.
    var interest: TableInterest { get }
    /// Called on the writer's thread after a commit. Returns true when the
    /// observer needs a refetch.
    func didCommit(_ transaction: CommittedTransaction, tables: Set<String>) -> Bool
    /// For value observations: whether a refetch is due, clearing it and
    /// counting a fetch in flight when it is.
    func takeDirty() -> Bool
    /// For value observations: a refetch is due (another connection
    /// changed the database).
    func markDirty()
}

/// The observers of one writer (queue, pool or bare connection). Observers
/// are added and removed from any thread; the writer's thread reads a
/// snapshot once per transaction.
final class ChangeTracker: Sendable {
    struct Snapshot: Sendable {
        let observers: [any CommitObserver]
        let interest: TableInterest
        /// Changes whenever the interest may have: what was learnt from an
        /// earlier snapshot of the same generation still holds.
        let generation: UInt64
    }

    private struct State {
        var observers: [ObjectIdentifier: any CommitObserver] = [:]
        var valueObservationCount = 0
        var snapshot: Snapshot?
        var generation: UInt64 = 0
    }

    private let state = Locked(State())

    /// Whether any observer is registered.
    var isActive: Bool { state.withLock { !$0.observers.isEmpty } }

    /// Adds an observer; true when it is the first value observation.
    func add(_ observer: any CommitObserver) -> Bool {
        state.withLock { state in
            state.observers[ObjectIdentifier(observer)] = observer
            state.snapshot = nil
            state.generation += 1
            guard observer.isValueObservation else { return false }
            state.valueObservationCount += 1
            return state.valueObservationCount == 1
        }
    }

    /// Removes an observer; true when it was the last value observation.
    func remove(_ observer: any CommitObserver) -> Bool {
        state.withLock { state in
            guard state.observers.removeValue(forKey: ObjectIdentifier(observer)) != nil else { return false }
            state.snapshot = nil
            state.generation += 1
            guard observer.isValueObservation else { return false }
            state.valueObservationCount -= 1
            return state.valueObservationCount == 0
        }
    }

    /// Forgets the cached snapshot: an observer's interest changed.
    func invalidate() {
        state.withLock { state in
            state.snapshot = nil
            state.generation += 1
        }
    }

    /// The snapshot generation now: when it is the one of a snapshot the
    /// caller holds, that snapshot is current.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// The observers and their interest, for the transaction starting now.
    func snapshot() -> Snapshot {
        let (cached, observers, generation) = state.withLock { state in
            (state.snapshot, state.snapshot == nil ? Array(state.observers.values) : [], state.generation)
        }
        if let cached { return cached }
        // Interests are read outside the tracker's lock: each observer has
        // its own.
        var tables = Set<String>()
        var isAll = false
        for observer in observers {
            switch observer.interest {
            case .all: isAll = true
            case .tables(let names): tables.formUnion(names)
            }
            if isAll { break }
        }
        let snapshot = Snapshot(
            observers: observers, interest: isAll ? .all : .tables(tables), generation: generation)
        state.withLock { state in
            // Only cached if nothing changed meanwhile.
            if state.generation == generation { state.snapshot = snapshot }
        }
        return snapshot
    }

    /// The value observations whose refetch is due.
    func takeDirty() -> [any CommitObserver] {
        let observers = state.withLock { Array($0.observers.values) }
        let dirty = observers.filter { $0.isValueObservation && $0.takeDirty() }
        if !dirty.isEmpty { invalidate() }
        return dirty
    }

    /// Makes every value observation refetch.
    func markAllDirty() {
        let observers = state.withLock { Array($0.observers.values) }
        for observer in observers where observer.isValueObservation { observer.markDirty() }
    }

    /// Every value observation.
    var valueObservations: [any CommitObserver] {
        state.withLock { $0.observers.values.filter(\.isValueObservation) }
    }
}

/// A transaction observer's registration.
final class TransactionObserverEntry: CommitObserver {
    let tables: Set<String>?
    let body: @Sendable (CommittedTransaction) -> Void

    init(tables: Set<String>?, body: @escaping @Sendable (CommittedTransaction) -> Void) {
        self.tables = tables.map { Set($0.map { $0.lowercased() }) }
        self.body = body
    }

    var isValueObservation: Bool { false }
    var interest: TableInterest { tables.map { .tables($0) } ?? .all }

    func didCommit(_ transaction: CommittedTransaction, tables changed: Set<String>) -> Bool {
        guard let tables else {
            body(transaction)
            return false
        }
        guard !tables.isDisjoint(with: changed) else { return false }
        let changes = transaction.changes.filter { tables.contains($0.table.lowercased()) }
        body(CommittedTransaction(changes: changes))
        return false
    }

    func takeDirty() -> Bool { false }
    func markDirty() {}
}

// MARK: - Recording a connection's changes

/// Records what a connection's transactions change, through SQLite's
/// update, commit and rollback hooks, and tells the observers after each
/// commit.
///
/// Confined to the connection's thread, like the connection: the hooks run
/// inside the connection's statements, and ``Statement`` calls in before
/// and after each statement.
///
/// After the commit hook, the transaction is only known to be committed
/// once the statement that committed has returned with the connection out
/// of a transaction (``statementDidEnd()``, or before the next statement
/// runs); a commit that fails (`SQLITE_BUSY`) leaves the transaction open,
/// and its changes are kept for the next try.
///
/// Its state is read and written on every change and commit, only by the
/// connection's thread and never by two overlapping accesses, so dynamic
/// exclusivity checks are turned off for it (`@exclusivity(unchecked)`).
final class ChangeRecorder {
    let tracker: ChangeTracker
    private let handle: OpaquePointer
    @exclusivity(unchecked) private var snapshot: ChangeTracker.Snapshot?
    @exclusivity(unchecked) private var changes: [DatabaseChange] = []
    /// Open savepoints, with how many changes were recorded before each.
    @exclusivity(unchecked) private var savepoints: [(name: String, count: Int)] = []
    /// A transaction whose commit hook ran.
    @exclusivity(unchecked) private var committing: (snapshot: ChangeTracker.Snapshot, changes: [DatabaseChange])?
    /// The tables the update hook named lately, and whether the interest
    /// holds each: a write with triggers changes rows of several tables
    /// in turn (an app's row, its search index, the sync engine's
    /// bookkeeping), so the name is looked up here instead of being made
    /// into a text and looked for in the interest on every change.
    @exclusivity(unchecked) private var tables: [SeenTable] = []
    /// The snapshot ``tables`` were found with.
    @exclusivity(unchecked) private var lastSnapshot: ChangeTracker.Snapshot?

    /// A table name the update hook passed, as SQLite's pointer to it (the
    /// same for a table until the schema changes) and its bytes (checked
    /// too, as a pointer may be reused for another name after a change).
    private struct SeenTable {
        let pointer: UnsafePointer<CChar>
        let bytes: [CChar]
        let name: String
        let isObserved: Bool
    }

    /// The most tables ``tables`` keeps: past it, the oldest is forgotten.
    private static let seenTablesLimit = 32
    /// Set when a value observation needs a refetch after this access.
    @exclusivity(unchecked) var needsRefetch = false
    /// The connection's `PRAGMA data_version` when last checked, to notice
    /// commits from other connections.
    var lastDataVersion: Int64?

    init(tracker: ChangeTracker, handle: OpaquePointer) {
        self.tracker = tracker
        self.handle = handle
    }

    func install() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_update_hook(handle, updateHookCallback, context)
        sqlite3_commit_hook(handle, commitHookCallback, context)
        sqlite3_rollback_hook(handle, rollbackHookCallback, context)
    }

    func uninstall(from handle: OpaquePointer) {
        sqlite3_update_hook(handle, nil, nil)
        sqlite3_commit_hook(handle, nil, nil)
        sqlite3_rollback_hook(handle, nil, nil)
    }

    fileprivate func didChange(_ operation: Int32, table: UnsafePointer<CChar>, rowID: Int64) {
        if snapshot == nil {
            // The last snapshot, and the last table's answer, hold while
            // the tracker's generation is the same.
            if let lastSnapshot, lastSnapshot.generation == tracker.generation {
                snapshot = lastSnapshot
            } else {
                let current = tracker.snapshot()
                tables.removeAll(keepingCapacity: true)
                lastSnapshot = current
                snapshot = current
            }
        }
        let seen: SeenTable
        if let index = tables.firstIndex(where: { $0.pointer == table && strcmp(table, $0.bytes) == 0 }) {
            seen = tables[index]
        } else {
            let name = String(cString: table)
            seen = SeenTable(
                pointer: table, bytes: Array(UnsafeBufferPointer(start: table, count: strlen(table) + 1)), name: name,
                isObserved: snapshot!.interest.contains(name.lowercased()))
            if tables.count >= Self.seenTablesLimit { tables.removeFirst() }
            tables.append(seen)
        }
        guard seen.isObserved else { return }
        let kind: DatabaseChange.Kind =
            switch operation {
            case SQLITE_INSERT: .insert
            case SQLITE_DELETE: .delete
            default: .update
            }
        changes.append(DatabaseChange(kind: kind, table: seen.name, rowID: rowID))
    }

    fileprivate func willCommit() {
        // A transaction that reached its commit hook earlier has committed:
        // one that failed to commit or was rolled back would not have let
        // this one start.
        deliverCommitted()
        if let snapshot, !changes.isEmpty { committing = (snapshot, changes) }
        resetTransaction()
    }

    fileprivate func didRollback() {
        committing = nil
        resetTransaction()
    }

    private func resetTransaction() {
        snapshot = nil
        if !changes.isEmpty { changes = [] }
        if !savepoints.isEmpty { savepoints = [] }
    }

    /// Before a statement runs: settles a pending commit, then applies a
    /// savepoint statement to the recorded changes.
    func willRun(_ savepoint: SavepointControl?) {
        if committing != nil { statementDidEnd() }
        guard let savepoint else { return }
        switch savepoint.operation {
        case .begin:
            savepoints.append((savepoint.name, changes.count))
        case .release:
            if let index = savepoints.lastIndex(where: { $0.name == savepoint.name }) {
                savepoints.removeSubrange(index...)
            }
        case .rollback:
            if let index = savepoints.lastIndex(where: { $0.name == savepoint.name }) {
                changes.removeSubrange(savepoints[index].count...)
                savepoints.removeSubrange((index + 1)...)
            }
        }
    }

    /// After a statement ran (or an access ended): delivers a commit that
    /// completed, or takes back the changes of one that did not.
    func statementDidEnd() {
        guard let committing else { return }
        if sqlite3_get_autocommit(handle) != 0 {
            deliverCommitted()
        } else {
            // The commit failed and the transaction is still open.
            self.committing = nil
            snapshot = committing.snapshot
            changes = committing.changes + changes
        }
    }

    private func deliverCommitted() {
        guard let committing else { return }
        self.committing = nil
        let transaction = CommittedTransaction(changes: committing.changes)
        let tables = Set(committing.changes.map { $0.table.lowercased() })
        for observer in committing.snapshot.observers
        where observer.didCommit(transaction, tables: tables) {
            needsRefetch = true
        }
    }
}

private func updateHookCallback(
    _ context: UnsafeMutableRawPointer?, _ operation: Int32, _ database: UnsafePointer<CChar>?,
    _ table: UnsafePointer<CChar>?, _ rowID: sqlite3_int64
) {
    guard let context, let table else { return }
    Unmanaged<ChangeRecorder>.fromOpaque(context).takeUnretainedValue().didChange(
        operation, table: table, rowID: rowID)
}

private func commitHookCallback(_ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    Unmanaged<ChangeRecorder>.fromOpaque(context).takeUnretainedValue().willCommit()
    return 0
}

private func rollbackHookCallback(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<ChangeRecorder>.fromOpaque(context).takeUnretainedValue().didRollback()
}
