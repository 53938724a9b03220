import SQLiteStore
import SQLiteStoreSync

/// What the database knows of one app, declared once, in the app's folder
/// (`People/PeopleApp.swift`): its name, its tables, its migrations, its
/// sort keys and search index, and the table whose changes are its change
/// topic.
///
/// ``AppDatabase/apps`` lists every app's descriptor. ``AppDatabase/App``,
/// the migrator and ``AppDatabase/changes(of:)`` are derived from that list;
/// the web pages and the `records` command each list the apps they serve,
/// and a test checks that every layer's list names the same apps.
public struct AppDescriptor: Sendable {
    /// The app.
    public let app: AppDatabase.App
    /// The table of the app's records. Its committed changes are the app's
    /// change topic (``AppDatabase/changes(of:)``, the web's live topic
    /// named after the app).
    public let table: String
    /// The app's other tables, beside ``table`` and those of its sort keys
    /// and search index (the Users app's sessions).
    public let otherTables: [String]
    /// The tables of ``otherTables`` that hold part of what the app's
    /// records show, so that their committed changes are the app's change
    /// topic too, as ``table``'s are (the Users app's profile pictures; not
    /// its sessions, which every request touches).
    public let topicTables: [String]
    /// The app's migrations, in order: append, never change a shipped one.
    let migrations: [Migrator.Migration]
    /// The folded names kept beside ``table`` for sorting, if the app
    /// sorts through an index.
    let sortKeys: SortKeyTable?
    /// The full-text index of ``table``'s folded text, if the app is
    /// searched by one.
    let searchIndex: FoldedSearchIndex?
    /// What of ``table`` devices sync through `records serve`, and the
    /// rules a synced row must pass on the server; nil for an app that
    /// never syncs (Users: accounts stay on the server).
    public let sync: AppSync?

    init(
        app: AppDatabase.App, table: String, otherTables: [String] = [], topicTables: [String] = [],
        migrations: [Migrator.Migration], sortKeys: SortKeyTable? = nil, searchIndex: FoldedSearchIndex? = nil,
        sync: AppSync? = nil
    ) {
        precondition(topicTables.allSatisfy(otherTables.contains), "a topic table must be one of the app's tables")
        self.app = app
        self.table = table
        self.otherTables = otherTables
        self.topicTables = topicTables
        self.migrations = migrations
        self.sortKeys = sortKeys
        self.searchIndex = searchIndex
        self.sync = sync
    }

    /// Every table the app's migrations make: its records' table, the
    /// others, its sort keys' side table, and its full-text index with
    /// the side table of folded text it indexes.
    public var tables: [String] {
        [table] + otherTables + [sortKeys?.name, searchIndex?.textTable, searchIndex?.name].compactMap { $0 }
    }
}

extension AppDatabase {
    /// The tables no one app owns: the change log of every app's records
    /// (``recordChanges(after:apps:limit:)``) and the JSON API's
    /// idempotency keys (``IdempotencyStore``).
    /// The sync engine's bookkeeping (``SyncSchema/bookkeepingTables``),
    /// made by the first app's sync migration, is shared too.
    public static let sharedTables: [String] =
        [RecordChangeLog.tableName, IdempotencyStore.tableName] + SyncSchema.bookkeepingTables

    /// The migrations of ``sharedTables``, run before every app's, so that
    /// an app's own migrations may add triggers that write to them. They
    /// never refuse a table: an app left out leaves them in. In order;
    /// append, never edit a shipped one.
    static let sharedMigrations: [Migrator.Migration] = [
        Migrator.migration("records.changeLog") { db in try RecordChangeLog.createTable(db) },
        Migrator.migration("records.idempotency") { db in try IdempotencyStore.createTable(db) },
    ]

    /// Every app, in the order help, navigation and migrations list them.
    /// A new app adds its ``AppDescriptor`` here, and nothing else in this
    /// module outside its folder.
    public static let apps: [AppDescriptor] = [.people, .contacts, .coffee, .users]
}

extension AppDescriptor {
    /// Folds the search text and sort keys of the rows not folded yet, in
    /// the write running: a seek in each partial index when there are none.
    /// Whether every row's search text and sort keys are folded.
    func isFolded(_ db: Database) throws -> Bool {
        try (sortKeys?.isComplete(db) ?? true) && (searchIndex?.isComplete(db) ?? true)
    }

    func foldPending(_ db: Database) throws {
        for folded in [sortKeys as (any FoldedColumns)?, searchIndex] {
            if let folded, try !folded.isComplete(db) { try folded.fill(db) }
        }
    }
}
