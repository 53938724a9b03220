import Foundation
import Observation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

@Suite("Coffee table: sample, migration, seed databases")
struct CoffeeSchemaTests {
    /// A database file made by `sql`, as another app or version left it.
    func makeDatabase(_ url: URL, _ sql: String) throws -> URL {
        let db = try Database(path: url.path)
        try db.execute(sql: sql)
        db.close()
        return url
    }

    /// The current table's columns as ``columns(_:)`` lists them.
    let currentColumns = CoffeeSchema.millionthsColumns.map {
        "\($0.name) \($0.type)".trimmingCharacters(in: .whitespaces)
    }

    func columns(_ path: String) throws -> [String] {
        let db = try Database(path: path)
        return try db.fetchAll(String.self, "SELECT trim(name || ' ' || type) FROM pragma_table_info('coffee')")
    }

    @Test("The shipped sample has the migration's table, picture last, and sample coffees with a picture")
    func sample() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("records.sqlite")
        let database = try AppDatabase(url: url, template: try AppDatabase.bundledTemplateURL())
        let store = CoffeeStore(database: database)
        #expect(try await store.count() == 6)
        let espresso = try #require(try await store.coffee(id: 1))
        #expect(espresso.name == "Espresso" && espresso.price == decimal("2.5"))
        #expect(espresso.picture?.format == .png)
        try await store.writePicture(id: 1, to: .file(path: dir.path("espresso.png")))
        #expect(PictureFormat.detect(try Data(contentsOf: dir.fileURL("espresso.png"))) == .png)
        #expect(try columns(url.path) == currentColumns)
        #expect(try columns(url.path).last == "picture BLOB")
    }

    @Test("A database installed before Coffee existed gets the coffee table, empty, and keeps its rows")
    func upgradeFromBeforeCoffee() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("records.sqlite")
        do {
            let db = try Database(path: url.path)
            try AppDatabase.migrator.migrate(db, upTo: "contacts.createTable")
            try db.execute("INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Kept', 'Person', 3)")
            #expect(try AppDatabase.migrator.pendingIdentifiers(in: db).contains("coffee.createTable"))
        }
        let database = try AppDatabase(url: url, template: try AppDatabase.bundledTemplateURL())
        #expect(try await CoffeeStore(database: database).count() == 0)
        #expect(try await PeopleStore(database: database).all().map(\.firstName) == ["Kept"])
        let coffee = try await CoffeeStore(database: database).add(CoffeeDraft(name: "First", price: decimal("0.1")))
        #expect(coffee.id == 1)
    }

    @Test("The seed's own coffee table (price REAL) is rebuilt with exact prices and every row kept")
    func seedTableUpgrade() async throws {
        let dir = try TemporaryDirectory()
        let url = try makeDatabase(
            dir.fileURL("SQL.sqlite"),
            """
            CREATE TABLE coffee (coffeeID INTEGER PRIMARY KEY, coffeeName TEXT, price REAL);
            INSERT INTO coffee VALUES (1, 'Café Au Lait', 1.99), (2, 'Caffè Americano', 1.5),
                (3, 'Caffè Latte', 2), (5, NULL, NULL), (7, 'Typed', '19.99'), (8, 'Big', 1234567.891);
            """)
        let database = try AppDatabase(url: url, template: nil)
        let store = CoffeeStore(database: database)
        #expect(try await store.all(sortedBy: .newest).map(\.id) == [8, 7, 5, 3, 2, 1])
        var prices: [Decimal?] = []
        for id in [1, 2, 3, 5, 7, 8] as [Int64] { prices.append(try await store.coffee(id: id)?.price) }
        #expect(
            prices == [decimal("1.99"), decimal("1.5"), decimal("2"), nil, decimal("19.99"), decimal("1234567.891")])
        let raw = try database.read { db in
            try db.fetchAll(
                String.self,
                "SELECT typeof(priceMicros) || ' ' || ifnull(priceMicros, '') FROM coffee ORDER BY coffeeID")
        }
        #expect(
            raw == [
                "integer 1990000", "integer 1500000", "integer 2000000", "null ", "integer 19990000",
                "integer 1234567891000",
            ])
        #expect(try columns(url.path) == currentColumns)
        try await store.setPicture(id: 1, from: .data(PictureBytes.make(count: 10)))
        #expect(try await store.coffee(id: 1)?.picture?.size == 10)
    }

    @Test("A coffee table the app does not know is refused and left as it was; the other apps work")
    func unknownTableRefused() async throws {
        let dir = try TemporaryDirectory()
        let url = try makeDatabase(
            dir.fileURL("other.sqlite"),
            "CREATE TABLE coffee (id INTEGER PRIMARY KEY, beans TEXT); INSERT INTO coffee VALUES (1, 'x')")
        // Not a tutorial's table: another application's database.
        #expect(throws: ForeignDatabaseError.self) { try AppDatabase(url: url, template: nil) }
        let database = try AppDatabase(url: url, template: nil, adoptingForeignDatabase: true)
        let error = try await #require(throws: AppUnavailableError.self) {
            try await CoffeeStore(database: database).all()
        }
        #expect(error.app == .coffee)
        #expect(error.reason.contains("columns records does not know (id, beans)"))
        #expect(try await PeopleStore(database: database).count() == 0)
        #expect(try columns(url.path) == ["id INTEGER", "beans TEXT"])
        let db = try Database(path: url.path)
        #expect(try db.fetchOne(String.self, "SELECT beans FROM coffee") == "x")
    }

    @Test("A seed price that is not a number is kept as it was, flagged on its coffee; the upgrade goes on")
    func badSeedPrice() async throws {
        let dir = try TemporaryDirectory()
        let url = try makeDatabase(
            dir.fileURL("SQL.sqlite"),
            """
            CREATE TABLE coffee (coffeeID INTEGER PRIMARY KEY, coffeeName TEXT, price REAL);
            INSERT INTO coffee VALUES (1, 'Odd', 'cheap'), (2, 'Fine', 2.5);
            """)
        let database = try AppDatabase(url: url, template: nil)
        let store = CoffeeStore(database: database)
        let odd = try #require(try await store.coffee(id: 1))
        #expect(odd.price == nil)
        #expect(
            odd.unreadable == [
                UnreadableValue(
                    field: "price", column: "coffee.priceMicros", stored: "the text 'cheap'",
                    expected: "a price in millionths (a whole number)")
            ])
        #expect(try await store.coffee(id: 2)?.price == decimal("2.5"))
        #expect(try columns(url.path) == currentColumns)
    }
}

@Suite("Coffee view models")
@MainActor
struct CoffeeViewModelTests {
    let database: AppDatabase
    let store: CoffeeStore
    let list: CoffeeListViewModel

    init() async throws {
        database = try emptyDatabase()
        store = CoffeeStore(database: database, pictureSizeLimit: 4096)
        try await store.add(CoffeeDraft(name: "Espresso", price: decimal("2.50")))
        try await store.add(CoffeeDraft(name: "Mocha", price: decimal("3.95")))
        list = CoffeeListViewModel(store: store)
        await list.load()
    }

    @Test("The list holds names only and refreshes after add and delete")
    func listRefreshes() async throws {
        #expect(list.coffees.map(\.name) == ["Espresso", "Mocha"])
        #expect(list.coffees.allSatisfy { !$0.isHydrated })
        let latte = try await list.add(CoffeeDraft(name: "Latte", price: 3))
        #expect(list.coffees.map(\.name) == ["Espresso", "Latte", "Mocha"])
        try await list.delete(id: latte.id)
        #expect(list.coffees.map(\.name) == ["Espresso", "Mocha"])
        try await list.delete(atOffsets: IndexSet(integer: 0))
        #expect(list.coffees.map(\.name) == ["Mocha"])
    }

    @Test("Sort and search refresh the list; observers are told")
    func sortAndSearch() async throws {
        let changed = Flag()
        withObservationTracking {
            _ = list.coffees
        } onChange: {
            changed.set()
        }
        list.sort = .newest
        await list.refreshed()
        #expect(changed.isSet)
        #expect(list.coffees.map(\.name) == ["Mocha", "Espresso"])
        list.searchText = "MOC"
        await list.refreshed()
        #expect(list.coffees.map(\.name) == ["Mocha"])
        list.searchText = "oc"
        await list.refreshed()
        #expect(list.coffees.isEmpty)
        list.searchText = ""
        await list.refreshed()
        #expect(list.coffees.count == 2)
    }

    @Test("The list's search goes through the names' full-text index: words in any order, case and accents ignored")
    func searchUsesFullTextIndex() async throws {
        try await list.add(CoffeeDraft(name: "Caffè Latte", price: decimal("3.20")))
        list.searchText = "latte CAFFE"
        await list.refreshed()
        #expect(list.coffees.map(\.name) == ["Caffè Latte"])
        #expect(list.coffees.allSatisfy { !$0.isHydrated })
        list.searchText = "ffe"
        await list.refreshed()
        #expect(list.coffees.isEmpty, "a word's start, not anywhere in it")
    }

    @Test("The detail hydrates on load, is dirty after an edit, saves once, and refreshes the list")
    func detailEditAndSave() async throws {
        let detail = list.detail(for: list.coffees[0])
        #expect(!detail.coffee.isHydrated)
        await detail.load()
        #expect(detail.coffee.isHydrated)
        #expect(detail.coffee.price == decimal("2.5"))
        #expect(!detail.isDirty)

        let changes = try totalChanges(database)
        #expect(try await detail.save() == false)
        #expect(try totalChanges(database) == changes)

        detail.coffee.name = "Ristretto"
        try detail.setPrice(text: "2.70")
        #expect(detail.isDirty)
        let saved = try await tracedStatements(database) { try await detail.save() }
        #expect(saved.result)
        #expect(
            saved.sql.filter { $0.hasPrefix("UPDATE \"coffee\" ") } == [
                "UPDATE \"coffee\" SET \"coffeeName\" = ?, \"priceMicros\" = ?\nWHERE \"coffeeID\" = ?"
            ])
        #expect(!detail.isDirty)
        #expect(list.coffees.map(\.name) == ["Mocha", "Ristretto"])
        // The rename also changes the name's full-text index: count from here.
        let saved1 = try totalChanges(database)
        #expect(saved1 > changes)
        #expect(try await detail.save() == false)
        #expect(try totalChanges(database) == saved1)
    }

    @Test("Bad input in the detail is refused with a message; the model keeps what it had")
    func detailErrors() async throws {
        let detail = list.detail(for: list.coffees[0])
        await detail.load()
        #expect(throws: ValidationError.self) { try detail.setPrice(text: "2,70") }
        #expect(detail.errorMessage?.contains("Price must be a number") == true)
        #expect(detail.coffee.price == decimal("2.5"))
        detail.coffee.name = ""
        await #expect(throws: ValidationError.self) { try await detail.save() }
        #expect(detail.errorMessage == "Name is required.")
        #expect(detail.isDirty)
        detail.coffee.name = "Espresso"
        #expect(try await detail.save() == false)
        #expect(detail.errorMessage == nil)
    }

    @Test("The detail's picture: set, write back, remove; a bad file leaves a message")
    func detailPicture() async throws {
        let dir = try TemporaryDirectory()
        let detail = list.detail(for: list.coffees[1])
        await detail.load()
        let bytes = PictureBytes.make(PictureBytes.jpeg, count: 2000)
        try bytes.write(to: dir.fileURL("mocha.jpg"))
        try await detail.setPicture(from: .file(path: dir.path("mocha.jpg")))
        #expect(detail.coffee.picture == CoffeePicture(size: 2000, format: .jpeg))
        #expect(!detail.isDirty)
        try await detail.writePicture(to: .file(path: dir.path("copy.jpg")))
        #expect(try Data(contentsOf: dir.fileURL("copy.jpg")) == bytes)

        try Data(count: 5000).write(to: dir.fileURL("huge.png"))
        await #expect(throws: PictureError.self) {
            try await detail.setPicture(from: .file(path: dir.path("huge.png")))
        }
        #expect(detail.errorMessage?.contains("is not a PNG, JPEG, GIF or WebP picture") == true)
        #expect(detail.coffee.picture?.size == 2000)

        try await detail.removePicture()
        #expect(detail.coffee.picture == nil)
        #expect(detail.errorMessage == nil)
        await #expect(throws: PictureError.self) { try await detail.removePicture() }
    }

    @Test("Deleting from the detail refreshes the list; a deleted coffee's detail reports it")
    func detailDelete() async throws {
        let detail = list.detail(for: list.coffees[0])
        let other = list.detail(for: list.coffees[0])
        try await detail.delete()
        #expect(detail.isDeleted)
        #expect(list.coffees.map(\.name) == ["Mocha"])
        await other.load()
        #expect(other.errorMessage == "no coffee with ID 1")
        #expect(!other.coffee.isHydrated)
    }

    @Test("A detail made without a list works on its own")
    func standaloneDetail() async throws {
        let detail = CoffeeDetailViewModel(coffee: Coffee(id: 2, name: "Mocha"), store: store)
        await detail.load()
        #expect(detail.coffee.price == decimal("3.95"))
        await detail.reload()
        #expect(detail.errorMessage == nil)
    }
}
