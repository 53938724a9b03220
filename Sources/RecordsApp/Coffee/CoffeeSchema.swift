import Foundation
import SQLiteStore

/// The Coffee app's table: the original tutorial's `coffee`, with prices in millionths
/// and pictures stored in the row.
///
/// ```sql
/// CREATE TABLE coffee (
///     coffeeID INTEGER PRIMARY KEY,
///     coffeeName TEXT,
///     priceMicros,         -- the price in millionths: 19.99 is 19990000
///     pictureType TEXT,    -- 'image/png', 'image/jpeg', 'image/gif', 'image/webp'
///     picture BLOB)        -- last: see below
/// ```
///
/// - **Prices are whole numbers of millionths (`priceMicros`), not the
///   original tutorial's `REAL`.** A REAL is a binary fraction: 0.1 is stored as
///   0.1000000000000000055511151231257827, sums drift (0.1 + 0.2 =
///   0.30000000000000004) and values past 15 significant digits are
///   rounded. An INTEGER count of millionths is exact, and SQL sorts,
///   compares and adds it as a number: `ORDER BY priceMicros`, `WHERE
///   priceMicros > 5000000` and `sum(priceMicros)` are right, which the
///   decimal text of the first version (`price TEXT`) was not (it sorted
///   `10` before `9.5`). Every price the app accepts fits: at most 6
///   decimals and below one billion is below 10^15 millionths, far inside
///   an `Int64`. The column's name says its unit, so that SQL written by
///   hand does not take `19990000` for a price.
/// - **`priceMicros` declares no type**, so SQLite stores what it is given
///   without converting it. The migration keeps a price it cannot turn
///   into millionths exactly (text such as `cheap` or `1e+300`, more than
///   6 decimals) as it was; a type would have turned such text into a
///   REAL, rounding it. That coffee shows the price as unreadable
///   (``Coffee/unreadable``) until a new one is saved. The app reads only
///   INTEGERs from the column, and its queries keep anything else out of
///   sorting, filtering and totals (`typeof(priceMicros) = 'integer'`).
/// - **The picture column is last**, with its type just before it: SQLite
///   reserves a large blob with `zeroblob(N)` without building it in memory
///   only when nothing but NULLs follows it in the row.
enum CoffeeSchema {
    /// In order; append, never edit a shipped one.
    static let migrations: [Migrator.Migration] = [
        Migrator.migration("coffee.createTable") { db in try createOrUpgradeTable(db) },
        Migrator.migration("coffee.pricesInMillionths") { db in try convertPricesToMillionths(db) },
        // The full-text index of the names, filled from the rows already
        // there; triggers keep it in sync from then on.
        Migrator.migration("coffee.searchIndex") { db in try db.create(searchIndexV1) },
        // Every coffee gets a picture version, bumped by triggers whenever
        // its picture or type changes, whoever changes it.
        Migrator.migration("coffee.pictureVersions") { db in try createPictureVersions(db) },
        // Every change of a coffee, by any program, goes to the shared change
        // log; storing or removing a picture updates the row, so it is one.
        Migrator.migration("coffee.changeLog") { db in
            try RecordChangeLog.createTriggers(app: "coffee", table: "coffee", key: "coffeeID", in: db)
        },
        // The index of the names folded by the app, which replaces the
        // first one (see ``FoldedSearchIndex``).
        Migrator.migration("coffee.foldedSearchIndex") { db in
            try db.dropFullTextIndex(named: searchIndexV1.name)
            try searchIndex.create(db)
        },
        // Devices sync the coffees' names, prices and pictures through
        // `records serve` (pictures in chunks, see ``sync``).
        sync.migration("coffee.sync"),
        // The engine's staging of pictures in transit records when each
        // piece last arrived (the server removes uploads abandoned for a
        // day), and keeps the bytes apart from the progress (a piece no
        // longer rewrites the whole picture): installing again upgrades
        // its bookkeeping.
        sync.migration("coffee.syncStaging"),
        // The engine's bookkeeping keyed by row numbers (docs/SYNC.md):
        // installing again upgrades it and writes this app's triggers back.
        sync.migration("coffee.syncRowNumbers"),
        // Rows waiting to be folded are kept out of the full-text index
        // (see ``FoldedSearchIndex``): a write no longer touches the index
        // before its transaction's fold.
        Migrator.migration("coffee.searchIndexFoldedRowsOnly") { db in try searchIndex.indexOnlyFoldedRows(db) },
        // The engine's triggers record a write without building temporary
        // tables (docs/SYNC.md, "What a synced write costs"): installing
        // again writes them back.
        sync.migration("coffee.syncCaptureWithoutTemporaryTables"),
    ]

    /// Makes the table that gives each coffee's picture a version: the web's
    /// strong `ETag`, and the check that a picture read in chunks is one
    /// picture.
    ///
    /// ```sql
    /// CREATE TABLE coffee_picture_version (
    ///     version INTEGER PRIMARY KEY AUTOINCREMENT,   -- never reused
    ///     coffeeID INTEGER NOT NULL UNIQUE)
    /// ```
    ///
    /// Triggers on `coffee` replace a coffee's row here (so it gets the
    /// next version) when the coffee is inserted and whenever an `UPDATE`
    /// names `picture`, `pictureType` or `coffeeID`, and delete it with the
    /// coffee. Why a version and not a digest of the bytes:
    /// - **Triggers see every change**: the app's stores, the `records`
    ///   command, another connection or another program writing SQL.
    ///   A digest would be right only for writers that compute it.
    /// - **Nothing is read to make it**: storing a picture hashes nothing,
    ///   and the migration does not read every stored picture.
    /// - **Never reused**: `AUTOINCREMENT` never gives a number twice, even
    ///   after the coffee holding the highest is deleted, so a coffee
    ///   deleted and another added with its ID (SQLite reuses the highest
    ///   free rowid) can never answer a browser's cached `ETag`.
    ///
    /// The cost: storing the same bytes again makes a new version, so a
    /// browser downloads a picture once more that it had; that is rare and
    /// harmless. The versions live in a table of their own, not a column of
    /// `coffee`, so that the picture stays the last column of the row (a
    /// column after it would make SQLite build a large `zeroblob` in
    /// memory) and so that bumping a version never rewrites a row holding
    /// a picture. Each trigger deletes then inserts, with no conflict to
    /// resolve, so a statement's own `OR IGNORE` (which SQLite applies to
    /// its triggers' statements too) cannot keep an old version. Existing
    /// coffees get their first versions in ID order.
    static func createPictureVersions(_ db: Database) throws {
        try db.execute(
            """
            CREATE TABLE coffee_picture_version (
                version INTEGER PRIMARY KEY AUTOINCREMENT,
                coffeeID INTEGER NOT NULL UNIQUE)
            """)
        try db.execute("INSERT INTO coffee_picture_version (coffeeID) SELECT coffeeID FROM coffee ORDER BY coffeeID")
        try db.execute(
            """
            CREATE TRIGGER coffee_picture_version_insert AFTER INSERT ON coffee BEGIN
                DELETE FROM coffee_picture_version WHERE coffeeID = NEW.coffeeID;
                INSERT INTO coffee_picture_version (coffeeID) VALUES (NEW.coffeeID);
            END
            """)
        try db.execute(
            """
            CREATE TRIGGER coffee_picture_version_update AFTER UPDATE OF coffeeID, pictureType, picture ON coffee BEGIN
                DELETE FROM coffee_picture_version WHERE coffeeID IN (OLD.coffeeID, NEW.coffeeID);
                INSERT INTO coffee_picture_version (coffeeID) VALUES (NEW.coffeeID);
            END
            """)
        try db.execute(
            """
            CREATE TRIGGER coffee_picture_version_delete AFTER DELETE ON coffee BEGIN
                DELETE FROM coffee_picture_version WHERE coffeeID = OLD.coffeeID;
            END
            """)
    }

    /// The first full-text index of coffee names, as the migration
    /// `coffee.searchIndex` made it; `coffee.foldedSearchIndex` drops it.
    static let searchIndexV1 = FullTextIndex(
        "coffee_search", on: Coffee.tableName, columns: [Coffee.Columns.name], rowID: .id)

    /// The full-text index of coffee names, folded by
    /// ``SearchFolding/fold(_:)`` ("caffe" finds "Caffè", "smorrebrod"
    /// finds "Smørrebrød").
    static let searchIndex = FoldedSearchIndex(
        "coffee_search", on: Coffee.tableName, columns: [Coffee.Columns.name], rowID: .id)

    /// The table the first migration makes (prices as decimal text), and
    /// the one the shipped sample database has; the second migration
    /// rebuilds it as ``createMillionthsTable``. Never change it: databases
    /// made by the first version are upgraded from it.
    static let createTable = """
        CREATE TABLE coffee (
            coffeeID INTEGER PRIMARY KEY,
            coffeeName TEXT,
            price TEXT,
            pictureType TEXT,
            picture BLOB)
        """

    /// The columns, and their declared types, of ``createTable``.
    static let columns = [
        Column(name: "coffeeID", type: "INTEGER"), Column(name: "coffeeName", type: "TEXT"),
        Column(name: "price", type: "TEXT"), Column(name: "pictureType", type: "TEXT"),
        Column(name: "picture", type: "BLOB"),
    ]

    struct Column: Equatable {
        let name: String
        let type: String
    }

    /// The columns of the table (or view) named `coffee`, and their
    /// declared types in upper case; none when there is no such table.
    static func existingColumns(_ db: Database) throws -> [Column] {
        guard try db.tableExists(Coffee.tableName) || db.viewExists(Coffee.tableName) else { return [] }
        // Hidden and generated columns left out, as `PRAGMA table_info` does.
        return try db.columns(in: Coffee.tableName).filter { $0.kind == .ordinary }.map {
            Column(name: $0.name, type: $0.declaredType.uppercased())
        }
    }

    /// Creates the table; keeps it when the shipped sample already has it;
    /// rebuilds the original tutorial's own table (`price REAL`, no picture) with
    /// exact prices, keeping every row and every value (see
    /// ``storedPrice(_:)``).
    static func createOrUpgradeTable(_ db: Database) throws {
        let existing = try existingColumns(db)
        if existing.isEmpty {
            try db.execute(sql: createTable)
            return
        }
        if existing == columns { return }
        let seedColumns = ["coffeeid", "coffeename", "price"]
        guard existing.map({ $0.name.lowercased() }) == seedColumns else {
            throw SchemaError(
                message: "the database already has a coffee table, with columns records does not know ("
                    + existing.map(\.name).joined(separator: ", ") + "); it was left as it was")
        }
        try db.execute("ALTER TABLE coffee RENAME TO coffee_seed")
        try db.execute(sql: createTable)
        let rows = try db.fetchCursor("SELECT coffeeID, coffeeName, price FROM coffee_seed")
        while let row = try rows.next() {
            try db.execute(
                "INSERT INTO coffee (coffeeID, coffeeName, price) VALUES (?, ?, ?)",
                arguments: [try row[0] as SQLiteValue, try row[1] as SQLiteValue, storedPrice(try row[2])])
        }
        try db.execute("DROP TABLE coffee_seed")
    }

    /// What a price of the original tutorial becomes in the `TEXT` column.
    ///
    /// A number becomes exact decimal text: a REAL the shortest decimal
    /// that reads back as the same number, which is the price that was
    /// typed (19.99, not 19.989999999999998436805981327779591083526611328125).
    /// A value no `Decimal` holds (a REAL such as `1e300` or infinity, text
    /// such as `cheap`, a blob) is kept, a REAL as its shortest text
    /// (`1e+300`): nothing is lost, and the one coffee shows it as an
    /// unreadable price (``Coffee/unreadable``) until a new one is saved,
    /// while every other coffee, and every other app, works as usual.
    static func storedPrice(_ value: SQLiteValue) -> SQLiteValue {
        switch value {
        case .null, .textBytes, .blob: return value
        case .integer(let number): return .text(Decimal(number).description)
        case .real(let number):
            guard let decimal = try? Decimal(sqliteValue: value) else { return .text(String(number)) }
            return .text(decimal.description)
        case .text(let text):
            guard let decimal = try? Decimal(sqliteValue: value) else { return .text(text) }
            return .text(decimal.description)
        }
    }

    /// The table as the app uses it now: prices in millionths.
    static let createMillionthsTable = """
        CREATE TABLE coffee (
            coffeeID INTEGER PRIMARY KEY,
            coffeeName TEXT,
            priceMicros,
            pictureType TEXT,
            picture BLOB)
        """

    /// The columns, and their declared types, of ``createMillionthsTable``:
    /// ``Coffee/Columns``, in order.
    static let millionthsColumns = [
        (Coffee.Columns.id, "INTEGER"), (.name, "TEXT"), (.priceMicros, ""), (.pictureType, "TEXT"), (.picture, "BLOB"),
    ].map { Column(name: $0.0.rawValue, type: $0.1) }

    /// Rebuilds the first version's table (``createTable``, prices as
    /// decimal text) as ``createMillionthsTable``, prices in millionths, keeping every
    /// row, ID, name and picture, and every price that cannot be converted
    /// exactly as it was (see ``storedPriceMicros(_:)``). A table already in
    /// the new layout is kept.
    ///
    /// The table is rebuilt, not altered, because a column's declared type
    /// cannot change, and because the picture must stay the last column.
    static func convertPricesToMillionths(_ db: Database) throws {
        let existing = try existingColumns(db)
        if existing == millionthsColumns { return }
        guard existing == columns else {
            throw SchemaError(
                message: "the database's coffee table has columns records does not know ("
                    + existing.map(\.name).joined(separator: ", ") + "); it was left as it was")
        }
        try db.execute(
            sql: createMillionthsTable.replacingOccurrences(of: "CREATE TABLE coffee", with: "CREATE TABLE coffee_new"))
        // One row at a time, its price converted in Swift and the rest
        // (the picture above all) copied by SQLite without reaching Swift.
        let copy = try db.makeStatement(
            """
            INSERT INTO coffee_new (coffeeID, coffeeName, priceMicros, pictureType, picture)
            SELECT coffeeID, coffeeName, ?, pictureType, picture FROM coffee WHERE coffeeID = ?
            """)
        let rows = try db.fetchCursor("SELECT coffeeID, price FROM coffee")
        while let row = try rows.next() {
            let id: Int64 = try row[0]
            try copy.execute(arguments: [storedPriceMicros(try row[1]), id])
        }
        try db.execute("DROP TABLE coffee")
        try db.execute("ALTER TABLE coffee_new RENAME TO coffee")
    }

    /// What a first-version price becomes in `priceMicros`: the exact
    /// number of millionths of a decimal price (`'19.99'` becomes
    /// 19990000), or, for a value that has none, the value as it was:
    /// NULL stays NULL; text no decimal holds (`'cheap'`, `'1e+300'`), a
    /// price with more than 6 decimals or beyond an `Int64` of millionths,
    /// and a blob are kept unchanged, and the coffee shows its price as
    /// unreadable until a new one is saved.
    static func storedPriceMicros(_ value: SQLiteValue) -> SQLiteValue {
        guard value != .null, let price = try? Decimal(sqliteValue: value),
            let micros = CoffeePrice.micros(exactly: price)
        else { return value }
        return .integer(micros)
    }

    /// The coffee table found cannot be taken over; the migration changed
    /// nothing.
    struct SchemaError: TableRefusal {
        let message: String
        var description: String { message }
    }
}
