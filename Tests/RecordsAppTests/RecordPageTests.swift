import Foundation
import SQLiteStore
import Testing

@testable import RecordsApp

/// The web app's list pages: one page of a sorted list or of a
/// search, read without the rest, and whether another follows.
@Suite("Record pages: People")
struct PeoplePageTests {
    let database: AppDatabase
    let store: PeopleStore

    /// Five people; by age: Zoë 29, Ada 36, Alan 41, Grace 85, Edsger (no age).
    init() async throws {
        database = try emptyDatabase()
        store = PeopleStore(database: database)
        let people: [(String, String, Int?)] = [
            ("Ada", "Lovelace", 36), ("Alan", "Turing", 41), ("Zoë", "Åkesson", 29), ("Grace", "Hopper", 85),
            ("Edsger", "Dijkstra", nil),
        ]
        for (first, last, age) in people {
            try await store.add(PersonDraft(firstName: first, lastName: last, age: age))
        }
    }

    @Test("Pages follow the sort, each saying whether another follows")
    func pagesFollowTheSort() async throws {
        let first = try await store.page(sortedBy: .age, number: 1, size: 2)
        #expect(first.items.map(\.firstName) == ["Zoë", "Ada"])
        #expect(first.hasNext && !first.hasPrevious)
        #expect(first.nextNumber == 2 && first.previousNumber == nil)
        let second = try await store.page(sortedBy: .age, number: 2, size: 2)
        #expect(second.items.map(\.firstName) == ["Alan", "Grace"])
        #expect(second.hasNext && second.hasPrevious)
        let last = try await store.page(sortedBy: .age, number: 3, size: 2)
        #expect(last.items.map(\.firstName) == ["Edsger"])
        #expect(!last.hasNext && last.hasPrevious)
        #expect(last.number == 3 && last.size == 2)
    }

    @Test("The default order is by name, last name first")
    func defaultOrderIsByName() async throws {
        let page = try await store.page(number: 1, size: 10)
        #expect(page.items.map(\.lastName) == ["Åkesson", "Dijkstra", "Hopper", "Lovelace", "Turing"])
        #expect(!page.hasNext)
    }

    @Test("A page ending at the last row has no next page")
    func exactEndHasNoNext() async throws {
        let page = try await store.page(sortedBy: .name, number: 1, size: 5)
        #expect(page.items.count == 5)
        #expect(!page.hasNext)
    }

    @Test("A page past the end is empty, with no next page")
    func pastTheEndIsEmpty() async throws {
        let page = try await store.page(sortedBy: .name, number: 4, size: 2)
        #expect(page.isEmpty)
        #expect(!page.hasNext && page.hasPrevious)
    }

    @Test("A page number below 1 is refused, naming the page")
    func pageNumberBelowOne() async throws {
        for number in [0, -1, Int.min] {
            let error = await #expect(throws: ValidationError.self) {
                try await store.page(number: number, size: 10)
            }
            #expect(error?.message(for: "page") == "page must be a whole number from 1")
        }
    }

    @Test("A page size outside 1 to the maximum is refused, naming the size")
    func pageSizeOutOfRange() async throws {
        for size in [0, -5, PageRules.maxSize + 1] {
            let error = await #expect(throws: ValidationError.self) {
                try await store.page(number: 1, size: size)
            }
            #expect(error?.message(for: "page size") == "page size must be a whole number from 1 to 500")
        }
        #expect(try await store.page(number: 1, size: PageRules.maxSize).items.count == 5)
    }

    @Test("A page so far that its offset overflows is refused, not a trap")
    func overflowingPageRefused() async throws {
        let error = await #expect(throws: ValidationError.self) {
            try await store.page(number: Int.max, size: 2)
        }
        #expect(error?.message(for: "page") == "page \(Int.max) is beyond the end of any list")
        await #expect(throws: ValidationError.self) { try await store.fullTextSearch("ada", page: Int.max, size: 2) }
    }

    @Test("An unreadable row takes its place on the page and is named")
    func unreadableRowOnThePage() async throws {
        try database.write { db in
            try db.execute("UPDATE peopleInfo SET age = 'old' WHERE firstname = 'Ada'")
        }
        let page = try await store.page(sortedBy: .name, number: 2, size: 2)
        #expect(page.items.map(\.lastName) == ["Hopper"])
        #expect(page.unreadable.map(\.id) == [1])
        #expect(page.hasNext)
    }

    @Test("The row after the page is not read: an unreadable one there only says more follow")
    func rowAfterThePageNotRead() async throws {
        try database.write { db in
            try db.execute("UPDATE peopleInfo SET age = 'old' WHERE firstname = 'Edsger'")
        }
        let page = try await store.page(sortedBy: .name, number: 1, size: 1)
        #expect(page.items.map(\.lastName) == ["Åkesson"])
        #expect(page.unreadable.isEmpty)
        #expect(page.hasNext)
    }

    @Test("Search pages hold the ranked matches in turn, saying whether more follow")
    func searchPages() async throws {
        try await store.add(PersonDraft(firstName: "Ada", lastName: "Adams", age: 50))
        try await store.add(PersonDraft(firstName: "Adele", lastName: "Goldberg", age: 80))
        let all = try await store.fullTextSearch("ad").records.map(\.id)
        #expect(all.count == 3)
        let first = try await store.fullTextSearch("ad", page: 1, size: 2)
        let second = try await store.fullTextSearch("ad", page: 2, size: 2)
        #expect(first.items.map(\.record.id) == Array(all.prefix(2)))
        #expect(first.hasNext && !first.hasPrevious)
        #expect(second.items.map(\.record.id) == [all[2]])
        #expect(!second.hasNext && second.hasPrevious)
        #expect(first.items[0].snippet.marked(before: "[", after: "]") == "[Ada] [Adams]")
    }

    @Test("A search page for text with nothing to look for is empty, not an error")
    func searchPageWithNothingToLookFor() async throws {
        for text in ["", "   ", "\"*", "%_"] {
            let page = try await store.fullTextSearch(text, page: 1, size: 10)
            #expect(page.isEmpty && !page.hasNext)
        }
    }

    @Test("A search page's number and size are checked even for blank text")
    func searchPageChecksItsBounds() async throws {
        await #expect(throws: ValidationError.self) { try await store.fullTextSearch("", page: 0, size: 10) }
        await #expect(throws: ValidationError.self) { try await store.fullTextSearch("ada", page: 1, size: 0) }
    }

    @Test("An unreadable match takes its place on a search page and is named")
    func unreadableMatchOnASearchPage() async throws {
        try database.write { db in
            try db.execute("INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Ada', 'Unread', 'old')")
        }
        let page = try await store.fullTextSearch("ada", page: 1, size: 5)
        #expect(page.items.map(\.record.fullName) == ["Ada Lovelace"])
        #expect(page.unreadable.map(\.id) == [6])
    }
}

@Suite("Record pages: Contacts")
struct ContactsPageTests {
    let store: ContactsStore

    init() async throws {
        store = ContactsStore(database: try emptyDatabase())
        for name in ["Marco Rossi", "Jane Doe", "Élise Martin"] {
            try await store.add(ContactDraft(name: name, address: "1 High Street", contact: "+44 20 0000"))
        }
    }

    @Test("Pages by name ignore case and accents; by newest the last added come first")
    func pagesByNameAndNewest() async throws {
        let byName = try await store.page(number: 1, size: 2)
        #expect(byName.items.map(\.name) == ["Élise Martin", "Jane Doe"])
        #expect(byName.hasNext)
        #expect(try await store.page(sortedBy: .name, number: 2, size: 2).items.map(\.name) == ["Marco Rossi"])
        let newest = try await store.page(sortedBy: .newest, number: 1, size: 3)
        #expect(newest.items.map(\.name) == ["Élise Martin", "Jane Doe", "Marco Rossi"])
        #expect(!newest.hasNext)
    }

    @Test("Search pages hold the matches of the name, address or contact")
    func searchPages() async throws {
        try await store.add(ContactDraft(name: "Ann Lee", address: "2 Rossi Lane", contact: "ann@example.com"))
        let first = try await store.fullTextSearch("rossi", page: 1, size: 1)
        #expect(first.items.map(\.record.name) == ["Marco Rossi"])
        #expect(first.hasNext)
        let second = try await store.fullTextSearch("rossi", page: 2, size: 1)
        #expect(second.items.map(\.record.name) == ["Ann Lee"])
        #expect(!second.hasNext)
    }

    @Test("Bad page numbers and sizes are refused")
    func badPagesRefused() async throws {
        await #expect(throws: ValidationError.self) { try await store.page(number: 0, size: 10) }
        await #expect(throws: ValidationError.self) { try await store.page(number: 1, size: 501) }
        await #expect(throws: ValidationError.self) { try await store.fullTextSearch("x", page: -3, size: 10) }
    }
}
