import SQLiteStore

/// The People app's tables: the original tutorial's `peopleInfo`, kept as the original tutorial made
/// it so that the original tutorial's own database files open unchanged.
enum PeopleSchema {
    /// In order; append, never edit a shipped one.
    static let migrations: [Migrator.Migration] = [
        // The shipped sample database already has the table; a database made
        // from scratch (or by another tool) gets it here.
        Migrator.migration("people.createTable") { db in
            try db.execute(
                """
                CREATE TABLE IF NOT EXISTS peopleInfo (
                    peopleInfoID INTEGER PRIMARY KEY AUTOINCREMENT,
                    firstname TEXT,
                    lastname TEXT,
                    age INTEGER)
                """)
        },
        // The full-text index of the names, filled from the rows already
        // there; triggers keep it in sync from then on.
        Migrator.migration("people.searchIndex") { db in try db.create(searchIndexV1) },
        // The folded names in an indexed side table, computed for the rows
        // already there; triggers mark them for recomputing from then on.
        Migrator.migration("people.sortKeys") { db in try sortKeys.create(db) },
        // Every change of a person, by any program, goes to the shared change log.
        Migrator.migration("people.changeLog") { db in
            try RecordChangeLog.createTriggers(app: "people", table: "peopleInfo", key: "peopleInfoID", in: db)
        },
        // The index of the names folded by the app, which replaces the
        // first one: "skl" finds "Skłodowska" (see ``FoldedSearchIndex``).
        Migrator.migration("people.foldedSearchIndex") { db in
            try db.dropFullTextIndex(named: searchIndexV1.name)
            try searchIndex.create(db)
        },
        // The fold now replaces ł, ø, æ and the like: "Łukasz" sorts
        // under L.
        Migrator.migration("people.refoldSortKeys") { db in try sortKeys.refold(db) },
        // Devices sync the people through `records serve`: the engine's
        // triggers and bookkeeping.
        sync.migration("people.sync"),
        // The engine's bookkeeping keyed by row numbers (docs/SYNC.md):
        // installing again upgrades it and writes this app's triggers back.
        sync.migration("people.syncRowNumbers"),
        // Rows waiting to be folded are kept out of the full-text index
        // (see ``FoldedSearchIndex``): a write no longer touches the index
        // before its transaction's fold.
        Migrator.migration("people.searchIndexFoldedRowsOnly") { db in try searchIndex.indexOnlyFoldedRows(db) },
        // The engine's triggers record a write without building temporary
        // tables (docs/SYNC.md, "What a synced write costs"): installing
        // again writes them back.
        sync.migration("people.syncCaptureWithoutTemporaryTables"),
    ]

    /// The first full-text index of first and last names, folding case and
    /// the diacritics Unicode decomposes, as the migration
    /// `people.searchIndex` made it; `people.foldedSearchIndex` drops it.
    static let searchIndexV1 = FullTextIndex(
        "peopleInfo_search", on: Person.tableName, columns: [Person.Columns.firstName, .lastName], rowID: .id)

    /// The full-text index of first and last names, folded by
    /// ``SearchFolding/fold(_:)`` ("akesson" finds "Åkesson", "lukasz"
    /// finds "Łukasz").
    static let searchIndex = FoldedSearchIndex(
        "peopleInfo_search", on: Person.tableName, columns: [Person.Columns.firstName, .lastName], rowID: .id)

    /// The folded last and first names, in sort order, so that a page by
    /// name walks an index (see ``SortKeyTable``).
    static let sortKeys = SortKeyTable(
        on: Person.tableName, rowID: Person.Columns.id, keys: [(.lastName, "lastKey"), (.firstName, "firstKey")])
}
