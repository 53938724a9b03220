import SQLiteStore

extension AppDescriptor {
    /// The Coffee app: the original tutorial's `coffee`, with pictures.
    static let coffee = AppDescriptor(
        app: .coffee, table: Coffee.tableName, otherTables: ["coffee_picture_version"],
        migrations: CoffeeSchema.migrations, searchIndex: CoffeeSchema.searchIndex, sync: CoffeeSchema.sync)
}

extension AppDatabase.App {
    /// Coffee (`coffee`).
    public static let coffee = Self(named: "coffee")
}

extension CoffeeSort: RecordSort {
    /// Only the newest first goes down by default.
    public var defaultDirection: SortDirection { self == .newest ? .descending : .ascending }
}
