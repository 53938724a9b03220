import Foundation
import Testing

@testable import RecordsApp

/// `delete(ids:)`: several records in one transaction, all or none.
@Suite("Stores: deleting several records")
struct DeleteManyTests {
    @Test("Several IDs are deleted together and returned in the order given, each once")
    func deletesAll() async throws {
        let store = PeopleStore(database: try emptyDatabase())
        let ada = try await store.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        let alan = try await store.add(PersonDraft(firstName: "Alan", lastName: "Turing", age: 41))
        let grace = try await store.add(PersonDraft(firstName: "Grace", lastName: "Hopper", age: nil))
        let deleted = try await store.delete(ids: [grace.id, ada.id, grace.id])
        #expect(deleted.map(\.id) == [grace.id, ada.id])
        #expect(try await store.list().records.map(\.id) == [alan.id])
    }

    @Test("One ID that is not there deletes none, and every missing ID is named")
    func oneMissingDeletesNone() async throws {
        let database = try emptyDatabase()
        let people = PeopleStore(database: database)
        let ada = try await people.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        let error = try await #require(throws: RecordsNotFoundError.self) {
            try await people.delete(ids: [ada.id, 98, 99])
        }
        #expect(error == RecordsNotFoundError(kind: "person", missing: [98, 99], given: 3))
        #expect(error.description == "no person with ID 98 or 99; nothing was deleted")
        #expect(try await people.count() == 1)

        let contacts = ContactsStore(database: database)
        let jane = try await contacts.add(ContactDraft(name: "Jane Doe", address: "1 Main St", contact: "555"))
        await #expect(throws: RecordsNotFoundError.self) { try await contacts.delete(ids: [jane.id, 7]) }
        #expect(try await contacts.count() == 1)

        let coffee = CoffeeStore(database: database)
        let cortado = try await coffee.add(CoffeeDraft(name: "Cortado", price: 3))
        await #expect(throws: RecordsNotFoundError.self) { try await coffee.delete(ids: [5, cortado.id]) }
        #expect(try await coffee.count() == 1)
    }

    @Test("A single missing ID says so without the note about the others")
    func singleMissing() async throws {
        let store = PeopleStore(database: try emptyDatabase())
        let error = try await #require(throws: RecordsNotFoundError.self) { try await store.delete(ids: [4]) }
        #expect(error.description == "no person with ID 4")
    }
}
