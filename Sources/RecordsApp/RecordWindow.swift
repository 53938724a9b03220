import SQLiteStore

/// A window of an app's list, addressed by position rather than by page:
/// `limit` records from `offset`, with their details, and how many the
/// whole list has, read together from one committed state (so the count
/// and the window agree). The JSON API's lists are windows.
///
/// ```swift
/// let window = try await people.window(sortedBy: .age, limit: 20, offset: 40)
/// window.records.count   // at most 20
/// window.total           // every person
/// ```
public struct RecordWindow<Record: Sendable>: Sendable {
    /// The records of the window that could be read, in order.
    public var records: [Record]
    /// The rows of the window holding values their fields cannot hold.
    public var unreadable: [UnreadableRowError]
    /// How many records the whole list has (or how many match a search).
    public var total: Int
}

extension RecordWindow: Equatable where Record: Equatable {}

/// The checks of a window's bounds.
enum WindowRules {
    /// - Throws: ``ValidationError`` when `limit` is not from 1 to
    ///   ``PageRules/maxSize`` or `offset` is negative.
    static func check(limit: Int, offset: Int) throws {
        var validator = Validator()
        if !(1...PageRules.maxSize).contains(limit) {
            validator.fail("limit", "limit must be a whole number from 1 to \(PageRules.maxSize)")
        }
        if offset < 0 { validator.fail("offset", "offset must be a whole number from 0") }
        try validator.check()
    }
}

extension RecordTable {
    /// `limit` records from `offset` in `order` (their detail columns), and
    /// the table's count. With `keys`, `order` may name the keys' columns,
    /// and nil is the keys' own order, walked on their index from the
    /// window's first row; the keys of rows another program wrote are
    /// computed first, as for a page.
    func window(
        keyedBy keys: SortKeyTable? = nil, orderBy order: SortOrder?, direction: SortDirection = .ascending,
        limit: Int, offset: Int
    ) async throws -> RecordWindow<Record> {
        try WindowRules.check(limit: limit, offset: offset)
        let sql: SQL
        if let keys {
            let select: SQL = "SELECT \(Record.detailSelection) FROM \(keys.joined)"
            if let order {
                sql = "\(select) ORDER BY \(order.sql(direction)) LIMIT \(Int64(limit)) OFFSET \(Int64(offset))"
            } else {
                let filter: SQL = offset == 0 ? "" : "WHERE \(keys.from(offset: offset, direction: direction))"
                sql = "\(select) \(filter) ORDER BY \(keys.order(direction)) LIMIT \(Int64(limit))"
            }
        } else {
            sql = """
                SELECT \(Record.detailSelection) FROM \(identifier: Record.tableName) \
                ORDER BY \(order?.sql(direction) ?? "\(identifier: Record.primaryKey)") LIMIT \(Int64(limit)) OFFSET \(Int64(offset))
                """
        }
        let read: @Sendable (Database) throws -> RecordWindow<Record> = { db in
            var window = try Self.read(db, sql)
            window.total = try Record.fetchCount(db)
            return window
        }
        if let keys { return try await database.readFolded(for: Record.app, keys, read) }
        return try await database.read(for: Record.app, read)
    }

    /// `limit` of the records matching what a person typed (`text`), best
    /// first as ``fullTextSearch(_:using:limit:offset:)`` ranks them, from
    /// `offset`, with their detail columns, and how many match in all.
    func searchWindow(_ text: String, using search: IndexedSearch, limit: Int, offset: Int) async throws
        -> RecordWindow<Record>
    {
        try WindowRules.check(limit: limit, offset: offset)
        guard let pattern = IndexedSearch.pattern(text) else {
            return RecordWindow(records: [], unreadable: [], total: 0)
        }
        let fts: SQL = "\(identifier: search.index.name)"
        let rank = SQL(
            unsafeLiteral: "bm25(\(quotedIdentifier(search.index.name))" + search.weights.map { ", \($0)" }.joined()
                + ")")
        let sql: SQL = """
            SELECT t.* FROM (SELECT rowid AS matched, \(rank) AS score FROM \(fts) \
            WHERE \(fts) MATCH \(pattern.fts5Query) ORDER BY score, rowid LIMIT \(Int64(limit)) OFFSET \(Int64(offset))) AS m \
            JOIN (SELECT \(Record.detailSelection) FROM \(identifier: Record.tableName)) AS t \
            ON t.\(identifier: Record.primaryKey) = m.matched ORDER BY m.score, m.matched
            """
        let count: SQL = "SELECT count(*) FROM \(fts) WHERE \(fts) MATCH \(pattern.fts5Query)"
        // Rows another program wrote get their folded text first.
        return try await searching(search.index) { db in
            var window = try Self.read(db, sql)
            window.total = try db.fetchOne(Int.self, count) ?? 0
            return window
        }
    }

    private static func read(_ db: Database, _ sql: SQL) throws -> RecordWindow<Record> {
        var window = RecordWindow<Record>(records: [], unreadable: [], total: 0)
        let cursor = try db.fetchCursor(sql)
        while let row = try cursor.next() {
            do {
                window.records.append(try Record(row: row, strict: true))
            } catch let error as UnreadableRowError {
                window.unreadable.append(error)
            }
        }
        return window
    }
}

extension PeopleStore {
    /// `limit` people from `offset` in the given order (by name when nil)
    /// and direction (the order's default when nil), or the best matches
    /// of `search` when it is given, and how many there are in all; see
    /// ``RecordWindow``.
    ///
    /// - Throws: ``ValidationError`` when `limit` is not from 1 to
    ///   ``PageRules/maxSize`` or `offset` is negative.
    public func window(
        sortedBy sort: PersonSort? = nil, direction: SortDirection? = nil, matching search: String? = nil, limit: Int,
        offset: Int
    ) async throws -> RecordWindow<Person> {
        if let search {
            return try await table.searchWindow(search, using: Self.indexedSearch, limit: limit, offset: offset)
        }
        let sort = sort ?? .name
        let direction = direction ?? sort.defaultDirection
        if sort == .newest {
            return try await table.window(orderBy: Self.order(sort), direction: direction, limit: limit, offset: offset)
        }
        return try await table.window(
            keyedBy: PeopleSchema.sortKeys, orderBy: Self.keyedOrder(sort), direction: direction, limit: limit,
            offset: offset)
    }
}

extension ContactsStore {
    /// `limit` contacts from `offset` in the given order (by name when
    /// nil) and direction (the order's default when nil), and how many
    /// there are in all; see ``RecordWindow``.
    ///
    /// - Throws: ``ValidationError`` when `limit` is not from 1 to
    ///   ``PageRules/maxSize`` or `offset` is negative.
    public func window(sortedBy sort: ContactSort? = nil, direction: SortDirection? = nil, limit: Int, offset: Int)
        async throws -> RecordWindow<Contact>
    {
        let sort = sort ?? .name
        let direction = direction ?? sort.defaultDirection
        switch sort {
        case .name:
            return try await table.window(
                keyedBy: ContactsSchema.sortKeys, orderBy: nil, direction: direction, limit: limit, offset: offset)
        case .newest:
            return try await table.window(
                orderBy: Self.order(.newest), direction: direction, limit: limit, offset: offset)
        }
    }
}

extension CoffeeStore {
    /// `limit` coffees from `offset` in the given order (by name when nil)
    /// and direction (the order's default when nil), hydrated (price and
    /// picture), or the best matches of `search` when it is given, and how
    /// many there are in all; see ``RecordWindow``.
    ///
    /// - Throws: ``ValidationError`` when `limit` is not from 1 to
    ///   ``PageRules/maxSize`` or `offset` is negative.
    public func window(
        sortedBy sort: CoffeeSort? = nil, direction: SortDirection? = nil, matching search: String? = nil, limit: Int,
        offset: Int
    ) async throws -> RecordWindow<Coffee> {
        if let search {
            return try await table.searchWindow(search, using: Self.indexedSearch, limit: limit, offset: offset)
        }
        let sort = sort ?? .name
        return try await table.window(
            orderBy: Self.order(sort), direction: direction ?? sort.defaultDirection, limit: limit, offset: offset)
    }
}
