import Foundation
import SQLiteStore

/// What a merge or an apply needs to know about one replica's database,
/// loaded at the start of its transaction and used only inside it.
final class ReplicaContext {
    let db: Database
    let schema: SyncSchema
    /// This replica's number in `replicas`, and its identity.
    let localReplica: Int64
    let localUUID: UUID
    private var catalogs: [String: TableCatalog] = [:]
    private var columnNames: [Int64: [Int64: String]] = [:]
    private var tableNames: [Int64: String] = [:]
    private var uuids: [Int64: UUID] = [:]
    private var numbers: [UUID: Int64] = [:]
    /// Statements run once per change, prepared once per context (a pull's
    /// apply runs them thousands of times).
    private var rowStatement: Statement?
    private var cellStatement: Statement?
    private var setCellStatement: Statement?
    private var insertRowStatement: Statement?
    /// The UPDATE of one column of one table, by table and column.
    private var updateStatements: [String: [String: Statement]] = [:]
    /// The SELECT of one column of one table, by "table NUL column".
    private var selectStatements: [String: Statement] = [:]
    /// The INSERT of some columns of one table, by table and columns.
    private var insertStatements: [[String]: Statement] = [:]
    /// The SELECT of a row's small synced values, by table.
    private var rowValuesStatements: [String: Statement] = [:]
    /// The INSERT of a new row's cells, by their number.
    private var insertCellsStatements: [Int: Statement] = [:]

    private func prepared(_ slot: inout Statement?, _ sql: String) throws -> Statement {
        if let statement = slot { return statement }
        let statement = try db.makeStatement(sql: sql)
        slot = statement
        return statement
    }

    init(_ db: Database, schema: SyncSchema) throws {
        self.db = db
        self.schema = schema
        guard try db.tableExists(Bookkeeping.state),
            let state = try db.fetchOne(
                """
                SELECT s.replica, r.uuid FROM \(identifier: Bookkeeping.state) AS s
                JOIN \(identifier: Bookkeeping.replicas) AS r ON r.id = s.replica
                """)
        else {
            throw SyncError(.notInstalled, "this database has no sync bookkeeping; run SyncSchema.install first")
        }
        guard try db.columns(in: Bookkeeping.rows).contains(where: { $0.name == "id" }) else {
            throw SyncError(
                .notInstalled,
                "this database's sync bookkeeping was made by an earlier version of the engine; "
                    + "run SyncSchema.install again (from a migration) to upgrade it")
        }
        localReplica = try state.decode(Int64.self, at: 0)
        guard let uuid = UUID(bytes: try state.decode(Data.self, at: 1)) else {
            throw SyncError(.notInstalled, "this database's replica identity is damaged")
        }
        localUUID = uuid
        uuids[localReplica] = uuid
        numbers[uuid] = localReplica
        for table in schema.tables {
            let catalog = try TableCatalog.load(table, in: db)
            catalogs[table.name] = catalog
            tableNames[catalog.id] = table.name
            columnNames[catalog.id] = Dictionary(uniqueKeysWithValues: catalog.columnIDs.map { ($1, $0) })
        }
    }

    // MARK: Names

    func catalog(_ table: String) -> TableCatalog? { catalogs[table] }

    func table(_ name: String) -> SyncedTable? { schema.table(named: name) }

    func tableName(_ id: Int64) -> String? { tableNames[id] }

    func columnName(_ id: Int64, table: Int64) -> String? { columnNames[table]?[id] }

    /// Checks that every table and column a batch names is synced here,
    /// before anything is applied.
    func checkNames(in batch: ChangeBatch) throws {
        for table in batch.tables {
            guard let synced = self.table(table.name) else {
                throw SyncError(
                    .unknownTable(table.name), "the changes were refused: table \(table.name) is not synced here")
            }
            for column in table.columns where synced.columnIndex(column) == nil {
                throw SyncError(
                    .unknownColumn(table: table.name, column: column),
                    "the changes were refused: column \(column) of table \(table.name) is not synced here")
            }
        }
    }

    // MARK: Replicas

    func uuid(ofReplica number: Int64) throws -> UUID {
        if let uuid = uuids[number] { return uuid }
        let bytes = try db.fetchOne(
            Data.self, "SELECT uuid FROM \(identifier: Bookkeeping.replicas) WHERE id = \(number)")
        guard let bytes, let uuid = UUID(bytes: bytes) else {
            throw SyncError(.notInstalled, "replica \(number) is missing from the sync bookkeeping")
        }
        uuids[number] = uuid
        numbers[uuid] = number
        return uuid
    }

    func number(ofReplica uuid: UUID) throws -> Int64 {
        if let number = numbers[uuid] { return number }
        try db.execute("INSERT OR IGNORE INTO \(identifier: Bookkeeping.replicas) (uuid) VALUES (\(uuid.bytes))")
        let number = try db.fetchOne(
            Int64.self, "SELECT id FROM \(identifier: Bookkeeping.replicas) WHERE uuid = \(uuid.bytes)")!
        uuids[number] = uuid
        numbers[uuid] = number
        return number
    }

    // MARK: State

    func state(_ column: String) throws -> Int64 {
        try db.fetchOne(Int64.self, "SELECT \(identifier: column) FROM \(identifier: Bookkeeping.state)")!
    }

    func setState(_ column: String, _ value: Int64) throws {
        try db.execute("UPDATE \(identifier: Bookkeeping.state) SET \(identifier: column) = \(value)")
    }

    /// Runs `body` with the capture triggers off, inside the caller's
    /// transaction: the flag commits or rolls back with the changes.
    func applying<T>(_ body: () throws -> T) throws -> T {
        try setState("applying", 1)
        let result = try body()
        try setState("applying", 0)
        return result
    }

    /// Raises the clock to at least `clock`, so that later local edits
    /// carry higher versions than anything seen.
    func observe(clock: Int64) throws {
        try db.execute("UPDATE \(identifier: Bookkeeping.state) SET clock = max(clock, \(clock))")
    }

    // MARK: Rows and cells

    struct RowState {
        /// The row's number in `rows`, which keys its cells.
        var id: Int64
        var localID: Int64?
        var deleted: Bool
        var created: Int64?
    }

    func row(table: Int64, gid: UUID) throws -> RowState? {
        try row(table: table, gid: gid, withCell: nil).row
    }

    /// The row's state and, in the same query, one of its cells' (the
    /// common case of a pull: one changed column per row).
    func row(table: Int64, gid: UUID, withCell column: Int64?) throws -> (row: RowState?, cell: CellState?) {
        let statement = try prepared(
            &rowStatement,
            """
            SELECT r.id, r.local_id, r.deleted, r.created, c.clock, c.replica, c.position
            FROM \(Bookkeeping.rows) AS r
            LEFT JOIN \(Bookkeeping.cells) AS c ON c.row = r.id AND c.col = ?
            WHERE r.tbl = ? AND r.gid = ?
            """)
        let arguments = StatementArguments(values: [
            column.map(SQLiteValue.integer) ?? .null, .integer(table), .blob(gid.bytes),
        ])
        guard let row = try statement.fetchOne(arguments: arguments) else { return (nil, nil) }
        let state = RowState(
            id: try row.decode(Int64.self, at: 0), localID: try row.decode(Int64?.self, at: 1),
            deleted: try row.decode(Bool.self, at: 2), created: try row.decode(Int64?.self, at: 3))
        guard let clock = try row.decode(Int64?.self, at: 4) else { return (state, nil) }
        return (
            state,
            CellState(
                clock: clock, replica: try row.decode(Int64.self, at: 5), position: try row.decode(Int64?.self, at: 6))
        )
    }

    struct CellState {
        var clock: Int64
        var replica: Int64
        var position: Int64?
    }

    /// The version of column `column` of the row numbered `row`.
    func cell(row: Int64, column: Int64) throws -> CellState? {
        let statement = try prepared(
            &cellStatement, "SELECT clock, replica, position FROM \(Bookkeeping.cells) WHERE row = ? AND col = ?")
        let arguments = StatementArguments(values: [.integer(row), .integer(column)])
        guard let row = try statement.fetchOne(arguments: arguments) else { return nil }
        return CellState(
            clock: try row.decode(Int64.self, at: 0), replica: try row.decode(Int64.self, at: 1),
            position: try row.decode(Int64?.self, at: 2))
    }

    func version(of cell: CellState) throws -> Version {
        Version(clock: cell.clock, replica: try uuid(ofReplica: cell.replica))
    }

    func setCell(row: Int64, column: Int64, clock: Int64, replica: Int64, position: Int64?) throws {
        let statement = try prepared(
            &setCellStatement,
            """
            INSERT INTO \(Bookkeeping.cells) (row, col, clock, replica, position) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (row, col) DO UPDATE
            SET clock = excluded.clock, replica = excluded.replica, position = excluded.position
            """)
        try statement.execute(
            arguments: StatementArguments(values: [
                .integer(row), .integer(column), .integer(clock), .integer(replica),
                position.map(SQLiteValue.integer) ?? .null,
            ]))
    }

    /// Records the cells of a row new to this replica (numbered `row`), in
    /// one statement.
    func insertCells(
        row: Int64, _ cells: [(column: Int64, clock: Int64, replica: Int64)], position: Int64?
    ) throws {
        guard !cells.isEmpty else { return }
        let statement: Statement
        if let known = insertCellsStatements[cells.count] {
            statement = known
        } else {
            let rows = Array(repeating: "(?, ?, ?, ?, ?)", count: cells.count).joined(separator: ", ")
            statement = try db.makeStatement(
                sql: """
                    INSERT INTO \(Bookkeeping.cells) (row, col, clock, replica, position) VALUES \(rows)
                    ON CONFLICT (row, col) DO UPDATE
                    SET clock = excluded.clock, replica = excluded.replica, position = excluded.position
                    """)
            insertCellsStatements[cells.count] = statement
        }
        let number = SQLiteValue.integer(row)
        let at = position.map(SQLiteValue.integer) ?? .null
        var values: [SQLiteValue] = []
        values.reserveCapacity(cells.count * 5)
        for cell in cells {
            values += [number, .integer(cell.column), .integer(cell.clock), .integer(cell.replica), at]
        }
        try statement.execute(arguments: StatementArguments(values: values))
    }

    /// The values of a row's synced columns, in the declaration's order,
    /// read at once; NULL stands for a large column's (read apart).
    func rowValues(of table: SyncedTable, localID: Int64) throws -> [SQLiteValue] {
        let statement: Statement
        if let known = rowValuesStatements[table.name] {
            statement = known
        } else {
            let list = table.columns.map { table.isLarge($0) ? "NULL" : quotedIdentifier($0) }.joined(separator: ", ")
            statement = try db.makeStatement(
                sql:
                    "SELECT \(list) FROM \(quotedIdentifier(table.name)) WHERE \(quotedIdentifier(table.primaryKey)) = ?"
            )
            rowValuesStatements[table.name] = statement
        }
        guard let row = try statement.fetchOne(arguments: StatementArguments(values: [.integer(localID)])) else {
            return Array(repeating: .null, count: table.columns.count)
        }
        return try (0..<table.columns.count).map { try row[$0] }
    }

    /// Replaces a row's cells with its delete's: those of the row numbered
    /// `row`, or of a new tombstone when this replica never had the row.
    func tombstone(
        table: Int64, gid: UUID, row: Int64?, clock: Int64, replica: Int64, position: Int64?
    ) throws {
        let number: Int64
        if let row {
            try db.execute("DELETE FROM \(identifier: Bookkeeping.cells) WHERE row = \(row)")
            try db.execute(
                "UPDATE \(identifier: Bookkeeping.rows) SET local_id = NULL, deleted = 1 WHERE id = \(row)")
            number = row
        } else {
            try db.execute(
                """
                INSERT INTO \(identifier: Bookkeeping.rows) (tbl, gid, local_id, deleted, created)
                VALUES (\(table), \(gid.bytes), NULL, 1, \(position))
                """)
            number = db.lastInsertedRowID
        }
        try setCell(
            row: number, column: Int64(Bookkeeping.deleteColumn), clock: clock, replica: replica, position: position)
    }

    // MARK: The app's table

    func value(of column: String, in table: SyncedTable, localID: Int64) throws -> SQLiteValue {
        let key = table.name + "\u{0}" + column
        let statement: Statement
        if let known = selectStatements[key] {
            statement = known
        } else {
            statement = try db.makeStatement(
                sql: "SELECT \(quotedIdentifier(column)) FROM \(quotedIdentifier(table.name)) "
                    + "WHERE \(quotedIdentifier(table.primaryKey)) = ?")
            selectStatements[key] = statement
        }
        guard let row = try statement.fetchOne(arguments: StatementArguments(values: [.integer(localID)])) else {
            return .null
        }
        return try row[0]
    }

    func write(_ value: SQLiteValue, to column: String, in table: SyncedTable, localID: Int64) throws {
        let statement: Statement
        if let known = updateStatements[table.name]?[column] {
            statement = known
        } else {
            statement = try db.makeStatement(
                sql: "UPDATE \(quotedIdentifier(table.name)) SET \(quotedIdentifier(column)) = ? "
                    + "WHERE \(quotedIdentifier(table.primaryKey)) = ?")
            updateStatements[table.name, default: [:]][column] = statement
        }
        try statement.execute(arguments: StatementArguments(values: [value, .integer(localID)]))
    }

    /// Inserts a row new to this replica and maps its identity to the local
    /// ID SQLite gives it; returns that ID and the row's number in `rows`.
    func insert(
        _ values: [(column: String, value: SQLiteValue)], into table: SyncedTable, catalog: TableCatalog, gid: UUID,
        created: Int64?
    ) throws -> (localID: Int64, row: Int64) {
        let names = values.map(\.column)
        let key = [table.name] + names
        let statement: Statement
        if let known = insertStatements[key] {
            statement = known
        } else {
            let placeholders = Array(repeating: "?", count: values.count).joined(separator: ", ")
            let sql =
                names.isEmpty
                ? "INSERT INTO \(quotedIdentifier(table.name)) DEFAULT VALUES"
                : "INSERT INTO \(quotedIdentifier(table.name)) (\(names.map(quotedIdentifier).joined(separator: ", "))) "
                    + "VALUES (\(placeholders))"
            statement = try db.makeStatement(sql: sql)
            insertStatements[key] = statement
        }
        try statement.execute(arguments: StatementArguments(values: values.map(\.value)))
        let localID = db.lastInsertedRowID
        try prepared(
            &insertRowStatement,
            "INSERT INTO \(Bookkeeping.rows) (tbl, gid, local_id, deleted, created) VALUES (?, ?, ?, 0, ?)"
        ).execute(
            arguments: StatementArguments(values: [
                .integer(catalog.id), .blob(gid.bytes), .integer(localID), created.map(SQLiteValue.integer) ?? .null,
            ]))
        return (localID, db.lastInsertedRowID)
    }

    func deleteRow(of table: SyncedTable, localID: Int64) throws {
        try db.execute(
            "DELETE FROM \(identifier: table.name) WHERE \(identifier: table.primaryKey) = \(localID)")
    }
}
