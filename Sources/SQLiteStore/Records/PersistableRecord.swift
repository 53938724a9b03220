/// A type that writes itself to its table: insert, update, save (upsert),
/// delete.
///
/// Declare the table once, and either list the columns by hand:
///
/// ```swift
/// struct Person: FetchableRecord, PersistableRecord {
///     static let tableName = "people"
///     var id: Int64?
///     var name: String
///     var age: Int?
///
///     init(row: Row) throws { ... }
///
///     func encode(to columns: inout RecordColumns) {
///         columns["id"] = id
///         columns["name"] = name
///         columns["age"] = age
///     }
///
///     mutating func didInsert(rowID: Int64) { id = rowID }
/// }
/// ```
///
/// or let an `Encodable` type write its properties as columns with no code
/// (each coding key is a column; see `encode(to:)` in the `Encodable`
/// extension):
///
/// ```swift
/// struct Person: Codable, FetchableRecord, PersistableRecord {
///     static let tableName = "people"
///     var id: Int64?
///     var name: String
///     var age: Int?
///     mutating func didInsert(rowID: Int64) { id = rowID }
/// }
///
/// var person = Person(id: nil, name: "Ada", age: 36)
/// try person.insert(db)          // person.id is now set
/// person.age = 37
/// try person.update(db)          // throws RecordError.recordNotFound if the row is gone
/// try person.delete(db)
/// ```
///
/// Only the columns the record encodes are written; other columns of the
/// table keep their values (or defaults, on insert). Values are always bound.
/// The SQL for each operation is generated once per type and connection,
/// with every identifier quoted, and its statement prepared once.
public protocol PersistableRecord: TableRecord {
    /// Writes the record's columns. Called for every write; write the same
    /// columns in the same order each time for the fastest path.
    func encode(to columns: inout RecordColumns) throws

    /// Called after a successful ``insert(_:)`` (and a ``save(_:)`` that
    /// inserted a record whose key was NULL) with the new row's rowid, which
    /// is the value of an `INTEGER PRIMARY KEY` column. Does nothing by
    /// default.
    mutating func didInsert(rowID: Int64)
}

extension PersistableRecord {
    /// Does nothing.
    public mutating func didInsert(rowID: Int64) {}

    /// Inserts the record and returns the new row's rowid, after handing it
    /// to ``didInsert(rowID:)``.
    ///
    /// A NULL key column (`id: Int64?` set to nil) gets its value from
    /// SQLite for an `INTEGER PRIMARY KEY` table. Throws a ``SQLiteError``
    /// when a constraint fails, such as ``ResultCode/constraintPrimaryKey``
    /// for a key that is already in the table.
    @discardableResult
    public mutating func insert(_ db: Database) throws -> Int64 {
        let plan = db.recordPlans.plan(for: Self.self)
        try plan.withColumns(of: self) { columns, layout in
            try layout.insert(columns, db)
        }
        let rowID = db.lastInsertedRowID
        didInsert(rowID: rowID)
        return rowID
    }

    /// Updates the row that has the record's primary key with all the
    /// columns the record encodes.
    ///
    /// Throws ``RecordError/recordNotFound(table:primaryKey:key:)`` when no
    /// row has that key (including a NULL key): an update never silently
    /// does nothing.
    public func update(_ db: Database) throws {
        let plan = db.recordPlans.plan(for: Self.self)
        try plan.withColumns(of: self) { columns, layout in
            guard try layout.update(columns, db) else {
                throw plan.notFound(key: columns.values[try plan.keyPosition(in: layout)])
            }
        }
    }

    /// Inserts the record, or updates the row that already has its primary
    /// key: one `INSERT ... ON CONFLICT DO UPDATE` statement (an upsert).
    ///
    /// When the key was NULL the record is new, and ``didInsert(rowID:)``
    /// receives its rowid.
    public mutating func save(_ db: Database) throws {
        let plan = db.recordPlans.plan(for: Self.self)
        let keyWasNull = try plan.withColumns(of: self) { columns, layout in
            try layout.upsert(columns, db)
            return columns.values[try plan.keyPosition(in: layout)].isNull
        }
        if keyWasNull { didInsert(rowID: db.lastInsertedRowID) }
    }

    /// Deletes the row that has the record's primary key; returns whether
    /// there was one.
    @discardableResult
    public func delete(_ db: Database) throws -> Bool {
        try Self.deleteOne(db, id: primaryKeyValue(db))
    }

    /// Whether a row has the record's primary key.
    public func exists(_ db: Database) throws -> Bool {
        try Self.exists(db, id: primaryKeyValue(db))
    }

    /// The value the record encodes for its primary key column.
    private func primaryKeyValue(_ db: Database) throws -> SQLiteValue {
        let plan = db.recordPlans.plan(for: Self.self)
        return try plan.withColumns(of: self) { columns, layout in
            columns.values[try plan.keyPosition(in: layout)]
        }
    }
}
