import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// Version 3 of the people app, whose last migration always fails.
private func peopleMigratorWithFailingV3() -> Migrator {
    var migrator = peopleMigratorV2()
    migrator.registerMigration("addEmail") { db in
        try db.execute("ALTER TABLE people ADD COLUMN email TEXT")
        throw TestFailure()
    }
    return migrator
}

/// Runs `body` as a synchronous closure, so that inside an `async` test
/// the blocking overloads are the ones called.
private func blocking<T>(_ body: () throws -> T) rethrows -> T {
    try body()
}

private func columnNames(_ db: Database, _ table: String) throws -> [String] {
    try db.columns(in: table).map(\.name)
}

@Suite("Migrations through a queue or pool")
struct MigratorAccessTests {
    @Test("migrate(queue) applies the pending migrations and records them")
    func queueBlocking() throws {
        let queue = try DatabaseQueue.inMemory()
        let migrator = peopleMigratorV2()
        #expect(try migrator.migrate(queue) == ["createPeople", "addAge"])
        #expect(try queue.read { try migrator.appliedIdentifiers(in: $0) } == ["createPeople", "addAge"])
        #expect(try queue.read { try columnNames($0, "people") } == ["id", "name", "age"])
        #expect(try migrator.migrate(queue) == [])
    }

    @Test("migrate(pool) applies the pending migrations, and its readers see them")
    func poolBlocking() throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("people.sqlite"))
        defer { try? pool.close() }
        #expect(try peopleMigratorV1().migrate(pool) == ["createPeople"])
        #expect(try peopleMigratorV2().migrate(pool) == ["addAge"])
        #expect(try pool.read { try columnNames($0, "people") } == ["id", "name", "age"])
    }

    @Test("await migrate(queue) applies the pending migrations")
    func queueAsync() async throws {
        let queue = try DatabaseQueue.inMemory()
        let migrator = peopleMigratorV2()
        #expect(try await migrator.migrate(queue) == ["createPeople", "addAge"])
        #expect(try await migrator.isUpToDate(queue))
    }

    @Test("await migrate(pool) applies the pending migrations")
    func poolAsync() async throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("people.sqlite"))
        let migrator = peopleMigratorV2()
        #expect(try await !migrator.isUpToDate(pool))
        #expect(try await migrator.migrate(pool) == ["createPeople", "addAge"])
        #expect(try await migrator.isUpToDate(pool))
        #expect(try await pool.read { try columnNames($0, "people") } == ["id", "name", "age"])
        await pool.close()
    }

    @Test("migrate(pool, upTo:) stops after the named migration, blocking and async")
    func upTo() async throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("people.sqlite"))
        let migrator = peopleMigratorV2()
        #expect(try blocking { try migrator.migrate(pool, upTo: "createPeople") } == ["createPeople"])
        #expect(try blocking { try !migrator.isUpToDate(pool) })
        #expect(try await migrator.migrate(pool, upTo: "addAge") == ["addAge"])
        #expect(try blocking { try migrator.isUpToDate(pool) })
        await pool.close()
    }

    @Test("migrate(queue, upTo:) with an unknown name throws and changes nothing")
    func upToUnknown() async throws {
        let queue = try DatabaseQueue.inMemory()
        let error = try #require(throws: MigrationError.self) {
            try peopleMigratorV2().migrate(queue, upTo: "noSuchMigration")
        }
        #expect(error.kind == .invalidRegistration)
        await #expect(throws: MigrationError.self) {
            try await peopleMigratorV2().migrate(queue, upTo: "noSuchMigration")
        }
        #expect(try blocking { try queue.read { try schema($0) } }.isEmpty)
    }

    @Test("A failing migration through a pool is rolled back; the ones before it stay applied")
    func failingMigrationThroughPool() throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("people.sqlite"))
        defer { try? pool.close() }
        let migrator = peopleMigratorWithFailingV3()
        let error = try #require(throws: MigrationError.self) { try migrator.migrate(pool) }
        #expect(error.kind == .migrationFailed(identifier: "addEmail"))
        #expect(error.underlyingError is TestFailure)
        #expect(try pool.read { try migrator.appliedIdentifiers(in: $0) } == ["createPeople", "addAge"])
        #expect(try pool.read { try columnNames($0, "people") } == ["id", "name", "age"])
    }

    @Test("Migrating inside write { } throws an error that says to call migrate(queue), and applies nothing")
    func insideWriteNamesTheFix() throws {
        let queue = try DatabaseQueue.inMemory()
        let migrator = peopleMigratorV1()
        let error = try #require(throws: MigrationError.self) {
            try queue.write { db in try migrator.migrate(db) }
        }
        #expect(error.message.contains("migrator.migrate(queue)"))
        #expect(try queue.read { try schema($0) }.isEmpty)
    }

    @Test("migrate(queue) from inside one of the queue's own accesses throws instead of deadlocking")
    func reentrantCall() throws {
        let queue = try DatabaseQueue.inMemory()
        let migrator = peopleMigratorV1()
        let error = try #require(throws: SQLiteError.self) {
            try queue.read { _ in try migrator.migrate(queue) }
        }
        #expect(error.code == .misuse)
        #expect(try queue.read { try schema($0) }.isEmpty)
    }

    @Test("migrate(queue) after the queue is closed throws a misuse error")
    func closedQueue() async throws {
        let queue = try DatabaseQueue.inMemory()
        await queue.close()
        let error = try #require(throws: SQLiteError.self) { try blocking { try peopleMigratorV1().migrate(queue) } }
        #expect(error.code == .misuse)
        await #expect(throws: SQLiteError.self) { try await peopleMigratorV1().migrate(queue) }
    }
}
