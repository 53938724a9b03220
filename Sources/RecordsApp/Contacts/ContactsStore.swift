import SQLiteStore

/// Reads and writes contacts. Every value is a bound argument; every write
/// is validated first and runs in a transaction. Every method runs on the
/// database's own threads, never on the caller's actor.
///
/// ```swift
/// let store = ContactsStore(database: database)
/// try await store.add(ContactDraft(name: "Jane Doe", address: "12 Main St", contact: "+1 555 0100"))
/// let matches = try await store.find(name: "jane  doe")   // the original tutorial's "Find Contact"
/// let started = try await store.search("do")              // "Jane Doe": a word starts with "do"
/// ```
public struct ContactsStore: Sendable {
    let table: RecordTable<Contact>

    /// Creates a store on the app's database.
    public init(database: AppDatabase) {
        table = RecordTable(database: database)
    }

    /// Every contact, in the given order.
    ///
    /// - Throws: ``UnreadableRowError`` naming the first row with a stored
    ///   value that is not text (see ``list(sortedBy:page:)``, which reads the
    ///   others all the same).
    public func all(sortedBy sort: ContactSort = .name) async throws -> [Contact] {
        try await list(sortedBy: sort).get()
    }

    /// Every contact that can be read, in the given order, and the rows
    /// that cannot (a blob in a name), each named with its ID and columns.
    ///
    /// - Parameter page: Which rows of the list; all by default.
    public func list(sortedBy sort: ContactSort = .name, page: ListPage = .all) async throws -> RecordList<Contact> {
        try await table.list(orderBy: Self.orderBy(sort), page: page)
    }

    /// Walks every contact in the given order without loading the whole
    /// list: `body` gets the rows in chunks as they are read, on a reader
    /// connection's thread, all from one committed state.
    ///
    /// - Returns: How many rows `body` was given.
    @discardableResult
    public func forEach(
        sortedBy sort: ContactSort = .name, page: ListPage = .all,
        _ body: @escaping @Sendable (RecordList<Contact>) throws -> Void
    ) async throws -> Int {
        try await table.forEach(orderBy: Self.orderBy(sort), page: page, body)
    }

    /// The contacts whose name is `name`, ignoring case, accents,
    /// surrounding spaces and repeated spaces (the original tutorial's
    /// "Find Contact").
    ///
    /// - Throws: ``ValidationError`` when `name` is blank;
    ///   ``UnreadableRowError`` for the first match that cannot be read.
    public func find(name: String) async throws -> [Contact] {
        try await list(named: name).get()
    }

    /// The contacts named `name` that can be read (as ``find(name:)``), and
    /// the matching rows that cannot.
    ///
    /// - Throws: ``ValidationError`` when `name` is blank.
    public func list(named name: String) async throws -> RecordList<Contact> {
        let key = SearchFolding.nameKey(name)
        guard !key.isEmpty else {
            throw ValidationError(field: "name", message: "name must not be empty")
        }
        return try await table.list(where: "\(identifier: SearchFolding.nameKeyFunctionName)(NAME) = \(key)", orderBy: "ID")
    }

    /// The contacts whose name, or a word of it, starts with `text`,
    /// ignoring case, accents and repeated spaces, in the given order.
    ///
    /// - Throws: ``ValidationError`` when `text` is blank;
    ///   ``UnreadableRowError`` for the first match that cannot be read.
    public func search(_ text: String, sortedBy sort: ContactSort = .name) async throws -> [Contact] {
        try await list(matching: text, sortedBy: sort).get()
    }

    /// The contacts matching `text` that can be read (as
    /// ``search(_:sortedBy:)``), and the matching rows that cannot.
    ///
    /// - Throws: ``ValidationError`` when `text` is blank.
    public func list(matching text: String, sortedBy sort: ContactSort = .name, page: ListPage = .all)
        async throws -> RecordList<Contact>
    {
        try await table.list(where: Self.filter(text), orderBy: Self.orderBy(sort), page: page)
    }

    /// Walks the contacts matching `text` (as ``search(_:sortedBy:)``) in
    /// chunks, as ``forEach(sortedBy:page:_:)`` walks them all.
    ///
    /// - Throws: ``ValidationError`` when `text` is blank.
    @discardableResult
    public func forEach(
        matching text: String, sortedBy sort: ContactSort = .name, page: ListPage = .all,
        _ body: @escaping @Sendable (RecordList<Contact>) throws -> Void
    ) async throws -> Int {
        try await table.forEach(where: Self.filter(text), orderBy: Self.orderBy(sort), page: page, body)
    }

    /// The contact with that ID, or nil.
    ///
    /// - Throws: ``UnreadableRowError`` when a stored value of the row is
    ///   not text.
    public func contact(id: Int64) async throws -> Contact? {
        try await table.record(id: id)
    }

    /// How many contacts there are.
    public func count() async throws -> Int {
        try await table.count()
    }

    /// Saves a new contact and returns it with its ID.
    ///
    /// - Throws: ``ValidationError`` (nothing is written) or a database error.
    @discardableResult
    public func add(_ draft: ContactDraft) async throws -> Contact {
        let valid = try draft.validated()
        return try await table.insert(Contact(id: 0, name: valid.name, address: valid.address, contact: valid.contact))
    }

    /// Changes the given fields of a contact and returns the result.
    ///
    /// Only the given columns are written, so this is also how a row with
    /// an unreadable value is mended: give that field a new value.
    ///
    /// - Throws: ``ValidationError`` or ``RecordNotFoundError``, or
    ///   ``UnreadableRowError`` when a field not given still holds an
    ///   unreadable value (nothing is written then), or a database error.
    @discardableResult
    public func update(id: Int64, with changes: ContactChanges) async throws -> Contact {
        let valid = try changes.validated()
        return try await table.update(
            id: id,
            """
            UPDATE CONTACTS SET
                NAME = coalesce(\(valid.name), NAME),
                ADDRESS = coalesce(\(valid.address), ADDRESS),
                CONTACT = coalesce(\(valid.contact), CONTACT)
            WHERE ID = \(id)
            """)
    }

    /// Deletes a contact and returns who it was.
    ///
    /// A row with unreadable values is deleted all the same; those fields
    /// are empty in the returned contact.
    ///
    /// - Throws: ``RecordNotFoundError`` or a database error.
    @discardableResult
    public func delete(id: Int64) async throws -> Contact {
        try await table.delete(id: id)
    }

    // MARK: - Rows

    private static func filter(_ text: String) throws -> SQL {
        let needle = SearchFolding.nameKey(text)
        guard !needle.isEmpty else {
            throw ValidationError(field: "search text", message: "search text must not be empty")
        }
        let key: SQL = "\(identifier: SearchFolding.nameKeyFunctionName)(NAME)"
        return "(instr(\(key), \(needle)) = 1 OR instr(\(key), \(" " + needle)) > 0)"
    }

    private static func orderBy(_ sort: ContactSort) -> SQL {
        switch sort {
        case .name: "records_fold(NAME), ID"
        case .newest: "ID DESC"
        }
    }
}
