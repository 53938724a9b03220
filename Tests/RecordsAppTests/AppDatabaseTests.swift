import Foundation
import SQLiteStore
import SQLiteStoreAppSupport
import TestSupport
import Testing

@testable import RecordsApp

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

@Suite("The shipped sample database")
struct SampleDatabaseTests {
    @Test("The shipped sample database is what its SQL builds")
    func shippedFileMatchesSQL() throws {
        let dir = try TemporaryDirectory()
        let sql = try String(contentsOf: resourcesDirectory.appendingPathComponent("sampledb.sql"), encoding: .utf8)
        let built = dir.fileURL("built.sqlite")
        try AppDatabase.buildSampleDatabase(sql: sql, at: built)
        let shipped = resourcesDirectory.appendingPathComponent("sampledb.sqlite")
        #expect(try contentDump(built.path) == contentDump(shipped.path))

        // Same SQLite version (header offset 96) as the one that wrote the
        // shipped file: then the bytes must match too.
        let shippedBytes = try Data(contentsOf: shipped)
        let builtBytes = try Data(contentsOf: built)
        let writer = shippedBytes.count >= 100 ? shippedBytes[96..<100].reduce(0) { $0 << 8 | Int32($1) } : 0
        if writer == sqlite3_libversion_number() {
            #expect(builtBytes == shippedBytes, "run scripts/make-sample-database.sh")
        }
    }

    @Test("Building the sample twice gives the same bytes")
    func buildIsReproducible() throws {
        let dir = try TemporaryDirectory()
        let sql = try String(contentsOf: resourcesDirectory.appendingPathComponent("sampledb.sql"), encoding: .utf8)
        try AppDatabase.buildSampleDatabase(sql: sql, at: dir.fileURL("a.sqlite"))
        try AppDatabase.buildSampleDatabase(sql: sql, at: dir.fileURL("b.sqlite"))
        #expect(try Data(contentsOf: dir.fileURL("a.sqlite")) == Data(contentsOf: dir.fileURL("b.sqlite")))
    }

    @Test("Building refuses to overwrite a file, and bad SQL is an error that leaves no file")
    func buildErrors() throws {
        let dir = try TemporaryDirectory()
        try Data("keep".utf8).write(to: dir.fileURL("exists.sqlite"))
        #expect(throws: DatabaseFileError.self) {
            try AppDatabase.buildSampleDatabase(sql: "CREATE TABLE t (a)", at: dir.fileURL("exists.sqlite"))
        }
        #expect(try Data(contentsOf: dir.fileURL("exists.sqlite")) == Data("keep".utf8))
        #expect(throws: SQLiteError.self) {
            try AppDatabase.buildSampleDatabase(
                sql: "CREATE TABLE t (a); INSERT INTO nope VALUES (1)", at: dir.fileURL("bad.sqlite"))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("bad.sqlite")))
    }

    @Test("The synchronous mode asked for reaches the writer and the readers; none keeps SQLite's full")
    func synchronousMode() throws {
        let dir = try TemporaryDirectory()
        let fast = try AppDatabase(
            url: dir.url.appendingPathComponent("fast.sqlite"), start: .empty, synchronous: .normal)
        defer { fast.close() }
        #expect(try fast.read { try $0.fetchOne(Int.self, "PRAGMA synchronous") } == 1)
        #expect(try fast.write { try $0.fetchOne(Int.self, "PRAGMA synchronous") } == 1)
        let safe = try AppDatabase(url: dir.url.appendingPathComponent("safe.sqlite"), start: .empty)
        defer { safe.close() }
        #expect(try safe.write { try $0.fetchOne(Int.self, "PRAGMA synchronous") } == 2)
    }

    @Test("The bundled template is found and is the shipped file")
    func bundledTemplate() throws {
        let url = try AppDatabase.bundledTemplateURL()
        #expect(
            try Data(contentsOf: url) == Data(contentsOf: resourcesDirectory.appendingPathComponent("sampledb.sqlite")))
    }
}

@Suite("The app database")
struct AppDatabaseTests {
    @Test("First use installs the sample and applies every migration; the next use keeps user rows")
    func firstUseAndReopen() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("records.sqlite")
        do {
            let database = try AppDatabase(url: url, template: try AppDatabase.bundledTemplateURL())
            #expect(try await PeopleStore(database: database).count() == 6)
            #expect(try await ContactsStore(database: database).count() == 3)
            try await PeopleStore(database: database).add(PersonDraft(firstName: "Mine", lastName: "Own", age: 1))
            database.close()
        }
        let reopened = try AppDatabase(url: url, template: try AppDatabase.bundledTemplateURL())
        #expect(try await PeopleStore(database: reopened).count() == 7)
        let db = try Database(path: url.path)
        #expect(try AppDatabase.migrator.isUpToDate(db))
    }

    @Test("A database made by the seed app (no migrations, NULLs) is upgraded and its rows kept")
    func seedDatabaseUpgrade() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("sampledb.sql")
        do {
            let db = try Database(path: url.path)
            try db.execute(
                """
                CREATE TABLE peopleInfo (peopleInfoID INTEGER PRIMARY KEY AUTOINCREMENT, firstname TEXT, lastname TEXT, age INTEGER);
                INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Old', 'Friend', '42'), (NULL, 'Nameless', NULL);
                """)
        }
        let database = try AppDatabase(url: url, template: try AppDatabase.bundledTemplateURL())
        let people = try await PeopleStore(database: database).all(sortedBy: .newest)
        #expect(
            people == [
                Person(id: 2, firstName: "", lastName: "Nameless", age: nil),
                Person(id: 1, firstName: "Old", lastName: "Friend", age: 42),
            ])
        // The contacts table it lacked was added, empty.
        #expect(try await ContactsStore(database: database).all().isEmpty)
    }

    @Test("A database from a newer version of records is refused, unchanged")
    func newerDatabaseRefused() throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("records.sqlite")
        _ = try AppDatabase(url: url, template: nil)
        do {
            let db = try Database(path: url.path)
            try db.execute("INSERT INTO sqlitestore_migrations (identifier) VALUES ('coffee.fromTheFuture')")
        }
        #expect {
            try AppDatabase(url: url, template: nil)
        } throws: { error in
            (error as? MigrationError)?.kind == .databaseIsNewer
        }
    }

    @Test("A file that is not a database is reported, and left alone")
    func notADatabase() throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("notes.txt")
        try Data(repeating: 0x41, count: 5000).write(to: url)
        #expect(throws: SQLiteError.self) { try AppDatabase(url: url, template: try AppDatabase.bundledTemplateURL()) }
        #expect(try Data(contentsOf: url) == Data(repeating: 0x41, count: 5000))
    }

    @Test("The location is the option, else RECORDS_DATABASE, else the data directory")
    func location() throws {
        let dir = try TemporaryDirectory()
        let environment = [
            "XDG_DATA_HOME": dir.path("xdg"), "HOME": dir.path("home"), "RECORDS_DATABASE": "/env/db.sqlite",
        ]
        let option = try AppDatabase.location(databasePath: "/opt/x.sqlite", environment: environment)
        #expect(option == DatabaseLocation(url: URL(fileURLWithPath: "/opt/x.sqlite"), source: .option))
        let fromEnvironment = try AppDatabase.location(databasePath: nil, environment: environment)
        #expect(fromEnvironment == DatabaseLocation(url: URL(fileURLWithPath: "/env/db.sqlite"), source: .environment))
        var noVariable = environment
        noVariable["RECORDS_DATABASE"] = ""
        let fallback = try AppDatabase.location(databasePath: "", environment: noVariable)
        #expect(fallback.source == .defaultDirectory)
        #if !canImport(Darwin)
            #expect(fallback.url.path == dir.path("xdg") + "/records/records.sqlite")
            #expect(FileManager.default.fileExists(atPath: dir.path("xdg") + "/records"))
        #endif
        let home = try AppDatabase.location(databasePath: "~/mine.sqlite", environment: environment)
        #expect(home.url.path == dir.path("home") + "/mine.sqlite")
    }

    @Test("The migration list has unique identifiers")
    func migrationIdentifiersUnique() throws {
        let identifiers = AppDatabase.migrator.identifiers
        #expect(Set(identifiers).count == identifiers.count)
        #expect(identifiers.contains("people.createTable") && identifiers.contains("contacts.createTable"))
    }

    @Test(
        "Folding ignores case, accents and width",
        arguments: [("Åkesson", "akesson"), ("ZOË", "zoe"), ("Ｓｅáｎ", "sean")])
    func folding(text: String, expected: String) {
        #expect(SearchFolding.fold(text) == expected)
    }
}
