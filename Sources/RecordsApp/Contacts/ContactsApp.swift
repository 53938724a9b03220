import SQLiteStore

extension AppDescriptor {
    /// The Contacts app: the original tutorial's `CONTACTS`.
    static let contacts = AppDescriptor(
        app: .contacts, table: Contact.tableName, migrations: ContactsSchema.migrations,
        sortKeys: ContactsSchema.sortKeys, searchIndex: ContactsSchema.searchIndex, sync: ContactsSchema.sync)
}

extension AppDatabase.App {
    /// Contacts (`CONTACTS`).
    public static let contacts = Self(named: "contacts")
}

extension ContactSort: RecordSort {
    /// Only the newest first goes down by default.
    public var defaultDirection: SortDirection { self == .newest ? .descending : .ascending }
}
