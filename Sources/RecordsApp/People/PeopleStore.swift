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

    private static let columns = "peopleInfoID, firstname, lastname, age"

    /// Everyone, in the given order.
    public func all(sortedBy sort: PersonSort = .name) throws -> [Person] {
        try database.read { db in
            try Self.people(db, "SELECT \(Self.columns) FROM peopleInfo ORDER BY \(Self.orderBy(sort))")
        }
    }

    /// The people whose first name, last name or full name matches `text`,
    /// ignoring case and accents.
    ///
    /// - Throws: ``ValidationError`` when `text` is blank.
    public func search(_ text: String, mode: SearchMode = .substring, sortedBy sort: PersonSort = .name) throws
        -> [Person]
    {
        let needle = SearchFolding.fold(text.trimmingCharacters(in: .whitespacesAndNewlines))
        guard !needle.isEmpty else {
            throw ValidationError(field: "search text", message: "search text must not be empty")
        }
        let match = mode == .prefix ? "= 1" : "> 0"
        let sql = """
            SELECT \(Self.columns) FROM peopleInfo
            WHERE instr(records_fold(firstname), :needle) \(match)
               OR instr(records_fold(lastname), :needle) \(match)
               OR instr(records_fold(ifnull(firstname, '') || ' ' || ifnull(lastname, '')), :needle) \(match)
            ORDER BY \(Self.orderBy(sort))
            """
        return try database.read { db in try Self.people(db, sql, arguments: ["needle": needle]) }
    }

    /// The person with that ID, or nil.
    public func person(id: Int64) throws -> Person? {
        try database.read { db in try Self.person(db, id: id) }
    }

    /// How many people there are.
    public func count() throws -> Int {
        try database.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM peopleInfo") ?? 0 }
    }

    /// Saves a new person and returns it with its ID.
    ///
    /// - Throws: ``ValidationError`` (nothing is written) or a database error.
    @discardableResult
    public func add(_ draft: PersonDraft) throws -> Person {
        let valid = try draft.validated()
        return try database.write { db in
            try db.execute(
                "INSERT INTO peopleInfo (firstname, lastname, age) VALUES (?, ?, ?)",
                arguments: [valid.firstName, valid.lastName, valid.age])
            return Person(
                id: db.lastInsertedRowID, firstName: valid.firstName, lastName: valid.lastName, age: valid.age)
        }
    }

    /// Changes the given fields of a person and returns the result.
    ///
    /// - Throws: ``ValidationError`` or ``RecordNotFoundError`` (nothing is
    ///   written), or a database error.
    @discardableResult
    public func update(id: Int64, with changes: PersonChanges) throws -> Person {
        let valid = try changes.validated()
        return try database.write { db in
            guard var person = try Self.person(db, id: id) else { throw RecordNotFoundError(kind: "person", id: id) }
            person.firstName = valid.firstName ?? person.firstName
            person.lastName = valid.lastName ?? person.lastName
            person.age = valid.age ?? person.age
            // Only the given columns are written, so a NULL the row had in
            // another column stays NULL.
            try db.execute(
                """
                UPDATE peopleInfo SET
                    firstname = coalesce(:first, firstname),
                    lastname = coalesce(:last, lastname),
                    age = coalesce(:age, age)
                WHERE peopleInfoID = :id
                """,
                arguments: ["first": valid.firstName, "last": valid.lastName, "age": valid.age, "id": id])
            return person
        }
    }

    /// Deletes a person and returns who it was.
    ///
    /// - Throws: ``RecordNotFoundError`` or a database error.
    @discardableResult
    public func delete(id: Int64) throws -> Person {
        try database.write { db in
            guard let person = try Self.person(db, id: id) else { throw RecordNotFoundError(kind: "person", id: id) }
            try db.execute("DELETE FROM peopleInfo WHERE peopleInfoID = ?", arguments: [id])
            return person
        }
    }

    // MARK: - Rows

    private static func orderBy(_ sort: PersonSort) -> String {
        let byName = "records_fold(lastname), records_fold(firstname), peopleInfoID"
        switch sort {
        case .name: return byName
        case .age: return "age IS NULL, age, \(byName)"
        case .newest: return "peopleInfoID DESC"
        }
    }

    private static func person(_ db: Database, id: Int64) throws -> Person? {
        try people(db, "SELECT \(columns) FROM peopleInfo WHERE peopleInfoID = ?", arguments: [id]).first
    }

    private static func people(_ db: Database, _ sql: String, arguments: StatementArguments = StatementArguments())
        throws -> [Person]
    {
        var people: [Person] = []
        let cursor = try db.fetchCursor(sql, arguments: arguments)
        while let row = try cursor.next() {
            people.append(
                Person(
                    id: try row["peopleInfoID"],
                    // The seed's table allows NULL names; they read as empty.
                    firstName: try row["firstname"] as String? ?? "",
                    lastName: try row["lastname"] as String? ?? "",
                    age: try row["age"]))
        }
        return people
    }
}
