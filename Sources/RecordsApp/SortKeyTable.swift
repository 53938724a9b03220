import SQLiteStore

/// The folded names of an app's table, kept in an indexed side table, so
/// that a list sorted by name walks an index instead of calling
/// `records_fold` on every row.
///
/// An expression index on `records_fold(lastname)` would break every
/// write by a tool that does not have the function (the `sqlite3` shell),
/// and a new column would change the original tutorial's table. So the
/// keys live beside it, `<table>_sortKey(<rowID> INTEGER PRIMARY KEY,
/// <key>...)`, indexed in sort order, and triggers written in plain SQL
/// keep one row there per row of the table, whoever writes:
///
/// - an insert adds the row's keys as NULL, "not computed";
/// - a change of a name (or of the ID) makes them NULL again;
/// - a delete removes them.
///
/// Only the app computes a key (``fill(_:)``): before a sorted read it
/// fills the NULL ones, in a write, so they are never out of date when
/// read. The check for NULL ones is a seek at the start of the index,
/// where NULL sorts first.
///
/// A key is `records_fold` of the column, computed by the app with that
/// SQL function (one statement for all the rows waiting), except that a
/// NULL name gets the integer 0:
/// NULL means "not computed", and 0, like NULL, sorts before any text
/// (`records_fold` only ever gives text), so the keys sort exactly as
/// `ORDER BY records_fold(column)` did. The key columns have no declared
/// type, so that 0 stays an integer and text stays text.
///
/// No foreign key ties the side table to the table: other tools run with
/// foreign keys off, and the triggers do what a cascade would, for
/// everyone.
struct SortKeyTable: FoldedColumns {
    /// The side table's name.
    let name: String
    /// The app's table.
    let table: String
    /// The app's table's `INTEGER PRIMARY KEY`, also the side table's.
    let rowID: String
    /// The name columns in sort order, each with its key column.
    let keys: [(column: String, key: String)]
    /// The SQL of ``isComplete(_:)`` and ``fill(_:)``, which every write of
    /// the app runs: made once, not on each write.
    private let queries: FoldingQueries

    init<Column: TableColumn>(on table: String, rowID: Column, keys: [(column: Column, key: String)]) {
        let name = "\(table)_sortKey"
        self.name = name
        self.table = table
        self.rowID = rowID.rawValue
        self.keys = keys.map { (column: $0.column.rawValue, key: $0.key) }
        // The first key marks a row's keys as computed.
        let side: SQL = "\(identifier: name)"
        let id: SQL = "\(identifier: self.rowID)"
        let firstKey: SQL = "\(identifier: self.keys[0].key)"
        // A key is `records_fold` of its column, 0 for NULL (see above);
        // the app's table is `source` in the fold.
        let assignments: [SQL] = self.keys.map {
            """
            \(identifier: $0.key) = coalesce(\(unsafeLiteral: SearchFolding.functionName)(source.\(identifier: $0.column)), 0)
            """
        }
        queries = FoldingQueries(
            anyWaiting: "SELECT EXISTS (SELECT 1 FROM \(side) WHERE \(firstKey) IS NULL)",
            deleteOrphans: """
                DELETE FROM \(side) WHERE \(firstKey) IS NULL AND \(id) NOT IN (SELECT \(id) FROM \(identifier: table))
                """,
            foldWaiting: """
                UPDATE \(side) SET \(assignments.joined(separator: ", "))
                FROM \(identifier: table) AS source WHERE \(side).\(id) = source.\(id) AND \(side).\(firstKey) IS NULL
                """)
    }

    /// The table joined with its keys, for a `FROM` clause: the side table
    /// first (CROSS JOIN keeps SQLite from reordering), so that a page
    /// walks its index and looks each row up by its ID.
    var joined: SQL {
        "\(identifier: name) CROSS JOIN \(identifier: table) USING (\(identifier: rowID))"
    }

    /// The keys then the ID, the order of the side table's index, for an
    /// `ORDER BY` clause going either way (SQLite walks the index
    /// backwards for a descending one).
    var sortOrder: SortOrder {
        SortOrder(
            keys.map { "\(identifier: name).\(identifier: $0.key)" } + ["\(identifier: name).\(identifier: rowID)"])
    }

    /// ``sortOrder`` going `direction`.
    func order(_ direction: SortDirection) -> SQL { sortOrder.sql(direction) }

    /// A condition that keeps the rows from the one `offset` rows from the
    /// start of the keys' order going `direction`: the position of that
    /// row, read from the index alone, as a row value `(key, ..., ID)` that
    /// the rows' own position is compared with (`>=` going up, `<=` going
    /// down), so that a page walks the index from its first row instead of
    /// looking up each row before it.
    ///
    /// Every key compared is filled (text or 0, never NULL), and the key
    /// columns have no affinity, so the comparison orders them as
    /// `ORDER BY` does.
    func from(offset: Int, direction: SortDirection) -> SQL {
        let qualified: [SQL] = sortOrder.terms.map(\.expression)
        let unqualified: [SQL] = keys.map { "\(identifier: $0.key)" } + ["\(identifier: rowID)"]
        let comparison: SQL = direction == .ascending ? ">=" : "<="
        return """
            (\(qualified.joined(separator: ", "))) \(comparison) (SELECT \(unqualified.joined(separator: ", ")) \
            FROM \(identifier: name) ORDER BY \(order(direction)) LIMIT 1 OFFSET \(Int64(offset)))
            """
    }

    /// Creates the side table, its index and its triggers, and computes
    /// the keys of the rows already there.
    func create(_ db: Database) throws {
        let keyColumns: [SQL] = keys.map { "\(identifier: $0.key)" }
        let watched: [SQL] = keys.map { "\(identifier: $0.column)" } + ["\(identifier: rowID)"]
        let trigger = { (event: String) -> SQL in "\(identifier: "\(name)_after_\(event)")" }
        try db.execute(
            """
            CREATE TABLE \(identifier: name) (
                \(identifier: rowID) INTEGER PRIMARY KEY, \(keyColumns.joined(separator: ", ")));
            CREATE INDEX \(identifier: "\(name)_order") ON \(identifier: name) (\(keyColumns.joined(separator: ", ")));
            CREATE TRIGGER \(trigger("insert")) AFTER INSERT ON \(identifier: table) BEGIN
                INSERT OR REPLACE INTO \(identifier: name) (\(identifier: rowID)) VALUES (new.\(identifier: rowID));
            END;
            CREATE TRIGGER \(trigger("update")) AFTER UPDATE OF \(watched.joined(separator: ", "))
            ON \(identifier: table) BEGIN
                DELETE FROM \(identifier: name) WHERE \(identifier: rowID) = old.\(identifier: rowID);
                INSERT OR REPLACE INTO \(identifier: name) (\(identifier: rowID)) VALUES (new.\(identifier: rowID));
            END;
            CREATE TRIGGER \(trigger("delete")) AFTER DELETE ON \(identifier: table) BEGIN
                DELETE FROM \(identifier: name) WHERE \(identifier: rowID) = old.\(identifier: rowID);
            END;
            INSERT INTO \(identifier: name) (\(identifier: rowID)) SELECT \(identifier: rowID) FROM \(identifier: table);
            """)
        // A migration may run on a connection that is not the app's.
        try SearchFolding.register(on: db)
        try fill(db)
    }

    /// Whether every row's keys are computed: a seek to the start of the
    /// index, where the NULL ones would be.
    func isComplete(_ db: Database) throws -> Bool {
        try queries.isComplete(db)
    }

    /// Computes the keys that are NULL, in the write running, and drops
    /// any whose row is gone.
    ///
    /// - Returns: How many rows got their keys.
    @discardableResult
    func fill(_ db: Database) throws -> Int {
        try queries.fill(db)
    }

    /// Computes every key again, for a migration that follows a change of
    /// ``SearchFolding/fold(_:)``: the keys computed before it may sort
    /// some names where they no longer belong.
    func refold(_ db: Database) throws {
        let cleared: [SQL] = keys.map { "\(identifier: $0.key) = NULL" }
        try db.execute("UPDATE \(identifier: name) SET \(cleared.joined(separator: ", "))")
        // A migration may run on a connection that is not the app's.
        try SearchFolding.register(on: db)
        try fill(db)
    }
}

extension RecordTable {
    /// The statement of page `number` (from 1) of `size` rows of the table
    /// joined with its sort keys, in `order` going `direction` (an order
    /// which may name the keys' columns, see ``SortKeyTable/sortOrder``),
    /// or when nil in the keys' own order, walking their index from the
    /// page's first row (see ``SortKeyTable/from(offset:direction:)``).
    static func pageSQL(
        keyedBy keys: SortKeyTable, orderBy order: SortOrder?, direction: SortDirection, number: Int, size: Int
    ) throws -> SQL {
        let select: SQL = "SELECT \(Record.selection) FROM \(keys.joined)"
        if let order {
            return "\(select) ORDER BY \(order.sql(direction)) \(try PageRules.sql(number: number, size: size))"
        }
        let offset = try PageRules.offset(number: number, size: size)
        let filter: SQL = offset == 0 ? "" : "WHERE \(keys.from(offset: offset, direction: direction))"
        return "\(select) \(filter) ORDER BY \(keys.order(direction)) LIMIT \(Int64(size) + 1)"
    }

    /// Page `number` (from 1) of `size` rows in `order` going `direction`,
    /// an order that uses the sort keys (nil: the keys' own order), and the
    /// table's count: read from a reader when every key is computed (the
    /// usual case), else in a write that first computes the missing ones
    /// (rows another program wrote since), so that the order is never
    /// that of stale keys.
    ///
    /// - Throws: ``ValidationError`` for a page number or size out of
    ///   range (see ``PageRules/offset(number:size:)``).
    func page(
        keyedBy keys: SortKeyTable, orderBy order: SortOrder?, direction: SortDirection, number: Int, size: Int
    ) async throws -> RecordPage<Record> {
        let sql = try Self.pageSQL(keyedBy: keys, orderBy: order, direction: direction, number: number, size: size)
        let read: @Sendable (Database) throws -> RecordPage<Record> = { db in
            var page = try RecordPage.read(db.fetchCursor(sql), number: number, size: size) { row in
                try Record(row: row, strict: true)
            }
            page.total = try Record.fetchCount(db)
            return page
        }
        return try await database.readFolded(for: Record.app, keys, read)
    }
}
