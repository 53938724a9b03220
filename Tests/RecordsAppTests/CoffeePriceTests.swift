import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

@Suite("Coffee prices: sorted, filtered and added in SQL, exactly")
struct CoffeePriceTests {
    let database: AppDatabase
    let store: CoffeeStore

    /// Prices that sort wrongly as text: "0.1", "10", "100", "9.5".
    init() async throws {
        database = try emptyDatabase()
        store = CoffeeStore(database: database)
        for (name, price) in [("Hundred", "100"), ("Tenth", "0.1"), ("Ten", "10"), ("Nine and a half", "9.5")] {
            try await store.add(CoffeeDraft(name: name, price: decimal(price)))
        }
    }

    /// Adds a coffee whose stored price is `value`, as another program
    /// might write it.
    func addRaw(id: Int64, name: String, price: SQLiteValue) throws {
        try database.write { db in
            try db.execute(
                "INSERT INTO coffee (coffeeID, coffeeName, priceMicros) VALUES (?, ?, ?)",
                arguments: [id, name, price])
        }
    }

    @Test("Sorting by price is numeric: 0.1, 9.5, 10, 100")
    func sortByPrice() async throws {
        #expect(try await store.all(sortedBy: .price).map(\.name) == ["Tenth", "Nine and a half", "Ten", "Hundred"])
        let raw = try database.read { db in
            try db.fetchAll(String.self, "SELECT coffeeName FROM coffee ORDER BY priceMicros")
        }
        #expect(raw == ["Tenth", "Nine and a half", "Ten", "Hundred"])
    }

    @Test("Equal prices sort by name; coffees without a readable price come last")
    func sortTiesAndUnpriced() async throws {
        try await store.add(CoffeeDraft(name: "Another ten", price: decimal("10.000")))
        try addRaw(id: 20, name: "Unpriced", price: .null)
        try addRaw(id: 21, name: "Cheap", price: .text("cheap"))
        let sorted = try await store.all(sortedBy: .price).map(\.name)
        #expect(sorted == ["Tenth", "Nine and a half", "Another ten", "Ten", "Hundred", "Cheap", "Unpriced"])
    }

    @Test("A minimum of 5 takes in 9.5; both ends are included")
    func filterByPrice() async throws {
        let above5 = try await store.all(sortedBy: .price, prices: CoffeePriceRange(minimum: decimal("5")))
        #expect(above5.map(\.name) == ["Nine and a half", "Ten", "Hundred"])
        let inclusive = try await store.all(
            sortedBy: .price, prices: CoffeePriceRange(minimum: decimal("9.5"), maximum: decimal("10")))
        #expect(inclusive.map(\.name) == ["Nine and a half", "Ten"])
        let cheap = try await store.all(prices: CoffeePriceRange(maximum: decimal("0.1")))
        #expect(cheap.map(\.name) == ["Tenth"])
        let none = try await store.all(prices: CoffeePriceRange(minimum: decimal("100.000001")))
        #expect(none.isEmpty)
    }

    @Test("A price filter leaves out coffees without a readable price; no filter keeps them")
    func filterLeavesOutUnpriced() async throws {
        try addRaw(id: 20, name: "Unpriced", price: .null)
        try addRaw(id: 21, name: "Words", price: .text("a lot"))
        try addRaw(id: 22, name: "Real", price: .real(50))
        let filtered = try await store.all(prices: CoffeePriceRange(minimum: decimal("0")))
        #expect(Set(filtered.map(\.id)) == [1, 2, 3, 4])
        #expect(try await store.all(prices: .any).count == 7)
    }

    @Test(
        "A price range that is not one is refused",
        arguments: [("-1", nil), ("1.0000001", nil), ("1000000000", nil), ("5", "4")])
    func badRange(minimum: String?, maximum: String?) async throws {
        let range = CoffeePriceRange(minimum: minimum.map(decimal), maximum: maximum.map(decimal))
        await #expect(throws: ValidationError.self) { try await store.all(prices: range) }
        await #expect(throws: ValidationError.self) { try await store.totalPrice(prices: range) }
        #expect(throws: ValidationError.self) { try CoffeePriceRange.parse(minimum: minimum, maximum: maximum) }
    }

    @Test("Typed ranges are parsed as prices are; an error names the end at fault")
    func parseRange() throws {
        #expect(try CoffeePriceRange.parse(minimum: "3.50", maximum: nil) == CoffeePriceRange(minimum: decimal("3.5")))
        #expect(try CoffeePriceRange.parse(minimum: nil, maximum: nil).isAny)
        let error = try #require(throws: ValidationError.self) {
            try CoffeePriceRange.parse(minimum: "3,50", maximum: "x")
        }
        #expect(error.description.contains("Minimum price must be a number such as 3.50"))
        #expect(error.description.contains("Maximum price must be a number"))
    }

    @Test("The total is exact: 0.1 + 0.2 is 0.3")
    func totalIsExact() async throws {
        let fresh = CoffeeStore(database: try emptyDatabase())
        try await fresh.add(CoffeeDraft(name: "A", price: decimal("0.1")))
        try await fresh.add(CoffeeDraft(name: "B", price: decimal("0.2")))
        #expect(try await fresh.totalPrice() == CoffeePriceTotal(total: decimal("0.3"), count: 2, withoutPrice: 0))
        #expect(0.1 + 0.2 != 0.3 as Double)
    }

    @Test("The total adds the largest prices without rounding or overflow")
    func totalOfLargePrices() async throws {
        let fresh = CoffeeStore(database: try emptyDatabase())
        for _ in 0..<3 { try await fresh.add(CoffeeDraft(name: "Gold", price: decimal("999999999.999999"))) }
        try await fresh.add(CoffeeDraft(name: "Dust", price: decimal("0.000001")))
        #expect(try await fresh.totalPrice().total == decimal("2999999999.999998"))
    }

    @Test("The total takes a range and counts the coffees without a readable price apart")
    func totalWithRangeAndUnpriced() async throws {
        try addRaw(id: 20, name: "Unpriced", price: .null)
        try addRaw(id: 21, name: "Words", price: .text("a lot"))
        #expect(try await store.totalPrice() == CoffeePriceTotal(total: decimal("119.6"), count: 4, withoutPrice: 2))
        let range = CoffeePriceRange(minimum: decimal("5"), maximum: decimal("10"))
        #expect(
            try await store.totalPrice(prices: range)
                == CoffeePriceTotal(total: decimal("19.5"), count: 2, withoutPrice: 2))
    }

    @Test("The total of no coffees is 0")
    func emptyTotal() async throws {
        let fresh = CoffeeStore(database: try emptyDatabase())
        #expect(try await fresh.totalPrice() == CoffeePriceTotal(total: 0, count: 0, withoutPrice: 0))
    }

    @Test("The total's JSON has the total as exact text")
    func totalJSON() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let total = CoffeePriceTotal(total: decimal("0.3"), count: 2, withoutPrice: 1)
        let json = String(decoding: try encoder.encode(total), as: UTF8.self)
        #expect(json == #"{"count":2,"total":"0.30","withoutPrice":1}"#)
    }

    @Test("A stored INTEGER is read as millionths, whatever its size")
    func readsMillionths() async throws {
        try addRaw(id: 20, name: "Max", price: .integer(.max))
        try addRaw(id: 21, name: "Min", price: .integer(.min))
        #expect(try await store.coffee(id: 20)?.price == decimal("9223372036854.775807"))
        #expect(try await store.coffee(id: 21)?.price == decimal("-9223372036854.775808"))
    }

    @Test("A stored REAL is flagged, not taken for millionths or rounded")
    func realIsUnreadable() async throws {
        try addRaw(id: 20, name: "Real", price: .real(3.5))
        let coffee = try #require(try await store.coffee(id: 20))
        #expect(coffee.price == nil)
        #expect(coffee.unreadable.map(\.stored) == ["the real number 3.5"])
    }
}

@Suite("Coffee prices: millionths")
struct CoffeeMillionthsTests {
    @Test(
        "A price converts to millionths exactly, both ways",
        arguments: [
            ("0", 0), ("0.1", 100_000), ("19.99", 19_990_000), ("999999999.999999", 999_999_999_999_999),
            ("0.000001", 1), ("-3", -3_000_000), ("9223372036854.775807", Int64.max),
        ])
    func exact(text: String, micros: Int64) {
        #expect(CoffeePrice.micros(exactly: decimal(text)) == micros)
        #expect(CoffeePrice.decimal(micros: micros) == decimal(text))
    }

    @Test("A price that is no whole number of millionths, or too large, has none")
    func inexact() {
        for text in ["0.0000001", "1.0000005", "9223372036854.775808", "1e30"] {
            #expect(CoffeePrice.micros(exactly: decimal(text)) == nil, "\(text)")
        }
        #expect(CoffeePrice.micros(exactly: .nan) == nil)
    }

    @Test("Millionths read back as the shortest decimal")
    func shortestText() {
        #expect(CoffeePrice.decimal(micros: 2_500_000).description == "2.5")
        #expect(CoffeeRules.priceText(CoffeePrice.decimal(micros: 2_500_000)) == "2.50")
    }
}

@Suite("Coffee prices: migrating decimal text to millionths")
struct CoffeePriceMigrationTests {
    /// A database as the first Coffee version left it (`price TEXT`), with
    /// `rows` (ID, name, price) and a picture on coffee 1.
    func firstVersionDatabase(_ dir: TemporaryDirectory, prices: [SQLiteValue]) throws -> URL {
        let url = dir.fileURL("records.sqlite")
        let db = try Database(path: url.path)
        try AppDatabase.migrator.migrate(db, upTo: "coffee.createTable")
        for (index, price) in prices.enumerated() {
            try db.execute(
                "INSERT INTO coffee (coffeeID, coffeeName, price) VALUES (?, ?, ?)",
                arguments: [index + 1, "Coffee \(index + 1)", price])
        }
        try db.execute(
            "UPDATE coffee SET pictureType = 'image/png', picture = ? WHERE coffeeID = 1",
            arguments: [PictureBytes.make(count: 5000)])
        db.close()
        return url
    }

    func raw(_ database: AppDatabase) throws -> [SQLiteValue] {
        try database.read { db in try db.fetchAll(SQLiteValue.self, "SELECT priceMicros FROM coffee ORDER BY coffeeID")
        }
    }

    @Test("Decimal text becomes millionths; every row, name and picture is kept")
    func convertsPrices() async throws {
        let dir = try TemporaryDirectory()
        let url = try firstVersionDatabase(
            dir, prices: [.text("2.5"), .text("0.1"), .text("100"), .text("9.5"), .text("10"), .null, .text("-3")])
        let database = try AppDatabase(url: url, template: nil)
        #expect(
            try raw(database) == [
                .integer(2_500_000), .integer(100_000), .integer(100_000_000), .integer(9_500_000),
                .integer(10_000_000), .null, .integer(-3_000_000),
            ])
        let store = CoffeeStore(database: database)
        #expect(try await store.all(sortedBy: .newest).map(\.name) == (1...7).reversed().map { "Coffee \($0)" })
        #expect(try await store.all(sortedBy: .price).map(\.id) == [7, 2, 1, 4, 5, 3, 6])
        #expect(try await store.coffee(id: 1)?.picture == CoffeePicture(size: 5000, format: .png))
        let copy = dir.fileURL("copy.png")
        try await store.writePicture(id: 1, to: .file(path: copy.path))
        #expect(try Data(contentsOf: copy) == PictureBytes.make(count: 5000))
        let columns = try database.read { db in
            try db.fetchAll(String.self, "SELECT name FROM pragma_table_info('coffee')")
        }
        #expect(columns == CoffeeSchema.millionthsColumns.map(\.name))
        #expect(try await store.add(CoffeeDraft(name: "New", price: decimal("1"))).id == 8)
    }

    @Test("A price that cannot be converted exactly is kept as it was and flagged")
    func keepsUnconvertible() async throws {
        let dir = try TemporaryDirectory()
        let kept: [SQLiteValue] = [
            .text("1e+300"), .text("cheap"), .text("1.0000001"), .text("12345678901234567890"),
            .blob(Data([1, 2])), .text("inf"),
        ]
        let url = try firstVersionDatabase(dir, prices: kept + [.text("3.20")])
        let database = try AppDatabase(url: url, template: nil)
        #expect(try raw(database) == kept + [.integer(3_200_000)])
        let store = CoffeeStore(database: database)
        for id in 1...6 {
            let coffee = try #require(try await store.coffee(id: Int64(id)))
            #expect(coffee.price == nil && coffee.unreadable.map(\.field) == ["price"], "coffee \(id)")
        }
        #expect(try await store.coffee(id: 7)?.price == decimal("3.2"))
        #expect(try await store.totalPrice() == CoffeePriceTotal(total: decimal("3.2"), count: 1, withoutPrice: 6))
        var mended = try #require(try await store.coffee(id: 2))
        mended.price = decimal("2")
        try await store.save(&mended)
        #expect(try await store.coffee(id: 2)?.unreadable == [])
    }

    @Test("A table already in millionths is kept as it is")
    func keepsCurrentTable() async throws {
        let database = try emptyDatabase()
        let store = CoffeeStore(database: database)
        try await store.add(CoffeeDraft(name: "Kept", price: decimal("1.5")))
        try database.write { db in try CoffeeSchema.convertPricesToMillionths(db) }
        #expect(try raw(database) == [.integer(1_500_000)])
    }

    @Test("A coffee table of other columns is refused and left as it was")
    func refusesUnknownTable() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE coffee (id INTEGER PRIMARY KEY, beans TEXT); INSERT INTO coffee VALUES (1, 'x')")
        #expect(throws: CoffeeSchema.SchemaError.self) { try CoffeeSchema.convertPricesToMillionths(db) }
        #expect(try db.fetchAll(String.self, "SELECT beans FROM coffee") == ["x"])
    }
}
