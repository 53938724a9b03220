import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

@Suite("Coffee store: lazy loading, dirty tracking, exact prices")
struct CoffeeStoreTests {
    let database: AppDatabase
    let store: CoffeeStore

    init() async throws {
        database = try emptyDatabase()
        store = CoffeeStore(database: database)
        for (name, price) in [("Espresso", "2.50"), ("Cappuccino", "3.20"), ("Caffè Latte", "3.45")] {
            try await store.add(CoffeeDraft(name: name, price: decimal(price)))
        }
    }

    // MARK: Hydrated or not

    @Test("The list has ID and name only: not hydrated, no price, not dirty")
    func listIsNotHydrated() async throws {
        let coffees = try await store.all()
        #expect(coffees.map(\.name) == ["Caffè Latte", "Cappuccino", "Espresso"])
        #expect(coffees.allSatisfy { !$0.isHydrated && $0.price == nil && $0.picture == nil && !$0.isDirty })
    }

    @Test("The list and search queries read no price or picture column")
    func lazyListReadsOnlyIDAndName() async throws {
        try await store.setPicture(id: 1, from: .data(PictureBytes.make(count: 100)))
        let list = try await columnsRead(database) { try await store.all(sortedBy: .newest) }
        #expect(list.result.count == 3)
        #expect(Set(list.columns) == ["coffee.coffeeID", "coffee.coffeeName"], "\(list.columns)")
        let search = try await columnsRead(database) { try await store.fullTextSearch("latte").get() }
        #expect(search.result.map(\.name) == ["Caffè Latte"])
        // Of the coffee table (the search also reads its full-text index's).
        let searchedCoffee = search.columns.filter { $0.hasPrefix("coffee.") }
        #expect(Set(searchedCoffee) == ["coffee.coffeeID", "coffee.coffeeName"], "\(search.columns)")
        // The recorder does see the other columns when a query reads them.
        let detail = try await columnsRead(database) { try await store.coffee(id: 1) }
        #expect(Set(detail.columns).isSuperset(of: ["coffee.priceMicros", "coffee.picture", "coffee.pictureType"]))
    }

    @Test("Hydrating loads price and picture; a hydrated coffee is not read again unless asked")
    func hydrate() async throws {
        try await store.setPicture(id: 1, from: .data(PictureBytes.make(PictureBytes.gif89, count: 300)))
        var coffee = try #require(try await store.all().first { $0.id == 1 })
        try await store.hydrate(&coffee)
        #expect(coffee.isHydrated)
        #expect(coffee.price == decimal("2.5"))
        #expect(coffee.picture == CoffeePicture(size: 300, format: .gif))
        #expect(!coffee.isDirty)
        let again = try await tracedStatements(database) { try await store.hydrate(&coffee) }
        #expect(again.sql.isEmpty)
        let reload = try await tracedStatements(database) { try await store.hydrate(&coffee, reload: true) }
        #expect(reload.sql.count == 1)
        #expect(try await store.coffee(id: 1) == coffee)
    }

    @Test("Hydrating keeps unsaved edits, which stay dirty")
    func hydrateKeepsEdits() async throws {
        var coffee = try #require(try await store.all().first { $0.id == 2 })
        coffee.name = "Cappuccino Grande"
        try await store.hydrate(&coffee)
        #expect(coffee.name == "Cappuccino Grande")
        #expect(coffee.price == decimal("3.2"))
        #expect(coffee.isDirty)
        coffee.price = decimal("4")
        try await store.hydrate(&coffee, reload: true)
        #expect(coffee.price == decimal("4"))
        try await store.save(&coffee)
        #expect(try await store.coffee(id: 2)?.name == "Cappuccino Grande")
        #expect(try await store.coffee(id: 2)?.price == decimal("4"))
    }

    @Test("Hydrating a deleted coffee is an error")
    func hydrateDeleted() async throws {
        var coffee = try #require(try await store.all().first)
        try await store.delete(id: coffee.id)
        await #expect(throws: RecordNotFoundError(kind: "coffee", id: coffee.id)) { try await store.hydrate(&coffee) }
        #expect(!coffee.isHydrated)
    }

    @Test("The detail reads the picture's size from the row header, not the picture's pages")
    func detailDoesNotLoadPicture() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("coffee.sqlite")
        let size = 4 << 20
        do {
            let database = try AppDatabase(url: url, template: nil)
            let store = CoffeeStore(database: database)
            try await store.add(CoffeeDraft(name: "Big", price: 1))
            try await store.setPicture(id: 1, from: .data(PictureBytes.make(count: size)))
            database.close()
        }
        // A new connection starts with an empty page cache: every page it
        // needs is a cache miss.
        let database = try AppDatabase(url: url, template: nil)
        let store = CoffeeStore(database: database)
        let before = try pagesRead(database)
        let coffee = try #require(try await store.coffee(id: 1))
        let forDetail = try pagesRead(database) - before
        #expect(coffee.picture == CoffeePicture(size: size, format: .png))
        #expect(forDetail < 10, "the detail read \(forDetail) pages")
        // Reading the bytes does read the pages: the measure sees it.
        let picture = try database.read { db in try db.fetchOne(Data.self, "SELECT picture FROM coffee") }
        #expect(picture?.count == size)
        #expect(try pagesRead(database) - before > size / 4096 / 2)
    }

    // MARK: Dirty or not

    @Test("Saving a coffee that is not dirty runs no statement and changes nothing")
    func cleanSaveWritesNothing() async throws {
        var listed = try #require(try await store.all().first)
        var hydrated = try #require(try await store.coffee(id: 1))
        let changesBefore = try totalChanges(database)
        let traced = try await tracedStatements(database) {
            [try await store.save(&listed), try await store.save(&hydrated)]
        }
        #expect(traced.result == [false, false])
        #expect(traced.sql.isEmpty, "\(traced.sql)")
        #expect(try totalChanges(database) == changesBefore)
    }

    @Test("Saving writes only the changed field, then the coffee is clean")
    func saveWritesDirtyFieldsOnly() async throws {
        var coffee = try #require(try await store.coffee(id: 1))
        coffee.name = "  Doppio "
        #expect(coffee.isDirty)
        let changesBefore = try totalChanges(database)
        let traced = try await tracedStatements(database) { try await store.save(&coffee) }
        #expect(traced.result)
        #expect(
            traced.sql.filter { $0.hasPrefix("UPDATE \"coffee\" ") } == [
                "UPDATE \"coffee\" SET \"coffeeName\" = ?\nWHERE \"coffeeID\" = ?"
            ])
        // The new name is folded for search in the same write (a read
        // replica cannot fold it later).
        #expect(traced.sql.contains { $0.hasPrefix("UPDATE \"coffee_searchText\" SET isFolded = 1") })
        // One row of coffee; the name's full-text index counts its own changes.
        #expect(try totalChanges(database) > changesBefore)
        #expect(coffee.name == "Doppio")
        #expect(!coffee.isDirty)
        #expect(try await store.coffee(id: 1) == coffee)

        coffee.price = decimal("2.75")
        let price = try await tracedStatements(database) { try await store.save(&coffee) }
        #expect(
            price.sql.filter { $0.hasPrefix("UPDATE \"coffee\" ") } == [
                "UPDATE \"coffee\" SET \"priceMicros\" = ?\nWHERE \"coffeeID\" = ?"
            ])
        #expect(try await store.coffee(id: 1)?.price == decimal("2.75"))
    }

    @Test("Setting a field back to its stored value makes the coffee clean again")
    func revertIsClean() async throws {
        var coffee = try #require(try await store.coffee(id: 2))
        coffee.price = decimal("9")
        #expect(coffee.isDirty)
        coffee.price = decimal("3.20")
        #expect(!coffee.isDirty)
        #expect(try await store.save(&coffee) == false)
    }

    @Test("A coffee that is not hydrated saves its name without touching the price")
    func saveUnhydrated() async throws {
        var coffee = try #require(try await store.all().first { $0.id == 3 })
        coffee.name = "Latte"
        let traced = try await tracedStatements(database) { try await store.save(&coffee) }
        #expect(
            traced.sql.filter { $0.hasPrefix("UPDATE \"coffee\" ") } == [
                "UPDATE \"coffee\" SET \"coffeeName\" = ?\nWHERE \"coffeeID\" = ?"
            ])
        #expect(try await store.coffee(id: 3)?.price == decimal("3.45"))
        #expect(!coffee.isHydrated)
    }

    @Test("Saving a deleted coffee throws; the coffee stays dirty")
    func saveDeleted() async throws {
        var coffee = try #require(try await store.coffee(id: 1))
        try await store.delete(id: 1)
        coffee.name = "Ghost"
        await #expect(throws: RecordNotFoundError(kind: "coffee", id: 1)) { try await store.save(&coffee) }
        #expect(coffee.isDirty)
    }

    @Test("Invalid edits are refused with every problem; nothing is written and the coffee stays dirty")
    func invalidSave() async throws {
        var coffee = try #require(try await store.coffee(id: 1))
        coffee.name = " "
        coffee.price = decimal("-1")
        let changesBefore = try totalChanges(database)
        let error = try #require(await thrown(ValidationError.self) { try await store.save(&coffee) })
        #expect(error.problems.map(\.field) == ["name", "price"])
        #expect(coffee.isDirty)
        coffee.name = "Fine"
        coffee.price = nil
        #expect(
            await thrown(ValidationError.self) { try await store.save(&coffee) }?.message(for: "price")
                == "Price is required."
        )
        #expect(try totalChanges(database) == changesBefore)
        #expect(try await store.coffee(id: 1)?.name == "Espresso")
    }

    // MARK: Exact prices

    @Test(
        "Prices round-trip exactly and are stored as whole numbers of millionths",
        arguments: [
            ("0.1", "100000"), ("19.99", "19990000"), ("1234567.891", "1234567891000"), ("0", "0"), ("3.50", "3500000"),
            ("999999999.999999", "999999999999999"), ("0.000001", "1"),
        ])
    func priceRoundTrip(typed: String, stored: String) async throws {
        let price = try CoffeeRules.price(fromText: typed)
        let coffee = try await store.add(CoffeeDraft(name: "Priced", price: price))
        let raw = try database.read { db in
            try db.fetchOne(
                String.self, "SELECT typeof(priceMicros) || ' ' || priceMicros FROM coffee WHERE coffeeID = ?",
                arguments: [coffee.id])
        }
        #expect(raw == "integer \(stored)")
        #expect(try await store.coffee(id: coffee.id)?.price == decimal(typed))

        // And through an edit.
        var edited = try #require(try await store.coffee(id: 1))
        edited.price = price
        try await store.save(&edited)
        #expect(try await store.coffee(id: 1)?.price == decimal(typed))
    }

    @Test("0.1 + 0.2 is 0.3 with stored prices, as it is not with REAL")
    func pricesAddUp() async throws {
        let a = try await store.add(CoffeeDraft(name: "A", price: decimal("0.1")))
        let b = try await store.add(CoffeeDraft(name: "B", price: decimal("0.2")))
        let sum =
            try #require(try await store.coffee(id: a.id)?.price) + #require(try await store.coffee(id: b.id)?.price)
        #expect(sum == decimal("0.3"))
        #expect(0.1 + 0.2 != 0.3 as Double)
    }

    @Test(
        "Price text: digits and a point, with the limits",
        arguments: [
            ("3.50", "3.5"), (" 7 ", "7"), (".5", "0.5"), ("5.", "5"), ("007.10", "7.1"), ("-0", "0"),
            ("999999999.9999990000", "999999999.999999"),
        ])
    func priceParsing(text: String, expected: String) throws {
        #expect(try CoffeeRules.price(fromText: text) == decimal(expected))
    }

    @Test(
        "Bad price text is refused with a message",
        arguments: [
            ("", "must be a number"), ("abc", "must be a number"), ("3,50", "not a comma"),
            ("1,000.5", "must be a number"),
            ("1.2.3", "must be a number"),
            ("1e3", "must be a number"), ("$3", "must be a number"), ("+3", "must be a number"),
            (".", "must be a number"),
            ("-1", "must be 0 or more"), ("-0.01", "must be 0 or more"), ("1000000000", "less than 1000000000"),
            ("0.0000001", "at most 6 digits"), ("NaN", "must be a number"), ("٣", "must be a number"),
        ])
    func badPrices(text: String, message: String) async throws {
        let error = try #require(await thrown(ValidationError.self) { _ = try CoffeeRules.price(fromText: text) })
        #expect(error.message(for: "price")?.contains(message) == true, "\(error)")
    }

    @Test("Prices given as Decimal are checked too; nothing invalid is written")
    func draftValidation() async throws {
        for price in [decimal("-0.5"), decimal("1e9"), decimal("0.1234567"), Decimal.nan] {
            await #expect(throws: ValidationError.self) { try await store.add(CoffeeDraft(name: "X", price: price)) }
        }
        await #expect(throws: ValidationError.self) {
            try await store.add(CoffeeDraft(name: String(repeating: "x", count: 101), price: 1))
        }
        await #expect(throws: ValidationError.self) { try await store.add(CoffeeDraft(name: "Two\nlines", price: 1)) }
        #expect(try await store.count() == 3)
    }

    @Test(
        "Prices show with at least two decimals",
        arguments: [
            ("2.5", "2.50"), ("3", "3.00"), ("1234567.891", "1234567.891"), ("0.1", "0.10"), ("0", "0.00"),
        ])
    func priceText(price: String, text: String) {
        #expect(CoffeeRules.priceText(decimal(price)) == text)
    }

    @Test("Changes from text report every problem; giving none is one")
    func changesParsing() async throws {
        #expect(try CoffeeChanges.parse(name: " Ristretto ", price: nil) == CoffeeChanges(name: "Ristretto"))
        #expect(try CoffeeChanges.parse(name: nil, price: "2") == CoffeeChanges(price: 2))
        #expect(
            await thrown(ValidationError.self) { _ = try CoffeeChanges.parse(name: nil, price: nil) }?.problems.count
                == 1)
        let both = await thrown(ValidationError.self) { _ = try CoffeeChanges.parse(name: "", price: "x") }
        #expect(both?.problems.map(\.field) == ["name", "price"])
    }

    // MARK: List, search, delete

    @Test("Sort by name or newest; search ignores case and accents; text is data")
    func sortAndSearch() async throws {
        #expect(try await store.all(sortedBy: .newest).map(\.id) == [3, 2, 1])
        #expect(try await store.fullTextSearch("CAFFE").get().map(\.name) == ["Caffè Latte"])
        #expect(Set(try await store.fullTextSearch("ca").get().map(\.name)) == ["Caffè Latte", "Cappuccino"])
        #expect(try await store.fullTextSearch("sso").get().isEmpty)
        #expect(try await store.fullTextSearch("%").get().isEmpty)
        #expect(try await store.fullTextSearch("  ").get().isEmpty)
    }

    @Test("A NULL name from the seed's table reads as empty")
    func nullName() async throws {
        try database.write { db in try db.execute("INSERT INTO coffee (coffeeID, priceMicros) VALUES (9, NULL)") }
        #expect(try await store.all(sortedBy: .newest).first == Coffee(id: 9, name: ""))
        let coffee = try #require(try await store.coffee(id: 9))
        #expect(coffee.name.isEmpty && coffee.price == nil)
    }

    @Test("Delete returns the coffee as it was, picture included; a missing ID is an error")
    func delete() async throws {
        try await store.setPicture(id: 2, from: .data(PictureBytes.make(count: 50)))
        let deleted = try await store.delete(id: 2)
        #expect(deleted.name == "Cappuccino")
        #expect(deleted.picture?.size == 50)
        #expect(try await store.count() == 2)
        await #expect(throws: RecordNotFoundError(kind: "coffee", id: 2)) { try await store.delete(id: 2) }
    }

    @Test("JSON: a listed coffee has id and name; a hydrated one adds exact price text and picture")
    func json() async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let listed = try #require(try await store.all().first { $0.id == 1 })
        #expect(String(decoding: try encoder.encode(listed), as: UTF8.self) == #"{"id":1,"name":"Espresso"}"#)
        try await store.setPicture(id: 1, from: .data(PictureBytes.make(PictureBytes.webp, count: 20)))
        let shown = try #require(try await store.coffee(id: 1))
        #expect(
            String(decoding: try encoder.encode(shown), as: UTF8.self)
                == #"{"id":1,"name":"Espresso","picture":{"size":20,"type":"image\/webp"},"price":"2.50"}"#)
        let bare = Coffee(id: 5, name: "N", price: nil, picture: nil)
        #expect(
            String(decoding: try encoder.encode(bare), as: UTF8.self)
                == #"{"id":5,"name":"N","picture":null,"price":null}"#)
    }
}
