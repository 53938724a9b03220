import SQLiteStore

extension AppDescriptor {
    /// The People app: the original tutorial's `peopleInfo`.
    static let people = AppDescriptor(
        app: .people, table: Person.tableName, migrations: PeopleSchema.migrations, sortKeys: PeopleSchema.sortKeys,
        searchIndex: PeopleSchema.searchIndex, sync: PeopleSchema.sync)
}

extension AppDatabase.App {
    /// People (`peopleInfo`).
    public static let people = Self(named: "people")
}

extension PersonSort: RecordSort {
    /// Only the newest first goes down by default.
    public var defaultDirection: SortDirection { self == .newest ? .descending : .ascending }
}
