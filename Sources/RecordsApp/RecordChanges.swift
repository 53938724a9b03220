import SQLiteStore

/// One committed change of an app's record, as the change log recorded it.
///
/// The log is kept by triggers on the apps' tables (see
/// ``AppDatabase/recordChanges(after:apps:limit:)``), so it holds every
/// program's changes: the stores', the `records` command's, the web
/// pages', and SQL typed into `sqlite3`.
public struct RecordChange: Sendable, Equatable {
    /// What happened to the record.
    public enum Kind: String, Sendable, CaseIterable {
        /// It was inserted.
        case created
        /// A stored value of it was written (perhaps the same value again),
        /// or its picture (a coffee's, a user's profile picture) was stored
        /// or removed.
        case updated
        /// It was deleted.
        case deleted
    }

    /// Its place in the log: later changes have larger numbers, and a
    /// number is never given twice.
    public let sequence: Int64
    /// The app whose record changed.
    public let app: AppDatabase.App
    /// What happened.
    public let kind: Kind
    /// The record's ID.
    public let id: Int64

    /// Creates a change.
    public init(sequence: Int64, app: AppDatabase.App, kind: Kind, id: Int64) {
        self.sequence = sequence
        self.app = app
        self.kind = kind
        self.id = id
    }
}

/// What ``AppDatabase/recordChanges(after:apps:limit:)`` found.
public struct RecordChangeBatch: Sendable, Equatable {
    /// The changes after the sequence asked for, of the apps asked for,
    /// oldest first, at most the limit asked for.
    public let changes: [RecordChange]
    /// Whether changes after the sequence asked for are gone from the log
    /// (it keeps the newest ``AppDatabase/changeLogCapacity``), or the
    /// sequence is later than any the log gave (a database restored from
    /// an older backup): the reader missed changes and must read every
    /// record again, then go on from ``latest``.
    public let missedSome: Bool
    /// The newest sequence in the log when it was read, of any app.
    public let latest: Int64
    /// Where the next read goes on from: the last change's sequence when
    /// the batch was cut at the limit, else ``latest`` (nothing of the
    /// apps asked for lies between).
    public let resumeAfter: Int64

    /// Creates a batch.
    public init(changes: [RecordChange], missedSome: Bool, latest: Int64, resumeAfter: Int64) {
        self.changes = changes
        self.missedSome = missedSome
        self.latest = latest
        self.resumeAfter = resumeAfter
    }
}

extension AppDatabase {
    /// How many changes the log keeps: the newest. The triggers that write
    /// it drop the older ones as they go.
    public static let changeLogCapacity = 100_000

    /// The committed changes of the apps' records after `after`, oldest
    /// first: who created, updated or deleted which record, whichever
    /// program did it.
    ///
    /// ```swift
    /// var cursor = try await database.latestChangeSequence()
    /// // later:
    /// let batch = try await database.recordChanges(after: cursor, apps: [.people], limit: 500)
    /// if batch.missedSome { reloadEverything() } else { apply(batch.changes) }
    /// cursor = batch.resumeAfter
    /// ```
    ///
    /// A change is logged when its transaction commits, with the next
    /// sequence; a transaction rolled back logs nothing. An `UPDATE` that
    /// writes a value a record already had is logged too. Updates of one
    /// record that follow each other in a batch come as one, the last. The log is a
    /// signal to read again, not the data: read the record through its
    /// store (it may have changed again since, or be gone).
    ///
    /// - Parameters:
    ///   - after: The last sequence the reader has seen: 0 for the
    ///     beginning, or ``RecordChangeBatch/resumeAfter`` of the last batch.
    ///   - apps: Only these apps' changes (every app by default; none when
    ///     empty).
    ///   - limit: At most this many changes, 1 or more.
    /// - Throws: ``ValidationError`` when `after` is negative or `limit`
    ///   below 1; a database error.
    public func recordChanges(after: Int64, apps: [App] = App.allCases, limit: Int) async throws
        -> RecordChangeBatch
    {
        if after < 0 {
            throw ValidationError(field: "after", message: "after must be a change's sequence: 0 or more")
        }
        if limit < 1 { throw ValidationError(field: "limit", message: "limit must be 1 or more") }
        let names: [SQL] = Array(Set(apps.map(\.rawValue))).sorted().map { "\($0)" }
        let table = RecordChangeLog.table
        let query: SQL = """
            SELECT sequence, app, kind, record_id FROM \(table)
            WHERE sequence > \(after) AND app IN (\(names.joined(separator: ", ")))
            ORDER BY sequence LIMIT \(Int64(limit))
            """
        return try await sharedRead { db in
            // One read: the bounds and the changes are of one state of the log.
            let latest = try RecordChangeLog.latest(db)
            let oldest = try db.fetchOne(Int64.self, "SELECT min(sequence) FROM \(table)")
            var changes: [RecordChange] = []
            var rows = 0
            var last = after
            if !names.isEmpty {
                let cursor = try db.fetchCursor(query)
                while let row = try cursor.next() {
                    rows += 1
                    last = try row[0]
                    // A row another program wrote with an unknown app or kind is left out.
                    guard let app = App(rawValue: try row[1]), let kind = RecordChange.Kind(rawValue: try row[2])
                    else { continue }
                    let change = RecordChange(sequence: last, app: app, kind: kind, id: try row[3])
                    // Updates of one record in a row say the same thing: the
                    // reader sees them together, after all of them, so the
                    // last one stands for all (a profile picture replaced,
                    // its old row deleted and the new one inserted, is one).
                    if kind == .updated, let previous = changes.last, previous.kind == .updated,
                        previous.app == app, previous.id == change.id
                    {
                        changes[changes.count - 1] = change
                    } else {
                        changes.append(change)
                    }
                }
            }
            // The log's sequences have no gaps but the trimmed start: a
            // reader is behind it when the first kept is not next after `after`.
            let trimmed = after < latest && after < (oldest ?? latest + 1) - 1
            return RecordChangeBatch(
                changes: changes, missedSome: after > latest || trimmed, latest: latest,
                resumeAfter: rows == limit ? last : latest)
        }
    }

    /// The newest sequence in the change log (0 when nothing was ever
    /// logged): where a reader that has just read every record goes on
    /// from.
    public func latestChangeSequence() async throws -> Int64 {
        try await sharedRead { db in try RecordChangeLog.latest(db) }
    }
}

/// The change log's table and the triggers that fill it.
///
/// ```sql
/// CREATE TABLE record_changes (
///     sequence INTEGER PRIMARY KEY AUTOINCREMENT,   -- never reused
///     app TEXT NOT NULL,                            -- 'people', 'contacts', 'coffee', 'users'
///     kind TEXT NOT NULL,                           -- 'created', 'updated', 'deleted'
///     record_id INTEGER NOT NULL)
/// ```
///
/// - **Triggers, not the stores**, write it, so a change made by any
///   program is logged, in the transaction that makes it.
/// - **One table for every app**, made by a shared migration
///   (``AppDatabase/sharedMigrations``) before the apps'; each app's own
///   migration adds the triggers on its table (``createTriggers(app:table:key:)``),
///   so that an app whose table was refused gets none until its migrations
///   run.
/// - **`AUTOINCREMENT`**: a sequence is never reused, even after the
///   newest rows are trimmed or the table emptied, and a rolled-back
///   transaction rolls back its numbers too, so the kept sequences have no
///   gaps: a reader knows it missed some when the oldest kept is not next
///   after its own.
/// - **Trimmed as it grows**: each trigger deletes the rows more than
///   ``AppDatabase/changeLogCapacity`` behind the newest, a range of the
///   primary key: usually one row, found without a scan.
enum RecordChangeLog {
    /// The table's name.
    static let tableName = "record_changes"
    /// The table, for SQL.
    static let table: SQL = "\(identifier: tableName)"

    /// The shared migration that makes the table. Never change it: it has
    /// shipped.
    static func createTable(_ db: Database) throws {
        try db.execute(
            """
            CREATE TABLE record_changes (
                sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                app TEXT NOT NULL,
                kind TEXT NOT NULL,
                record_id INTEGER NOT NULL)
            """)
    }

    /// Makes the triggers that log the changes of `table`, whose key is
    /// `key`, as `app`'s. Each app's `<app>.changeLog` migration calls it
    /// with its names written out; never change it, it has shipped.
    ///
    /// An `UPDATE` that changes a record's key logs the old key deleted and
    /// the new one created. Every trigger then trims the log to the newest
    /// 100,000 changes.
    static func createTriggers(app: String, table: String, key: String, in db: Database) throws {
        let quotedTable = quote(table)
        let quotedKey = quote(key)
        let trigger = { (event: String) in quote("record_changes_\(app)_\(event)") }
        let appLiteral = literal(app)
        // The literals are the app's constant names, not values: a trigger's
        // SQL cannot have bound parameters.
        try db.execute(
            sql: """
                CREATE TRIGGER \(trigger("insert")) AFTER INSERT ON \(quotedTable) BEGIN
                    INSERT INTO record_changes (app, kind, record_id) VALUES (\(appLiteral), 'created', NEW.\(quotedKey));
                    \(trim)
                END
                """)
        try db.execute(
            sql: """
                CREATE TRIGGER \(trigger("update")) AFTER UPDATE ON \(quotedTable) BEGIN
                    INSERT INTO record_changes (app, kind, record_id)
                        SELECT \(appLiteral), 'deleted', OLD.\(quotedKey) WHERE OLD.\(quotedKey) IS NOT NEW.\(quotedKey);
                    INSERT INTO record_changes (app, kind, record_id)
                        VALUES (\(appLiteral),
                            CASE WHEN OLD.\(quotedKey) IS NEW.\(quotedKey) THEN 'updated' ELSE 'created' END,
                            NEW.\(quotedKey));
                    \(trim)
                END
                """)
        try db.execute(
            sql: """
                CREATE TRIGGER \(trigger("delete")) AFTER DELETE ON \(quotedTable) BEGIN
                    INSERT INTO record_changes (app, kind, record_id) VALUES (\(appLiteral), 'deleted', OLD.\(quotedKey));
                    \(trim)
                END
                """)
    }

    /// Makes the triggers that log a change of `table`, which holds part
    /// of what `app`'s records show (the Users app's profile pictures), as
    /// an update of the record its column `recordKey` names: a row of it
    /// inserted or deleted. A row deleted with its record (the record's
    /// own delete is logged) logs nothing more. Each app's migration that
    /// calls it writes its names out; never change it once shipped.
    static func createTriggers(
        app: String, relatedTable table: String, recordKey: String, recordTable: String, recordTableKey: String,
        in db: Database
    ) throws {
        let trigger = { (event: String) in quote("record_changes_\(app)_\(table)_\(event)") }
        let log = { (row: String) in
            """
            INSERT INTO record_changes (app, kind, record_id)
                SELECT \(literal(app)), 'updated', \(row).\(quote(recordKey))
                WHERE EXISTS (SELECT 1 FROM \(quote(recordTable)) WHERE \(quote(recordTableKey)) = \(row).\(quote(recordKey)));
            \(trim)
            """
        }
        try db.execute(
            sql: "CREATE TRIGGER \(trigger("insert")) AFTER INSERT ON \(quote(table)) BEGIN \(log("NEW")) END")
        try db.execute(
            sql: "CREATE TRIGGER \(trigger("delete")) AFTER DELETE ON \(quote(table)) BEGIN \(log("OLD")) END")
    }

    /// Keeps the newest 100,000 changes: every trigger ends with it.
    private static let trim =
        "DELETE FROM record_changes WHERE sequence <= (SELECT max(sequence) FROM record_changes) - 100000;"

    /// `text` as an SQL string literal, for a trigger's constant names.
    private static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// `name` as a quoted SQL identifier.
    private static func quote(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The newest sequence ever given (0 for none): what `AUTOINCREMENT`
    /// keeps in `sqlite_sequence`, which outlives a log emptied by hand.
    static func latest(_ db: Database) throws -> Int64 {
        let given = try db.fetchOne(Int64.self, "SELECT seq FROM sqlite_sequence WHERE name = \(tableName)") ?? 0
        let kept = try db.fetchOne(Int64.self, "SELECT max(sequence) FROM \(table)") ?? 0
        return max(given, kept)
    }
}
