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
/// let found = try await store.fullTextSearch("love")  // ranked; case and accents ignored
/// let first = try await store.page(sortedBy: .age, number: 1, size: 20)
/// ```
public struct PeopleStore: RecordStore {
    let table: RecordTable<Person>
    /// How the shared methods reach the table.
    public var access: RecordStoreAccess<Person, PersonSort> { RecordStoreAccess(table, orderBy: Self.orderBy) }

    /// Creates a store on the app's database.
    public init(database: AppDatabase) {
        table = RecordTable(database: database)
    }

    /// The person with that ID, or nil.
    ///
    /// - Throws: ``UnreadableRowError`` when a stored value of the row is
    ///   not what its field holds.
    public func person(id: Int64) async throws -> Person? {
        try await table.record(id: id)
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
    /// - Parameter ifVersion: Write only if the person is still at this
    ///   version (``Person/version`` as it was read), checked in the
    ///   transaction that writes; nil writes whatever it holds.
    /// - Throws: ``ValidationError`` or ``RecordNotFoundError``,
    ///   ``VersionConflictError`` (someone changed the person since), or
    ///   ``UnreadableRowError`` when a field not given still holds an
    ///   unreadable value (nothing is written then), or a database error.
    @discardableResult
    public func update(id: Int64, with changes: PersonChanges, ifVersion: RecordVersion? = nil) async throws
        -> Person
    {
        // A NULL the row had in another column stays NULL.
        try await table.update(id: id, setting: changes.validated().columns, ifVersion: ifVersion)
    }

    /// Page `number` (from 1) of `size` people in the given order (by name
    /// when nil) going `direction` (the order's own when nil), whether
    /// another page follows, and how many there are in all (counted in the
    /// same read); only that page is read, in one access of the database.
    ///
    /// - Throws: ``ValidationError`` when `number` is below 1 or `size` is
    ///   not from 1 to ``PageRules/maxSize``.
    ///
    /// By name (and by age, then name), the page follows the names' sort
    /// keys (see ``SortKeyTable``): by name it walks their index, either
    /// way, reading only the rows before the page's end. Names another
    /// program wrote since the last page get their keys first. Unknown
    /// ages come last in both directions.
    public func page(sortedBy sort: PersonSort? = nil, direction: SortDirection? = nil, number: Int, size: Int)
        async throws -> RecordPage<Person>
    {
        let sort = sort ?? .name
        let direction = direction ?? sort.defaultDirection
        if sort == .newest {
            return try await table.page(orderBy: Self.orderBy(sort, direction), number: number, size: size)
        }
        return try await table.page(
            keyedBy: PeopleSchema.sortKeys, orderBy: Self.keyedOrder(sort), direction: direction, number: number,
            size: size)
    }

    // MARK: - Rows

    /// The order of a list going `direction`, folding the names as it
    /// sorts them.
    @Sendable static func orderBy(_ sort: PersonSort, _ direction: SortDirection) -> SQL {
        order(sort).sql(direction)
    }

    /// The order of a list, going up: by name (last, first, then ID), by
    /// age then name with unknown ages pinned last, or by ID.
    static func order(_ sort: PersonSort) -> SortOrder {
        let byName = SortOrder([
            "records_fold(\(Column.lastName))", "records_fold(\(Column.firstName))", "\(Column.id)",
        ])
        switch sort {
        case .name: return byName
        case .age: return SortOrder(["\(Column.age)"]).then(byName).pinning("\(Column.age) IS NULL")
        case .newest: return SortOrder(["\(Column.id)"])
        }
    }

    /// The same order on the table joined with its sort keys, which sort
    /// as the folded names do; nil for the keys' own order (by name).
    static func keyedOrder(_ sort: PersonSort) -> SortOrder? {
        switch sort {
        case .name: nil
        case .age: SortOrder(["\(Column.age)"]).then(PeopleSchema.sortKeys.sortOrder).pinning("\(Column.age) IS NULL")
        case .newest: SortOrder(["\(Column.id)"])
        }
    }

    private typealias Column = Person.Columns
}

extension PersonChanges {
    /// The columns to set; nil leaves one as it is.
    var columns: [(column: Person.Columns, value: (any SQLiteValueConvertible)?)] {
        [(.firstName, firstName), (.lastName, lastName), (.age, clearsAge ? SQLiteValue.null : age)]
    }
}
