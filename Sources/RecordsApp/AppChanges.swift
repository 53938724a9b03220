import SQLiteStore
import Synchronization

/// A running observation of an app's table, from
/// ``AppDatabase/observeChanges(of:onError:onChange:)``: it lasts until
/// ``cancel()`` is called or it is released.
public final class AppChangesObservation: Sendable {
    private let token: ObservationToken

    init(token: ObservationToken) { self.token = token }

    /// Stops the observation: no call of `onChange` starts once this
    /// returns (one already being made on another thread may finish).
    /// Safe from any thread, and more than once.
    public func cancel() { token.cancel() }

    deinit { token.cancel() }
}

extension AppDatabase {
    /// Calls `onChange` after every committed transaction that changed
    /// `app`'s table, whoever committed it: this database's writes at once,
    /// another connection's or process's (the `records` command beside a
    /// server) within the library's `observationPollingInterval`.
    ///
    /// It is a signal, not the data: the receiver reads what it shows
    /// through the app's store. Many changes in one transaction make one
    /// call; a receiver slower than the commits gets fewer calls, never
    /// none after the last commit. A commit by another connection may
    /// signal every observed app, as the library cannot tell which tables
    /// another connection changed. Nothing is called for the state at the
    /// start, only for changes after it.
    ///
    /// Calls come one at a time on a dispatch queue of the observation,
    /// outside any database access. A failed read, the app being
    /// unavailable in this database (``AppUnavailableError``) or the
    /// database closing ends the observation with one call of `onError`.
    ///
    /// - Returns: The observation; keep it to keep observing.
    public func observeChanges(
        of app: App, onError: @escaping @Sendable (any Error) -> Void, onChange: @escaping @Sendable () -> Void
    ) -> AppChangesObservation {
        let table =
            switch app {
            case .people: Person.tableName
            case .contacts: Contact.tableName
            case .coffee: Coffee.tableName
            case .users: User.tableName
            }
        return observeChanges(ofTable: table, of: app, onError: onError, onChange: onChange)
    }

    /// Observes `table`, one of `app`'s, as
    /// ``observeChanges(of:onError:onChange:)`` observes an app's table.
    func observeChanges(
        ofTable table: String, of app: App, onError: @escaping @Sendable (any Error) -> Void,
        onChange: @escaping @Sendable () -> Void
    ) -> AppChangesObservation {
        let unavailable = unavailability(of: app)
        // One row of the table and nothing else, so that the observation
        // follows that table only.
        let probe: SQL = "SELECT 1 FROM \(identifier: table) LIMIT 1"
        // The observation delivers the state at the start first; that one
        // is not a change.
        let started = StartFlag()
        let token = writer.observe(
            { db in
                if let unavailable { throw unavailable }
                return try db.fetchOne(Int.self, probe) != nil
            },
            onError: onError,
            onChange: { _ in
                if started.flag.exchange(true, ordering: .relaxed) { onChange() }
            })
        return AppChangesObservation(token: token)
    }
}

/// Whether an observation delivered its first value.
private final class StartFlag: Sendable {
    let flag = Atomic(false)
}
