import Foundation
import TestSupport
import Testing

@testable import RecordsApp
@testable import SQLiteStore

/// The apps are declared once (``AppDescriptor``, ``AppDatabase/apps``);
/// what the database does per app follows from that list.
@Suite struct AppDescriptorTests {
    @Test func theAppsAreTheDescriptorsInTheirOrder() {
        #expect(AppDatabase.App.allCases == AppDatabase.apps.map(\.app))
        #expect(AppDatabase.App.allCases.map(\.rawValue) == ["people", "contacts", "coffee", "users"])
        #expect(AppDatabase.App.allCases.map(\.displayName) == ["People", "Contacts", "Coffee", "Users"])
    }

    @Test func anAppIsFoundByItsExactNameOnly() {
        #expect(AppDatabase.App(rawValue: "coffee") == .coffee)
        #expect(AppDatabase.App(rawValue: "Coffee") == nil)
        #expect(AppDatabase.App(rawValue: "nobody") == nil)
    }

    @Test func theMigratorRunsTheSharedMigrationsThenEveryAppsInTheOrderOfTheApps() throws {
        let shared = AppDatabase.sharedMigrations.map(\.identifier)
        let apps = AppDatabase.apps.flatMap { $0.migrations.map(\.identifier) }
        let db = try Database.inMemory()
        #expect(try AppDatabase.migrator.pendingIdentifiers(in: db) == shared + apps)
        #expect(Set(apps.map { String($0.prefix { $0 != "." }) }) == Set(AppDatabase.App.allCases.map(\.rawValue)))
        #expect(shared.allSatisfy { $0.hasPrefix("records.") })
    }

    @Test func everyTableTheMigrationsMakeBelongsToExactlyOneApp() throws {
        let database = try emptyDatabase()
        let made = try database.read { db in
            try db.fetchAll(
                String.self,
                """
                SELECT name FROM pragma_table_list
                WHERE schema = 'main' AND type IN ('table', 'virtual') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                """)
        }
        let declared = AppDatabase.apps.flatMap(\.tables) + AppDatabase.sharedTables
        #expect(Set(declared).count == declared.count, "no table is declared twice")
        #expect(Set(made).subtracting([Migrator.tableName]) == Set(declared))
    }
}

/// ``AppDatabase/changes(of:)``: the one way to follow an app's changes.
@Suite struct AppChangesTests {
    @Test func theFirstSignalIsTheStateAtTheStartAndACommitToTheAppsTableSignalsAgain() async throws {
        let file = try FileDatabase()
        var signals = file.database.changes(of: .people).makeAsyncIterator()
        #expect(try await signals.next() == false, "the table is empty at the start")
        _ = try await PeopleStore(database: file.database).add(PersonDraft(firstName: "Ada", lastName: "L", age: 36))
        #expect(try await signals.next() == true)
    }

    @Test func aCommitByAnotherConnectionSignals() async throws {
        let file = try FileDatabase()
        var signals = file.database.changes(of: .contacts).makeAsyncIterator()
        _ = try await signals.next()
        let other = try file.secondDatabase()
        _ = try await ContactsStore(database: other).add(
            ContactDraft(name: "Ada", address: "1 Main Street", contact: "ada@example.com"))
        #expect(try await signals.next() == true)
    }

    @Test func aCommitToAnotherAppsTableDoesNotSignalThisOne() async throws {
        let database = try emptyDatabase()
        var people = database.changes(of: .people).makeAsyncIterator()
        var coffee = database.changes(of: .coffee).makeAsyncIterator()
        _ = try await people.next()
        _ = try await coffee.next()
        _ = try await CoffeeStore(database: database).add(CoffeeDraft(name: "Latte", price: 3.5))
        _ = try await PeopleStore(database: database).add(PersonDraft(firstName: "Ada", lastName: "L", age: 36))
        // Signals come in the order of their commits: had the coffee commit
        // signalled the people, the first people signal would come before
        // the person was added (false).
        #expect(try await coffee.next() == true)
        #expect(try await people.next() == true)
    }

    @Test func theChangesOfAnAppThatCannotUseTheDatabaseThrowWhy() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("other.sqlite")
        let db = try Database(path: url.path)
        try db.execute("CREATE TABLE coffee (id INTEGER PRIMARY KEY, beans TEXT)")
        db.close()
        let database = try AppDatabase(url: url, template: nil, adoptingForeignDatabase: true)
        var signals = database.changes(of: .coffee).makeAsyncIterator()
        let error = try await #require(throws: AppUnavailableError.self) { _ = try await signals.next() }
        #expect(error.app == .coffee)
    }

    @Test func theSessionsSignalTheirChanges() async throws {
        let (_, sessions, _, user) = try await sessionFixture()
        var signals = sessions.changes.makeAsyncIterator()
        #expect(try await signals.next() == false)
        _ = try await sessions.create(userID: user.id)
        #expect(try await signals.next() == true)
    }
}
