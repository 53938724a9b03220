import Foundation
import TestSupport
import Testing

@testable import RecordsApp
@testable import SQLiteStore

/// Marks the main dispatch queue, which runs the main actor's jobs (on
/// Linux not always on the main thread).
let mainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

/// Whether the caller runs on the main thread or the main actor's queue.
func isOnMain() -> Bool {
    Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true
}

/// Every statement a database runs, with whether it ran on the main
/// thread or the main actor: the app's debug log hears each statement on
/// the thread that runs it (a trace installed on every connection,
/// readers included).
final class ThreadCheckedLog: Sendable {
    private let entries = Locked<[(sql: String, onMain: Bool)]>([])
    private let armed = Locked(false)

    /// Starts recording (after the migrations, which run where the
    /// database is opened).
    func arm() { armed.withLock { $0 = true } }

    func record(_ message: String) {
        guard message.hasPrefix("SQL: "), armed.withLock({ $0 }) else { return }
        let onMain = isOnMain()
        entries.withLock { $0.append((message, onMain)) }
    }

    var statementCount: Int { entries.withLock { $0.count } }
    var onMainThread: [String] { entries.withLock { $0.filter(\.onMain).map(\.sql) } }
}

@MainActor
@Suite("No SQL on the main actor", .tags(.concurrency))
struct OffMainThreadTests {
    let dir: TemporaryDirectory
    let log = ThreadCheckedLog()
    let database: AppDatabase

    init() throws {
        dir = try TemporaryDirectory()
        let log = self.log
        database = try AppDatabase(
            url: dir.fileURL("records.sqlite"), template: nil, debugLog: { message in log.record(message) })
        log.arm()
    }

    @Test("The check sees a statement run on the main actor")
    func checkCanFail() throws {
        #expect(isOnMain())
        _ = try database.read { db in try db.fetchOne(Int.self, "SELECT 1") }
        #expect(log.onMainThread.contains("SQL: SELECT 1"))
    }

    @Test("The People and Contacts view models run every statement off the main actor")
    func peopleAndContacts() async throws {
        let people = PeopleViewModel(store: PeopleStore(database: database))
        await people.load()
        let ada = try await people.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        try await people.update(id: ada.id, with: PersonChanges(age: 37))
        people.searchText = "love"
        people.sort = .age
        await people.refreshed()
        #expect(people.people.map(\.id) == [ada.id])
        #expect(try await people.person(id: ada.id)?.age == 37)
        try await people.delete(atOffsets: IndexSet(integer: 0))

        let contacts = ContactsViewModel(store: ContactsStore(database: database))
        await contacts.load()
        let jane = try #require(await contacts.add(ContactDraft(name: "Jane Doe", address: "1 Main St", contact: "5")))
        #expect(await contacts.find(name: "jane  doe") == [jane])
        try await contacts.update(id: jane.id, with: ContactChanges(address: "2 Main St"))
        try await contacts.delete(id: jane.id)

        #expect(log.statementCount > 10)
        #expect(log.onMainThread == [])
    }

    @Test("The Coffee view models run every statement and picture copy off the main actor")
    func coffee() async throws {
        let list = CoffeeListViewModel(store: CoffeeStore(database: database))
        await list.load()
        let latte = try await list.add(CoffeeDraft(name: "Latte", price: decimal("3.2")))
        let detail = list.detail(for: latte)
        await detail.load()
        try detail.setPrice(text: "3.5")
        #expect(try await detail.save())
        let picture = try await detail.setPicture(from: .data(PictureBytes.make(count: 300_000)))
        #expect(picture.size == 300_000)
        let copy = dir.fileURL("copy.png")
        #expect(try await detail.writePicture(to: .file(copy)).size == 300_000)
        try await detail.removePicture()
        list.searchText = "lat"
        await list.refreshed()
        #expect(list.coffees.map(\.id) == [latte.id])
        try await detail.delete()

        #expect(log.statementCount > 10)
        #expect(log.onMainThread == [])
    }

    @Test("The Users view models run every statement off the main actor")
    func users() async throws {
        let store = usersStore(database)
        let registration = RegistrationViewModel(store: store)
        registration.form = validForm()
        let user = try #require(await registration.register())
        let profile = ProfileViewModel(store: store, userID: user.id)
        await profile.load()
        profile.form?.city = "Cambridge"
        #expect(await profile.save())
        profile.currentPassword = "correct horse"
        profile.newPassword = "battery staple"
        profile.newPasswordConfirmation = "battery staple"
        #expect(await profile.changePassword())
        #expect(try await store.authenticate(email: user.email, password: "battery staple") == profile.user)

        #expect(log.statementCount > 5)
        #expect(log.onMainThread == [])
    }
}
