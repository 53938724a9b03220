import Foundation
import Observation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

@Suite("People store")
struct PeopleStoreTests {
    let database: AppDatabase
    let store: PeopleStore

    init() async throws {
        database = try emptyDatabase()
        store = PeopleStore(database: database)
        for (first, last, age) in [("Ada", "Lovelace", 36), ("Alan", "Turing", 41), ("Zoë", "Åkesson", 29)] {
            try await store.add(PersonDraft(firstName: first, lastName: last, age: age))
        }
    }

    @Test("Add returns the new person with its ID, trimmed; show finds it")
    func addAndShow() async throws {
        let grace = try await store.add(PersonDraft(firstName: "  Grace ", lastName: "O'Hopper", age: 85))
        #expect(grace == Person(id: 4, firstName: "Grace", lastName: "O'Hopper", age: 85))
        #expect(try await store.person(id: 4) == grace)
        #expect(try await store.person(id: 99) == nil)
    }

    @Test("Sort by name, age and newest")
    func sorting() async throws {
        #expect(try await store.all(sortedBy: .name).map(\.lastName) == ["Åkesson", "Lovelace", "Turing"])
        #expect(try await store.all(sortedBy: .age).map(\.age) == [29, 36, 41])
        #expect(try await store.all(sortedBy: .newest).map(\.id) == [3, 2, 1])
    }

    @Test("Unknown ages sort last by age")
    func nullAgesLast() async throws {
        try database.write { db in try db.execute("INSERT INTO peopleInfo (firstname, lastname) VALUES ('No', 'Age')") }
        #expect(try await store.all(sortedBy: .age).last?.lastName == "Age")
        #expect(try await store.all(sortedBy: .age).last?.age == nil)
    }

    @Test("Update changes only the given fields")
    func update() async throws {
        let updated = try await store.update(id: 1, with: PersonChanges(age: 37))
        #expect(updated == Person(id: 1, firstName: "Ada", lastName: "Lovelace", age: 37))
        #expect(try await store.person(id: 1) == updated)
        let renamed = try await store.update(id: 2, with: PersonChanges(firstName: "Alan M.", lastName: " Turing "))
        #expect(renamed == Person(id: 2, firstName: "Alan M.", lastName: "Turing", age: 41))
    }

    @Test("Updating a name keeps a NULL age NULL")
    func updateKeepsNull() async throws {
        let id = try database.write { db in
            try db.execute("INSERT INTO peopleInfo (firstname, lastname) VALUES ('No', 'Age')")
            return db.lastInsertedRowID
        }
        try await store.update(id: id, with: PersonChanges(firstName: "Still"))
        let age = try database.read { db in
            try db.fetchOne("SELECT age FROM peopleInfo WHERE peopleInfoID = ?", arguments: [id]).map {
                try $0[0] as SQLiteValue
            }
        }
        #expect(age == .null)
    }

    @Test("Delete returns who was deleted; missing IDs are errors")
    func delete() async throws {
        #expect(try await store.delete(id: 2).lastName == "Turing")
        #expect(try await store.count() == 2)
        await #expect(throws: RecordNotFoundError(kind: "person", id: 2)) { try await store.delete(id: 2) }
        await #expect(throws: RecordNotFoundError(kind: "person", id: 9)) {
            try await store.update(id: 9, with: PersonChanges(age: 1))
        }
    }

    @Test(
        "Invalid people are refused and nothing is written",
        arguments: [
            PersonDraft(firstName: "", lastName: "X", age: 1),
            PersonDraft(firstName: "   ", lastName: "X", age: 1),
            PersonDraft(firstName: "X", lastName: "\t", age: 1),
            PersonDraft(firstName: String(repeating: "a", count: 101), lastName: "X", age: 1),
            PersonDraft(firstName: "Line\nbreak", lastName: "X", age: 1),
            PersonDraft(firstName: "X", lastName: "Y", age: -1),
            PersonDraft(firstName: "X", lastName: "Y", age: 151),
        ])
    func invalidDrafts(draft: PersonDraft) async throws {
        await #expect(throws: ValidationError.self) { try await store.add(draft) }
        #expect(try await store.count() == 3)
    }

    @Test("Limits are inclusive: 100-character names, ages 0 and 150")
    func limits() async throws {
        try await store.add(PersonDraft(firstName: String(repeating: "a", count: 100), lastName: "X", age: 0))
        try await store.add(PersonDraft(firstName: "Old", lastName: "X", age: 150))
        #expect(try await store.count() == 5)
    }

    @Test("Invalid changes are refused and nothing is written")
    func invalidChanges() async throws {
        await #expect(throws: ValidationError.self) { try await store.update(id: 1, with: PersonChanges()) }
        await #expect(throws: ValidationError.self) {
            try await store.update(id: 1, with: PersonChanges(firstName: ""))
        }
        await #expect(throws: ValidationError.self) { try await store.update(id: 1, with: PersonChanges(age: 200)) }
        #expect(try await store.person(id: 1) == Person(id: 1, firstName: "Ada", lastName: "Lovelace", age: 36))
    }

    @Test("Parsing form text reports every field's problem at once")
    func parseReportsAllProblems() throws {
        do {
            _ = try PersonDraft.parse(firstName: "", lastName: " ", age: "old")
            Issue.record("expected a validation error")
        } catch let error as ValidationError {
            #expect(error.problems.map(\.field) == ["first name", "last name", "age"])
            #expect(error.message(for: "age") == "Age must be a whole number from 0 to 150.")
        }
        #expect(
            try PersonDraft.parse(firstName: "A", lastName: "B", age: " 7 ")
                == PersonDraft(firstName: "A", lastName: "B", age: 7))
        #expect(throws: ValidationError.self) { try PersonChanges.parse(firstName: nil, lastName: nil, age: "4.5") }
        #expect(throws: ValidationError.self) { try PersonRules.age(fromText: "") }
    }

    @Test("Quotes and SQL in names are stored as typed")
    func injectionIsData() async throws {
        let name = "Robert'); DROP TABLE peopleInfo;--"
        let person = try await store.add(PersonDraft(firstName: name, lastName: "Tables", age: 10))
        #expect(try await store.person(id: person.id)?.firstName == name)
        #expect(try await store.count() == 4)
    }

    @Test("JSON has every key, with null for an unknown age")
    func json() throws {
        let data = try JSONEncoder().encode(Person(id: 1, firstName: "A", lastName: "B", age: nil))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect(object?.keys.sorted() == ["age", "firstName", "id", "lastName"])
        #expect(object?["age"] is NSNull)
    }
}

@Suite("People view model")
@MainActor
struct PeopleViewModelTests {
    let model: PeopleViewModel

    init() async throws {
        let store = PeopleStore(database: try emptyDatabase())
        try await store.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        try await store.add(PersonDraft(firstName: "Alan", lastName: "Turing", age: 41))
        model = PeopleViewModel(store: store)
        await model.load()
    }

    @Test("The list refreshes after add, update and delete")
    func refreshesAfterChanges() async throws {
        #expect(model.people.map(\.firstName) == ["Ada", "Alan"])
        let grace = try await model.add(PersonDraft(firstName: "Grace", lastName: "Hopper", age: 85))
        #expect(model.people.map(\.firstName) == ["Grace", "Ada", "Alan"])
        try await model.update(id: grace.id, with: PersonChanges(lastName: "Zed"))
        #expect(model.people.map(\.lastName) == ["Lovelace", "Turing", "Zed"])
        try await model.delete(id: 1)
        #expect(model.people.map(\.firstName) == ["Alan", "Grace"])
        try await model.delete(atOffsets: IndexSet(integer: 0))
        #expect(model.people.map(\.firstName) == ["Grace"])
    }

    @Test("Observers are told when the list changes")
    func notifiesObservers() async throws {
        let changed = Flag()
        withObservationTracking {
            _ = model.people
        } onChange: {
            changed.set()
        }
        try await model.add(PersonDraft(firstName: "Grace", lastName: "Hopper", age: 85))
        #expect(changed.isSet)
    }

    @Test("Changing sort or search text refreshes the list")
    func sortAndSearch() async throws {
        model.sort = .newest
        await model.refreshed()
        #expect(model.people.map(\.firstName) == ["Alan", "Ada"])
        model.searchText = "LOVE"
        await model.refreshed()
        #expect(model.people.map(\.firstName) == ["Ada"])
        model.searchText = "lace"
        await model.refreshed()
        #expect(model.people.isEmpty)
        model.searchText = ""
        await model.refreshed()
        #expect(model.people.count == 2)
    }

    @Test("A search lists the full-text index's matches best first, whatever the sort")
    func searchIsRankedByTheIndex() async throws {
        try await model.add(PersonDraft(firstName: "Ada", lastName: "Adams", age: 90))
        model.sort = .age
        await model.refreshed()
        #expect(model.people.map(\.lastName) == ["Lovelace", "Turing", "Adams"])
        model.searchText = "ada"
        await model.refreshed()
        #expect(model.people.map(\.lastName) == ["Adams", "Lovelace"])
    }

    @Test("Search text with no word to look for shows no one, without an error")
    func searchWithNothingToLookFor() async throws {
        model.searchText = "%_\"*"
        await model.refreshed()
        #expect(model.people.isEmpty)
        #expect(model.errorMessage == nil)
    }

    @Test("A failed change throws, shows its message, writes nothing; a success clears it")
    func errors() async throws {
        await #expect(throws: ValidationError.self) {
            try await model.add(PersonDraft(firstName: "", lastName: "X", age: 1))
        }
        #expect(model.errorMessage == "First name is required.")
        #expect(model.people.count == 2)
        await #expect(throws: RecordNotFoundError.self) { try await model.delete(id: 42) }
        #expect(model.errorMessage == "no person with ID 42")
        try await model.add(PersonDraft(firstName: "Grace", lastName: "Hopper", age: 85))
        #expect(model.errorMessage == nil)
        #expect(try await model.person(id: 3)?.firstName == "Grace")
    }
}
