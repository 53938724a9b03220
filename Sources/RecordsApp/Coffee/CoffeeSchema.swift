import Foundation
import SQLiteStore

/// The Coffee app's table: seed 001's `coffee`, with its column names, two
/// changes, and pictures stored in the row.
///
/// ```sql
/// CREATE TABLE coffee (
///     coffeeID INTEGER PRIMARY KEY,
///     coffeeName TEXT,
///     price TEXT,          -- exact decimal text, e.g. '19.99'
///     pictureType TEXT,    -- 'image/png', 'image/jpeg', 'image/gif', 'image/webp'
///     picture BLOB)        -- last: see below
/// ```
///
/// - **Prices are exact decimal text, not the seed's `REAL`.** A REAL is a
///   binary fraction: 0.1 is stored as 0.1000000000000000055511151231257827,
///   sums drift (0.1 + 0.2 = 0.30000000000000004) and values past 15
///   significant digits are rounded. A column declared `REAL` also converts
///   any decimal text written to it into a REAL (its affinity), so the type
///   itself had to change, not only what the app writes. TEXT keeps the
///   digits the user typed, which `Decimal` reads back exactly. Integer
///   minor units (cents) were the other choice; they would have fixed the
///   number of decimals for every price (1234567.891 needs three) and made
///   the raw table harder to read.
/// - **The picture column is last**, with its type just before it: SQLite
///   reserves a large blob with `zeroblob(N)` without building it in memory
///   only when nothing but NULLs follows it in the row.
enum CoffeeSchema {
    /// In order; append, never edit a shipped one.
    static let migrations: [Migrator.Migration] = [
        Migrator.migration("coffee.createTable") { db in try createOrUpgradeTable(db) }
    ]

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

    /// Creates the table; keeps it when the shipped sample already has it;
    /// rebuilds the seed app's own table (`price REAL`, no picture) with
    /// exact prices, keeping every row and every value (see
    /// ``storedPrice(_:)``).
    static func createOrUpgradeTable(_ db: Database) throws {
        let existing = try db.fetchAll("SELECT name, type FROM pragma_table_info('coffee')").map {
            Column(name: try $0["name"], type: (try $0["type"] as String).uppercased())
        }
        if existing.isEmpty {
            try db.execute(createTable)
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
        try db.execute(createTable)
        let rows = try db.fetchCursor("SELECT coffeeID, coffeeName, price FROM coffee_seed")
        while let row = try rows.next() {
            try db.execute(
                "INSERT INTO coffee (coffeeID, coffeeName, price) VALUES (?, ?, ?)",
                arguments: [try row[0] as SQLiteValue, try row[1] as SQLiteValue, storedPrice(try row[2])])
        }
        try db.execute("DROP TABLE coffee_seed")
    }

    /// What a seed price becomes in the `TEXT` column.
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
        case .null, .blob: return value
        case .integer(let number): return .text(Decimal(number).description)
        case .real(let number):
            guard let decimal = try? Decimal(sqliteValue: value) else { return .text(String(number)) }
            return .text(decimal.description)
        case .text(let text):
            guard let decimal = try? Decimal(sqliteValue: value) else { return .text(text) }
            return .text(decimal.description)
        }
    }

    /// The coffee table found cannot be taken over; the migration changed
    /// nothing.
    struct SchemaError: TableRefusal {
        let message: String
        var description: String { message }
    }
}
