import SQLiteStore

/// What a detail screen shows: its record, or that the record is gone.
public enum DetailState: Sendable, Equatable {
    /// The record as last read (or not read yet).
    case shown
    /// The record was deleted, through this screen or by anyone else
    /// (another screen, the `records` command, another program); the
    /// message says so, for display.
    case deleted(message: String)

    /// Whether the record was deleted.
    public var isDeleted: Bool {
        if case .deleted = self { return true }
        return false
    }

    /// The state of a record found deleted.
    static func deleted(kind: String, id: Int64) -> DetailState {
        .deleted(message: "This \(kind) (ID \(id)) was deleted.")
    }
}

extension AppDatabase {
    /// A signal now, then again after every committed transaction that
    /// changed the record's table, whoever committed it: this database's
    /// writer at once, another connection or process within the library's
    /// `observationPollingInterval`.
    ///
    /// The signal's fetch reads one row of the table and nothing else, so
    /// that the observation follows that table only; a screen reads what it
    /// shows through its store when the signal comes, so what it shows is
    /// never older than the commit that was signalled.
    ///
    /// - Throws: ``AppUnavailableError`` from the first `next()` when the
    ///   app cannot use this database.
    func changes<Record: AppRecord>(of _: Record.Type) -> ObservedValues<Bool> {
        let unavailable = unavailability(of: Record.app)
        let probe: SQL = "SELECT 1 FROM \(identifier: Record.tableName) LIMIT 1"
        return writer.observe { db in
            if let unavailable { throw unavailable }
            return try db.fetchOne(Int.self, probe) != nil
        }
    }
}

extension RecordTable {
    /// See ``AppDatabase/changes(of:)``.
    var changes: ObservedValues<Bool> { database.changes(of: Record.self) }
}

extension PeopleStore {
    /// A signal now and after every committed change of the people table.
    var changes: ObservedValues<Bool> { table.changes }
}

extension ContactsStore {
    /// A signal now and after every committed change of the contacts table.
    var changes: ObservedValues<Bool> { table.changes }
}

extension CoffeeStore {
    /// A signal now and after every committed change of the coffee table
    /// (pictures included: they are its columns).
    var changes: ObservedValues<Bool> { table.changes }
}

extension UsersStore {
    /// A signal now and after every committed change of the users table.
    var changes: ObservedValues<Bool> { table.changes }
}

/// Counts a view model's running observations, so that its own writes
/// leave the reload to them.
@MainActor
final class ObservationCount {
    private(set) var running = 0
    var isObserving: Bool { running > 0 }

    /// Runs `body` counted as an observation.
    func counting(_ body: () async -> Void) async {
        running += 1
        defer { running -= 1 }
        await body()
    }
}
