import Foundation
import Testing

@testable import RecordsApp
@testable import SQLiteStore

/// The IDs of a whole list read a page of `size` at a time, until the last
/// page: a list read in pages must neither skip nor repeat a row.
private func pagedIDs(size: Int, _ page: (Int) async throws -> RecordPage<Int64>) async throws -> [Int64] {
    var ids: [Int64] = []
    var number = 1
    while true {
        let page = try await page(number)
        ids += page.items
        guard page.hasNext else { return ids }
        number += 1
    }
}

/// Every order of every app runs both ways: descending is ascending's
/// exact reverse (ties broken by the ID the other way too), but for the
/// values that cannot be compared (an unknown age, a price that cannot be
/// read), which stay last both ways; pages of either direction walk the
/// list without skipping or repeating a row.
@Suite("Sort directions")
struct SortDirectionTests {
    let database: AppDatabase

    init() throws { database = try emptyDatabase() }

    /// People with tied ages, tied names (the same name folded alike, so
    /// only the ID tells them apart) and unknown ages.
    private func addPeople() async throws -> PeopleStore {
        let store = PeopleStore(database: database)
        let people: [(String, String, Int?)] = [
            ("Ada", "Lovelace", 36), ("Alan", "Turing", 41), ("Grace", "Hopper", nil), ("ada", "LOVELACE", 36),
            ("Émile", "Zola", 36), ("Bob", "Abel", nil), ("Ada", "Lovelace", 20), ("Zoë", "Åkesson", nil),
            ("Marie", "Curie", 66),
        ]
        for (first, last, age) in people {
            try await store.add(PersonDraft(firstName: first, lastName: last, age: age))
        }
        return store
    }

    private func peopleIDs(_ store: PeopleStore, _ sort: PersonSort, _ direction: SortDirection?, size: Int)
        async throws -> [Int64]
    {
        try await pagedIDs(size: size) { number in
            try await store.page(sortedBy: sort, direction: direction, number: number, size: size).map(\.id)
        }
    }

    @Test("People by age: youngest first by default, oldest first descending, unknown ages last both ways")
    func peopleByAgeBothWays() async throws {
        let store = try await addPeople()
        let up = try await peopleIDs(store, .age, nil, size: 100)
        // Ties of age by name (Lovelace, LOVELACE: one folded name, by ID), unknown ages last by name.
        #expect(up == [7, 1, 4, 5, 2, 9, 6, 8, 3])
        #expect(try await peopleIDs(store, .age, .ascending, size: 100) == up)
        let down = try await peopleIDs(store, .age, .descending, size: 100)
        let known = up.prefix(6)
        let unknown = up.suffix(3)
        #expect(down == Array(known.reversed()) + Array(unknown.reversed()))
        #expect(down == [9, 2, 5, 4, 1, 7, 3, 8, 6])
        let ages = try await store.page(sortedBy: .age, direction: .descending, number: 1, size: 100).items.map(\.age)
        #expect(ages == [66, 41, 36, 36, 36, 20, nil, nil, nil])
    }

    @Test("People by name both ways: descending is the exact reverse, ties by ID reversed too")
    func peopleByNameBothWays() async throws {
        let store = try await addPeople()
        let up = try await peopleIDs(store, .name, nil, size: 100)
        #expect(up == [6, 8, 9, 3, 1, 4, 7, 2, 5])
        #expect(try await peopleIDs(store, .name, .descending, size: 100) == Array(up.reversed()))
        #expect(try await peopleIDs(store, .newest, nil, size: 100) == Array((1...9).reversed()))
        #expect(try await peopleIDs(store, .newest, .ascending, size: 100) == Array(1...9))
    }

    @Test("Pages of every size walk each order either way without skipping or repeating a row")
    func pagesAgreeWithTheWholeList() async throws {
        let store = try await addPeople()
        for sort in PersonSort.allCases {
            for direction in SortDirection.allCases {
                let whole = try await peopleIDs(store, sort, direction, size: 100)
                #expect(whole.count == 9 && Set(whole).count == 9)
                for size in [1, 2, 4] {
                    let paged = try await peopleIDs(store, sort, direction, size: size)
                    #expect(paged == whole, "\(sort) \(direction) by \(size)")
                }
            }
        }
    }

    @Test("A page past the first, by name descending, starts at the right row whoever wrote the names")
    func descendingPageAfterAnotherProgramWrote() async throws {
        let store = try await addPeople()
        // Names written without the app: their sort keys are computed before the page is read.
        try database.write { db in
            try db.execute("INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Zed', 'Zzz', 1)")
            try db.execute("DELETE FROM peopleInfo_sortKey WHERE peopleInfoID = 1")
            try db.execute("INSERT INTO peopleInfo_sortKey (peopleInfoID) VALUES (1)")
        }
        let whole = try await peopleIDs(store, .name, .descending, size: 100)
        #expect(whole.first == 10)
        #expect(try await peopleIDs(store, .name, .descending, size: 3) == whole)
        let list = try await store.list(sortedBy: .name, direction: .descending).records.map(\.id)
        #expect(list == whole)
    }

    @Test("The whole list and the walk in chunks (what the command line prints) take the direction too")
    func listAndWalkTakeTheDirection() async throws {
        let store = try await addPeople()
        let paged = try await peopleIDs(store, .age, .descending, size: 100)
        #expect(try await store.list(sortedBy: .age, direction: .descending).records.map(\.id) == paged)
        let walked = Locked<[Int64]>([])
        try await store.forEach(sortedBy: .age, direction: .descending) { chunk in
            walked.withLock { $0 += chunk.records.map(\.id) }
        }
        #expect(walked.withLock { $0 } == paged)
        #expect(try await store.all(sortedBy: .age).map(\.id) == (try await peopleIDs(store, .age, nil, size: 100)))
    }

    @Test("A descending page by name walks the sort-key index backwards: no sort of its own")
    func descendingPageUsesIndex() throws {
        for number in [1, 2500] {
            let sql = try RecordTable<Person>.pageSQL(
                keyedBy: PeopleSchema.sortKeys, orderBy: nil, direction: .descending, number: number, size: 20)
            let plan = try database.read { db in
                try db.fetchAll("EXPLAIN QUERY PLAN \(sql)").map { try $0["detail"] as String }
            }
            #expect(plan.contains { $0.contains("peopleInfo_sortKey USING COVERING INDEX peopleInfo_sortKey_order") })
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
        }
    }

    @Test("Contacts by name and by newest both ways, pages agreeing")
    func contactsBothWays() async throws {
        let store = ContactsStore(database: database)
        for name in ["Ada", "bob", "Ada", "Émile", "Zoë", "ada"] {
            try await store.add(
                ContactDraft(name: name, address: "1 Main St", contact: "555 0100"), allowingDuplicate: true)
        }
        func ids(_ sort: ContactSort, _ direction: SortDirection?, size: Int) async throws -> [Int64] {
            try await pagedIDs(size: size) { number in
                try await store.page(sortedBy: sort, direction: direction, number: number, size: size).map(\.id)
            }
        }
        let up = try await ids(.name, nil, size: 100)
        #expect(up == [1, 3, 6, 2, 4, 5])
        #expect(try await ids(.name, .descending, size: 100) == Array(up.reversed()))
        #expect(try await ids(.name, .descending, size: 4) == Array(up.reversed()))
        #expect(try await ids(.newest, nil, size: 100) == [6, 5, 4, 3, 2, 1])
        #expect(try await ids(.newest, .ascending, size: 4) == [1, 2, 3, 4, 5, 6])
    }

    @Test("Coffees by price both ways: coffees without a readable price stay last, by name the same way")
    func coffeeByPriceBothWays() async throws {
        let store = CoffeeStore(database: database)
        for (name, price) in [("Latte", 4), ("Mocha", 5), ("Americano", 4), ("Espresso", 2)] {
            try await store.add(CoffeeDraft(name: name, price: Decimal(price)))
        }
        try database.write { db in
            try db.execute("INSERT INTO coffee (coffeeName) VALUES ('Cortado')")
            try db.execute("INSERT INTO coffee (coffeeName, priceMicros) VALUES ('Flat white', 'free')")
        }
        func names(_ direction: SortDirection?, size: Int) async throws -> [String] {
            var names: [String] = []
            var number = 1
            while true {
                let page = try await store.page(sortedBy: .price, direction: direction, number: number, size: size)
                names += page.items.map(\.name)
                guard page.hasNext else { return names }
                number += 1
            }
        }
        let up = try await names(nil, size: 100)
        #expect(up == ["Espresso", "Americano", "Latte", "Mocha", "Cortado", "Flat white"])
        let down = try await names(.descending, size: 100)
        #expect(down == ["Mocha", "Latte", "Americano", "Espresso", "Flat white", "Cortado"])
        #expect(try await names(.descending, size: 1) == down)
        let listed = try await store.list(sortedBy: .price, direction: .descending, prices: .any).records.map(\.name)
        #expect(listed == down)
    }

    @Test("An order's SQL is its own terms with only ASC or DESC added; a pinned term always goes up")
    func orderSQL() {
        let order = SortOrder(["a", "b"]).pinning("a IS NULL")
        #expect(order.sql(.ascending).description == "a IS NULL ASC, a ASC, b ASC")
        #expect(order.sql(.descending).description == "a IS NULL ASC, a DESC, b DESC")
        #expect(SortDirection(rawValue: "desc") == .descending && SortDirection(rawValue: "DESC") == nil)
        #expect(SortDirection.ascending.reversed == .descending && SortDirection.descending.reversed == .ascending)
        #expect(PersonSort.newest.defaultDirection == .descending && PersonSort.age.defaultDirection == .ascending)
    }
}
