import SQLiteStore

/// Reads and writes contacts. Every value is a bound argument; every write
/// is validated first and runs in a transaction. Every method runs on the
/// database's own threads, never on the caller's actor.
///
/// ```swift
/// let store = ContactsStore(database: database)
/// try await store.add(ContactDraft(name: "Jane Doe", address: "12 Main St", contact: "+1 555 0100"))
/// let matches = try await store.find(name: "jane  doe")   // the original tutorial's "Find Contact"
/// let started = try await store.fullTextSearch("do")      // "Jane Doe": a word starts with "do"
/// ```
public struct ContactsStore: RecordStore {
    let table: RecordTable<Contact>
    /// How the shared methods reach the table.
    public var access: RecordStoreAccess<Contact, ContactSort> { RecordStoreAccess(table, orderBy: Self.orderBy) }

    /// Creates a store on the app's database.
    public init(database: AppDatabase) {
        table = RecordTable(database: database)
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
            throw ValidationError(ContactField.name, problem: "is required")
        }
        return try await table.database.read(for: Contact.app) { db in
            try RecordTable<Contact>.list(db, Self.named(key))
        }
    }

    /// The contact with that ID, or nil.
    ///
    /// - Throws: ``UnreadableRowError`` when a stored value of the row is
    ///   not text.
    public func contact(id: Int64) async throws -> Contact? {
        try await table.record(id: id)
    }

    /// Saves a new contact and returns it with its ID.
    ///
    /// A contact whose name another already has is not saved unless
    /// `allowingDuplicate` is true: two names are the same when their
    /// ``SearchFolding/nameKey(_:)`` is, that is ignoring case, accents,
    /// surrounding spaces and repeated spaces inside ("jane  DOE" is
    /// "Jane Doe"), the rule ``find(name:)`` finds by. The check and the
    /// insert are one transaction, so two saves of the same new name at
    /// once cannot both pass it.
    ///
    /// - Throws: ``ValidationError`` or ``DuplicateContactError`` (nothing
    ///   is written), or a database error.
    @discardableResult
    public func add(_ draft: ContactDraft, allowingDuplicate: Bool = false) async throws -> Contact {
        let valid = try draft.validated()
        let contact = Contact(id: 0, name: valid.name, address: valid.address, contact: valid.contact)
        if allowingDuplicate { return try await table.insert(contact) }
        let query = Self.named(SearchFolding.nameKey(valid.name))
        return try await table.insert(contact) { db in
            let existing = try RecordTable<Contact>.list(db, query)
            let ids = existing.records.map(\.id) + existing.unreadable.map(\.id)
            guard ids.isEmpty else {
                throw DuplicateContactError(name: valid.name, existing: existing.records, ids: ids.sorted())
            }
        }
    }

    /// The contacts whose name has that key (see
    /// ``SearchFolding/nameKey(_:)``), oldest first.
    private static func named(_ key: String) -> SQL {
        """
        \(RecordTable<Contact>.select) WHERE \(identifier: SearchFolding.nameKeyFunctionName)(\(Column.name)) = \(key) \
        ORDER BY \(Column.id)
        """
    }

    /// Changes the given fields of a contact and returns the result.
    ///
    /// Only the given columns are written, so this is also how a row with
    /// an unreadable value is mended: give that field a new value.
    ///
    /// - Parameter ifVersion: Write only if the contact is still at this
    ///   version (``Contact/version`` as it was read), checked in the
    ///   transaction that writes; nil writes whatever it holds.
    /// - Throws: ``ValidationError`` or ``RecordNotFoundError``,
    ///   ``VersionConflictError`` (someone changed the contact since), or
    ///   ``UnreadableRowError`` when a field not given still holds an
    ///   unreadable value (nothing is written then), or a database error.
    @discardableResult
    public func update(id: Int64, with changes: ContactChanges, ifVersion: RecordVersion? = nil) async throws
        -> Contact
    {
        try await table.update(id: id, setting: changes.validated().columns, ifVersion: ifVersion)
    }

    /// Page `number` (from 1) of `size` contacts in the given order (by name
    /// when nil) going `direction` (the order's own when nil), whether
    /// another page follows, and how many there are in all (counted in the
    /// same read); only that page is read, in one access of the database.
    ///
    /// - Throws: ``ValidationError`` when `number` is below 1 or `size` is
    ///   not from 1 to ``PageRules/maxSize``.
    ///
    /// By name, the page walks the names' sort-key index (see
    /// ``SortKeyTable``) either way, reading only the rows before the
    /// page's end. Names another program wrote since the last page get
    /// their keys first.
    public func page(sortedBy sort: ContactSort? = nil, direction: SortDirection? = nil, number: Int, size: Int)
        async throws -> RecordPage<Contact>
    {
        let sort = sort ?? .name
        let direction = direction ?? sort.defaultDirection
        switch sort {
        case .name:
            return try await table.page(
                keyedBy: ContactsSchema.sortKeys, orderBy: nil, direction: direction, number: number, size: size)
        case .newest:
            return try await table.page(orderBy: Self.orderBy(.newest, direction), number: number, size: size)
        }
    }

    // MARK: - Rows

    /// The order of a list going `direction`, folding the names as it
    /// sorts them; the ID breaks ties.
    @Sendable static func orderBy(_ sort: ContactSort, _ direction: SortDirection) -> SQL {
        order(sort).sql(direction)
    }

    /// The order of a list, going up.
    static func order(_ sort: ContactSort) -> SortOrder {
        switch sort {
        case .name: SortOrder(["records_fold(\(Column.name))", "\(Column.id)"])
        case .newest: SortOrder(["\(Column.id)"])
        }
    }

    private typealias Column = Contact.Columns
}

extension ContactChanges {
    /// The columns to set; nil leaves one as it is.
    var columns: [(column: Contact.Columns, value: (any SQLiteValueConvertible)?)] {
        [(.name, name), (.address, address), (.contact, contact)]
    }
}
