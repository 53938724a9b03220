import Foundation
import TestSupport
import Testing

@testable import RecordsApp
@testable import SQLiteStore

// The view models keep their screens current from any writer: another
// view model, another connection, another process. Waits are bounded
// loops on the state itself, never on elapsed time.

/// An app database on a file of a fresh temporary directory (a pool in
/// WAL mode, so that other connections and processes can share it).
struct FileDatabase {
    let directory: TemporaryDirectory
    let database: AppDatabase
    var url: URL { directory.fileURL("records.sqlite") }

    init() throws {
        directory = try TemporaryDirectory()
        database = try AppDatabase(url: directory.fileURL("records.sqlite"), start: .empty)
    }

    /// A second, independent connection set on the same file.
    func secondDatabase() throws -> AppDatabase {
        try AppDatabase(url: url, start: .empty)
    }
}

/// Runs `sql` with the `sqlite3` command in a child process; returns false
/// when the command is not installed.
func runSQLite3(_ path: String, _ sql: String) async throws -> Bool {
    let candidates = ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3", "/opt/homebrew/bin/sqlite3"]
    guard let tool = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        return false
    }
    let run = try await ChildProcess.run(URL(fileURLWithPath: tool), ["-bail", "-cmd", ".timeout 10000", path, sql])
    #expect(run.status == 0, "\(run)")
    return true
}

let sqlite3Installed = ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3", "/opt/homebrew/bin/sqlite3"]
    .contains { FileManager.default.isExecutableFile(atPath: $0) }

@MainActor
@Suite("Live view models: People", .tags(.concurrency))
struct LivePeopleTests {
    @Test("A person added through one view model appears in another's list by itself")
    func addThroughOneSeenByAnother() async throws {
        let file = try FileDatabase()
        let writer = PeopleViewModel(store: PeopleStore(database: file.database))
        let watcher = PeopleViewModel(store: PeopleStore(database: file.database))
        let writing = Task { await writer.start() }
        let watching = Task { await watcher.start() }
        defer { writing.cancel(); watching.cancel() }

        let ada = try await writer.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        #expect(await eventually { watcher.people.map(\.id) == [ada.id] })
        #expect(await eventually { writer.people.map(\.id) == [ada.id] })

        try await writer.update(id: ada.id, with: PersonChanges(age: 37))
        #expect(await eventually { watcher.people.first?.age == 37 })

        try await writer.delete(id: ada.id)
        #expect(await eventually { watcher.people.isEmpty })
    }

    @Test("A started list follows the view model's own writes without reloading by hand")
    func ownWritesReachTheListThroughTheObservation() async throws {
        let database = try emptyDatabase()
        let model = PeopleViewModel(store: PeopleStore(database: database))
        let screen = Task { await model.start() }
        defer { screen.cancel() }
        #expect(await eventually { model.observations.isObserving })
        _ = try await model.add(PersonDraft(firstName: "Grace", lastName: "Hopper", age: 85))
        #expect(await eventually { model.people.map(\.firstName) == ["Grace"] })
    }

    @Test("A person written by a second AppDatabase on the same file appears in the list")
    func secondConnectionIsSeen() async throws {
        let file = try FileDatabase()
        let model = PeopleViewModel(store: PeopleStore(database: file.database))
        let screen = Task { await model.start() }
        defer { screen.cancel() }
        #expect(await eventually { model.observations.isObserving })

        let other = try file.secondDatabase()
        defer { other.close() }
        let alan = try await PeopleStore(database: other).add(
            PersonDraft(firstName: "Alan", lastName: "Turing", age: 41))
        #expect(await eventually { model.people.map(\.id) == [alan.id] })
    }

    @Test(
        "A person inserted by the sqlite3 command in another process appears in the list",
        .enabled(if: sqlite3Installed, "the sqlite3 command is not installed"))
    func otherProcessIsSeen() async throws {
        let file = try FileDatabase()
        let model = PeopleViewModel(store: PeopleStore(database: file.database))
        let screen = Task { await model.start() }
        defer { screen.cancel() }
        #expect(await eventually { model.observations.isObserving })

        #expect(
            try await runSQLite3(
                file.url.path, "INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Edsger', 'Dijkstra', 72);"))
        #expect(await eventually { model.people.map(\.lastName) == ["Dijkstra"] })
    }

    @Test("A search shown by a started list is kept current with the search applied")
    func searchStaysAppliedWhileFollowing() async throws {
        let database = try emptyDatabase()
        let store = PeopleStore(database: database)
        let model = PeopleViewModel(store: store)
        model.searchText = "love"
        let screen = Task { await model.start() }
        defer { screen.cancel() }
        #expect(await eventually { model.observations.isObserving })

        _ = try await store.add(PersonDraft(firstName: "Grace", lastName: "Hopper", age: 85))
        let ada = try await store.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        #expect(await eventually { model.people.map(\.id) == [ada.id] })
    }

    @Test("Cancelling the screen's task stops the list following the database")
    func cancellationStopsUpdates() async throws {
        let file = try FileDatabase()
        let store = PeopleStore(database: file.database)
        let model = PeopleViewModel(store: store)
        let screen = Task { await model.start() }
        let first = try await store.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        #expect(await eventually { model.people.map(\.id) == [first.id] })

        screen.cancel()
        await screen.value
        #expect(!model.observations.isObserving)

        // A change made after the observation ended, seen by a second
        // (still observing) view model, so it has surely been committed
        // and signalled, never reaches the cancelled one.
        let witness = PeopleViewModel(store: store)
        let witnessing = Task { await witness.start() }
        defer { witnessing.cancel() }
        let second = try await store.add(PersonDraft(firstName: "Alan", lastName: "Turing", age: 41))
        #expect(await eventually { witness.people.count == 2 })
        #expect(await eventually { witness.people.contains { $0.id == second.id } })
        #expect(model.people.map(\.id) == [first.id])
        #expect(model.errorMessage == nil)
    }

    @Test("A commit to another app's table does not make the people list read again")
    func unrelatedTableCausesNoReload() async throws {
        let directory = try TemporaryDirectory()
        let log = StatementLog()
        let database = try AppDatabase(url: directory.fileURL("records.sqlite"), start: .empty) { line in
            log.append(line)
        }
        defer { database.close() }
        let listReads = {
            log.lines.filter { $0.hasPrefix("SQL: SELECT") && $0.contains("FROM \"peopleInfo\" WHERE") }.count
        }
        let model = PeopleViewModel(store: PeopleStore(database: database))
        let screen = Task { await model.start() }
        defer { screen.cancel() }
        #expect(await eventually { listReads() >= 1 && model.people.isEmpty })
        // Counted from here: on a loaded machine the first read has been
        // seen to come twice before the screen settled.
        let before = listReads()

        _ = try await ContactsStore(database: database).add(
            ContactDraft(name: "Jane", address: "12 Main St", contact: "555 0100"))
        let ada = try await PeopleStore(database: database).add(
            PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        #expect(await eventually { model.people.map(\.id) == [ada.id] })
        #expect(listReads() == before + 1)  // after Ada's insert; none after Jane's
    }

    @Test("Closing the database while a list follows it ends the observation with its error shown")
    func closedDatabaseEndsWithError() async throws {
        let file = try FileDatabase()
        let model = PeopleViewModel(store: PeopleStore(database: file.database))
        let screen = Task { await model.start() }
        #expect(await eventually { model.observations.isObserving })

        file.database.close()
        // The observation ends by itself: no cancellation needed.
        #expect(await eventually { !model.observations.isObserving })
        #expect(model.errorMessage != nil)
        screen.cancel()
        await screen.value
    }

    @Test("A change refused by validation keeps its error while the list follows the database")
    func refusedChangeKeepsItsErrorAcrossOtherCommits() async throws {
        let database = try emptyDatabase()
        let store = PeopleStore(database: database)
        let model = PeopleViewModel(store: store)
        let screen = Task { await model.start() }
        defer { screen.cancel() }
        #expect(await eventually { model.observations.isObserving })

        await #expect(throws: ValidationError.self) {
            try await model.add(PersonDraft(firstName: "", lastName: "", age: -1))
        }
        let refusal = try #require(model.errorMessage)
        let grace = try await store.add(PersonDraft(firstName: "Grace", lastName: "Hopper", age: 85))
        #expect(await eventually { model.people.map(\.id) == [grace.id] })
        #expect(model.errorMessage == refusal)
    }
}

@MainActor
@Suite("Live view models: Contacts", .tags(.concurrency))
struct LiveContactsTests {
    @Test("A contact added through one view model appears in another's list by itself")
    func addThroughOneSeenByAnother() async throws {
        let file = try FileDatabase()
        let writer = ContactsViewModel(store: ContactsStore(database: file.database))
        let watcher = ContactsViewModel(store: ContactsStore(database: file.database))
        let writing = Task { await writer.start() }
        let watching = Task { await watcher.start() }
        defer { writing.cancel(); watching.cancel() }

        let jane = try #require(
            await writer.add(ContactDraft(name: "Jane", address: "12 Main St", contact: "555 0100")))
        #expect(await eventually { watcher.contacts.map(\.id) == [jane.id] })
        try await writer.delete(id: jane.id)
        #expect(await eventually { watcher.contacts.isEmpty })
    }

    @Test("A contact written by a second AppDatabase on the same file appears in the list")
    func secondConnectionIsSeen() async throws {
        let file = try FileDatabase()
        let model = ContactsViewModel(store: ContactsStore(database: file.database))
        let screen = Task { await model.start() }
        defer { screen.cancel() }
        #expect(await eventually { model.observations.isObserving })

        let other = try file.secondDatabase()
        defer { other.close() }
        let sam = try await ContactsStore(database: other).add(
            ContactDraft(name: "Sam", address: "1 High St", contact: "555 0101"))
        #expect(await eventually { model.contacts.map(\.id) == [sam.id] })
    }

    @Test(
        "A contact deleted by the sqlite3 command in another process leaves the list",
        .enabled(if: sqlite3Installed, "the sqlite3 command is not installed"))
    func otherProcessIsSeen() async throws {
        let file = try FileDatabase()
        let store = ContactsStore(database: file.database)
        let kept = try await store.add(ContactDraft(name: "Kept", address: "1 High St", contact: "555 0101"))
        let gone = try await store.add(ContactDraft(name: "Gone", address: "2 High St", contact: "555 0102"))
        let model = ContactsViewModel(store: store)
        let screen = Task { await model.start() }
        defer { screen.cancel() }
        #expect(await eventually { model.contacts.count == 2 })

        #expect(try await runSQLite3(file.url.path, "DELETE FROM CONTACTS WHERE ID = \(gone.id);"))
        #expect(await eventually { model.contacts.map(\.id) == [kept.id] })
    }

    @Test("Cancelling the screen's task stops the contacts list following the database")
    func cancellationStopsUpdates() async throws {
        let database = try emptyDatabase()
        let store = ContactsStore(database: database)
        let model = ContactsViewModel(store: store)
        let screen = Task { await model.start() }
        #expect(await eventually { model.observations.isObserving })
        screen.cancel()
        await screen.value

        let witness = ContactsViewModel(store: store)
        let witnessing = Task { await witness.start() }
        defer { witnessing.cancel() }
        _ = try await store.add(ContactDraft(name: "Late", address: "3 High St", contact: "555 0103"))
        #expect(await eventually { witness.contacts.count == 1 })
        #expect(model.contacts.isEmpty)
    }
}

@MainActor
@Suite("Live view models: Coffee", .tags(.concurrency))
struct LiveCoffeeTests {
    @Test("A coffee added through one list appears in another's by itself")
    func addThroughOneSeenByAnother() async throws {
        let file = try FileDatabase()
        let writer = CoffeeListViewModel(store: CoffeeStore(database: file.database))
        let watcher = CoffeeListViewModel(store: CoffeeStore(database: file.database))
        let writing = Task { await writer.start() }
        let watching = Task { await watcher.start() }
        defer { writing.cancel(); watching.cancel() }

        let latte = try await writer.add(CoffeeDraft(name: "Latte", price: 3))
        #expect(await eventually { watcher.coffees.map(\.id) == [latte.id] })
    }

    @Test("A coffee renamed through one detail shows in another detail and in the list")
    func detailFollowsAnotherDetail() async throws {
        let file = try FileDatabase()
        let store = CoffeeStore(database: file.database)
        let latte = try await store.add(CoffeeDraft(name: "Latte", price: 3))
        let list = CoffeeListViewModel(store: store)
        let shown = CoffeeDetailViewModel(coffee: Coffee(id: latte.id, name: latte.name), store: store)
        let editing = CoffeeDetailViewModel(coffee: Coffee(id: latte.id, name: latte.name), store: store)
        let tasks = [Task { await list.start() }, Task { await shown.start() }]
        defer { for task in tasks { task.cancel() } }
        await editing.load()
        #expect(await eventually { shown.coffee.price == 3 && list.coffees.count == 1 })

        editing.coffee.name = "Flat white"
        #expect(try await editing.save())
        #expect(await eventually { shown.coffee.name == "Flat white" })
        #expect(await eventually { list.coffees.map(\.name) == ["Flat white"] })
        #expect(shown.state == .shown)
    }

    @Test("A coffee priced by a second AppDatabase on the same file shows the new price in its detail")
    func secondConnectionIsSeen() async throws {
        let file = try FileDatabase()
        let store = CoffeeStore(database: file.database)
        let latte = try await store.add(CoffeeDraft(name: "Latte", price: 3))
        let detail = CoffeeDetailViewModel(coffee: Coffee(id: latte.id, name: latte.name), store: store)
        let screen = Task { await detail.start() }
        defer { screen.cancel() }
        #expect(await eventually { detail.coffee.price == 3 })

        let other = try file.secondDatabase()
        defer { other.close() }
        let otherStore = CoffeeStore(database: other)
        var edited = try #require(try await otherStore.coffee(id: latte.id))
        edited.price = decimal("3.25")
        #expect(try await otherStore.save(&edited))
        #expect(await eventually { detail.coffee.price == decimal("3.25") })
    }

    @Test("Unsaved edits in a detail survive a change made by someone else")
    func unsavedEditsAreKept() async throws {
        let database = try emptyDatabase()
        let store = CoffeeStore(database: database)
        let latte = try await store.add(CoffeeDraft(name: "Latte", price: 3))
        let detail = CoffeeDetailViewModel(coffee: Coffee(id: latte.id, name: latte.name), store: store)
        let screen = Task { await detail.start() }
        defer { screen.cancel() }
        #expect(await eventually { detail.coffee.price == 3 })
        detail.coffee.name = "Mocha (unsaved)"

        var other = try #require(try await store.coffee(id: latte.id))
        other.price = 4
        #expect(try await store.save(&other))
        #expect(await eventually { detail.coffee.price == 4 })
        #expect(detail.coffee.name == "Mocha (unsaved)")
        #expect(detail.isDirty)
    }

    @Test("A name typed while the detail reads the coffee again is kept")
    func editDuringReadIsKept() async throws {
        let directory = try TemporaryDirectory()
        let gate = ReadGate()
        let database = try AppDatabase(url: directory.fileURL("records.sqlite"), start: .empty) { line in
            if line.hasPrefix("SQL: SELECT") && line.contains("FROM \"coffee\" WHERE") { gate.pass() }
        }
        defer { database.close() }
        let store = CoffeeStore(database: database)
        let latte = try await store.add(CoffeeDraft(name: "Latte", price: 3))
        let detail = CoffeeDetailViewModel(coffee: Coffee(id: latte.id, name: latte.name), store: store)
        await detail.load()

        gate.close()
        let reading = Task { await detail.reload() }
        #expect(await eventually { gate.isHolding })  // the read runs, held on its thread
        detail.coffee.name = "Mocha"  // typed meanwhile, on the main actor
        gate.open()
        await reading.value
        #expect(detail.coffee.name == "Mocha")
        #expect(detail.isDirty)
    }

    @Test("A coffee deleted from the list makes its open detail say it was deleted")
    func detailOfDeletedCoffeeSaysSo() async throws {
        let database = try emptyDatabase()
        let store = CoffeeStore(database: database)
        let latte = try await store.add(CoffeeDraft(name: "Latte", price: 3))
        let list = CoffeeListViewModel(store: store)
        let detail = list.detail(for: Coffee(id: latte.id, name: latte.name))
        let detailScreen = Task { await detail.start() }
        #expect(await eventually { detail.coffee.price == 3 })

        try await list.delete(id: latte.id)
        #expect(await eventually { detail.isDeleted })
        detailScreen.cancel()
        await detailScreen.value
        #expect(detail.state == .deleted(message: "This coffee (ID \(latte.id)) was deleted."))
        #expect(detail.isDeleted)
    }

    @Test(
        "A coffee deleted by the sqlite3 command in another process makes its detail say so",
        .enabled(if: sqlite3Installed, "the sqlite3 command is not installed"))
    func otherProcessDeletionIsSeen() async throws {
        let file = try FileDatabase()
        let store = CoffeeStore(database: file.database)
        let latte = try await store.add(CoffeeDraft(name: "Latte", price: 3))
        let detail = CoffeeDetailViewModel(coffee: Coffee(id: latte.id, name: latte.name), store: store)
        let screen = Task { await detail.start() }
        defer { screen.cancel() }
        #expect(await eventually { detail.coffee.price == 3 })

        #expect(try await runSQLite3(file.url.path, "DELETE FROM coffee WHERE coffeeID = \(latte.id);"))
        #expect(await eventually { detail.isDeleted })
    }

    @Test("Loading the detail of a coffee that is gone says it was deleted")
    func loadingAGoneCoffeeSaysDeleted() async throws {
        let database = try emptyDatabase()
        let detail = CoffeeDetailViewModel(
            coffee: Coffee(id: 99, name: "Ghost"), store: CoffeeStore(database: database))
        await detail.load()
        #expect(detail.state == .deleted(message: "This coffee (ID 99) was deleted."))
    }

    @Test("Cancelling a detail's task stops it following the coffee")
    func cancellationStopsUpdates() async throws {
        let database = try emptyDatabase()
        let store = CoffeeStore(database: database)
        let latte = try await store.add(CoffeeDraft(name: "Latte", price: 3))
        let detail = CoffeeDetailViewModel(coffee: Coffee(id: latte.id, name: latte.name), store: store)
        let screen = Task { await detail.start() }
        #expect(await eventually { detail.coffee.price == 3 })
        screen.cancel()
        await screen.value

        let witness = CoffeeDetailViewModel(coffee: Coffee(id: latte.id, name: latte.name), store: store)
        let witnessing = Task { await witness.start() }
        defer { witnessing.cancel() }
        var other = try #require(try await store.coffee(id: latte.id))
        other.price = 5
        #expect(try await store.save(&other))
        #expect(await eventually { witness.coffee.price == 5 })
        #expect(detail.coffee.price == 3)
    }
}

@MainActor
@Suite("Live view models: Users", .tags(.concurrency))
struct LiveUsersTests {
    @Test("A profile saved through one view model shows in another, whose form follows it")
    func profileFollowsAnotherScreen() async throws {
        let file = try FileDatabase()
        let store = usersStore(file.database)
        let ada = try await store.register(validForm())
        let shown = ProfileViewModel(store: store, userID: ada.id)
        let editing = ProfileViewModel(store: store, userID: ada.id)
        let screen = Task { await shown.start() }
        defer { screen.cancel() }
        #expect(await eventually { shown.user?.city == "London" })
        await editing.load()

        editing.form?.city = "Paris"
        #expect(await editing.save())
        #expect(await eventually { shown.user?.city == "Paris" })
        #expect(shown.form?.city == "Paris")
    }

    @Test("A profile's edits are kept when someone else saves the profile")
    func editsAreKept() async throws {
        let database = try emptyDatabase()
        let store = usersStore(database)
        let ada = try await store.register(validForm())
        let model = ProfileViewModel(store: store, userID: ada.id)
        let screen = Task { await model.start() }
        defer { screen.cancel() }
        #expect(await eventually { model.user != nil })
        model.form?.firstName = "Augusta"

        _ = try await store.updateProfile(id: ada.id, with: ProfileChanges(city: "Paris"))
        #expect(await eventually { model.user?.city == "Paris" })
        #expect(model.form?.firstName == "Augusta")
        #expect(model.form?.city == "London")
    }

    @Test("A field typed while the profile reads the user again is kept")
    func editDuringReadIsKept() async throws {
        let directory = try TemporaryDirectory()
        let gate = ReadGate()
        let database = try AppDatabase(url: directory.fileURL("records.sqlite"), start: .empty) { line in
            if line.hasPrefix("SQL: SELECT") && line.contains("FROM \"User_Master\" WHERE") { gate.pass() }
        }
        defer { database.close() }
        let store = usersStore(database)
        let ada = try await store.register(validForm())
        let model = ProfileViewModel(store: store, userID: ada.id)
        let screen = Task { await model.start() }
        defer { screen.cancel() }
        #expect(await eventually { model.user != nil })

        // Written by a second AppDatabase, so that only the profile's read
        // passes the gate.
        let other = try AppDatabase(url: directory.fileURL("records.sqlite"), start: .empty)
        defer { other.close() }
        gate.close()
        _ = try await usersStore(other).updateProfile(id: ada.id, with: ProfileChanges(city: "Paris"))
        #expect(await eventually { gate.isHolding })  // the profile reads the user, held on its thread
        model.form?.firstName = "Augusta"  // typed meanwhile
        gate.open()
        #expect(await eventually { model.user?.city == "Paris" })
        #expect(model.form?.firstName == "Augusta")
    }

    @Test("A user that cannot be read shows the error, and the profile follows the user again once mended")
    func unreadableUserKeepsFollowing() async throws {
        let database = try emptyDatabase()
        let store = usersStore(database)
        let ada = try await store.register(validForm())
        let model = ProfileViewModel(store: store, userID: ada.id)
        let screen = Task { await model.start() }
        defer { screen.cancel() }
        #expect(await eventually { model.user != nil })

        try database.write { db in
            try db.execute("UPDATE User_Master SET USER_FNAME = x'00ff' WHERE UID = \(ada.id)")
        }
        #expect(await eventually { model.errorMessage?.contains("USER_FNAME") == true })
        _ = try await store.updateProfile(id: ada.id, with: ProfileChanges(firstName: "Augusta"))
        #expect(await eventually { model.user?.firstName == "Augusta" })
        #expect(model.errorMessage == nil)
        #expect(model.state == .shown)
    }

    @Test("A user deleted by a second AppDatabase makes the open profile say so")
    func deletedUserSaysSo() async throws {
        let file = try FileDatabase()
        let store = usersStore(file.database)
        let ada = try await store.register(validForm())
        let model = ProfileViewModel(store: store, userID: ada.id)
        let screen = Task { await model.start() }
        #expect(await eventually { model.user != nil })

        let other = try file.secondDatabase()
        defer { other.close() }
        _ = try await usersStore(other).delete(id: ada.id)
        #expect(await eventually { model.state.isDeleted })
        screen.cancel()
        await screen.value
        #expect(model.state == .deleted(message: "This user (ID \(ada.id)) was deleted."))
        #expect(model.user == nil)
        #expect(model.form == nil)
    }

    @Test(
        "A profile changed by the sqlite3 command in another process shows the change",
        .enabled(if: sqlite3Installed, "the sqlite3 command is not installed"))
    func otherProcessIsSeen() async throws {
        let file = try FileDatabase()
        let store = usersStore(file.database)
        let ada = try await store.register(validForm())
        let model = ProfileViewModel(store: store, userID: ada.id)
        let screen = Task { await model.start() }
        defer { screen.cancel() }
        #expect(await eventually { model.user != nil })

        #expect(
            try await runSQLite3(file.url.path, "UPDATE User_Master SET USER_CITY = 'Oxford' WHERE UID = \(ada.id);"))
        #expect(await eventually { model.user?.city == "Oxford" })
    }

    @Test("Cancelling a profile's task stops it following the user")
    func cancellationStopsUpdates() async throws {
        let database = try emptyDatabase()
        let store = usersStore(database)
        let ada = try await store.register(validForm())
        let model = ProfileViewModel(store: store, userID: ada.id)
        let screen = Task { await model.start() }
        #expect(await eventually { model.user != nil })
        screen.cancel()
        await screen.value

        let witness = ProfileViewModel(store: store, userID: ada.id)
        let witnessing = Task { await witness.start() }
        defer { witnessing.cancel() }
        _ = try await store.updateProfile(id: ada.id, with: ProfileChanges(city: "Paris"))
        #expect(await eventually { witness.user?.city == "Paris" })
        #expect(model.user?.city == "London")
    }
}

/// Holds the statements that reach it on their connection's thread while
/// closed, so that a test can act while a read is under way.
final class ReadGate: Sendable {
    private let state = Locked((closed: false, holding: false))
    private let release = DispatchSemaphore(value: 0)

    func close() { state.withLock { $0.closed = true } }

    /// Whether a statement is held now.
    var isHolding: Bool { state.withLock { $0.holding } }

    /// Lets the held statement go, and those after it.
    func open() {
        let wasHolding = state.withLock { state in
            state.closed = false
            return state.holding
        }
        if wasHolding { release.signal() }
    }

    /// Called by each statement: waits while the gate is closed.
    func pass() {
        let hold = state.withLock { state in
            if state.closed { state.holding = true }
            return state.closed
        }
        guard hold else { return }
        release.wait()
        state.withLock { $0.holding = false }
    }
}

/// Records the statements run on the main thread or the main actor's
/// queue (on Linux the main actor's jobs may run on another thread), from
/// the database's debug log (called on the thread that runs each
/// statement).
final class MainThreadStatements: Sendable {
    private static let mainQueue: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    private let lines = Locked<[String]>([])
    private let armed = Locked(false)

    init() { _ = Self.mainQueue }

    /// Starts recording (after the migrations, which run where the
    /// database is opened).
    func arm() { armed.withLock { $0 = true } }

    static var isOnMain: Bool { Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueue) == true }

    func record(_ line: String) {
        guard line.hasPrefix("SQL: "), armed.withLock({ $0 }), Self.isOnMain else { return }
        lines.withLock { $0.append(line) }
    }
    var onMain: [String] { lines.withLock { $0 } }
}

@MainActor
@Suite("Live view models: off the main actor")
struct LiveOffMainTests {
    @Test("The check sees a statement run on the main thread")
    func checkCanFail() throws {
        let directory = try TemporaryDirectory()
        let check = MainThreadStatements()
        let database = try AppDatabase(url: directory.fileURL("records.sqlite"), start: .empty) { check.record($0) }
        defer { database.close() }
        check.arm()
        #expect(MainThreadStatements.isOnMain)
        _ = try database.read { db in try db.fetchOne(Int.self, "SELECT 1") }
        #expect(check.onMain.contains("SQL: SELECT 1"))
    }

    @Test("Observing view models run every statement off the main actor")
    func observationRunsOffMain() async throws {
        let directory = try TemporaryDirectory()
        let check = MainThreadStatements()
        let database = try AppDatabase(url: directory.fileURL("records.sqlite"), start: .empty) { check.record($0) }
        defer { database.close() }
        check.arm()
        let coffeeStore = CoffeeStore(database: database)
        let latte = try await coffeeStore.add(CoffeeDraft(name: "Latte", price: 3))
        let users = usersStore(database)
        let ada = try await users.register(validForm())

        let people = PeopleViewModel(store: PeopleStore(database: database))
        let contacts = ContactsViewModel(store: ContactsStore(database: database))
        let coffees = CoffeeListViewModel(store: coffeeStore)
        let detail = coffees.detail(for: Coffee(id: latte.id, name: latte.name))
        let profile = ProfileViewModel(store: users, userID: ada.id)
        let screens = [
            Task { await people.start() }, Task { await contacts.start() }, Task { await coffees.start() },
            Task { await detail.start() }, Task { await profile.start() },
        ]
        defer { for screen in screens { screen.cancel() } }

        _ = try await people.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        _ = await contacts.add(ContactDraft(name: "Jane", address: "12 Main St", contact: "555 0100"))
        detail.coffee.name = "Mocha"
        #expect(try await detail.save())
        _ = try await users.updateProfile(id: ada.id, with: ProfileChanges(city: "Paris"))
        #expect(await eventually { people.people.count == 1 && contacts.contacts.count == 1 })
        #expect(await eventually { coffees.coffees.map(\.name) == ["Mocha"] && profile.user?.city == "Paris" })
        #expect(check.onMain.isEmpty)
    }
}
