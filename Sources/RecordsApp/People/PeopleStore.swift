import SQLiteStore

/// Reads and writes people. Every value is a bound argument; every write
/// is validated first and runs in a transaction. Every method runs on the
/// database's own threads (a reader of the pool, or the writer), never on
/// the caller's actor.
///
/// ```swift
/// let store = PeopleStore(database: database)
/// let ada = try await store.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
/// try await store.update(id: ada.id, with: PersonChanges(age: 37))
/// let found = try await store.search("love")  // case- and accent-insensitive
/// ```
public struct PeopleStore: Sendable {
    let table: RecordTable<Person>

    /// Creates a store on the app's database.
    public init(database: AppDatabase) {
        table = RecordTable(database: database)
    }

    /// Everyone, in the given order.
    ///
    /// - Throws: ``UnreadableRowError`` naming the first row with a stored
    ///   value that is not what its field holds (see ``list(sortedBy:page:)``,
    ///   which reads the others all the same).
    public func all(sortedBy sort: PersonSort = .name) async throws -> [Person] {
        try await list(sortedBy: sort).get()
    }

    /// Everyone who can be read, in the given order, and the rows that
    /// cannot (text in the age column, a blob in a name), each named with
    /// its ID and columns.
    ///
    /// - Parameter page: Which rows of the list; all by default.
    public func list(sortedBy sort: PersonSort = .name, page: ListPage = .all) async throws -> RecordList<Person> {
        try await table.list(orderBy: Self.orderBy(sort), page: page)
    }

    /// Walks everyone in the given order without loading the whole list:
    /// `body` gets the rows in chunks as they are read, on a reader
    /// connection's thread, all from one committed state.
    ///
    /// - Returns: How many rows `body` was given.
    @discardableResult
    public func forEach(
        sortedBy sort: PersonSort = .name, page: ListPage = .all,
        _ body: @escaping @Sendable (RecordList<Person>) throws -> Void
    ) async throws -> Int {
        try await table.forEach(orderBy: Self.orderBy(sort), page: page, body)
    }

    /// The people whose first name, last name or full name matches `text`,
    /// ignoring case and accents.
    ///
    /// - Throws: ``ValidationError`` when `text` is blank;
    ///   ``UnreadableRowError`` for the first match that cannot be read.
    public func search(_ text: String, mode: SearchMode = .substring, sortedBy sort: PersonSort = .name) async throws
        -> [Person]
    {
        try await list(matching: text, mode: mode, sortedBy: sort).get()
    }

    /// The people matching `text` who can be read (as ``search(_:mode:sortedBy:)``),
    /// and the matching rows that cannot.
    ///
    /// - Throws: ``ValidationError`` when `text` is blank.
    public func list(
        matching text: String, mode: SearchMode = .substring, sortedBy sort: PersonSort = .name,
        page: ListPage = .all
    ) async throws -> RecordList<Person> {
        try await table.list(where: Self.filter(text, mode: mode), orderBy: Self.orderBy(sort), page: page)
    }

    /// Walks the people matching `text` (as ``search(_:mode:sortedBy:)``)
    /// in chunks, as ``forEach(sortedBy:page:_:)`` walks everyone.
    ///
    /// - Throws: ``ValidationError`` when `text` is blank.
    @discardableResult
    public func forEach(
        matching text: String, mode: SearchMode = .substring, sortedBy sort: PersonSort = .name,
        page: ListPage = .all, _ body: @escaping @Sendable (RecordList<Person>) throws -> Void
    ) async throws -> Int {
        try await table.forEach(where: Self.filter(text, mode: mode), orderBy: Self.orderBy(sort), page: page, body)
    }

    /// The person with that ID, or nil.
    ///
    /// - Throws: ``UnreadableRowError`` when a stored value of the row is
    ///   not what its field holds.
    public func person(id: Int64) async throws -> Person? {
        try await table.record(id: id)
    }

    /// How many people there are.
    public func count() async throws -> Int {
        try await table.count()
    }

    /// Saves a new person and returns it with its ID.
    ///
    /// - Throws: ``ValidationError`` (nothing is written) or a database error.
    @discardableResult
    public func add(_ draft: PersonDraft) async throws -> Person {
        let valid = try draft.validated()
        return try await table.insert(
            Person(id: 0, firstName: valid.firstName, lastName: valid.lastName, age: valid.age))
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
    public func update(id: Int64, with changes: PersonChanges) async throws -> Person {
        let valid = try changes.validated()
        // A NULL the row had in another column stays NULL.
        return try await table.update(
            id: id,
            """
            UPDATE peopleInfo SET
                firstname = coalesce(\(valid.firstName), firstname),
                lastname = coalesce(\(valid.lastName), lastname),
                age = coalesce(\(valid.age), age)
            WHERE peopleInfoID = \(id)
            """)
    }

    /// Deletes a person and returns who it was.
    ///
    /// A row with unreadable values is deleted all the same; those fields
    /// are empty (or nil) in the returned person.
    ///
    /// - Throws: ``RecordNotFoundError`` or a database error.
    @discardableResult
    public func delete(id: Int64) async throws -> Person {
        try await table.delete(id: id)
    }

    // MARK: - Rows

    private static func filter(_ text: String, mode: SearchMode) throws -> SQL {
        let needle = SearchFolding.fold(text.trimmingCharacters(in: .whitespacesAndNewlines))
        guard !needle.isEmpty else {
            throw ValidationError(field: "search text", message: "search text must not be empty")
        }
        let match: SQL = mode == .prefix ? "= 1" : "> 0"
        return """
            instr(records_fold(firstname), \(needle)) \(match)
               OR instr(records_fold(lastname), \(needle)) \(match)
               OR instr(records_fold(ifnull(firstname, '') || ' ' || ifnull(lastname, '')), \(needle)) \(match)
            """
    }

    private static func orderBy(_ sort: PersonSort) -> SQL {
        let byName: SQL = "records_fold(lastname), records_fold(firstname), peopleInfoID"
        switch sort {
        case .name: return byName
        case .age: return "age IS NULL, age, \(byName)"
        case .newest: return "peopleInfoID DESC"
        }
    }
}
