import Foundation
import SQLiteStore
import Testing

@testable import RecordsApp

@Suite("Coffee pages: the list and the search a page at a time")
struct CoffeePagingTests {
    let database: AppDatabase
    let store: CoffeeStore

    init() async throws {
        database = try emptyDatabase()
        store = CoffeeStore(database: database)
        for index in 1...5 {
            try await store.add(CoffeeDraft(name: "Latte \(index)", price: Decimal(6 - index)))
        }
        try await store.add(CoffeeDraft(name: "Mocha", price: 9))
    }

    @Test("Pages of the list come in order, each saying whether another follows")
    func listPages() async throws {
        let first = try await store.page(sortedBy: .price, number: 1, size: 4)
        #expect(first.items.map(\.name) == ["Latte 5", "Latte 4", "Latte 3", "Latte 2"])
        #expect(first.hasNext && !first.hasPrevious)
        #expect(first.total == 6 && first.pageCount == 2)
        let second = try await store.page(sortedBy: .price, number: 2, size: 4)
        #expect(second.items.map(\.name) == ["Latte 1", "Mocha"])
        #expect(!second.hasNext && second.hasPrevious)
        #expect(try await store.page(number: 3, size: 4).isEmpty)
        // A price range counts only the coffees in it; hydrated pages carry the prices.
        let range = try CoffeePriceRange.parse(minimum: "4", maximum: nil)
        let priced = try await store.page(sortedBy: .price, prices: range, number: 1, size: 4, hydrated: true)
        #expect(priced.total == 3 && priced.items.map(\.price) == [4, 5, 9])
    }

    @Test("A page of the list reads IDs and names only")
    func listPageReadsIDAndName() async throws {
        try await store.setPicture(id: 1, from: .data(PictureBytes.make(count: 100)))
        let read = try await columnsRead(database) { try await store.page(number: 1, size: 3) }
        #expect(read.result.items.allSatisfy { !$0.isHydrated })
        // The page's count reads the table but no column ("coffee.").
        #expect(Set(read.columns) == ["coffee.coffeeID", "coffee.coffeeName", "coffee."], "\(read.columns)")
    }

    @Test("Pages of a search come best first, each saying whether another follows")
    func searchPages() async throws {
        let first = try await store.fullTextSearch("latte", page: 1, size: 3)
        #expect(first.items.count == 3)
        #expect(first.hasNext)
        let second = try await store.fullTextSearch("latte", page: 2, size: 3)
        #expect(second.items.count == 2)
        #expect(!second.hasNext)
        let names = Set((first.items + second.items).map(\.record.name))
        #expect(names == Set((1...5).map { "Latte \($0)" }))
    }

    @Test("A page number below 1 or a size out of range is a validation error")
    func badPages() async throws {
        await #expect(throws: ValidationError.self) { try await store.page(number: 0, size: 10) }
        await #expect(throws: ValidationError.self) { try await store.page(number: 1, size: 0) }
        await #expect(throws: ValidationError.self) { try await store.fullTextSearch("latte", page: 0, size: 10) }
        await #expect(throws: ValidationError.self) {
            try await store.page(prices: CoffeePriceRange(minimum: 5, maximum: 1), number: 1, size: 10)
        }
    }
}
