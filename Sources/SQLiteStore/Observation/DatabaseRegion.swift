import Foundation

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// The tables and columns a fetch read, as SQLite's authorizer reported
/// them while its statements were prepared (`SQLITE_READ`). Names are
/// lowercased: SQLite compares identifiers without regard to ASCII case.
///
/// A table read without any column (`SELECT COUNT(*) FROM t`) is recorded
/// with no column. Changes are matched by table: a committed insert,
/// update or delete in a table of the region makes the region changed.
struct DatabaseRegion: Sendable, Hashable {
    /// Table name to the columns read from it.
    private(set) var tables: [String: Set<String>] = [:]
    /// Every table, for an observation whose first fetch has not run yet.
    private(set) var isFullDatabase = false

    static let fullDatabase: DatabaseRegion = {
        var region = DatabaseRegion()
        region.isFullDatabase = true
        return region
    }()

    var isEmpty: Bool { !isFullDatabase && tables.isEmpty }

    mutating func insert(table: String, column: String) {
        let key = table.lowercased()
        if column.isEmpty {
            if tables[key] == nil { tables[key] = [] }
        } else {
            tables[key, default: []].insert(column.lowercased())
        }
    }

    mutating func formUnion(_ other: DatabaseRegion) {
        if other.isFullDatabase { isFullDatabase = true }
        for (table, columns) in other.tables { tables[table, default: []].formUnion(columns) }
    }

    /// Whether a change of `table` (lowercased) may change what was read.
    func contains(table: String) -> Bool {
        isFullDatabase || tables[table] != nil
    }
}

/// Collects the region of a fetch: every statement the fetch runs adds the
/// region it was prepared with (see ``Statement``), and statements that
/// SQLite prepares again during the fetch add theirs through the
/// authorizer.
final class RegionRecorder {
    var region = DatabaseRegion()
}

/// A `SAVEPOINT`, `RELEASE` or `ROLLBACK TO` statement, as the authorizer
/// saw it at prepare time (`SQLITE_SAVEPOINT`).
struct SavepointControl {
    enum Operation { case begin, release, rollback }
    let operation: Operation
    /// Lowercased: savepoint names are case-insensitive.
    let name: String
}

/// The library's authorizer, installed on every connection when it opens
/// and kept for its life, so that setting it never expires the cached
/// statements. It records what each statement reads and whether it is a
/// savepoint statement, then asks the user's authorizer, if any (see
/// ``Database/setAuthorizer(_:)``).
///
/// Confined to its connection's thread, like the connection.
final class ConnectionAuthorizer {
    var user: ((AuthorizerRequest) -> AuthorizerDecision)?
    /// What the statement being prepared reads.
    var region = DatabaseRegion()
    /// The savepoint operation of the statement being prepared.
    var savepoint: SavepointControl?
    /// The region of the observed fetch running now, which also gets what
    /// statements re-prepared while they run read.
    var regionRecorder: RegionRecorder?
    /// Set while transaction observers may watch the connection: `DELETE`
    /// statements prepared then are answered `SQLITE_IGNORE`, which makes
    /// SQLite delete row by row instead of truncating the table, so that
    /// the update hook reports every deleted row.
    var reportsEveryDeletedRow = false
    /// The table or view a `DROP` being prepared names, between SQLite's
    /// check of the drop itself and its check of deleting the table's
    /// rows, which comes next: answered `SQLITE_IGNORE`, that second
    /// check would make SQLite skip the drop without an error.
    var dropping: [CChar]?

    /// Called before each prepare: forgets what an earlier prepare (or a
    /// re-prepare while stepping) recorded.
    func beginPrepare() {
        if !region.isEmpty { region = DatabaseRegion() }
        savepoint = nil
        dropping = nil
    }

    /// The answer to SQLite's check that `table`'s rows may be deleted:
    /// `SQLITE_IGNORE` (no truncate optimization) while
    /// ``reportsEveryDeletedRow``, except for SQLite's own `sqlite_`
    /// tables and for the check that follows a `DROP` of that table.
    func deleteCode(_ table: UnsafePointer<CChar>?) -> Int32 {
        guard let table else { return SQLITE_OK }
        if let dropping {
            self.dropping = nil
            // The check of a DROP, not of a DELETE statement: the rows go
            // with the table, which must go.
            if strcmp(table, dropping) == 0 { return SQLITE_OK }
        }
        guard reportsEveryDeletedRow, strncmp(table, "sqlite_", 7) != 0 else { return SQLITE_OK }
        return SQLITE_IGNORE
    }

    /// What the prepare just recorded, for the new statement.
    func takeRecord() -> (DatabaseRegion, SavepointControl?) {
        defer {
            if !region.isEmpty { region = DatabaseRegion() }
            savepoint = nil
        }
        return (region, savepoint)
    }
}

let libraryAuthorizerCallback:
    @convention(c) (
        UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
        UnsafePointer<CChar>?
    ) -> Int32 = { pointer, action, first, second, schema, triggerOrView in
        guard let pointer else { return SQLITE_OK }
        let authorizer = Unmanaged<ConnectionAuthorizer>.fromOpaque(pointer).takeUnretainedValue()
        switch action {
        case SQLITE_READ:
            if let first {
                let table = String(cString: first)
                let column = second.map { String(cString: $0) } ?? ""
                authorizer.region.insert(table: table, column: column)
                authorizer.regionRecorder?.region.insert(table: table, column: column)
            }
        case SQLITE_SAVEPOINT:
            if let first, let second {
                let operation: SavepointControl.Operation? =
                    switch String(cString: first) {
                    case "BEGIN": .begin
                    case "RELEASE": .release
                    case "ROLLBACK": .rollback
                    default: nil
                    }
                if let operation {
                    authorizer.savepoint = SavepointControl(
                        operation: operation, name: String(cString: second).lowercased())
                }
            }
        case SQLITE_DROP_TABLE, SQLITE_DROP_TEMP_TABLE, SQLITE_DROP_VIEW, SQLITE_DROP_TEMP_VIEW, SQLITE_DROP_VTABLE:
            // SQLite checks the deletion of its rows next (sqlite3DropTable).
            authorizer.dropping = first.map { Array(UnsafeBufferPointer(start: $0, count: strlen($0) + 1)) }
        case SQLITE_DELETE:
            break
        default:
            // Anything else between: no longer the drop's own check.
            if authorizer.dropping != nil { authorizer.dropping = nil }
        }
        // For a DELETE, SQLITE_IGNORE only turns off the truncate
        // optimization: the rows are still deleted.
        let code = action == SQLITE_DELETE ? authorizer.deleteCode(first) : SQLITE_OK
        guard let user = authorizer.user else { return code }
        let request = AuthorizerRequest(
            action: AuthorizerAction(rawValue: action), firstArgument: first.map { String(cString: $0) },
            secondArgument: second.map { String(cString: $0) }, schema: schema.map { String(cString: $0) },
            triggerOrView: triggerOrView.map { String(cString: $0) })
        let decision = user(request).code
        return decision == SQLITE_OK ? code : decision
    }
