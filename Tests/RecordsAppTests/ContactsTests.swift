import Foundation
import Observation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

@Suite("Contacts store")
struct ContactsStoreTests {
    let store: ContactsStore

    init() async throws {
        store = ContactsStore(database: try emptyDatabase())
        try await store.add(ContactDraft(name: "Jane Doe", address: "12 Main St", contact: "+1 555 0100"))
        try await store.add(
            ContactDraft(name: "Élise Martin", address: "1 rue de Rivoli, Paris", contact: "elise@example.com"))
    }

    @Test("Add trims and returns the contact; list is by name, or newest first")
    func addAndList() async throws {
        let url = "http://www.isleofskyeweather.org.uk/24elgol/clientraw.txt"
        let added = try await store.add(ContactDraft(name: " Skye ", address: "Elgol", contact: url))
        #expect(added == Contact(id: 3, name: "Skye", address: "Elgol", contact: url))
        #expect(try await store.all().map(\.name) == ["Élise Martin", "Jane Doe", "Skye"])
        #expect(try await store.all(sortedBy: .newest).map(\.id) == [3, 2, 1])
        #expect(added.details == "Elgol | \(url)")
    }

    @Test("Find matches the whole name, ignoring case, accents and spaces")
    func find() async throws {
        #expect(try await store.find(name: "jane doe").map(\.id) == [1])
        #expect(try await store.find(name: "  ELISE MARTIN ").map(\.id) == [2])
        #expect(try await store.find(name: "Jane").isEmpty)
        await #expect(throws: ValidationError.self) { try await store.find(name: " ") }
    }

    @Test("Update changes only the given fields; delete removes")
    func updateAndDelete() async throws {
        let updated = try await store.update(id: 1, with: ContactChanges(address: "14 Main St"))
        #expect(updated == Contact(id: 1, name: "Jane Doe", address: "14 Main St", contact: "+1 555 0100"))
        #expect(try await store.contact(id: 1) == updated)
        #expect(try await store.delete(id: 1) == updated)
        #expect(try await store.contact(id: 1) == nil)
        await #expect(throws: RecordNotFoundError.self) { try await store.delete(id: 1) }
        await #expect(throws: RecordNotFoundError.self) {
            try await store.update(id: 1, with: ContactChanges(name: "X"))
        }
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
    func invalidDrafts(draft: ContactDraft) async throws {
        await #expect(throws: ValidationError.self) { try await store.add(draft) }
        #expect(try await store.count() == 2)
    }

    @Test("Empty or invalid changes are refused")
    func invalidChanges() async throws {
        await #expect(throws: ValidationError.self) { try await store.update(id: 1, with: ContactChanges()) }
        await #expect(throws: ValidationError.self) { try await store.update(id: 1, with: ContactChanges(name: "  ")) }
        #expect(try await store.contact(id: 1)?.name == "Jane Doe")
    }
}

@Suite("Contacts view model")
@MainActor
struct ContactsViewModelTests {
    let model: ContactsViewModel

    init() async throws {
        model = ContactsViewModel(store: ContactsStore(database: try emptyDatabase()))
        await model.load()
    }

    @Test("Adding says \"Contact added\" and the list refreshes at once")
    func add() async throws {
        let changed = Flag()
        withObservationTracking {
            _ = model.contacts
        } onChange: {
            changed.set()
        }
        let contact = await model.add(ContactDraft(name: "Jane Doe", address: "12 Main St", contact: "555 0100"))
        #expect(contact?.id == 1)
        #expect(model.status?.description == "Contact added")
        #expect(model.contacts.map(\.name) == ["Jane Doe"])
        #expect(changed.isSet)
    }

    @Test("A failed add says \"Failed to add contact\" with the reason and writes nothing")
    func failedAdd() async throws {
        #expect(await model.add(ContactDraft(name: "", address: "a", contact: "c")) == nil)
        #expect(model.status == .failedToAdd("Name is required."))
        #expect(model.status?.description == "Failed to add contact: Name is required.")
        #expect(model.contacts.isEmpty)
    }

    @Test("Find says \"Match found\" or \"Match not found\"")
    func find() async throws {
        await model.add(ContactDraft(name: "Jane Doe", address: "12 Main St", contact: "555 0100"))
        #expect(await model.find(name: "JANE DOE").count == 1)
        #expect(model.status == .matchFound)
        #expect(model.matches.first?.address == "12 Main St")
        #expect(await model.find(name: "Bob").isEmpty)
        #expect(model.status == .matchNotFound)
        #expect(model.status?.description == "Match not found")
    }

    @Test("Update, delete and sort refresh the list")
    func changes() async throws {
        await model.add(ContactDraft(name: "Jane Doe", address: "12 Main St", contact: "555 0100"))
        await model.add(ContactDraft(name: "Bob Roe", address: "1 High St", contact: "555 0199"))
        #expect(model.contacts.map(\.name) == ["Bob Roe", "Jane Doe"])
        try await model.update(id: 2, with: ContactChanges(name: "Zed Roe"))
        #expect(model.contacts.map(\.name) == ["Jane Doe", "Zed Roe"])
        model.sort = .newest
        await model.refreshed()
        #expect(model.contacts.map(\.id) == [2, 1])
        try await model.delete(atOffsets: IndexSet(integer: 0))
        #expect(model.contacts.map(\.id) == [1])
        await #expect(throws: RecordNotFoundError.self) { try await model.delete(id: 2) }
        #expect(model.errorMessage == "no contact with ID 2")
    }
}

@Suite("Contacts store: names that exist")
struct ContactsDuplicateTests {
    let store: ContactsStore

    init() async throws {
        store = ContactsStore(database: try emptyDatabase())
        try await store.add(ContactDraft(name: "Jane Doe", address: "12 Main St", contact: "+1 555 0100"))
    }

    @Test(
        "A name another contact has, ignoring case, accents and spaces, is refused, naming it; nothing is written",
        arguments: ["Jane Doe", "jane doe", "  JANE   DOE ", "Jané Doe"])
    func refused(name: String) async throws {
        let error = await #expect(throws: DuplicateContactError.self) {
            try await store.add(ContactDraft(name: name, address: "1 High St", contact: "555"))
        }
        #expect(error?.ids == [1])
        #expect(error?.existing.map(\.address) == ["12 Main St"])
        #expect(error?.name == name.trimmingCharacters(in: .whitespaces))
        #expect(
            error?.description
                == "a contact named \"\(name.trimmingCharacters(in: .whitespaces))\" already exists (ID 1)")
        #expect(try await store.count() == 1)
    }

    @Test("Allowed, a second contact of the name is added; then both are named")
    func allowed() async throws {
        let second = try await store.add(
            ContactDraft(name: "jane doe", address: "1 High St", contact: "555"), allowingDuplicate: true)
        #expect(second.id == 2)
        let error = await #expect(throws: DuplicateContactError.self) {
            try await store.add(ContactDraft(name: "Jane Doe", address: "x", contact: "y"))
        }
        #expect(error?.ids == [1, 2])
        #expect(error?.description == "2 contacts named \"Jane Doe\" already exist (IDs 1, 2)")
    }

    @Test("Other names pass: a longer name, a name with another letter")
    func otherNames() async throws {
        for name in ["Jane Doe Jr", "Jane Do", "Jane Doey"] {
            #expect(try await store.add(ContactDraft(name: name, address: "a", contact: "c")).name == name)
        }
    }

    @Test("Validation comes first: an invalid contact with a name that exists is a validation error")
    func validationFirst() async throws {
        await #expect(throws: ValidationError.self) {
            try await store.add(ContactDraft(name: "Jane Doe", address: " ", contact: "c"))
        }
    }

    @Test("Many adds of one new name at once: exactly one is saved, every other is refused")
    func concurrentAdds() async throws {
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<8 {
                group.addTask {
                    (try? await store.add(ContactDraft(name: "Ada Byron", address: "\(index)", contact: "c"))) != nil
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 1)
        #expect(try await store.find(name: "ada byron").count == 1)
    }
}
