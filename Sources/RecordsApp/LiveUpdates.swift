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

extension RecordTable {
    /// A signal now and after every committed change of the record's
    /// table; see ``AppDatabase/changes(of:)``.
    var changes: ObservedValues<Bool> { database.changes(of: Record.app) }
}

extension RecordStore {
    /// A signal now and after every committed change of the app's table,
    /// which the view models refresh themselves on; see
    /// ``AppDatabase/changes(of:)``.
    var changes: ObservedValues<Bool> { access.changes() }
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
