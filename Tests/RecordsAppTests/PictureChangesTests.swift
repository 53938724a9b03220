import Foundation
import TestSupport
import Testing

@testable import RecordsApp
@testable import SQLiteStore

/// A picture stored or removed is a change of its record, as an edit is:
/// it signals the app's changes (what the live pages refresh on) and is
/// in the change log (what the API's event streams read), whoever stores
/// it.
@Suite("Picture changes")
struct PictureChangesTests {
    let file: FileDatabase

    init() throws { file = try FileDatabase() }

    /// Counts the signals of `changes` as they come, until the test ends.
    private final class SignalCount: Sendable {
        private let count = Locked(0)
        private let task: Task<Void, Never>

        init(_ changes: AppChanges) {
            let count = self.count
            task = Task {
                do {
                    for try await _ in changes { count.withLock { $0 += 1 } }
                } catch {}
            }
        }

        var value: Int { count.withLock { $0 } }

        /// Waits for the signal of the state at the start.
        func started() async -> Bool { await eventually { value >= 1 } }

        /// Runs `change`, then waits for a signal after it.
        func signal(after change: () async throws -> Void) async throws -> Bool {
            let seen = value
            try await change()
            return await eventually { value > seen }
        }

        deinit { task.cancel() }
    }

    @Test("Storing and removing a coffee's picture signal the coffee app's changes")
    func coffeePictureSignals() async throws {
        let store = CoffeeStore(database: file.database)
        let latte = try await store.add(CoffeeDraft(name: "Latte", price: 3))
        let signals = SignalCount(file.database.changes(of: .coffee))
        #expect(await signals.started())
        #expect(
            try await signals.signal {
                try await store.setPicture(id: latte.id, from: .data(PictureBytes.make(count: 300)))
            })
        #expect(try await signals.signal { try await store.removePicture(id: latte.id) })
    }

    @Test("Storing, replacing and removing a profile picture signal the Users app's changes")
    func profilePictureSignals() async throws {
        let users = usersStore(file.database)
        let ada = try await users.register(validForm())
        let signals = SignalCount(file.database.changes(of: .users))
        #expect(await signals.started())
        #expect(
            try await signals.signal {
                try await users.setPicture(userID: ada.id, from: .data(PictureBytes.make(count: 300)))
            })
        #expect(
            try await signals.signal {
                try await users.setPicture(
                    userID: ada.id, from: .data(PictureBytes.make(PictureBytes.jpeg, count: 400)))
            })
        #expect(try await signals.signal { try await users.removePicture(userID: ada.id) })
    }

    @Test("A profile picture stored by another connection signals too")
    func profilePictureByAnotherConnectionSignals() async throws {
        let ada = try await usersStore(file.database).register(validForm())
        let signals = SignalCount(file.database.changes(of: .users))
        #expect(await signals.started())
        let other = try file.secondDatabase()
        defer { other.close() }
        #expect(
            try await signals.signal {
                try await usersStore(other).setPicture(userID: ada.id, from: .data(PictureBytes.make(count: 300)))
            })
    }

    @Test("A profile picture stored or removed logs its user updated; one deleted with its user logs only the delete")
    func profilePictureIsLoggedAsAnUpdate() async throws {
        let users = usersStore(file.database)
        let ada = try await users.register(validForm())
        var start = try await file.database.latestChangeSequence()
        try await users.setPicture(userID: ada.id, from: .data(PictureBytes.make(count: 300)))
        try await users.setPicture(userID: ada.id, from: .data(PictureBytes.make(count: 400)))
        try await users.removePicture(userID: ada.id)
        let latest = try await file.database.latestChangeSequence()
        let logged = try await file.database.recordChanges(after: start, apps: [.users], limit: 100).changes
        // Storing, replacing (the old row deleted, the new one inserted)
        // and removing log four rows; a reader gets one update, the last.
        #expect(latest - start == 4)
        #expect(logged == [RecordChange(sequence: latest, app: .users, kind: .updated, id: ada.id)])
        try await users.setPicture(userID: ada.id, from: .data(PictureBytes.make(count: 300)))
        start = try await file.database.latestChangeSequence()
        try file.database.write { db in try db.execute("DELETE FROM User_Master WHERE UID = \(ada.id)") }
        let deleted = try await file.database.recordChanges(after: start, apps: [.users], limit: 100).changes
        #expect(deleted.map(\.kind) == [.deleted])
    }

    @Test("The Users app's sessions are not its topic: only its records' tables are")
    func topicTables() {
        let users = AppDatabase.App.users.descriptor
        #expect(users.topicTables == ["user_picture"])
        #expect(AppDatabase.apps.allSatisfy { $0.topicTables.allSatisfy($0.otherTables.contains) })
    }
}
