import Foundation

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// The record types a connection has seen, each with its generated SQL and
/// prepared statements. One per ``Database``; emptied when it closes.
@usableFromInline
final class RecordPlans {
    private var plans: [ObjectIdentifier: RecordPlan] = [:]
    // Records are usually written many times in a row with the same type:
    // remembering the last one skips the dictionary.
    private var lastType: ObjectIdentifier?
    private var lastPlan: RecordPlan?

    init() {}

    /// The plan of a record type, made from its table name and primary key
    /// the first time.
    @usableFromInline
    func plan<Record: TableRecord>(for type: Record.Type) -> RecordPlan {
        let id = ObjectIdentifier(type)
        if id == lastType, let lastPlan { return lastPlan }
        let plan =
            plans[id]
            ?? RecordPlan(recordType: type, tableName: type.tableName, primaryKey: type.primaryKey)
        plans[id] = plan
        lastType = id
        lastPlan = plan
        return plan
    }

    func removeAll() {
        plans.removeAll()
        lastType = nil
        lastPlan = nil
    }
}

/// What a connection knows about one record type: its table and key, the SQL
/// that does not depend on the columns, and per set of encoded columns the
/// SQL and statements that write them.
@usableFromInline
final class RecordPlan {
    let recordType: Any.Type
    let tableName: String
    let primaryKey: String
    let quotedTable: String
    let quotedKey: String

    @usableFromInline let selectAllSQL: String
    @usableFromInline let selectByKeySQL: String
    let existsByKeySQL: String
    let deleteByKeySQL: String
    let deleteAllSQL: String
    let countSQL: String

    // Exclusivity is not checked on the two properties below, used for every
    // record written: they are only accessed from the non-reentrant methods
    // of this class.
    /// Most recently used first; a type usually writes one set of columns.
    @exclusivity(unchecked) private var layouts: [ColumnLayout] = []
    private static let maximumLayouts = 16
    /// What `Encodable` records of the type reuse.
    private let encodingCache = RecordEncodingCache()
    /// The buffer of the last encoded record, reused by the next one.
    @exclusivity(unchecked) private var spare = ContiguousArray<SQLiteValue>()

    init(recordType: Any.Type, tableName: String, primaryKey: String) {
        self.recordType = recordType
        self.tableName = tableName
        self.primaryKey = primaryKey
        quotedTable = quotedIdentifier(tableName)
        quotedKey = quotedIdentifier(primaryKey)
        selectAllSQL = "SELECT * FROM \(quotedTable)"
        selectByKeySQL = "SELECT * FROM \(quotedTable) WHERE \(quotedKey) = ?"
        existsByKeySQL = "SELECT EXISTS (SELECT 1 FROM \(quotedTable) WHERE \(quotedKey) = ?)"
        deleteByKeySQL = "DELETE FROM \(quotedTable) WHERE \(quotedKey) = ?"
        deleteAllSQL = "DELETE FROM \(quotedTable)"
        countSQL = "SELECT COUNT(*) FROM \(quotedTable)"
    }

    /// The record type's name, for errors. Made when needed: describing
    /// a type costs as much as encoding a few hundred columns.
    var typeName: String { String(describing: recordType) }

    // MARK: Encoding

    /// Empty columns for the next record to encode, reusing buffers.
    func makeColumns() -> RecordColumns {
        var buffer = ContiguousArray<SQLiteValue>()
        swap(&buffer, &spare)
        var columns = RecordColumns(reusing: buffer, expected: layouts.first?.names ?? [])
        columns.encodingCache = encodingCache
        return columns
    }

    /// Takes back the buffer of encoded columns.
    private func recycle(_ columns: inout RecordColumns) {
        swap(&columns.values, &spare)
        spare.removeAll(keepingCapacity: true)
    }

    /// Encodes a record, then runs `body` with its columns and their layout.
    func withColumns<Record: PersistableRecord, Result>(
        of record: Record, _ body: (RecordColumns, ColumnLayout) throws -> Result
    ) throws -> Result {
        var columns = makeColumns()
        defer { recycle(&columns) }
        try record.encode(to: &columns)
        if let error = columns.conversionError { throw error }
        return try body(columns, try layout(for: columns))
    }

    /// The layout of the encoded columns, made the first time.
    private func layout(for columns: RecordColumns) throws -> ColumnLayout {
        // The columns were checked against the first layout's names as they
        // were written (comparing the arrays only compares their storage).
        if let first = layouts.first, columns.isExpected, columns.expected == first.names { return first }
        if let index = layouts.firstIndex(where: { columns.hasNames($0.names) }) {
            let layout = layouts.remove(at: index)
            layouts.insert(layout, at: 0)
            return layout
        }
        guard columns.count > 0 else {
            throw RecordError.invalidRecord(type: typeName, reason: "it encodes no columns")
        }
        let layout = ColumnLayout(names: ContiguousArray(columns.columnNames), plan: self)
        layouts.insert(layout, at: 0)
        if layouts.count > Self.maximumLayouts { layouts.removeLast() }
        return layout
    }

    /// The position of the primary key among the columns; throws when the
    /// record does not encode it.
    func keyPosition(in layout: ColumnLayout) throws -> Int {
        guard let position = layout.keyPosition else {
            throw RecordError.invalidRecord(
                type: typeName,
                reason: "it does not encode its primary key column \(quotedKey) (declared by `primaryKey`)")
        }
        return position
    }

    func notFound(key: SQLiteValue) -> RecordError {
        .recordNotFound(table: tableName, primaryKey: primaryKey, key: key)
    }
}

/// One set of columns a record type writes, in order, with the SQL and
/// statements that write them, generated and prepared once.
final class ColumnLayout {
    let names: ContiguousArray<String>
    /// Where the primary key is among the names.
    let keyPosition: Int?
    private unowned let plan: RecordPlan
    private var insertStatement: Statement?
    private var updateStatement: Statement?
    private var upsertStatement: Statement?
    /// For UPDATE: the parameter number of each column (the key comes last).
    private lazy var updateParameters: [Int32] = {
        var parameters = [Int32](repeating: 0, count: names.count)
        var next: Int32 = 1
        for position in names.indices where position != keyPosition {
            parameters[position] = next
            next += 1
        }
        if let keyPosition { parameters[keyPosition] = next }
        return parameters
    }()

    init(names: ContiguousArray<String>, plan: RecordPlan) {
        self.names = names
        self.plan = plan
        keyPosition = names.firstIndex { ColumnNames.asciiCaseInsensitiveEquals($0, plan.primaryKey) }
    }

    private var quotedNames: [String] { names.map(quotedIdentifier) }

    var insertSQL: String {
        let placeholders = Array(repeating: "?", count: names.count).joined(separator: ", ")
        return "INSERT INTO \(plan.quotedTable) (\(quotedNames.joined(separator: ", "))) VALUES (\(placeholders))"
    }

    /// Nil when the record has no column besides its key.
    var updateSQL: String? {
        let assignments = names.indices.filter { $0 != keyPosition }.map { "\(quotedIdentifier(names[$0])) = ?" }
        guard !assignments.isEmpty else { return nil }
        return "UPDATE \(plan.quotedTable) SET \(assignments.joined(separator: ", ")) WHERE \(plan.quotedKey) = ?"
    }

    var upsertSQL: String {
        let assignments = names.indices.filter { $0 != keyPosition }.map { position in
            let name = quotedIdentifier(names[position])
            return "\(name) = excluded.\(name)"
        }
        let action = assignments.isEmpty ? "NOTHING" : "UPDATE SET " + assignments.joined(separator: ", ")
        return "\(insertSQL) ON CONFLICT (\(plan.quotedKey)) DO \(action)"
    }

    /// Runs INSERT with the columns' values.
    func insert(_ columns: RecordColumns, _ db: Database) throws {
        let statement = try insertStatement ?? db.makeStatement(sql: insertSQL)
        insertStatement = statement
        try Self.run(statement, columns, parameters: nil)
    }

    /// Runs UPDATE with the columns' values; returns whether a row had the
    /// key.
    func update(_ columns: RecordColumns, _ db: Database) throws -> Bool {
        let key = columns.values[try plan.keyPosition(in: self)]
        guard let sql = updateSQL else {
            return try db.fetchOne(Bool.self, sql: plan.existsByKeySQL, arguments: StatementArguments(values: [key]))
                ?? false
        }
        let statement = try updateStatement ?? db.makeStatement(sql: sql)
        updateStatement = statement
        try Self.run(statement, columns, parameters: updateParameters)
        return db.changesCount > 0
    }

    /// Runs INSERT ... ON CONFLICT DO UPDATE with the columns' values.
    func upsert(_ columns: RecordColumns, _ db: Database) throws {
        _ = try plan.keyPosition(in: self)
        let statement = try upsertStatement ?? db.makeStatement(sql: upsertSQL)
        upsertStatement = statement
        try Self.run(statement, columns, parameters: nil)
    }

    /// Binds the values (to parameters 1, 2, ... or to `parameters`) and
    /// runs the statement, which returns no rows.
    private static func run(_ statement: Statement, _ columns: RecordColumns, parameters: [Int32]?) throws {
        guard !statement.connection.isClosed else {
            throw SQLiteError.misuse("the database connection is closed", sql: statement.sql)
        }
        try statement.checkWriteAllowed()
        try bindAndStep(statement, columns.values, parameters, from: 0, borrowed: 0)
        statement.didComplete()
    }

    /// How many text or blob values one write binds without a copy; any
    /// more are copied by SQLite. Each one lent costs a stack frame.
    private static let maximumBorrowed = 64

    /// Binds the values from position `start` on, then steps and resets
    /// the statement.
    ///
    /// Text and blobs are bound without a copy (`SQLITE_STATIC`), which
    /// spares SQLite an allocation and a copy of the bytes per value. The
    /// bytes are only valid inside the closure that lends them, so the rest
    /// of the values are bound, and the statement run, inside it (see
    /// ``bindBorrowing(_:_:_:at:borrowed:)``).
    private static func bindAndStep(
        _ statement: Statement, _ values: ContiguousArray<SQLiteValue>, _ parameters: [Int32]?, from start: Int,
        borrowed: Int
    ) throws {
        let handle = statement.sqliteStatement
        for position in start..<values.count {
            let parameter = parameters?[position] ?? Int32(truncatingIfNeeded: position + 1)
            let code: Int32
            switch values[position] {
            case .integer(let value): code = sqlite3_bind_int64(handle, parameter, value)
            case .real(let value): code = sqlite3_bind_double(handle, parameter, value)
            case .null: code = sqlite3_bind_null(handle, parameter)
            case .text, .textBytes, .blob:
                if borrowed < maximumBorrowed, values[position].isLendable {
                    return try bindBorrowing(statement, values, parameters, at: position, borrowed: borrowed)
                }
                code = values[position].bind(to: handle, at: parameter)
            }
            if code != SQLITE_OK { throw failure(statement, code: code, values, parameters) }
        }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else {
            let error = failure(statement, code: code, values, parameters)
            sqlite3_reset(handle)
            throw error
        }
        sqlite3_reset(handle)
    }

    /// Binds the text or blob at `position` without a copy, then the
    /// values after it, and runs the statement, all while its bytes are
    /// lent; then binds the parameter to NULL, so that the statement never
    /// keeps a pointer to bytes that are gone.
    private static func bindBorrowing(
        _ statement: Statement, _ values: ContiguousArray<SQLiteValue>, _ parameters: [Int32]?, at position: Int,
        borrowed: Int
    ) throws {
        let handle = statement.sqliteStatement
        let parameter = parameters?[position] ?? Int32(truncatingIfNeeded: position + 1)
        // Binds the lent bytes, then the rest.
        func bindRest(_ bind: () -> Int32) throws {
            let code = bind()
            if code != SQLITE_OK { throw failure(statement, code: code, values, parameters) }
            defer { sqlite3_bind_null(handle, parameter) }
            try bindAndStep(statement, values, parameters, from: position + 1, borrowed: borrowed + 1)
        }
        switch values[position] {
        case .text(let text):
            let isLent: Void? = try text.utf8.withContiguousStorageIfAvailable { bytes in
                try bindRest {
                    bytes.withMemoryRebound(to: CChar.self) {
                        sqlite3_bind_text64(
                            handle, parameter, $0.baseAddress, UInt64($0.count), nil, UInt8(SQLITE_UTF8))
                    }
                }
            }
            if isLent != nil { return }
        case .textBytes(let data):
            return try data.withUnsafeBytes { bytes in
                try bindRest {
                    sqlite3_bind_text64(
                        handle, parameter, bytes.baseAddress?.assumingMemoryBound(to: CChar.self),
                        UInt64(bytes.count), nil, UInt8(SQLITE_UTF8))
                }
            }
        case .blob(let data):
            return try data.withUnsafeBytes { bytes in
                try bindRest { sqlite3_bind_blob64(handle, parameter, bytes.baseAddress, UInt64(bytes.count), nil) }
            }
        default:
            break
        }
        // Text without contiguous bytes to lend: bound as a copy.
        let code = values[position].bind(to: handle, at: parameter)
        if code != SQLITE_OK { throw failure(statement, code: code, values, parameters) }
        try bindAndStep(statement, values, parameters, from: position + 1, borrowed: borrowed)
    }

    private static func failure(
        _ statement: Statement, code: Int32, _ values: ContiguousArray<SQLiteValue>, _ parameters: [Int32]?
    ) -> SQLiteError {
        var ordered = Array(values)
        if let parameters {
            for position in ordered.indices { ordered[Int(parameters[position]) - 1] = values[position] }
        }
        return statement.error(code: code, arguments: StatementArguments(values: ordered))
    }
}
