import SQLiteStore

/// The Contacts app's table: the original tutorial's `CONTACTS`, kept as the original tutorial made it
/// so that the original tutorial's own `contact.db` opens unchanged.
enum ContactsSchema {
    /// In order; append, never edit a shipped one.
    static let migrations: [Migrator.Migration] = [
        Migrator.migration("contacts.createTable") { db in
            try db.execute(
                """
                CREATE TABLE IF NOT EXISTS CONTACTS (
                    ID INTEGER PRIMARY KEY AUTOINCREMENT,
                    NAME TEXT,
                    ADDRESS TEXT,
                    CONTACT TEXT)
                """)
        },
        // The full-text index of every column, filled from the rows already
        // there; triggers keep it in sync from then on.
        Migrator.migration("contacts.searchIndex") { db in try db.create(searchIndexV1) },
        // The folded names in an indexed side table, computed for the rows
        // already there; triggers mark them for recomputing from then on.
        Migrator.migration("contacts.sortKeys") { db in try sortKeys.create(db) },
        // Every change of a contact, by any program, goes to the shared change log.
        Migrator.migration("contacts.changeLog") { db in
            try RecordChangeLog.createTriggers(app: "contacts", table: "CONTACTS", key: "ID", in: db)
        },
        // The index of the text folded by the app, which replaces the
        // first one (see ``FoldedSearchIndex``).
        Migrator.migration("contacts.foldedSearchIndex") { db in
            try db.dropFullTextIndex(named: searchIndexV1.name)
            try searchIndex.create(db)
        },
        // The fold now replaces ł, ø, æ and the like.
        Migrator.migration("contacts.refoldSortKeys") { db in try sortKeys.refold(db) },
        // Devices sync the contacts through `records serve`.
        sync.migration("contacts.sync"),
        // The engine's bookkeeping keyed by row numbers (docs/SYNC.md):
        // installing again upgrades it and writes this app's triggers back.
        sync.migration("contacts.syncRowNumbers"),
        // Rows waiting to be folded are kept out of the full-text index
        // (see ``FoldedSearchIndex``): a write no longer touches the index
        // before its transaction's fold.
        Migrator.migration("contacts.searchIndexFoldedRowsOnly") { db in try searchIndex.indexOnlyFoldedRows(db) },
        // The engine's triggers record a write without building temporary
        // tables (docs/SYNC.md, "What a synced write costs"): installing
        // again writes them back.
        sync.migration("contacts.syncCaptureWithoutTemporaryTables"),
    ]

    /// The first full-text index of the name, address and contact, as the
    /// migration `contacts.searchIndex` made it;
    /// `contacts.foldedSearchIndex` drops it.
    static let searchIndexV1 = FullTextIndex(
        "CONTACTS_search", on: Contact.tableName, columns: [Contact.Columns.name, .address, .contact], rowID: .id)

    /// The full-text index of the name, address and contact (phone, email,
    /// URL), folded by ``SearchFolding/fold(_:)``.
    static let searchIndex = FoldedSearchIndex(
        "CONTACTS_search", on: Contact.tableName, columns: [Contact.Columns.name, .address, .contact], rowID: .id)

    /// The folded names, in sort order, so that a page by name walks an
    /// index (see ``SortKeyTable``).
    static let sortKeys = SortKeyTable(on: Contact.tableName, rowID: Contact.Columns.id, keys: [(.name, "nameKey")])
}
