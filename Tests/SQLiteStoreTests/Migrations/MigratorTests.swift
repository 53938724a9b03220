import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

struct TestFailure: Error, Equatable {}

/// Version 1 of a small app: people with a name.
func peopleMigratorV1() -> Migrator {
    var migrator = Migrator()
    migrator.registerMigration("createPeople") { db in
        try db.execute("CREATE TABLE people (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL)")
    }
    return migrator
}

/// Version 2 of the same app: adds an age and an index.
func peopleMigratorV2() -> Migrator {
    var migrator = peopleMigratorV1()
    migrator.registerMigration("addAge") { db in
        try db.execute("ALTER TABLE people ADD COLUMN age INTEGER")
        try db.execute("CREATE INDEX people_on_name ON people(name)")
    }
    return migrator
}

func schema(_ db: Database) throws -> [String] {
    try db.fetchAll(String.self, "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name")
}

@Suite("Migrations")
struct MigratorTests {
    @Test("A fresh database gets every migration, recorded in order")
    func fresh() throws {
        let db = try Database.inMemory()
        let migrator = peopleMigratorV2()
        #expect(try migrator.pendingIdentifiers(in: db) == ["createPeople", "addAge"])
        #expect(try migrator.migrate(db) == ["createPeople", "addAge"])
        #expect(try migrator.appliedIdentifiers(in: db) == ["createPeople", "addAge"])
        #expect(try migrator.isUpToDate(db))
        try db.execute("INSERT INTO people (name, age) VALUES ('Ann', 30)")
        // Running again changes nothing.
        #expect(try migrator.migrate(db).isEmpty)
    }

    @Test("Upgrading a database made by version 1 keeps its rows")
    func upgradeKeepsUserData() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("app.sqlite")
        do {
            let db = try Database(path: path)
            try peopleMigratorV1().migrate(db)
            try db.execute("INSERT INTO people (name) VALUES (?), (?)", arguments: ["O'Brien", "Zoë"])
        }
        let db = try Database(path: path)
        #expect(try peopleMigratorV2().migrate(db) == ["addAge"])
        #expect(try db.fetchAll(String.self, "SELECT name FROM people ORDER BY id") == ["O'Brien", "Zoë"])
        #expect(try db.fetchAll(Int?.self, "SELECT age FROM people") == [nil, nil])
    }

    @Test("A failing migration is rolled back completely and can run again once fixed")
    func failingMigrationRollsBack() throws {
        let db = try Database.inMemory()
        try peopleMigratorV1().migrate(db)
        try db.execute("INSERT INTO people (name) VALUES ('Ann')")
        let before = try schema(db)

        var broken = peopleMigratorV1()
        broken.registerMigration("half done") { db in
            try db.execute("ALTER TABLE people ADD COLUMN age INTEGER")
            try db.execute("UPDATE people SET name = 'changed'")
            throw TestFailure()
        }
        do {
            try broken.migrate(db)
            Issue.record("expected the migration to fail")
        } catch let error as MigrationError {
            #expect(error.kind == .migrationFailed(identifier: "half done"))
            #expect(error.underlyingError is TestFailure)
            #expect(error.description.contains("half done"))
        }
        #expect(try schema(db) == before)
        #expect(try db.fetchAll(String.self, "SELECT name FROM people") == ["Ann"])
        #expect(try broken.appliedIdentifiers(in: db) == ["createPeople"])
        #expect(!db.isInsideTransaction)
        #expect(try peopleMigratorV2().migrate(db) == ["addAge"])
    }

    @Test("A failing SQL statement in the first migration leaves no trace, not even the migrations table")
    func failingFirstMigration() throws {
        let db = try Database.inMemory()
        var migrator = Migrator()
        migrator.registerMigration("bad") { db in
            try db.execute("CREATE TABLE a (x); CREATE TABLE a (y)")
        }
        #expect(throws: MigrationError.self) { try migrator.migrate(db) }
        #expect(try schema(db).isEmpty)
        #expect(try migrator.appliedIdentifiers(in: db).isEmpty)
    }

    @Test("A database migrated by a newer version is refused and left unchanged")
    func newerDatabaseRefused() throws {
        let db = try Database.inMemory()
        try peopleMigratorV2().migrate(db)
        let before = try schema(db)
        var olderWithAnotherStep = peopleMigratorV1()
        olderWithAnotherStep.registerMigration("somethingElse") { db in
            try db.execute("CREATE TABLE other (x)")
        }
        do {
            try olderWithAnotherStep.migrate(db)
            Issue.record("expected the database to be refused")
        } catch let error as MigrationError {
            #expect(error.kind == .databaseIsNewer)
            #expect(error.message.contains("addAge"))
            #expect(error.message.contains("newer version"))
        }
        #expect(try schema(db) == before)
    }

    @Test("Duplicate or empty identifiers are reported before anything runs")
    func invalidRegistrations() throws {
        let db = try Database.inMemory()
        var duplicate = peopleMigratorV1()
        duplicate.registerMigration("createPeople") { _ in }
        #expect {
            try duplicate.migrate(db)
        } throws: { error in
            (error as? MigrationError)?.kind == .invalidRegistration
        }
        var empty = Migrator()
        empty.registerMigration("") { _ in }
        #expect(throws: MigrationError.self) { try empty.migrate(db) }
        #expect(try schema(db).isEmpty)
    }

    @Test("Migrations cannot run inside an open transaction")
    func insideTransaction() throws {
        let db = try Database.inMemory()
        try db.execute("BEGIN")
        #expect(throws: MigrationError.self) { try peopleMigratorV1().migrate(db) }
        try db.execute("ROLLBACK")
    }

    @Test("migrate(upTo:) stops after the named migration")
    func upTo() throws {
        let db = try Database.inMemory()
        let migrator = peopleMigratorV2()
        #expect(try migrator.migrate(db, upTo: "createPeople") == ["createPeople"])
        #expect(try migrator.pendingIdentifiers(in: db) == ["addAge"])
        #expect(throws: MigrationError.self) { try migrator.migrate(db, upTo: "noSuchMigration") }
    }

    @Test("A table rebuild with foreign keys disabled keeps references, and foreign keys are on again after")
    func rebuildWithForeignKeysDisabled() throws {
        let db = try Database.inMemory()
        var migrator = Migrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                """
                CREATE TABLE author (id INTEGER PRIMARY KEY, name TEXT);
                CREATE TABLE book (id INTEGER PRIMARY KEY, authorID INTEGER REFERENCES author(id) ON DELETE CASCADE);
                INSERT INTO author VALUES (1, 'Ann');
                INSERT INTO book VALUES (1, 1);
                """)
        }
        migrator.registerMigration("rebuildAuthor", disablingForeignKeys: true) { db in
            try db.execute(
                """
                CREATE TABLE new_author (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                INSERT INTO new_author SELECT id, name FROM author;
                DROP TABLE author;
                ALTER TABLE new_author RENAME TO author;
                """)
        }
        try migrator.migrate(db)
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM book") == 1)
        #expect(try db.fetchOne(Bool.self, "PRAGMA foreign_keys") == true)
    }

    @Test("A rebuild that breaks a foreign key is rolled back")
    func rebuildLeavingViolationsRollsBack() throws {
        let db = try Database.inMemory()
        var migrator = Migrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                """
                CREATE TABLE author (id INTEGER PRIMARY KEY);
                CREATE TABLE book (id INTEGER PRIMARY KEY, authorID INTEGER REFERENCES author(id));
                INSERT INTO author VALUES (1);
                INSERT INTO book VALUES (1, 1);
                """)
        }
        migrator.registerMigration("dropsAuthors", disablingForeignKeys: true) { db in
            try db.execute("DELETE FROM author")
        }
        #expect {
            try migrator.migrate(db)
        } throws: { error in
            (error as? MigrationError)?.kind == .foreignKeyViolation
        }
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM author") == 1)
        #expect(try migrator.appliedIdentifiers(in: db) == ["v1"])
        #expect(try db.fetchOne(Bool.self, "PRAGMA foreign_keys") == true)
    }

    @Test("A migration another connection applied after the list was read is skipped, not applied twice")
    func concurrentMigrators() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("app.sqlite")
        let first = try Database(path: path)
        let second = try Database(path: path)
        let migrator = peopleMigratorV2()
        // When the first connection is about to begin its second migration
        // (it has read the list and applied "createPeople"), the second
        // connection migrates the file: as another process opening the same
        // new database would.
        var begins = 0
        var secondApplied: [String] = []
        var secondError: (any Error)?
        first.trace { event in
            guard event.sql.hasPrefix("BEGIN") else { return }
            begins += 1
            if begins == 2 {
                do { secondApplied = try migrator.migrate(second) } catch { secondError = error }
            }
        }
        #expect(try migrator.migrate(first) == ["createPeople"])
        #expect(secondError == nil)
        #expect(secondApplied == ["addAge"])
        #expect(try migrator.appliedIdentifiers(in: first) == ["createPeople", "addAge"])
        #expect(try first.fetchOne(Int.self, "SELECT COUNT(*) FROM pragma_table_info('people')") == 3)
    }
}
