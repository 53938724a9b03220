import SQLiteStore

/// The Contacts app's table: the original tutorial's `CONTACTS`, kept as the seed made it
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
        }
    ]
}
