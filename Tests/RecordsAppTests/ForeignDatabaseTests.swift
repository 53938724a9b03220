import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

/// Another application's SQLite file is never taken over unless the user
/// asks; one app's refused table never blocks the other apps.
@Suite("Whose database it is")
struct ForeignDatabaseTests {
    /// A database file made by `sql`, as another application left it.
    @discardableResult
    func makeDatabase(_ url: URL, journalMode: JournalMode = .delete, _ sql: String) throws -> URL {
        let db = try Database(path: url.path)
        try db.execute("PRAGMA journal_mode = \(unsafeLiteral: journalMode.rawValue)")
        try db.execute(sql: sql)
        db.close()
        return url
    }

    /// The names in the directory, and the bytes of each file.
    func snapshot(_ dir: TemporaryDirectory) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.url.path) {
            files[name] = try Data(contentsOf: dir.fileURL(name))
        }
        return files
    }

    func contents(_ url: URL) throws -> DatabaseContents {
        let db = try Database(path: url.path)
        defer { db.close() }
        return try DatabaseContents.of(db)
    }

    static let otherApplication = """
        CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, balance INTEGER);
        INSERT INTO accounts (owner, balance) VALUES ('ada', 100), ('alan', 250);
        """

    // MARK: - Refused, unchanged

    @Test(
        "Another application's database is refused; its bytes are unchanged and no file is left beside it",
        arguments: [JournalMode.delete, .wal])
    func foreignDatabaseRefusedUnchanged(journalMode: JournalMode) throws {
        let dir = try TemporaryDirectory()
        let url = try makeDatabase(dir.fileURL("ledger.db"), journalMode: journalMode, Self.otherApplication)
        let before = try snapshot(dir)
        #expect(before.keys.sorted() == ["ledger.db"])
        let error = try #require(throws: ForeignDatabaseError.self) {
            try AppDatabase(url: url, template: try AppDatabase.bundledTemplateURL())
        }
        #expect(error == ForeignDatabaseError(path: url.path, unknown: ["table accounts"], known: []))
        #expect(try snapshot(dir) == before)
    }

    @Test("The refusal says what the file is, what was found, and how to go on")
    func refusalMessage() throws {
        let dir = try TemporaryDirectory()
        let url = try makeDatabase(
            dir.fileURL("mixed.db"),
            Self.otherApplication + """
                CREATE TABLE peopleInfo (peopleInfoID INTEGER PRIMARY KEY AUTOINCREMENT, firstname TEXT,
                    lastname TEXT, age INTEGER);
                CREATE VIEW rich AS SELECT owner FROM accounts WHERE balance > 200;
                CREATE TRIGGER audit AFTER DELETE ON accounts BEGIN SELECT 1; END;
                CREATE INDEX accounts_owner ON accounts (owner);
                """)
        let error = try #require(throws: ForeignDatabaseError.self) { try AppDatabase(url: url, template: nil) }
        #expect(error.unknown == ["table accounts", "view rich", "trigger audit"])
        #expect(error.known == ["peopleInfo"])
        let message = error.description
        #expect(message.hasPrefix("\(url.path) is another application's SQLite database"))
        #expect(message.contains("table accounts, view rich, trigger audit (beside the tutorials' peopleInfo)"))
        #expect(message.contains("Nothing was changed"))
        #expect(message.contains("--adopt") && message.contains("--database"))
        #expect(!message.lowercased().contains("seed"))
    }

    @Test("A tutorial table's name with other columns is another application's table")
    func tutorialNameWithOtherColumns() throws {
        let dir = try TemporaryDirectory()
        let url = try makeDatabase(
            dir.fileURL("other.db"), "CREATE TABLE peopleInfo (id INTEGER PRIMARY KEY, nickname TEXT)")
        #expect(try contents(url) == .foreign(unknown: ["table peopleInfo"], known: []))
        let usersLike = try makeDatabase(
            dir.fileURL("users.db"), "CREATE TABLE User_Master (id INTEGER PRIMARY KEY, login TEXT)")
        #expect(try contents(usersLike) == .foreign(unknown: ["table User_Master"], known: []))
        #expect(throws: ForeignDatabaseError.self) { try AppDatabase(url: usersLike, template: nil) }
    }

    // MARK: - Opened as before

    @Test(
        "Each original tutorial's table alone is recognised, and such a database opens",
        arguments: [
            "CREATE TABLE peopleInfo (peopleInfoID INTEGER PRIMARY KEY AUTOINCREMENT, firstname TEXT, lastname TEXT, age INTEGER)",
            "CREATE TABLE CONTACTS (ID INTEGER PRIMARY KEY AUTOINCREMENT, NAME TEXT, ADDRESS TEXT, CONTACT TEXT)",
            "CREATE TABLE contacts (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, address TEXT, contact TEXT)",
            "CREATE TABLE coffee (coffeeID INTEGER PRIMARY KEY, coffeeName TEXT, price REAL)",
            CoffeeSchema.createTable,
            seedCreateTableSQL,
            UsersSchema.createTableSQL(name: "User_Master"),
        ])
    func tutorialTablesRecognised(sql: String) async throws {
        let dir = try TemporaryDirectory()
        let url = try makeDatabase(dir.fileURL("tutorial.sqlite"), sql)
        guard case .originalTutorials(let tables) = try contents(url) else {
            Issue.record("not recognised: \(sql)")
            return
        }
        #expect(tables.count == 1)
        let database = try AppDatabase(url: url, template: nil)
        #expect(try await PeopleStore(database: database).count() == 0)
    }

    @Test("A records database with tables the user added is records' own")
    func recordsDatabaseWithUserTables() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("records.sqlite")
        try AppDatabase(url: url, template: nil).close()
        try makeDatabase(url, Self.otherApplication)
        #expect(try contents(url) == .records)
        let database = try AppDatabase(url: url, template: nil)
        try await PeopleStore(database: database).add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        let owners = try database.read { db in try db.fetchAll(String.self, "SELECT owner FROM accounts") }
        #expect(owners == ["ada", "alan"])
    }

    @Test("A new file, an empty file and a SQLite file with no tables open as before")
    func newAndEmptyFiles() async throws {
        let dir = try TemporaryDirectory()
        let template = try AppDatabase.bundledTemplateURL()
        let new = try AppDatabase(url: dir.fileURL("new.sqlite"), template: template)
        #expect(try await PeopleStore(database: new).count() == 6)

        #expect(FileManager.default.createFile(atPath: dir.path("zero.sqlite"), contents: Data()))
        let zero = try AppDatabase(url: dir.fileURL("zero.sqlite"), template: template)
        #expect(try await PeopleStore(database: zero).count() == 6)

        let blank = try makeDatabase(dir.fileURL("blank.sqlite"), "PRAGMA user_version = 7")
        #expect(try Data(contentsOf: blank).count > 0)
        #expect(try contents(blank) == .empty)
        let opened = try AppDatabase(url: blank, template: template)
        #expect(try await ContactsStore(database: opened).count() == 0)
    }

    // MARK: - Adopted on request

    @Test("Adopting keeps the other application's tables and rows and adds the apps' tables")
    func adoption() async throws {
        let dir = try TemporaryDirectory()
        let url = try makeDatabase(dir.fileURL("ledger.db"), Self.otherApplication)
        let database = try AppDatabase(url: url, template: nil, adoptingForeignDatabase: true)
        try await ContactsStore(database: database).add(
            ContactDraft(name: "Jane", address: "1 High St", contact: "555"))
        database.close()
        #expect(try contents(url) == .records)
        // Adopted once, it is records' own: no option needed any more.
        let reopened = try AppDatabase(url: url, template: nil)
        #expect(try await ContactsStore(database: reopened).all().map(\.name) == ["Jane"])
        let balances = try reopened.read { db in try db.fetchAll(Int.self, "SELECT balance FROM accounts ORDER BY id") }
        #expect(balances == [100, 250])
    }

    // MARK: - One app's refusal

    @Test("A Users table the import refuses leaves People, Contacts and Coffee working, and is tried again")
    func refusedUsersImportBlocksOnlyUsers() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("myDb")
        var users = seedUsers
        users.append(SeedUser(first: "Asha", last: "Again", email: "ASHA@example.in", password: "another-1"))
        try makeSeedDatabase(at: url, users: users)
        let usersBefore = try contentDump(url.path)

        let database = try AppDatabase(url: url, template: nil)
        try await PeopleStore(database: database).add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        #expect(try await ContactsStore(database: database).count() == 0)
        #expect(try await CoffeeStore(database: database).count() == 0)
        let unavailable = try #require(database.unavailability(of: .users))
        #expect(unavailable.app == .users)
        #expect(database.unavailability(of: .people) == nil)
        await #expect(throws: unavailable) { try await usersStore(database).all() }
        await #expect(throws: unavailable) { try await usersStore(database).count() }
        #expect(unavailable.description.hasPrefix("the Users app cannot use this database: User_Master cannot be"))
        #expect(unavailable.description.contains("users with IDs (1, 4) share an email address"))
        #expect(unavailable.description.hasSuffix("(People, Contacts and Coffee work as usual)"))
        let pending = try database.read { db in try AppDatabase.migrator.pendingIdentifiers(in: db) }
        #expect(
            pending == [
                "users.createTable", "users.sessions", "users.apiTokens", "users.changeLog", "users.pictures",
                "users.pictureChangeLog",
            ])
        database.close()
        let usersAfter = try contentDump(url.path).filter { $0.hasPrefix("User_Master") }
        #expect(usersAfter == usersBefore.filter { $0.hasPrefix("User_Master") })

        // Mended by hand, the import runs on the next open.
        let db = try Database(path: url.path)
        try db.execute("UPDATE User_Master SET USER_EMAIL = 'asha2@example.in' WHERE UID = 4")
        db.close()
        var migrator = Migrator()
        migrator.register(AppDatabase.sharedMigrations)
        for group in AppDatabase.migrationGroups where group.app != .users { migrator.register(group.migrations) }
        migrator.register(UsersSchema.migrations(hasher: cheapHasher))
        let mended = try Database(path: url.path)
        try migrator.migrate(mended)
        mended.close()
        let reopened = try AppDatabase(url: url, template: nil)
        #expect(reopened.unavailability(of: .users) == nil)
        #expect(try await usersStore(reopened).count() == 4)
        #expect(try await PeopleStore(database: reopened).all().map(\.firstName) == ["Ada"])
    }

    @Test("A database made by a newer version still stops every app")
    func newerDatabaseStillRefused() throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("records.sqlite")
        try AppDatabase(url: url, template: nil).close()
        let db = try Database(path: url.path)
        try db.execute("INSERT INTO sqlitestore_migrations (identifier) VALUES ('people.fromTheFuture')")
        db.close()
        let error = try #require(throws: MigrationError.self) { try AppDatabase(url: url, template: nil) }
        #expect(error.kind == .databaseIsNewer)
    }
}
