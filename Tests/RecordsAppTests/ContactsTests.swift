import Foundation
import Observation
import SQLiteStore
import Testing

@testable import RecordsApp

@Suite("Contacts store")
struct ContactsStoreTests {
    let store: ContactsStore

    init() throws {
        store = ContactsStore(database: try emptyDatabase())
        try store.add(ContactDraft(name: "Jane Doe", address: "12 Main St", contact: "+1 555 0100"))
        try store.add(
            ContactDraft(name: "Élise Martin", address: "1 rue de Rivoli, Paris", contact: "elise@example.com"))
    }

    @Test("Add trims and returns the contact; list is by name, or newest first")
    func addAndList() throws {
        let url = "http://www.isleofskyeweather.org.uk/24elgol/clientraw.txt"
        let added = try store.add(ContactDraft(name: " Skye ", address: "Elgol", contact: url))
        #expect(added == Contact(id: 3, name: "Skye", address: "Elgol", contact: url))
        #expect(try store.all().map(\.name) == ["Élise Martin", "Jane Doe", "Skye"])
        #expect(try store.all(sortedBy: .newest).map(\.id) == [3, 2, 1])
        #expect(added.details == "Elgol | \(url)")
    }

    @Test("Find matches the whole name, ignoring case, accents and spaces")
    func find() throws {
        #expect(try store.find(name: "jane doe").map(\.id) == [1])
        #expect(try store.find(name: "  ELISE MARTIN ").map(\.id) == [2])
        #expect(try store.find(name: "Jane").isEmpty)
        #expect(throws: ValidationError.self) { try store.find(name: " ") }
    }

    @Test("Update changes only the given fields; delete removes")
    func updateAndDelete() throws {
        let updated = try store.update(id: 1, with: ContactChanges(address: "14 Main St"))
        #expect(updated == Contact(id: 1, name: "Jane Doe", address: "14 Main St", contact: "+1 555 0100"))
        #expect(try store.contact(id: 1) == updated)
        #expect(try store.delete(id: 1) == updated)
        #expect(try store.contact(id: 1) == nil)
        #expect(throws: RecordNotFoundError.self) { try store.delete(id: 1) }
        #expect(throws: RecordNotFoundError.self) { try store.update(id: 1, with: ContactChanges(name: "X")) }
    }

    @Test(
        "Invalid contacts are refused and nothing is written",
        arguments: [
            ContactDraft(name: "", address: "a", contact: "c"),
            ContactDraft(name: "n", address: " ", contact: "c"),
            ContactDraft(name: "n", address: "a", contact: ""),
            ContactDraft(name: String(repeating: "n", count: 101), address: "a", contact: "c"),
            ContactDraft(name: "n", address: String(repeating: "a", count: 201), contact: "c"),
            ContactDraft(name: "n", address: "a", contact: "c\u{1B}[31m"),
        ])
    func invalidDrafts(draft: ContactDraft) throws {
        #expect(throws: ValidationError.self) { try store.add(draft) }
        #expect(try store.count() == 2)
    }

    @Test("Empty or invalid changes are refused")
    func invalidChanges() throws {
        #expect(throws: ValidationError.self) { try store.update(id: 1, with: ContactChanges()) }
        #expect(throws: ValidationError.self) { try store.update(id: 1, with: ContactChanges(name: "  ")) }
        #expect(try store.contact(id: 1)?.name == "Jane Doe")
    }
}

@Suite("Contacts view model")
@MainActor
struct ContactsViewModelTests {
    let model: ContactsViewModel

    init() throws {
        model = ContactsViewModel(store: ContactsStore(database: try emptyDatabase()))
        model.load()
    }

    @Test("Adding says \"Contact added\" and the list refreshes at once")
    func add() throws {
        let changed = Flag()
        withObservationTracking {
            _ = model.contacts
        } onChange: {
            changed.set()
        }
        let contact = model.add(ContactDraft(name: "Jane Doe", address: "12 Main St", contact: "555 0100"))
        #expect(contact?.id == 1)
        #expect(model.status?.description == "Contact added")
        #expect(model.contacts.map(\.name) == ["Jane Doe"])
        #expect(changed.isSet)
    }

    @Test("A failed add says \"Failed to add contact\" with the reason and writes nothing")
    func failedAdd() throws {
        #expect(model.add(ContactDraft(name: "", address: "a", contact: "c")) == nil)
        #expect(model.status == .failedToAdd("name must not be empty"))
        #expect(model.status?.description == "Failed to add contact: name must not be empty")
        #expect(model.contacts.isEmpty)
    }

    @Test("Find says \"Match found\" or \"Match not found\"")
    func find() throws {
        model.add(ContactDraft(name: "Jane Doe", address: "12 Main St", contact: "555 0100"))
        #expect(model.find(name: "JANE DOE").count == 1)
        #expect(model.status == .matchFound)
        #expect(model.matches.first?.address == "12 Main St")
        #expect(model.find(name: "Bob").isEmpty)
        #expect(model.status == .matchNotFound)
        #expect(model.status?.description == "Match not found")
    }

    @Test("Update, delete and sort refresh the list")
    func changes() throws {
        model.add(ContactDraft(name: "Jane Doe", address: "12 Main St", contact: "555 0100"))
        model.add(ContactDraft(name: "Bob Roe", address: "1 High St", contact: "555 0199"))
        #expect(model.contacts.map(\.name) == ["Bob Roe", "Jane Doe"])
        try model.update(id: 2, with: ContactChanges(name: "Zed Roe"))
        #expect(model.contacts.map(\.name) == ["Jane Doe", "Zed Roe"])
        model.sort = .newest
        #expect(model.contacts.map(\.id) == [2, 1])
        try model.delete(atOffsets: IndexSet(integer: 0))
        #expect(model.contacts.map(\.id) == [1])
        #expect(throws: RecordNotFoundError.self) { try model.delete(id: 2) }
        #expect(model.errorMessage == "no contact with ID 2")
    }
}
