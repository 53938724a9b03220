import SQLiteStore
import Synchronization

/// A model of one of the apps, stored as a row of the app's table and read
/// and written through the library's record protocols.
///
/// A row is read strictly (``FetchableRecord/init(row:)``: a stored value
/// that is not what its field holds is an ``UnreadableRowError`` naming the
/// row and its columns) or leniently (``init(row:strict:)`` with `strict`
/// false: such values read as empty, so that a delete can say what it
/// deleted).
protocol AppRecord: FetchableRecord, PersistableRecord, Sendable {
    /// The columns of its table, each named once (see ``TableColumn``).
    associatedtype Columns: TableColumn
    /// The app whose table it is.
    static var app: AppDatabase.App { get }
    /// What one record is called in messages: "person".
    static var kind: String { get }
    /// The columns a list reads.
    static var selection: SQL { get }
    /// The columns one record's detail reads; the list's by default.
    static var detailSelection: SQL { get }
    /// The record's ID, its table's key.
    var id: Int64 { get }
    /// The version of the stored row it was read from (see
    /// ``RecordVersion``); nil when it was read without the columns the
    /// version covers (a coffee of the list).
    var recordVersion: RecordVersion? { get }
    /// Whether an insert reads the new row back: needed when the version
    /// covers what only the database knows (a coffee's picture version,
    /// set by a trigger); a record whose version is its own fields' takes
    /// it in `didInsert(rowID:)`.
    static var readsBackAfterInsert: Bool { get }

    /// A record from a row; with `strict`, a value that is not what its
    /// field holds is an ``UnreadableRowError``, else it reads as empty.
    init(row: Row, strict: Bool) throws
}

extension AppRecord {
    static var detailSelection: SQL { selection }
    static var readsBackAfterInsert: Bool { false }

    /// A record read strictly.
    init(row: Row) throws { try self.init(row: row, strict: true) }
}

/// A record not saved yet: the record's columns with its key NULL, so that
/// SQLite assigns it, and any columns the record does not hold (a password
/// hash).
struct NewRow<Record: AppRecord>: PersistableRecord {
    static var tableName: String { Record.tableName }
    static var primaryKey: String { Record.primaryKey }

    var record: Record
    var extraColumns: [(column: Record.Columns, value: SQLiteValue)] = []

    func encode(to columns: inout RecordColumns) throws {
        try record.encode(to: &columns)
        columns[Record.primaryKey] = nil
        for extra in extraColumns { columns[extra.column] = extra.value }
    }

    mutating func didInsert(rowID: Int64) { record.didInsert(rowID: rowID) }
}

/// Which rows of a list: `limit` rows (all when nil) after skipping
/// `offset`.
public struct ListPage: Sendable, Equatable {
    /// The most rows to give; nil for all.
    public var limit: Int?
    /// How many rows to skip first.
    public var offset: Int

    /// Every row.
    public static let all = ListPage()

    /// A page.
    ///
    /// - Precondition: `limit` and `offset` are not negative (the command
    ///   line checks them first).
    public init(limit: Int? = nil, offset: Int = 0) {
        precondition((limit ?? 0) >= 0 && offset >= 0, "a list page's limit and offset must not be negative")
        self.limit = limit
        self.offset = offset
    }

    var sql: SQL { "LIMIT \(Int64(limit ?? -1)) OFFSET \(Int64(offset))" }
}

/// The one place the four apps' stores read and write their records: fetch
/// by ID, list (whole, or in chunks as it is read), insert, read-check-then-
/// update, and delete-what-was-there, each in one access of the database.
struct RecordTable<Record: AppRecord>: Sendable {
    let database: AppDatabase

    /// `SELECT <selection> FROM <table>`.
    static var select: SQL { "SELECT \(Record.selection) FROM \(identifier: Record.tableName)" }

    private static var byKey: SQL { "\(identifier: Record.primaryKey)" }

    // MARK: - Reading

    /// The record with that ID (its detail columns), or nil.
    ///
    /// - Throws: ``UnreadableRowError`` when a stored value of the row is
    ///   not what its field holds.
    func record(id: Int64) async throws -> Record? {
        try await database.read(for: Record.app) { db in try Self.record(db, id: id) }
    }

    /// The record with that ID, read strictly in the access running.
    static func record(_ db: Database, id: Int64, strict: Bool = true) throws -> Record? {
        try db.fetchOne(byID, arguments: [id]).map { try Record(row: $0, strict: strict) }
    }

    /// `SELECT <details> FROM <table> WHERE <key> = ?`, put together once
    /// per record type: a get by ID is the commonest request, and putting
    /// its SQL together each time cost more than SQLite's part of it.
    private static var byID: SQL {
        QueryTexts.byID.withLock { queries in
            let type = ObjectIdentifier(Record.self)
            if let sql = queries[type] { return sql }
            let sql: SQL = "SELECT \(Record.detailSelection) FROM \(identifier: Record.tableName) WHERE \(byKey) = ?"
            queries[type] = sql
            return sql
        }
    }

    /// The rows matching `filter`, in order, those that can be read and
    /// those that cannot.
    func list(where filter: SQL = "1", orderBy order: SQL, page: ListPage = .all) async throws -> RecordList<Record> {
        let sql = Self.query(where: filter, orderBy: order, page: page)
        return try await database.read(for: Record.app) { db in try Self.list(db, sql) }
    }

    /// Walks the rows matching `filter` in order, handing them to `body` in
    /// chunks of at most `chunkSize` as they are read, on the reader
    /// connection's thread: memory stays flat however many rows there are.
    /// The whole walk sees one committed state of the database. With
    /// `details`, the rows are read with the record's detail columns.
    ///
    /// - Returns: How many rows were handed to `body`, readable or not.
    /// - Throws: What `body` throws, which ends the walk.
    @discardableResult
    func forEach(
        where filter: SQL = "1", orderBy order: SQL, page: ListPage = .all, details: Bool = false,
        chunkSize: Int = 256, _ body: @escaping @Sendable (RecordList<Record>) throws -> Void
    ) async throws -> Int {
        let sql = Self.query(where: filter, orderBy: order, page: page, details: details)
        let size = max(1, chunkSize)
        return try await database.read(for: Record.app) { db in
            var chunk = RecordList<Record>(records: [])
            var count = 0
            let cursor = try db.fetchCursor(Record.self, sql)
            while true {
                do {
                    guard let record = try cursor.next() else { break }
                    chunk.records.append(record)
                } catch let error as UnreadableRowError {
                    chunk.unreadable.append(error)
                }
                count += 1
                if chunk.records.count + chunk.unreadable.count == size {
                    try body(chunk)
                    chunk = RecordList(records: [])
                }
            }
            if !chunk.records.isEmpty || !chunk.unreadable.isEmpty || count == 0 { try body(chunk) }
            return count
        }
    }

    /// How many rows the table has.
    func count() async throws -> Int {
        try await database.read(for: Record.app) { db in try Record.fetchCount(db) }
    }

    /// The rows of a query, those that can be read and those that cannot.
    static func list(_ db: Database, _ sql: SQL) throws -> RecordList<Record> {
        var list = RecordList<Record>(records: [])
        let cursor = try db.fetchCursor(Record.self, sql)
        while true {
            do {
                guard let record = try cursor.next() else { break }
                list.records.append(record)
            } catch let error as UnreadableRowError {
                list.unreadable.append(error)
            }
        }
        return list
    }

    private static func query(where filter: SQL, orderBy order: SQL, page: ListPage, details: Bool = false) -> SQL {
        let select: SQL =
            details ? "SELECT \(Record.detailSelection) FROM \(identifier: Record.tableName)" : Self.select
        return "\(select) WHERE \(filter) ORDER BY \(order) \(page.sql)"
    }

    // MARK: - Writing

    /// Runs `check` (which throws to refuse the insert), then inserts a
    /// record with a new ID, and the extra columns given, in one
    /// transaction, and returns it with its ID (read back from the new row
    /// when the record asks for it, see ``AppRecord/readsBackAfterInsert``).
    func insert(
        _ record: Record, extraColumns: [(column: Record.Columns, value: SQLiteValue)] = [],
        check: (@Sendable (Database) throws -> Void)? = nil
    ) async throws -> Record {
        let row = NewRow(record: record, extraColumns: extraColumns)
        return try await database.write(for: Record.app) { db in
            try check?(db)
            var row = row
            try row.insert(db)
            guard Record.readsBackAfterInsert else { return row.record }
            return try Self.record(db, id: row.record.id, strict: false) ?? row.record
        }
    }

    /// Throws ``VersionConflictError`` unless the record with that ID is
    /// at `expected` (when given), in the access running; nothing when
    /// there is no such record (the write then reports it).
    static func checkVersion(_ db: Database, id: Int64, expected: RecordVersion?) throws {
        guard let expected, let current = try record(db, id: id, strict: false) else { return }
        if current.recordVersion != expected {
            throw VersionConflictError(
                kind: Record.kind, id: id, expected: expected, current: current.recordVersion ?? expected)
        }
    }

    /// Runs `check` (which throws to refuse the change), then sets the
    /// columns given a value (nil leaves one as it is; `SQLiteValue.null`
    /// writes NULL) of the record with that ID, in one transaction, and
    /// returns the record as it is afterwards, read strictly.
    ///
    /// With `ifVersion`, the record must be at that version when the
    /// transaction reads it, before `check` and the write.
    ///
    /// - Throws: ``RecordNotFoundError`` when no row has that ID;
    ///   ``VersionConflictError`` when it is not at `ifVersion`; what
    ///   `check` throws; ``UnreadableRowError`` when the row still holds a
    ///   value it cannot read (the change is rolled back).
    func update(
        id: Int64, setting columns: [(column: Record.Columns, value: (any SQLiteValueConvertible)?)],
        ifVersion: RecordVersion? = nil, check: (@Sendable (Database) throws -> Void)? = nil
    ) async throws -> Record {
        let assignments: [SQL] = try columns.compactMap { column in
            guard let value = try column.value?.sqliteValue else { return nil }
            return "\(column.column) = \(value)"
        }
        let statement: SQL = """
            UPDATE \(identifier: Record.tableName) SET \(assignments.joined(separator: ", "))
            WHERE \(Self.byKey) = \(id)
            """
        return try await database.write(for: Record.app) { db in
            try Self.checkVersion(db, id: id, expected: ifVersion)
            try check?(db)
            try db.execute(statement)
            guard db.changesCount > 0, let record = try Self.record(db, id: id) else {
                throw RecordNotFoundError(kind: Record.kind, id: id)
            }
            return record
        }
    }

    /// Deletes the record with that ID and returns it as it was: a row
    /// with unreadable values is deleted all the same, those fields empty
    /// in what is returned. With `ifVersion`, only if it is at that
    /// version, checked in the deleting transaction.
    ///
    /// - Throws: ``RecordNotFoundError``, ``VersionConflictError``, or a
    ///   database error.
    func delete(id: Int64, ifVersion: RecordVersion? = nil) async throws -> Record {
        try await database.write(for: Record.app) { db in
            guard let record = try Self.record(db, id: id, strict: false) else {
                throw RecordNotFoundError(kind: Record.kind, id: id)
            }
            if let ifVersion, record.recordVersion != ifVersion {
                throw VersionConflictError(
                    kind: Record.kind, id: id, expected: ifVersion, current: record.recordVersion ?? ifVersion)
            }
            try Record.deleteOne(db, id: id)
            return record
        }
    }

    /// Deletes the records with `ids` in one transaction: all of them, or,
    /// when any is not there, none.
    ///
    /// - Throws: ``RecordsNotFoundError`` naming every ID not there
    ///   (nothing was deleted), or a database error.
    func delete(ids: [Int64]) async throws -> [Record] {
        try await database.write(for: Record.app) { db in
            var records: [Record] = []
            var missing: [Int64] = []
            for id in ids {
                if let record = try Self.record(db, id: id, strict: false) {
                    records.append(record)
                } else {
                    missing.append(id)
                }
            }
            if !missing.isEmpty { throw RecordsNotFoundError(kind: Record.kind, missing: missing, given: ids.count) }
            for id in ids { try Record.deleteOne(db, id: id) }
            return records
        }
    }
}

/// What the four apps' stores share: a list in a chosen order, whole, by
/// page, or walked in chunks; the count; and deleting one record. Each
/// store gives its ``access`` and its default order; the methods are
/// written once, here.
public protocol RecordStore: Sendable {
    /// The app's record.
    associatedtype Record: Sendable
    /// The orders its list can take; by name unless told otherwise.
    associatedtype Sort: RecordSort

    /// How the shared methods reach the store's table; it has no API of
    /// its own.
    var access: RecordStoreAccess<Record, Sort> { get }
}

/// The orders of an app's list: each has one by name, the default. Each
/// app declares its conformance in its folder's `…App.swift`.
public protocol RecordSort: Sendable {
    /// By name, ignoring case and accents.
    static var name: Self { get }
    /// The way the order runs when none is asked for: ``SortDirection/descending``
    /// for one that goes from the largest value down (the newest first),
    /// ``SortDirection/ascending`` for one that goes up (A to Z, youngest
    /// first, cheapest first). Either can be asked for; lists show the
    /// direction beside the column they sort by.
    var defaultDirection: SortDirection { get }
}

/// How ``RecordStore``'s shared methods reach a store's table.
public struct RecordStoreAccess<Record: Sendable, Sort: Sendable>: Sendable {
    let list:
        @Sendable (_ filter: SQL, _ sort: Sort, _ direction: SortDirection, _ page: ListPage) async throws ->
            RecordList<Record>
    let forEach:
        @Sendable (
            _ filter: SQL, _ sort: Sort, _ direction: SortDirection, _ page: ListPage,
            _ body: @escaping @Sendable (RecordList<Record>) throws -> Void
        ) async throws -> Int
    let count: @Sendable () async throws -> Int
    let delete: @Sendable (_ id: Int64, _ ifVersion: RecordVersion?) async throws -> Record
    let deleteAll: @Sendable (_ ids: [Int64]) async throws -> [Record]
    let changes: @Sendable () -> ObservedValues<Bool>
}

extension RecordStoreAccess where Record: AppRecord {
    init(_ table: RecordTable<Record>, orderBy: @escaping @Sendable (Sort, SortDirection) -> SQL) {
        list = { filter, sort, direction, page in
            try await table.list(where: filter, orderBy: orderBy(sort, direction), page: page)
        }
        forEach = { filter, sort, direction, page, body in
            try await table.forEach(where: filter, orderBy: orderBy(sort, direction), page: page, body)
        }
        count = { try await table.count() }
        delete = { id, ifVersion in try await table.delete(id: id, ifVersion: ifVersion) }
        deleteAll = { ids in try await table.delete(ids: ids) }
        changes = { table.changes }
    }
}

extension RecordStore {
    /// Every record, in the given order (the store's default when nil),
    /// going `direction` (the order's own when nil).
    ///
    /// - Throws: ``UnreadableRowError`` naming the first row with a stored
    ///   value that is not what its field holds (see
    ///   ``list(sortedBy:direction:page:)``, which reads the others all the
    ///   same).
    public func all(sortedBy sort: Sort? = nil, direction: SortDirection? = nil) async throws -> [Record] {
        try await list(sortedBy: sort, direction: direction).get()
    }

    /// Every record that can be read, in the given order (the store's
    /// default when nil), and the rows that cannot, each named with its ID
    /// and columns.
    ///
    /// - Parameters:
    ///   - direction: Which way the order runs; the order's own
    ///     (``RecordSort/defaultDirection``) when nil.
    ///   - page: Which rows of the list; all by default.
    public func list(sortedBy sort: Sort? = nil, direction: SortDirection? = nil, page: ListPage = .all)
        async throws -> RecordList<Record>
    {
        let sort = sort ?? Sort.name
        return try await access.list("1", sort, direction ?? sort.defaultDirection, page)
    }

    /// Walks every record in the given order, going `direction` (the
    /// order's own when nil), without loading the whole list: `body` gets
    /// the rows in chunks as they are read, on a reader connection's
    /// thread, all from one committed state.
    ///
    /// - Returns: How many rows `body` was given.
    @discardableResult
    public func forEach(
        sortedBy sort: Sort? = nil, direction: SortDirection? = nil, page: ListPage = .all,
        _ body: @escaping @Sendable (RecordList<Record>) throws -> Void
    ) async throws -> Int {
        let sort = sort ?? Sort.name
        return try await access.forEach("1", sort, direction ?? sort.defaultDirection, page, body)
    }

    /// How many records there are.
    public func count() async throws -> Int {
        try await access.count()
    }

    /// Deletes a record and returns it as it was. A row with unreadable
    /// values is deleted all the same; those fields are empty (or nil) in
    /// what is returned.
    ///
    /// - Parameter ifVersion: Delete only if the record is still at this
    ///   version (see ``RecordVersion``), checked in the transaction that
    ///   deletes, so no write can come between; nil deletes whatever it
    ///   holds.
    /// - Throws: ``RecordNotFoundError``, ``VersionConflictError`` (nothing
    ///   was deleted), or a database error.
    @discardableResult
    public func delete(id: Int64, ifVersion: RecordVersion? = nil) async throws -> Record {
        try await access.delete(id, ifVersion)
    }

    /// Deletes several records in one transaction, all or none, and
    /// returns them as they were, in the order of `ids` (each ID once).
    ///
    /// ```swift
    /// try await store.delete(ids: [3, 4, 9])   // none deleted if 9 is not there
    /// ```
    ///
    /// - Throws: ``RecordsNotFoundError`` naming every ID that is not there
    ///   (nothing was deleted), or a database error.
    @discardableResult
    public func delete(ids: [Int64]) async throws -> [Record] {
        var unique: [Int64] = []
        for id in ids where !unique.contains(id) { unique.append(id) }
        return try await access.deleteAll(unique)
    }
}

/// Queries ``RecordTable`` puts together once per record type (a generic
/// type has no stored static properties of its own).
private enum QueryTexts {
    static let byID = Mutex<[ObjectIdentifier: SQL]>([:])
}
