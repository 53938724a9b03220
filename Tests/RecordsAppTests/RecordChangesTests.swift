import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

@Suite("The change log")
struct RecordChangesTests {
    let file: FileDatabase

    init() throws { file = try FileDatabase() }

    private func changes(after: Int64 = 0, apps: [AppDatabase.App] = AppDatabase.App.allCases, limit: Int = 100)
        async throws -> [RecordChange]
    {
        try await file.database.recordChanges(after: after, apps: apps, limit: limit).changes
    }

    @Test("A new database's log is empty, at sequence 0")
    func emptyLog() async throws {
        #expect(try await file.database.latestChangeSequence() == 0)
        let batch = try await file.database.recordChanges(after: 0, apps: AppDatabase.App.allCases, limit: 10)
        #expect(batch == RecordChangeBatch(changes: [], missedSome: false, latest: 0, resumeAfter: 0))
    }

    @Test("Adds, updates and deletes are logged in the order they were committed")
    func createdUpdatedDeleted() async throws {
        let people = PeopleStore(database: file.database)
        let ada = try await people.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        let jane = try await ContactsStore(database: file.database).add(
            ContactDraft(name: "Jane", address: "1 Main St", contact: "+1 555"))
        try await people.update(id: ada.id, with: PersonChanges(age: 37))
        try await people.delete(id: ada.id)
        #expect(
            try await changes() == [
                RecordChange(sequence: 1, app: .people, kind: .created, id: ada.id),
                RecordChange(sequence: 2, app: .contacts, kind: .created, id: jane.id),
                RecordChange(sequence: 3, app: .people, kind: .updated, id: ada.id),
                RecordChange(sequence: 4, app: .people, kind: .deleted, id: ada.id),
            ])
        #expect(try await file.database.latestChangeSequence() == 4)
    }

    @Test("Every app's table is logged: a coffee and a user too")
    func everyApp() async throws {
        let latte = try await CoffeeStore(database: file.database).add(CoffeeDraft(name: "Latte", price: 3))
        let ada = try await usersStore(file.database).register(validForm())
        #expect(try await changes().map(\.app) == [.coffee, .users])
        #expect(try await changes().map(\.id) == [latte.id, ada.id])
    }

    @Test("Storing and removing a coffee's picture log the coffee updated")
    func pictureIsAnUpdate() async throws {
        let store = CoffeeStore(database: file.database)
        let latte = try await store.add(CoffeeDraft(name: "Latte", price: 3))
        let start = try await file.database.latestChangeSequence()
        try await store.setPicture(id: latte.id, from: .data(PictureBytes.make(count: 100)))
        try await store.removePicture(id: latte.id)
        let logged = try await changes(after: start)
        #expect(!logged.isEmpty)
        #expect(logged.allSatisfy { $0.app == .coffee && $0.kind == .updated && $0.id == latte.id })
    }

    @Test("A change committed by another connection is in the log")
    func anotherConnection() async throws {
        let other = try file.secondDatabase()
        defer { other.close() }
        let ada = try await PeopleStore(database: other).add(PersonDraft(firstName: "Ada", lastName: "L", age: 36))
        #expect(try await changes() == [RecordChange(sequence: 1, app: .people, kind: .created, id: ada.id)])
    }

    @Test("A change made by another process with SQL is in the log, key changes as delete and create")
    func anotherProcess() async throws {
        let ran = try await runSQLite3(
            file.url.path,
            """
            INSERT INTO CONTACTS (ID, NAME, ADDRESS, CONTACT) VALUES (7, 'Jane', '1 Main St', '+1 555');
            UPDATE CONTACTS SET ID = 8 WHERE ID = 7;
            DELETE FROM CONTACTS;
            """)
        guard ran else { return }
        #expect(
            try await changes().map { "\($0.kind) \($0.id)" } == ["created 7", "deleted 7", "created 8", "deleted 8"])
    }

    @Test("A write that is rolled back logs nothing")
    func rollback() async throws {
        let store = usersStore(file.database)
        _ = try await store.register(validForm())
        let before = try await file.database.latestChangeSequence()
        await #expect(throws: ValidationError.self) { try await store.register(validForm()) }
        #expect(try await file.database.latestChangeSequence() == before)
    }

    @Test("Only the apps asked for are given, and the batch goes on from the latest when not cut")
    func appsFilter() async throws {
        _ = try await PeopleStore(database: file.database).add(PersonDraft(firstName: "Ada", lastName: "L", age: 3))
        _ = try await CoffeeStore(database: file.database).add(CoffeeDraft(name: "Latte", price: 3))
        let batch = try await file.database.recordChanges(after: 0, apps: [.coffee], limit: 10)
        #expect(batch.changes.map(\.sequence) == [2])
        #expect(batch.latest == 2 && batch.resumeAfter == 2)
        #expect(try await file.database.recordChanges(after: 0, apps: [], limit: 10).changes.isEmpty)
    }

    @Test("A batch cut at the limit goes on from its last change")
    func limit() async throws {
        let store = PeopleStore(database: file.database)
        for age in 1...5 { _ = try await store.add(PersonDraft(firstName: "A", lastName: "B", age: age)) }
        let first = try await file.database.recordChanges(after: 0, apps: [.people], limit: 2)
        #expect(first.changes.map(\.sequence) == [1, 2])
        #expect(first.resumeAfter == 2 && first.latest == 5 && !first.missedSome)
        let rest = try await file.database.recordChanges(after: first.resumeAfter, apps: [.people], limit: 10)
        #expect(rest.changes.map(\.sequence) == [3, 4, 5])
    }

    @Test("The log keeps the newest changes only; a reader behind them is told it missed some")
    func trimming() async throws {
        // Fill the log to its capacity behind the store's back, then let a
        // trigger trim it.
        try file.database.write { db in
            try db.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(AppDatabase.changeLogCapacity))
                INSERT INTO record_changes (app, kind, record_id) SELECT 'people', 'updated', i FROM n
                """)
        }
        let ada = try await PeopleStore(database: file.database).add(PersonDraft(firstName: "A", lastName: "B", age: 3))
        let latest = Int64(AppDatabase.changeLogCapacity + 1)
        let kept = try file.database.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM record_changes") }
        #expect(kept == AppDatabase.changeLogCapacity)
        let behind = try await file.database.recordChanges(after: 0, apps: [.people], limit: 1)
        #expect(behind.missedSome)
        #expect(behind.changes.first?.sequence == 2)
        let caughtUp = try await file.database.recordChanges(after: 1, apps: [.people], limit: 1)
        #expect(!caughtUp.missedSome)
        let last = try await file.database.recordChanges(after: latest - 1, apps: [.people], limit: 5)
        #expect(last.changes == [RecordChange(sequence: latest, app: .people, kind: .created, id: ada.id)])
    }

    @Test("A reader ahead of the log (a database restored from an older backup) is told it missed some")
    func aheadOfTheLog() async throws {
        _ = try await PeopleStore(database: file.database).add(PersonDraft(firstName: "A", lastName: "B", age: 3))
        let batch = try await file.database.recordChanges(after: 50, apps: [.people], limit: 5)
        #expect(batch.missedSome && batch.changes.isEmpty && batch.latest == 1)
    }

    @Test("A negative sequence or a limit below 1 is refused")
    func badArguments() async throws {
        await #expect(throws: ValidationError.self) {
            try await file.database.recordChanges(after: -1, apps: [.people], limit: 5)
        }
        await #expect(throws: ValidationError.self) {
            try await file.database.recordChanges(after: 0, apps: [.people], limit: 0)
        }
    }

    @Test("A row of the log with an unknown app or kind is skipped, not an error")
    func unknownRows() async throws {
        try file.database.write { db in
            try db.execute("INSERT INTO record_changes (app, kind, record_id) VALUES ('people', 'renamed', 1)")
        }
        let batch = try await file.database.recordChanges(after: 0, apps: [.people], limit: 5)
        #expect(batch.changes.isEmpty && batch.latest == 1 && batch.resumeAfter == 1)
    }
}
