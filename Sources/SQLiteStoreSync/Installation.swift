import Foundation
import SQLiteStore

// The engine's bookkeeping, in the replica's own database so that a sync
// and the positions it moves commit together:
//
// - state: one row. This replica's number, the last hybrid logical clock
//   value issued or seen, the `applying` flag, the last server position
//   seen (`known`; on the server, the last one assigned) and the last
//   outbox entry the server acknowledged.
// - replicas: every replica met, numbered locally; on the server, the last
//   outbox entry acknowledged to each.
// - tables, columns: stable numbers for the synced names, so that
//   reordering a declaration changes nothing stored.
// - rows: global identity <-> local ID, and the row's number here (`id`,
//   an integer key that the other bookkeeping uses instead of the 16-byte
//   identity: integer keys make the B-trees of cells smaller and the joins
//   with rows direct lookups); a deleted row keeps its identity as a
//   tombstone. `created` is the server position of its first change
//   (server only), so a pull can send a row new to a device whole. The
//   identity goes on the wire; the number never leaves the database.
// - cells: the version of each (row number, column); column -1 is the
//   row's delete. `position` is the server's order (server only).
// - outbox: local changes not yet acknowledged, with their values and the
//   server position known when each was made (which tells the server what
//   the device had seen, hence which edits were concurrent).
// - conflicts: the values that lost.
// - staging: large values being received in chunks (or staged for an
//   apply), by content hash, with how many bytes have arrived and when the
//   last chunk did (`touched`, milliseconds since 1970: the server removes
//   uploads left untouched too long).
// - staged_bytes: the bytes of each staged value, under its staging id, in
//   a row of their own that only incremental BLOB I/O writes: moving the
//   progress must not rewrite them (SQLite rewrites a whole row on any
//   update).
// - large: the content hash and size of a large cell's BLOB, for the
//   version (clock, replica) it was computed for: the cell's current one,
//   and the versions of local writes still in the outbox that a pull has
//   replaced since (the push still carries them). A row of it whose version
//   is neither is stale, and goes when the cell is next written.
// - backfill: columns a replica started syncing after it had pulled (an
//   upgrade), whose values it has yet to fetch from the server, with how
//   far that fetch has gone and the server position it stops at.
//
// The triggers consult `state.applying`, not a per-connection function or
// temporary table, so that every connection of the app captures its writes
// with nothing registered on it, and so that the flag, set and cleared
// inside the transaction that applies remote changes, can never be left
// on by a crash: it commits or rolls back with that transaction.
enum Bookkeeping {
    static let state = "sqlitestore_sync_state"
    static let replicas = "sqlitestore_sync_replicas"
    static let tables = "sqlitestore_sync_tables"
    static let columns = "sqlitestore_sync_columns"
    static let rows = "sqlitestore_sync_rows"
    static let cells = "sqlitestore_sync_cells"
    static let outbox = "sqlitestore_sync_outbox"
    static let conflicts = "sqlitestore_sync_conflicts"
    static let staging = "sqlitestore_sync_staging"
    static let stagedBytes = "sqlitestore_sync_staged_bytes"
    static let large = "sqlitestore_sync_large"
    static let backfill = "sqlitestore_sync_backfill"

    /// The staging table's definition, under `name`.
    static func stagingTable(_ name: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(name) (
            id INTEGER PRIMARY KEY, hash BLOB NOT NULL UNIQUE, size INTEGER NOT NULL,
            received INTEGER NOT NULL, touched INTEGER NOT NULL)
        """
    }

    /// The rows table's definition, under `name`.
    static func rowsTable(_ name: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(name) (
            id INTEGER PRIMARY KEY, tbl INTEGER NOT NULL, gid BLOB NOT NULL, local_id INTEGER,
            deleted INTEGER NOT NULL DEFAULT 0, created INTEGER)
        """
    }

    /// The cells table's definition, under `name`.
    static func cellsTable(_ name: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(name) (
            row INTEGER NOT NULL, col INTEGER NOT NULL,
            clock INTEGER NOT NULL, replica INTEGER NOT NULL, position INTEGER,
            PRIMARY KEY (row, col)) WITHOUT ROWID
        """
    }

    /// Upgrades rows and cells made when they were keyed by the global
    /// identity (no row number): the rows get their numbers, in the order
    /// of their identities, and the cells are keyed by them. The capture
    /// triggers go first (they name the old columns; ``SyncSchema/install(in:replicaID:)``
    /// writes them anew for the declared tables); a cell without a row, which
    /// no pull could send, is left out.
    static func upgradeRowNumbers(_ db: Database) throws {
        guard try db.tableExists(rows), try !db.columns(in: rows).contains(where: { $0.name == "id" }) else {
            return
        }
        let triggers = try db.fetchAll(
            String.self,
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'sqlitestore\\_sync\\_%' ESCAPE '\\'")
        for trigger in triggers { try db.execute(sql: "DROP TRIGGER \(quotedIdentifier(trigger))") }
        let newRows = rows + "_upgrade"
        let newCells = cells + "_upgrade"
        try db.execute(sql: rowsTable(newRows))
        try db.execute(
            sql: """
                INSERT INTO \(newRows) (tbl, gid, local_id, deleted, created)
                SELECT tbl, gid, local_id, deleted, created FROM \(rows) ORDER BY tbl, gid
                """)
        try db.execute(sql: cellsTable(newCells))
        try db.execute(
            sql: """
                INSERT INTO \(newCells) (row, col, clock, replica, position)
                SELECT r.id, c.col, c.clock, c.replica, c.position
                FROM \(cells) AS c JOIN \(newRows) AS r ON r.tbl = c.tbl AND r.gid = c.gid
                """)
        try db.execute(sql: "DROP TABLE \(cells)")
        try db.execute(sql: "DROP TABLE \(rows)")
        try db.execute(sql: "ALTER TABLE \(newRows) RENAME TO \(rows)")
        try db.execute(sql: "ALTER TABLE \(newCells) RENAME TO \(cells)")
    }

    /// Upgrades a staging table made before transfers recorded their time
    /// and kept their bytes apart: the bytes move to `staged_bytes`, and
    /// the transfers count as touched now, so that a server keeps them for
    /// the whole age it allows.
    static func upgradeStaging(_ db: Database) throws {
        guard try db.columns(in: staging).contains(where: { $0.name == "bytes" }) else { return }
        let upgraded = staging + "_upgrade"
        try db.execute(sql: "INSERT INTO \(stagedBytes) (id, bytes) SELECT id, bytes FROM \(staging)")
        try db.execute(sql: stagingTable(upgraded))
        try db.execute(
            sql: """
                INSERT INTO \(upgraded) (id, hash, size, received, touched)
                SELECT id, hash, size, received, CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)
                FROM \(staging)
                """)
        try db.execute(sql: "DROP TABLE \(staging)")
        try db.execute(sql: "ALTER TABLE \(upgraded) RENAME TO \(staging)")
    }

    /// The column number of a row's delete in `cells` and on the wire.
    static let deleteColumn = -1

    /// The next hybrid logical clock value: milliseconds since 1970 in the
    /// high bits, a counter in the low 16, never less than one more than the
    /// last value issued or seen. Plain SQL (julianday, not unixepoch's
    /// 'subsec', which needs SQLite 3.42), so the triggers need no function.
    static let tick = """
        UPDATE \(state) SET clock = max(clock + 1, \
        CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER) * 65536)
        """

    /// A new row's global identity, in plain SQL: an RFC 9562 version 7
    /// UUID, the milliseconds of `clock` (the state's clock, just ticked)
    /// in its first 48 bits and 12 bits of the clock's counter after the
    /// version, then 62 random bits. Identities a replica makes grow with
    /// its clock, so that the bookkeeping's indexes keyed by them take new
    /// rows at their end rather than at random places (an initial sync of
    /// many rows otherwise rewrites pages all over those indexes); the
    /// random bits keep two replicas' identities apart. Each byte is cut
    /// from a literal of all 256, since `unhex` needs SQLite 3.41.
    static func newIdentity(clock: String) -> String {
        let all = "x'" + (0..<256).map { String(format: "%02x", $0) }.joined() + "'"
        func byte(_ expression: String) -> String { "substr(\(all), ((\(expression)) & 255) + 1, 1)" }
        let milliseconds = [40, 32, 24, 16, 8, 0].map { byte("(\(clock) >> 16) >> \($0)") }
        let counter = [byte("112 | ((\(clock) >> 8) & 15)"), byte(clock)]
        let random = [byte("128 | (random() & 63)"), "randomblob(7)"]
        return "CAST(" + (milliseconds + counter + random).joined(separator: " || ") + " AS BLOB)"
    }

    static let schema = """
        CREATE TABLE IF NOT EXISTS \(state) (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            replica INTEGER NOT NULL,
            clock INTEGER NOT NULL,
            applying INTEGER NOT NULL,
            known INTEGER NOT NULL,
            acknowledged INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS \(replicas) (
            id INTEGER PRIMARY KEY,
            uuid BLOB NOT NULL UNIQUE,
            acknowledged INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE IF NOT EXISTS \(tables) (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
        CREATE TABLE IF NOT EXISTS \(columns) (
            tbl INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT NOT NULL,
            PRIMARY KEY (tbl, id), UNIQUE (tbl, name)) WITHOUT ROWID;
        \(rowsTable(rows));
        CREATE UNIQUE INDEX IF NOT EXISTS \(rows)_gid ON \(rows) (tbl, gid);
        CREATE UNIQUE INDEX IF NOT EXISTS \(rows)_local ON \(rows) (tbl, local_id);
        \(cellsTable(cells));
        CREATE INDEX IF NOT EXISTS \(cells)_position ON \(cells) (position) WHERE position IS NOT NULL;
        CREATE TABLE IF NOT EXISTS \(outbox) (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            tbl INTEGER NOT NULL, gid BLOB NOT NULL, col INTEGER NOT NULL,
            clock INTEGER NOT NULL, known INTEGER NOT NULL, value);
        CREATE INDEX IF NOT EXISTS \(outbox)_cell ON \(outbox) (tbl, gid, col);
        CREATE TABLE IF NOT EXISTS \(conflicts) (
            id INTEGER PRIMARY KEY,
            table_name TEXT NOT NULL, gid BLOB NOT NULL, column_name TEXT NOT NULL,
            losing_value, losing_clock INTEGER NOT NULL, losing_replica BLOB NOT NULL,
            winning_value, winning_clock INTEGER NOT NULL, winning_replica BLOB NOT NULL,
            winner_deleted INTEGER NOT NULL, position INTEGER NOT NULL);
        \(stagingTable(staging));
        CREATE TABLE IF NOT EXISTS \(stagedBytes) (id INTEGER PRIMARY KEY, bytes BLOB);
        CREATE TABLE IF NOT EXISTS \(large) (
            tbl INTEGER NOT NULL, gid BLOB NOT NULL, col INTEGER NOT NULL,
            clock INTEGER NOT NULL, replica INTEGER NOT NULL, hash BLOB NOT NULL, size INTEGER NOT NULL,
            PRIMARY KEY (tbl, gid, col, clock, replica)) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS \(large)_hash ON \(large) (hash);
        CREATE TABLE IF NOT EXISTS \(backfill) (
            tbl INTEGER NOT NULL, col INTEGER NOT NULL, after INTEGER NOT NULL, until INTEGER NOT NULL,
            PRIMARY KEY (tbl, col)) WITHOUT ROWID;
        """
}

extension SyncSchema {
    /// Creates the engine's bookkeeping tables and the triggers that capture
    /// changes to the synced tables, in `db`. Run it from a migration, once
    /// per replica; running it again (after adding a table or a column to
    /// the declaration, or after an upgrade of this library that changed
    /// its bookkeeping) keeps everything recorded, upgrades the
    /// bookkeeping and rewrites the triggers.
    ///
    /// Rows already in a synced table get a global identity and are
    /// recorded as local changes, to be pushed on the next sync.
    ///
    /// - Parameters:
    ///   - db: The replica's database, inside a transaction (a migration's).
    ///   - replicaID: This replica's identity, chosen once: a new random one
    ///     by default. Ignored when the database already has one.
    /// - Throws: ``SyncError/Kind/invalidDeclaration`` when a table, its
    ///   integer primary key or a column is missing; an `SQLiteError`.
    public func install(in db: Database, replicaID: UUID = UUID()) throws {
        try install(in: db, replicaID: replicaID, existingRows: .random)
    }

    /// Installs the engine as ``install(in:replicaID:)`` does, giving the
    /// rows already in the synced tables the identities `existingRows`
    /// chooses.
    public func install(in db: Database, replicaID: UUID = UUID(), existingRows: ExistingRowIdentity) throws {
        try Bookkeeping.upgradeRowNumbers(db)
        try db.execute(sql: Bookkeeping.schema)
        try Bookkeeping.upgradeStaging(db)
        if try db.fetchOne(Int.self, "SELECT COUNT(*) FROM \(identifier: Bookkeeping.state)") == 0 {
            try db.execute("INSERT INTO \(identifier: Bookkeeping.replicas) (uuid) VALUES (\(replicaID.bytes))")
            try db.execute(
                """
                INSERT INTO \(identifier: Bookkeeping.state) (id, replica, clock, applying, known, acknowledged)
                VALUES (1, \(db.lastInsertedRowID), 0, 0, 0, 0)
                """)
        }
        let pulled = try db.fetchOne(Int64.self, "SELECT known FROM \(identifier: Bookkeeping.state)") ?? 0
        for table in tables {
            try check(table, in: db)
            let before = try db.fetchAll(
                String.self,
                """
                SELECT c.name FROM \(identifier: Bookkeeping.columns) AS c
                JOIN \(identifier: Bookkeeping.tables) AS t ON t.id = c.tbl WHERE t.name = \(table.name)
                """)
            let catalog = try TableCatalog.register(table, in: db)
            // A replica that has pulled and starts syncing a column (an
            // upgrade) has skipped its values so far: fetch them on the next
            // pull, up to the position reached (later ones come with pulls).
            for column in table.columns where pulled > 0 && !before.contains(column) {
                try db.execute(
                    """
                    INSERT OR IGNORE INTO \(identifier: Bookkeeping.backfill) (tbl, col, after, until)
                    VALUES (\(catalog.id), \(catalog.columnIDs[column]!), 0, \(pulled))
                    """)
            }
            for statement in CaptureTriggers(table: table, catalog: catalog).statements {
                try db.execute(sql: statement)
            }
            try recordExistingRows(of: table, catalog: catalog, identity: existingRows, in: db)
        }
    }

    private func check(_ table: SyncedTable, in db: Database) throws {
        guard try db.tableExists(table.name) else {
            throw SyncError(.invalidDeclaration, "cannot sync table \(table.name): there is no such table")
        }
        let columns = try db.columns(in: table.name)
        let keys = columns.filter { $0.primaryKeyPosition != nil }
        // SQLite's names are case-insensitive: the original tutorial's
        // CONTACTS may have been made with `id` as well as `ID`.
        guard keys.count == 1, keys[0].name.lowercased() == table.primaryKey.lowercased(),
            keys[0].declaredType.uppercased() == "INTEGER"
        else {
            throw SyncError(
                .invalidDeclaration,
                "cannot sync table \(table.name): its primary key must be the one INTEGER PRIMARY KEY column "
                    + "\(table.primaryKey)")
        }
        let names = Set(columns.map { $0.name.lowercased() })
        for column in table.columns
        where !names.contains(column.lowercased()) || column.lowercased() == table.primaryKey.lowercased() {
            throw SyncError(
                .invalidDeclaration, "cannot sync column \(column) of table \(table.name): there is no such column")
        }
        guard Set(table.columns).count == table.columns.count, !table.columns.isEmpty else {
            throw SyncError(
                .invalidDeclaration, "cannot sync table \(table.name): list each of its columns once, at least one")
        }
        for column in table.largeColumns.sorted() where table.columnIndex(column) == nil {
            throw SyncError(
                .invalidDeclaration,
                "cannot sync column \(column) of table \(table.name) as large: it is not among the synced columns")
        }
    }

    /// Gives rows written before the engine was installed (or while a
    /// table was not yet declared) an identity, and queues them for push.
    private func recordExistingRows(
        of table: SyncedTable, catalog: TableCatalog, identity: ExistingRowIdentity, in db: Database
    ) throws {
        let unmapped = try db.fetchAll(
            Int64.self,
            """
            SELECT \(identifier: table.primaryKey) FROM \(identifier: table.name) AS t
            WHERE NOT EXISTS (SELECT 1 FROM \(identifier: Bookkeeping.rows) AS r
                              WHERE r.tbl = \(catalog.id) AND r.local_id = t.\(identifier: table.primaryKey))
            """)
        for localID in unmapped {
            // Large values are read from the table when pushed, not copied
            // (nor part of a row's identity from its contents).
            let small = table.columns.filter { !table.isLarge($0) }
            let row = try db.fetchOne(
                "SELECT \(identifiers: small + [table.primaryKey]) FROM \(identifier: table.name) WHERE \(identifier: table.primaryKey) = \(localID)"
            )
            guard let row else { continue }
            try db.execute(sql: Bookkeeping.tick)
            let clock = try db.fetchOne(Int64.self, "SELECT clock FROM \(identifier: Bookkeeping.state)") ?? 0
            let gid = try identity.globalID(
                table: table.name, localID: localID, values: small.indices.map { try row[$0] }, clock: clock
            ).bytes
            try db.execute(
                "INSERT INTO \(identifier: Bookkeeping.rows) (tbl, gid, local_id) VALUES (\(catalog.id), \(gid), \(localID))"
            )
            let rowNumber = db.lastInsertedRowID
            for column in table.columns {
                let col = catalog.columnIDs[column]!
                let value: SQLiteValue = try small.firstIndex(of: column).map { try row[$0] } ?? .null
                try db.execute(
                    """
                    INSERT INTO \(identifier: Bookkeeping.outbox) (tbl, gid, col, clock, known, value)
                    SELECT \(catalog.id), \(gid), \(col), clock, known, \(value) FROM \(identifier: Bookkeeping.state)
                    """)
                try db.execute(
                    """
                    INSERT INTO \(identifier: Bookkeeping.cells) (row, col, clock, replica)
                    SELECT \(rowNumber), \(col), clock, replica FROM \(identifier: Bookkeeping.state) WHERE true
                    ON CONFLICT (row, col) DO UPDATE SET clock = excluded.clock, replica = excluded.replica
                    """)
            }
        }
    }
}

/// A synced table's stable numbers in this database.
struct TableCatalog: Sendable {
    let id: Int64
    /// Column name -> stable number.
    let columnIDs: [String: Int64]

    static func register(_ table: SyncedTable, in db: Database) throws -> TableCatalog {
        try db.execute("INSERT OR IGNORE INTO \(identifier: Bookkeeping.tables) (name) VALUES (\(table.name))")
        let id = try db.fetchOne(
            Int64.self, "SELECT id FROM \(identifier: Bookkeeping.tables) WHERE name = \(table.name)")!
        for column in table.columns {
            try db.execute(
                """
                INSERT OR IGNORE INTO \(identifier: Bookkeeping.columns) (tbl, id, name)
                SELECT \(id), coalesce(max(id) + 1, 0), \(column) FROM \(identifier: Bookkeeping.columns)
                WHERE tbl = \(id)
                """)
        }
        return try load(table, in: db)
    }

    static func load(_ table: SyncedTable, in db: Database) throws -> TableCatalog {
        guard
            let id = try db.fetchOne(
                Int64.self, "SELECT id FROM \(identifier: Bookkeeping.tables) WHERE name = \(table.name)")
        else {
            throw SyncError(.notInstalled, "table \(table.name) is not installed for sync; run SyncSchema.install")
        }
        var columnIDs: [String: Int64] = [:]
        for row in try db.fetchAll("SELECT name, id FROM \(identifier: Bookkeeping.columns) WHERE tbl = \(id)") {
            columnIDs[try row.decode(String.self, at: 0)] = try row.decode(Int64.self, at: 1)
        }
        for column in table.columns where columnIDs[column] == nil {
            throw SyncError(.notInstalled, "column \(column) of \(table.name) is not installed for sync")
        }
        return TableCatalog(id: id, columnIDs: columnIDs)
    }
}

/// The triggers that record an app's writes to one synced table.
struct CaptureTriggers {
    let table: SyncedTable
    let catalog: TableCatalog

    private var name: String { table.name }
    private var key: String { quotedIdentifier(table.primaryKey) }
    private var tbl: String { String(catalog.id) }
    private func column(_ name: String) -> String { quotedIdentifier(name) }
    private func number(_ name: String) -> String { String(catalog.columnIDs[name]!) }
    private func trigger(_ kind: String) -> String { quotedIdentifier("sqlitestore_sync_\(kind)_\(name)") }

    private var notApplying: String { "(SELECT applying FROM \(Bookkeeping.state)) = 0" }
    private func gid(of row: String) -> String {
        "(SELECT gid FROM \(Bookkeeping.rows) WHERE tbl = \(tbl) AND local_id = \(row).\(key))"
    }

    /// `(SELECT col, value ... UNION ALL ...)` for the columns an update
    /// changed (all of them for an insert).
    private func changed(update: Bool, values: Bool) -> String {
        let parts = table.columns.map { name in
            // A large value is read from the table when pushed, not copied.
            let value = values ? (table.isLarge(name) ? ", NULL AS value" : ", NEW.\(column(name)) AS value") : ""
            let condition = update ? " WHERE NEW.\(column(name)) IS NOT OLD.\(column(name))" : ""
            return "SELECT \(number(name)) AS col\(value)\(condition)"
        }
        return "(" + parts.joined(separator: " UNION ALL ") + ")"
    }

    // Each write of a synced row runs these, so none of them makes SQLite
    // build a temporary table (each costs a B-tree opened and closed, a few
    // microseconds: about a tenth of a captured insert):
    // - the outbox's old entries are looked up by identity first, and the
    //   changed columns (`+col`: a filter, not the index's lookup) are
    //   listed only when the row has entries there: a new row has none;
    // - the changed columns come first in each join, `CROSS JOIN` keeping
    //   them there, so SQLite reads them as it goes (a coroutine) instead of
    //   storing them before the join.
    private func record(update: Bool) -> String {
        """
        DELETE FROM \(Bookkeeping.outbox) WHERE tbl = \(tbl) AND gid = \(gid(of: "NEW"))
            AND +col IN (SELECT col FROM \(changed(update: update, values: false)));
        INSERT INTO \(Bookkeeping.outbox) (tbl, gid, col, clock, known, value)
            SELECT \(tbl), r.gid, c.col, s.clock, s.known, c.value
            FROM \(changed(update: update, values: true)) AS c
            CROSS JOIN \(Bookkeeping.rows) AS r CROSS JOIN \(Bookkeeping.state) AS s
            WHERE r.tbl = \(tbl) AND r.local_id = NEW.\(key);
        INSERT INTO \(Bookkeeping.cells) (row, col, clock, replica)
            SELECT r.id, c.col, s.clock, s.replica
            FROM \(changed(update: update, values: false)) AS c
            CROSS JOIN \(Bookkeeping.rows) AS r CROSS JOIN \(Bookkeeping.state) AS s
            WHERE r.tbl = \(tbl) AND r.local_id = NEW.\(key)
            ON CONFLICT (row, col) DO UPDATE
            SET clock = excluded.clock, replica = excluded.replica, position = NULL;
        """
    }

    // No statement here relies on a conflict clause (OR IGNORE): the outer
    // statement's (an app's INSERT OR REPLACE) would override it. An upsert
    // is not overridden, as it names its own index: the insert trigger
    // gives a row its identity with one (`ON CONFLICT (tbl, local_id) DO
    // NOTHING`: a row that already has an identity keeps it) rather than
    // `WHERE NOT EXISTS` over the same table, which would make SQLite store
    // the new row aside before inserting it.
    var statements: [String] {
        let anyChanged = table.columns.map { "NEW.\(column($0)) IS NOT OLD.\(column($0))" }.joined(separator: " OR ")
        return [
            "DROP TRIGGER IF EXISTS \(trigger("insert"))",
            "DROP TRIGGER IF EXISTS \(trigger("update"))",
            "DROP TRIGGER IF EXISTS \(trigger("delete"))",
            """
            CREATE TRIGGER \(trigger("insert")) AFTER INSERT ON \(quotedIdentifier(name))
            WHEN \(notApplying)
            BEGIN
                \(Bookkeeping.tick);
                INSERT INTO \(Bookkeeping.rows) (tbl, gid, local_id)
                    SELECT \(tbl), \(Bookkeeping.newIdentity(clock: "clock")), NEW.\(key) FROM \(Bookkeeping.state)
                    WHERE true ON CONFLICT (tbl, local_id) DO NOTHING;
                \(record(update: false))
            END
            """,
            """
            CREATE TRIGGER \(trigger("update"))
            AFTER UPDATE OF \(([table.primaryKey] + table.columns).map(column).joined(separator: ", "))
            ON \(quotedIdentifier(name))
            WHEN \(notApplying)
            BEGIN
                UPDATE \(Bookkeeping.rows) SET local_id = NEW.\(key)
                    WHERE tbl = \(tbl) AND local_id = OLD.\(key) AND NEW.\(key) IS NOT OLD.\(key);
                \(Bookkeeping.tick) WHERE \(anyChanged);
                \(record(update: true))
            END
            """,
            """
            CREATE TRIGGER \(trigger("delete")) AFTER DELETE ON \(quotedIdentifier(name))
            WHEN \(notApplying)
            BEGIN
                \(Bookkeeping.tick);
                DELETE FROM \(Bookkeeping.outbox) WHERE tbl = \(tbl) AND gid = \(gid(of: "OLD"));
                INSERT INTO \(Bookkeeping.outbox) (tbl, gid, col, clock, known, value)
                    SELECT \(tbl), r.gid, \(Bookkeeping.deleteColumn), s.clock, s.known, NULL
                    FROM \(Bookkeeping.rows) AS r, \(Bookkeeping.state) AS s
                    WHERE r.tbl = \(tbl) AND r.local_id = OLD.\(key);
                DELETE FROM \(Bookkeeping.cells)
                    WHERE row = (SELECT id FROM \(Bookkeeping.rows) WHERE tbl = \(tbl) AND local_id = OLD.\(key));
                INSERT INTO \(Bookkeeping.cells) (row, col, clock, replica)
                    SELECT r.id, \(Bookkeeping.deleteColumn), s.clock, s.replica
                    FROM \(Bookkeeping.rows) AS r, \(Bookkeeping.state) AS s
                    WHERE r.tbl = \(tbl) AND r.local_id = OLD.\(key);
                UPDATE \(Bookkeeping.rows) SET local_id = NULL, deleted = 1 WHERE tbl = \(tbl) AND local_id = OLD.\(key);
            END
            """,
        ]
    }
}

extension UUID {
    /// The 16 bytes, as stored in the bookkeeping tables and sent.
    var bytes: Data {
        withUnsafeBytes(of: uuid) { Data($0) }
    }

    init?(bytes: Data) {
        guard bytes.count == 16 else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: bytes) }
        self.init(uuid: value)
    }
}
