/// A type stored in one table, with a one-column primary key.
///
/// Declare the table (and the key, when it is not `id`) once; the SQL of
/// the operations below is generated from them on first use and cached by
/// the connection, with both names quoted.
///
/// ```swift
/// struct Person: Codable, FetchableRecord, PersistableRecord {
///     static let tableName = "peopleInfo"
///     static let primaryKey = "peopleInfoID"
///     var peopleInfoID: Int64?
///     var firstname: String
/// }
/// let person = try Person.fetchOne(db, id: 1)
/// let count = try Person.fetchCount(db)
/// try Person.deleteAll(db)
/// ```
public protocol TableRecord {
    /// The name of the table, as written in the schema (quoted by the
    /// library; do not quote it yourself).
    static var tableName: String { get }

    /// The primary key column: one column, `id` unless declared otherwise.
    static var primaryKey: String { get }
}

extension TableRecord {
    /// `id`.
    public static var primaryKey: String { "id" }

    /// The number of rows in the table.
    public static func fetchCount(_ db: Database) throws -> Int {
        try db.fetchOne(Int.self, sql: db.recordPlans.plan(for: Self.self).countSQL) ?? 0
    }

    /// Whether a row has this primary key.
    public static func exists(_ db: Database, id: some SQLiteValueConvertible) throws -> Bool {
        let plan = db.recordPlans.plan(for: Self.self)
        return try db.fetchOne(Bool.self, sql: plan.existsByKeySQL, arguments: [id]) ?? false
    }

    /// Deletes the row with this primary key; returns whether there was one.
    @discardableResult
    public static func deleteOne(_ db: Database, id: some SQLiteValueConvertible) throws -> Bool {
        try db.execute(sql: db.recordPlans.plan(for: Self.self).deleteByKeySQL, arguments: [id])
        return db.changesCount > 0
    }

    /// Deletes every row of the table; returns how many there were.
    @discardableResult
    public static func deleteAll(_ db: Database) throws -> Int {
        try db.execute(sql: db.recordPlans.plan(for: Self.self).deleteAllSQL)
        return db.changesCount
    }
}

extension TableRecord where Self: FetchableRecord {
    /// The record with this primary key, or nil when there is none.
    ///
    /// ```swift
    /// if let person = try Person.fetchOne(db, id: 42) { ... }
    /// ```
    @inlinable
    public static func fetchOne(_ db: Database, id: some SQLiteValueConvertible) throws -> Self? {
        try db.fetchOne(Self.self, sql: db.recordPlans.plan(for: Self.self).selectByKeySQL, arguments: [id])
    }

    /// All records of the table, in the table's order (usually the rowid).
    /// Use `db.fetchAll(Person.self, sql, arguments:)` to filter or sort.
    @inlinable
    public static func fetchAll(_ db: Database) throws -> [Self] {
        try db.fetchAll(Self.self, sql: db.recordPlans.plan(for: Self.self).selectAllSQL)
    }

    /// A cursor over all records of the table.
    @inlinable
    public static func fetchCursor(_ db: Database) throws -> RecordCursor<Self> {
        try db.fetchCursor(Self.self, sql: db.recordPlans.plan(for: Self.self).selectAllSQL)
    }
}
