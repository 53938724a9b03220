import SQLiteStore

/// Reads and writes people. Every value is a bound argument; every write
/// is validated first and runs in a transaction.
///
/// ```swift
/// let store = PeopleStore(database: database)
/// let ada = try store.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
/// try store.update(id: ada.id, with: PersonChanges(age: 37))
/// let found = try store.search("love")        // case- and accent-insensitive
/// ```
public struct PeopleStore: Sendable {
    private let database: AppDatabase

    /// Creates a store on the app's database.
    public init(database: AppDatabase) {
        self.database = database
    }

    private static let columns: SQL = "peopleInfoID, firstname, lastname, age"

    /// Everyone, in the given order.
    ///
    /// - Throws: ``UnreadableRowError`` naming the first row with a stored
    ///   value that is not what its field holds (see ``list(sortedBy:)``,
    ///   which reads the others all the same).
    public func all(sortedBy sort: PersonSort = .name) throws -> [Person] {
        try list(sortedBy: sort).get()
    }

    /// Everyone who can be read, in the given order, and the rows that
    /// cannot (text in the age column, a blob in a name), each named with
    /// its ID and columns.
    public func list(sortedBy sort: PersonSort = .name) throws -> RecordList<Person> {
        try database.read(for: .people) { db in
            try readList(db, "SELECT \(Self.columns) FROM peopleInfo ORDER BY \(Self.orderBy(sort))") {
                try Self.person($0)
            }
        }
    }

    /// The people whose first name, last name or full name matches `text`,
    /// ignoring case and accents.
    ///
    /// - Throws: ``ValidationError`` when `text` is blank;
    ///   ``UnreadableRowError`` for the first match that cannot be read.
    public func search(_ text: String, mode: SearchMode = .substring, sortedBy sort: PersonSort = .name) throws
        -> [Person]
    {
        try list(matching: text, mode: mode, sortedBy: sort).get()
    }

    /// The people matching `text` who can be read (as ``search(_:mode:sortedBy:)``),
    /// and the matching rows that cannot.
    ///
    /// - Throws: ``ValidationError`` when `text` is blank.
    public func list(matching text: String, mode: SearchMode = .substring, sortedBy sort: PersonSort = .name)
        throws -> RecordList<Person>
    {
        let needle = SearchFolding.fold(text.trimmingCharacters(in: .whitespacesAndNewlines))
        guard !needle.isEmpty else {
            throw ValidationError(field: "search text", message: "search text must not be empty")
        }
        let match: SQL = mode == .prefix ? "= 1" : "> 0"
        let sql: SQL = """
            SELECT \(Self.columns) FROM peopleInfo
            WHERE instr(records_fold(firstname), \(needle)) \(match)
               OR instr(records_fold(lastname), \(needle)) \(match)
               OR instr(records_fold(ifnull(firstname, '') || ' ' || ifnull(lastname, '')), \(needle)) \(match)
            ORDER BY \(Self.orderBy(sort))
            """
        return try database.read(for: .people) { db in
            try readList(db, sql) { try Self.person($0) }
        }
    }

    /// The person with that ID, or nil.
    ///
    /// - Throws: ``UnreadableRowError`` when a stored value of the row is
    ///   not what its field holds.
    public func person(id: Int64) throws -> Person? {
        try database.read(for: .people) { db in try Self.person(db, id: id) }
    }

    /// How many people there are.
    public func count() throws -> Int {
        try database.read(for: .people) { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM peopleInfo") ?? 0 }
    }

    /// Saves a new person and returns it with its ID.
    ///
    /// - Throws: ``ValidationError`` (nothing is written) or a database error.
    @discardableResult
    public func add(_ draft: PersonDraft) throws -> Person {
        let valid = try draft.validated()
        return try database.write(for: .people) { db in
            try db.execute(
                "INSERT INTO peopleInfo (firstname, lastname, age) VALUES (?, ?, ?)",
                arguments: [valid.firstName, valid.lastName, valid.age])
            return Person(
                id: db.lastInsertedRowID, firstName: valid.firstName, lastName: valid.lastName, age: valid.age)
        }
    }

    /// Changes the given fields of a person and returns the result.
    ///
    /// Only the given columns are written, so this is also how a row with
    /// an unreadable value is mended: give that field a new value.
    ///
    /// - Throws: ``ValidationError`` or ``RecordNotFoundError``, or
    ///   ``UnreadableRowError`` when a field not given still holds an
    ///   unreadable value (nothing is written then), or a database error.
    @discardableResult
    public func update(id: Int64, with changes: PersonChanges) throws -> Person {
        let valid = try changes.validated()
        return try database.write(for: .people) { db in
            // A NULL the row had in another column stays NULL.
            try db.execute(
                """
                UPDATE peopleInfo SET
                    firstname = coalesce(:first, firstname),
                    lastname = coalesce(:last, lastname),
                    age = coalesce(:age, age)
                WHERE peopleInfoID = :id
                """,
                arguments: ["first": valid.firstName, "last": valid.lastName, "age": valid.age, "id": id])
            guard db.changesCount > 0, let person = try Self.person(db, id: id) else {
                throw RecordNotFoundError(kind: "person", id: id)
            }
            return person
        }
    }

    /// Deletes a person and returns who it was.
    ///
    /// A row with unreadable values is deleted all the same; those fields
    /// are empty (or nil) in the returned person.
    ///
    /// - Throws: ``RecordNotFoundError`` or a database error.
    @discardableResult
    public func delete(id: Int64) throws -> Person {
        try database.write(for: .people) { db in
            guard
                let row = try db.fetchOne("SELECT \(Self.columns) FROM peopleInfo WHERE peopleInfoID = \(id)")
            else { throw RecordNotFoundError(kind: "person", id: id) }
            let person = try Self.person(row, strict: false)
            try db.execute("DELETE FROM peopleInfo WHERE peopleInfoID = ?", arguments: [id])
            return person
        }
    }

    // MARK: - Rows

    private static func orderBy(_ sort: PersonSort) -> SQL {
        let byName: SQL = "records_fold(lastname), records_fold(firstname), peopleInfoID"
        switch sort {
        case .name: return byName
        case .age: return "age IS NULL, age, \(byName)"
        case .newest: return "peopleInfoID DESC"
        }
    }

    private static func person(_ db: Database, id: Int64) throws -> Person? {
        try db.fetchOne("SELECT \(columns) FROM peopleInfo WHERE peopleInfoID = \(id)").map {
            try person($0)
        }
    }

    /// A person from a row; with `strict`, a value that is not what its
    /// field holds is an ``UnreadableRowError``, else it reads as empty.
    private static func person(_ row: Row, strict: Bool = true) throws -> Person {
        let id: Int64 = try row["peopleInfoID"]
        var reader = RowReader(row, table: "peopleInfo")
        // The original tutorial's table allows NULL names; they read as empty.
        let person = Person(
            id: id, firstName: try reader.text("firstname", field: "first name") ?? "",
            lastName: try reader.text("lastname", field: "last name") ?? "",
            age: try reader.integer("age", field: "age"))
        if strict { try reader.check(kind: "person", id: id) }
        return person
    }
}
