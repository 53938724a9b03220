import Foundation
import PasswordHashing
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

/// Databases made by the original Users tutorial's app, with its exact `CREATE TABLE` and
/// plain-text passwords, taken over by the Users migration.
@Suite("Users: importing the seed's table")
struct UsersImportTests {
    /// Runs only the Users migration, with `hasher`, on the file at `url`.
    private func migrateUsers(at url: URL, hasher: any PasswordHashingService = cheapHasher) throws {
        let db = try Database(path: url.path)
        defer { db.close() }
        var migrator = Migrator()
        migrator.register(UsersSchema.migrations(hasher: hasher))
        try migrator.migrate(db)
    }

    private func rows(_ url: URL, _ sql: String) throws -> [Row] {
        let db = try Database(path: url.path)
        defer { db.close() }
        return try db.fetchAll(sql: sql)
    }

    @Test("The seed's exact table is recognised; others are not")
    func recognition() throws {
        let db = try Database.inMemory()
        #expect(try UsersSchema.existingLayout(db) == .none)
        try db.execute(sql: seedCreateTableSQL)
        #expect(try UsersSchema.existingLayout(db) == .seed)

        let almost = try Database.inMemory()
        try almost.execute(
            sql: seedCreateTableSQL.replacingOccurrences(of: "USER_CPASS VARCHAR(200) NOT NULL,", with: ""))
        let layout = try UsersSchema.existingLayout(almost)
        guard case .unknown(let columns) = layout else {
            Issue.record("a table without USER_CPASS is not the seed's: \(layout)")
            return
        }
        #expect(!columns.contains("USER_CPASS"))

        // This app's columns without its CHECK could hold plain passwords.
        let unchecked = try Database.inMemory()
        try unchecked.execute(
            sql: UsersSchema.createTableSQL(name: "User_Master").replacingOccurrences(
                of: "CHECK (USER_PASS GLOB '$[a-z0-9]*$*')", with: ""))
        #expect(try UsersSchema.existingLayout(unchecked) == .unknown(columns: columns))

        let current = try AppDatabase.inMemory()
        #expect(try current.read { db in try UsersSchema.existingLayout(db) } == .current)
    }

    @Test("Import: every password hashed, USER_CPASS dropped, every other value and ID kept")
    func importKeepsData() throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("myDb")
        try makeSeedDatabase(at: url, users: seedUsers)
        let before = try rows(url, "SELECT * FROM User_Master ORDER BY UID")

        try migrateUsers(at: url)

        let columns = try rows(url, "SELECT name FROM pragma_table_info('User_Master')").map { try $0[0] as String }
        #expect(!columns.contains("USER_CPASS"))
        #expect(columns.count == 13)
        let after = try rows(url, "SELECT * FROM User_Master ORDER BY UID")
        #expect(after.count == before.count)
        for (old, new) in zip(before, after) {
            for column in [
                "UID", "USER_IMAGENAME", "USER_FNAME", "USER_LNAME", "USER_EMAIL", "USER_STATE", "USER_CITY",
                "USER_ADDRESS", "USER_GENDER", "USER_DOB",
            ] {
                #expect(try old[column] as SQLiteValue == new[column] as SQLiteValue, "\(column)")
            }
            // The original tutorial's INTEGER columns become the same digits as text.
            #expect(try new["USER_MOBILE"] as SQLiteValue == .text(String(try old["USER_MOBILE"] as Int64)))
            #expect(try new["USER_PINCODE"] as SQLiteValue == .text(String(try old["USER_PINCODE"] as Int64)))
            let plain: String = try old["USER_PASS"]
            let hash: String = try new["USER_PASS"]
            #expect(hash.hasPrefix("$scrypt$"))
            #expect(!hash.contains(plain))
            #expect(try cheapHasher.verify(plain, against: hash))
        }
        // Asha and Meera had the same password; their salts differ.
        #expect(try after[0]["USER_PASS"] as String != after[2]["USER_PASS"] as String)
    }

    @Test("After the import the users log in with their old passwords, and emails are unique ignoring case")
    func importedUsersLogIn() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("myDb")
        try makeSeedDatabase(at: url, users: seedUsers)
        try migrateUsers(at: url)
        // Then the whole app opens it (the Users migration is recorded).
        let database = try AppDatabase(url: url, template: nil)
        let store = usersStore(database)
        let ravi = try await store.authenticate(email: "ravi.k@example.in", password: "plain-Secret-2")
        #expect(ravi.lastName == "O'Neil")
        #expect(ravi.gender == .male)
        #expect(ravi.dateOfBirth == "1985-01-31")
        #expect(ravi.mobile == "9123456789", "the seed's INTEGER column had already dropped the leading 0")
        #expect(try await store.user(id: 1)?.dateOfBirth == "10/12/1990", "the seed's own date text is kept")
        await #expect(throws: AuthenticationError.invalidCredentials) {
            try await store.authenticate(email: "asha@example.in", password: "plain-Secret-2")
        }
        let taken = try await #require(throws: ValidationError.self) {
            try await store.register(validForm(email: "ASHA@example.in"))
        }
        #expect(taken.description == "Email is already registered.")
    }

    @Test("Opening a seed database with the app imports it with the default cost")
    func appOpensSeedDatabase() throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("myDb")
        try makeSeedDatabase(at: url, users: Array(seedUsers.prefix(1)))
        let database = try AppDatabase(url: url, template: nil)
        let hash = try #require(try storedHash(database, id: 1))
        #expect(hash.hasPrefix("$scrypt$ln=17,r=8,p=1$"))
        #expect(try cheapHasher.verify("plain-Secret-1", against: hash))
        #expect(try AppDatabase.migrator.pendingIdentifiers(in: try Database(path: url.path)).isEmpty)
    }

    @Test(
        "IDs of deleted seed users are not handed out again, even when none is left",
        arguments: ["DELETE FROM User_Master WHERE UID = 3", "DELETE FROM User_Master"])
    func sequenceKept(deletion: String) async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("myDb")
        try makeSeedDatabase(at: url, users: seedUsers)
        do {
            let db = try Database(path: url.path)
            try db.execute(sql: deletion)
            db.close()
        }
        try migrateUsers(at: url)
        let database = try AppDatabase(url: url, template: nil)
        #expect(try await usersStore(database).register(validForm()).id == 4)
    }

    @Test("The plain passwords are not left in the file's free pages")
    func noPlainTextLeftInFile() throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("myDb")
        try makeSeedDatabase(at: url, users: seedUsers)
        let needle = Data("plain-Secret-".utf8)
        #expect(try Data(contentsOf: url).range(of: needle) != nil, "the seed's file holds them")
        try migrateUsers(at: url)
        #expect(try Data(contentsOf: url).range(of: needle) == nil)
    }

    @Test("A failure in the middle of the import leaves the database exactly as it was")
    func failureMidImport() throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("myDb")
        try makeSeedDatabase(at: url, users: seedUsers)
        let before = try contentDump(url.path)
        let bytesBefore = try Data(contentsOf: url)

        let error = try #require(throws: MigrationError.self) {
            try migrateUsers(at: url, hasher: FailingHasher(failingOnHash: 2))
        }
        #expect(error.kind == .migrationFailed(identifier: "users.createTable"))
        #expect(error.underlyingError is FailingHasher.Failure)
        #expect(try contentDump(url.path) == before)
        #expect(try Data(contentsOf: url) == bytesBefore)

        // Nothing is half done: the next attempt imports everything.
        try migrateUsers(at: url)
        #expect(try rows(url, "SELECT USER_PASS FROM User_Master").count == 3)
    }

    @Test("Emails that differ only in case stop the import, naming the users; nothing changes")
    func duplicateEmailsRefused() throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("myDb")
        var users = seedUsers
        users.append(SeedUser(first: "Asha", last: "Again", email: "ASHA@example.in", password: "another-1"))
        try makeSeedDatabase(at: url, users: users)
        let before = try contentDump(url.path)
        let error = try #require(throws: MigrationError.self) { try migrateUsers(at: url) }
        #expect(error.underlyingError as? UsersImportError == .duplicateEmails(userIDs: ["1, 4"]))
        #expect(error.description.contains("users with IDs (1, 4) share an email address"))
        #expect(try contentDump(url.path) == before)
    }

    @Test("A gender code outside the set stops the import, naming the users; nothing changes")
    func unknownGenderRefused() throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("myDb")
        var users = seedUsers
        users[1].gender = "7"
        users[2].gender = "Female"
        try makeSeedDatabase(at: url, users: users)
        let before = try contentDump(url.path)
        let error = try #require(throws: MigrationError.self) { try migrateUsers(at: url) }
        #expect(error.underlyingError as? UsersImportError == .unknownGender(userIDs: [2, 3]))
        #expect(try contentDump(url.path) == before)
    }

    @Test("A User_Master that is neither the seed's nor the app's is refused, untouched")
    func unknownLayoutRefused() throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("other.sqlite")
        do {
            let db = try Database(path: url.path)
            try db.execute(
                "CREATE TABLE User_Master (id INTEGER PRIMARY KEY, login TEXT); INSERT INTO User_Master VALUES (1, 'x')"
            )
            db.close()
        }
        let before = try contentDump(url.path)
        let error = try #require(throws: MigrationError.self) { try migrateUsers(at: url) }
        #expect(error.underlyingError as? UsersImportError == .unknownLayout(columns: ["id", "login"]))
        #expect(try contentDump(url.path) == before)
    }

    @Test("A table already in the app's layout, unrecorded, is kept as it is")
    func currentLayoutKept() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("records.sqlite")
        do {
            let db = try Database(path: url.path)
            try db.execute(sql: UsersSchema.createTableSQL(name: "User_Master"))
            try db.execute(
                """
                INSERT INTO User_Master VALUES
                    (5, 'i.png', 'Kept', 'Row', 'kept@example.com', '$scrypt$x', '1234567', 's', 'c', '123', 'a', 1,
                     '2000-01-01')
                """)
            db.close()
        }
        let database = try AppDatabase(url: url, template: nil)
        let store = usersStore(database)
        #expect(try await store.user(id: 5)?.firstName == "Kept")
        // The unique index it lacked was added.
        let index = try database.read { db in
            try db.fetchOne(String.self, "SELECT sql FROM sqlite_master WHERE name = 'User_Master_email'")
        }
        #expect(index?.contains("UNIQUE") == true)
    }
}
