import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// Collects what a transaction observer receives.
final class TransactionLog: Sendable {
    private let transactions = Locked<[CommittedTransaction]>([])

    func record(_ transaction: CommittedTransaction) {
        transactions.withLock { $0.append(transaction) }
    }

    var all: [[DatabaseChange]] { transactions.withLock { $0.map(\.changes) } }
}

private func makePeople(_ db: Database) throws {
    try db.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
    try db.execute("CREATE TABLE pets (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
}

@Suite("Transaction observers", .tags(.concurrency))
struct TransactionObserverTests {
    @Test func committedInsertUpdateAndDeleteAreReportedAfterTheCommit() throws {
        let db = try Database.inMemory()
        try makePeople(db)
        let log = TransactionLog()
        let token = db.addTransactionObserver { log.record($0) }
        try db.transaction { db in
            try db.execute("INSERT INTO people (id, name) VALUES (7, 'Ada')")
            try db.execute("UPDATE people SET name = 'Ada L.' WHERE id = 7")
            #expect(log.all.isEmpty)
        }
        try db.execute("DELETE FROM people WHERE id = 7")
        #expect(
            log.all == [
                [
                    DatabaseChange(kind: .insert, table: "people", rowID: 7),
                    DatabaseChange(kind: .update, table: "people", rowID: 7),
                ],
                [DatabaseChange(kind: .delete, table: "people", rowID: 7)],
            ])
        token.cancel()
    }

    @Test func rolledBackTransactionReportsNothing() throws {
        let db = try Database.inMemory()
        try makePeople(db)
        let log = TransactionLog()
        let token = db.addTransactionObserver { log.record($0) }
        struct Failure: Error {}
        #expect(throws: Failure.self) {
            try db.transaction { db in
                try db.execute("INSERT INTO people (name) VALUES ('Ada')")
                throw Failure()
            }
        }
        try db.execute("BEGIN; INSERT INTO people (name) VALUES ('Bob'); ROLLBACK")
        #expect(log.all.isEmpty)
        try db.execute("INSERT INTO pets (id, name) VALUES (1, 'Rex')")
        #expect(log.all == [[DatabaseChange(kind: .insert, table: "pets", rowID: 1)]])
        token.cancel()
    }

    @Test func changesRolledBackToASavepointAreNotReported() throws {
        let db = try Database.inMemory()
        try makePeople(db)
        let log = TransactionLog()
        let token = db.addTransactionObserver { log.record($0) }
        struct Failure: Error {}
        try db.transaction { db in
            try db.execute("INSERT INTO people (id, name) VALUES (1, 'kept')")
            try? db.savepoint { db in
                try db.execute("INSERT INTO people (id, name) VALUES (2, 'undone')")
                try db.savepoint { db in
                    try db.execute("INSERT INTO pets (id, name) VALUES (3, 'undone too')")
                }
                throw Failure()
            }
            try db.savepoint { db in
                try db.execute("INSERT INTO people (id, name) VALUES (4, 'kept too')")
            }
        }
        #expect(
            log.all == [
                [
                    DatabaseChange(kind: .insert, table: "people", rowID: 1),
                    DatabaseChange(kind: .insert, table: "people", rowID: 4),
                ]
            ])
        token.cancel()
    }

    @Test func savepointStatementsWrittenInSQLAreFollowed() throws {
        let db = try Database.inMemory()
        try makePeople(db)
        let log = TransactionLog()
        let token = db.addTransactionObserver { log.record($0) }
        try db.execute("SAVEPOINT outer")
        try db.execute("INSERT INTO people (id, name) VALUES (1, 'kept')")
        try db.execute("SAVEPOINT \"Inner\"")
        try db.execute("INSERT INTO people (id, name) VALUES (2, 'undone')")
        try db.execute("ROLLBACK TO inner")
        try db.execute("INSERT INTO people (id, name) VALUES (3, 'kept after the rollback')")
        #expect(log.all.isEmpty)
        try db.execute("RELEASE outer")
        #expect(
            log.all == [
                [
                    DatabaseChange(kind: .insert, table: "people", rowID: 1),
                    DatabaseChange(kind: .insert, table: "people", rowID: 3),
                ]
            ])
        token.cancel()
    }

    @Test func aTransactionWhoseChangesWereAllRolledBackToASavepointReportsNothing() throws {
        let db = try Database.inMemory()
        try makePeople(db)
        let log = TransactionLog()
        let token = db.addTransactionObserver { log.record($0) }
        try db.execute("BEGIN; SAVEPOINT s; INSERT INTO people (name) VALUES ('x'); ROLLBACK TO s; COMMIT")
        #expect(log.all.isEmpty)
        token.cancel()
    }

    @Test func deleteWithoutWhereReportsEveryRowEvenWhenPreparedBefore() throws {
        let db = try Database.inMemory()
        try makePeople(db)
        try db.execute("INSERT INTO people (id, name) VALUES (1, 'Ada'), (2, 'Bob')")
        // Cached without an observer: SQLite would truncate the table.
        _ = try db.cachedStatement("DELETE FROM people")
        let log = TransactionLog()
        let token = db.addTransactionObserver { log.record($0) }
        try db.execute("DELETE FROM people")
        #expect(log.all.first.map { Set($0.map(\.rowID)) } == [1, 2])
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM people") == 0)
        token.cancel()
    }

    @Test func onlyTheRequestedTablesAreReported() throws {
        let db = try Database.inMemory()
        try makePeople(db)
        let log = TransactionLog()
        let token = db.addTransactionObserver(tables: ["PEOPLE"]) { log.record($0) }
        try db.execute("INSERT INTO pets (id, name) VALUES (1, 'Rex')")
        try db.transaction { db in
            try db.execute("INSERT INTO pets (id, name) VALUES (2, 'Tom')")
            try db.execute("INSERT INTO people (id, name) VALUES (5, 'Ada')")
        }
        #expect(log.all == [[DatabaseChange(kind: .insert, table: "people", rowID: 5)]])
        token.cancel()
    }

    /// A connection watched by an observer answers SQLite's checks of
    /// deletions so that `DELETE` reports every row; a `DROP` is checked
    /// the same way, and was skipped without an error: the table stayed.
    @Test func aWatchedConnectionStillDropsTablesViewsAndVirtualTables() throws {
        let db = try Database.inMemory()
        try makePeople(db)
        let log = TransactionLog()
        let token = db.addTransactionObserver { log.record($0) }
        try db.execute("INSERT INTO people (id, name) VALUES (1, 'Ada'), (2, 'Bob')")
        try db.execute("CREATE VIEW names AS SELECT name FROM people")
        try db.execute("CREATE VIRTUAL TABLE words USING fts5(text)")
        try db.execute("CREATE TEMP TABLE scratch (id INTEGER PRIMARY KEY)")
        try db.execute("CREATE TEMP VIEW recent AS SELECT id FROM people")
        try db.execute("INSERT INTO words (text) VALUES ('hello')")
        for statement in [
            "DROP VIEW names", "DROP TABLE words", "DROP TABLE scratch", "DROP VIEW recent", "DROP TABLE pets",
        ] {
            try db.execute(sql: statement)
        }
        let left = try db.fetchAll(
            String.self, "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') ORDER BY name")
        #expect(left == ["people"])
        #expect(try db.fetchAll(String.self, "SELECT name FROM sqlite_temp_schema").isEmpty)
        // A DELETE of every row is still reported row by row, and a drop
        // after it too goes through.
        try db.execute("DELETE FROM people")
        try db.execute("DROP TABLE people")
        #expect(try db.fetchAll(String.self, "SELECT name FROM sqlite_schema WHERE type = 'table'").isEmpty)
        #expect(
            log.all.last == [
                DatabaseChange(kind: .delete, table: "people", rowID: 1),
                DatabaseChange(kind: .delete, table: "people", rowID: 2),
            ])
        token.cancel()
    }

    /// The recorder remembers the tables it saw by SQLite's pointer to
    /// their name: a table renamed, or dropped and another made (which may
    /// get the same memory), is still reported by its name at the time,
    /// and only when the observer asked for it; so are changes that go
    /// from table to table, past the tables it remembers.
    @Test func changesAreReportedUnderEachTablesNameAtTheTimeThroughRenamesAndDrops() throws {
        let db = try Database.inMemory()
        try makePeople(db)
        let log = TransactionLog()
        let token = db.addTransactionObserver(tables: ["people", "animals"]) { log.record($0) }
        try db.execute("INSERT INTO people (id, name) VALUES (1, 'Ada')")
        try db.execute("INSERT INTO pets (id, name) VALUES (1, 'Rex')")
        try db.execute("ALTER TABLE pets RENAME TO animals")
        try db.execute("INSERT INTO animals (id, name) VALUES (2, 'Tom')")
        try db.execute("DROP TABLE people")
        try db.execute("CREATE TABLE pets (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        try db.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        try db.execute("INSERT INTO pets (id, name) VALUES (3, 'Kit')")
        try db.execute("INSERT INTO people (id, name) VALUES (4, 'Bob')")
        // Forty tables changed in one transaction, in turn, twice.
        for index in 0..<40 { try db.execute(sql: "CREATE TABLE t\(index) (id INTEGER PRIMARY KEY)") }
        try db.transaction { db in
            for round in 0..<2 {
                for index in 0..<40 { try db.execute(sql: "INSERT INTO t\(index) (id) VALUES (\(round + 1))") }
                try db.execute(sql: "INSERT INTO people (id, name) VALUES (\(10 + round), 'C')")
            }
        }
        #expect(
            log.all == [
                [DatabaseChange(kind: .insert, table: "people", rowID: 1)],
                [DatabaseChange(kind: .insert, table: "animals", rowID: 2)],
                [DatabaseChange(kind: .insert, table: "people", rowID: 4)],
                [
                    DatabaseChange(kind: .insert, table: "people", rowID: 10),
                    DatabaseChange(kind: .insert, table: "people", rowID: 11),
                ],
            ])
        token.cancel()
    }

    @Test func cancelledOrReleasedTokenStopsTheReports() throws {
        let db = try Database.inMemory()
        try makePeople(db)
        let cancelledLog = TransactionLog()
        let releasedLog = TransactionLog()
        let cancelled = db.addTransactionObserver { cancelledLog.record($0) }
        var released: ObservationToken? = db.addTransactionObserver { releasedLog.record($0) }
        try db.execute("INSERT INTO people (name) VALUES ('Ada')")
        cancelled.cancel()
        _ = released
        released = nil
        try db.execute("INSERT INTO people (name) VALUES ('Bob')")
        #expect(cancelledLog.all.count == 1)
        #expect(releasedLog.all.count == 1)
    }

    @Test func recordWritesAreReported() throws {
        let db = try Database.inMemory()
        try makePeople(db)
        let log = TransactionLog()
        let token = db.addTransactionObserver { log.record($0) }
        let insert = try db.makeStatement("INSERT INTO people (id, name) VALUES (?, ?)")
        try insert.execute(values: 1, "Ada")
        _ = try db.fetchAll("INSERT INTO people (id, name) VALUES (2, 'Bob') RETURNING id")
        #expect(
            log.all == [
                [DatabaseChange(kind: .insert, table: "people", rowID: 1)],
                [DatabaseChange(kind: .insert, table: "people", rowID: 2)],
            ])
        token.cancel()
    }

    @Test func aCommitAtACursorsResetIsReportedBeforeTheNextTransaction() throws {
        let db = try Database.inMemory()
        try makePeople(db)
        let log = TransactionLog()
        let token = db.addTransactionObserver { log.record($0) }
        // fetchOne stops before SQLite reports the statement done: the
        // insert commits when the statement is reset.
        _ = try db.fetchOne(Int.self, "INSERT INTO people (id, name) VALUES (1, 'Ada') RETURNING id")
        try db.execute("BEGIN; INSERT INTO people (id, name) VALUES (2, 'Bob'); ROLLBACK")
        #expect(log.all == [[DatabaseChange(kind: .insert, table: "people", rowID: 1)]])
        token.cancel()
    }

    @Test func queueObserverGetsEachTransactionOfAnAccess() throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("db.sqlite"))
        try queue.write(makePeople)
        let log = TransactionLog()
        let token = try queue.addTransactionObserver(tables: ["people"]) { log.record($0) }
        try queue.writeWithoutTransaction { db in
            try db.execute("INSERT INTO people (id, name) VALUES (1, 'Ada')")
            try db.execute("INSERT INTO people (id, name) VALUES (2, 'Bob')")
        }
        try queue.write { db in try db.execute("DELETE FROM people") }
        #expect(log.all.count == 3)
        #expect(log.all.last?.map(\.kind) == [.delete, .delete])
        token.cancel()
        try queue.write { db in try db.execute("INSERT INTO people (name) VALUES ('Cy')") }
        #expect(log.all.count == 3)
        #expect(!queue.observationCenter.tracker.isActive)
    }

    @Test func poolObserverGetsCommittedWritesOnly() async throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("db.sqlite"))
        try await pool.write { db in try makePeople(db) }
        let log = TransactionLog()
        let token = try pool.addTransactionObserver { log.record($0) }
        try await pool.write { db in try db.execute("INSERT INTO people (id, name) VALUES (3, 'Ada')") }
        await #expect(throws: SQLiteError.self) {
            try await pool.write { db in
                try db.execute("INSERT INTO people (id, name) VALUES (4, 'Bob')")
                try db.execute("INSERT INTO people (id, name) VALUES (3, 'duplicate key')")
            }
        }
        #expect(log.all == [[DatabaseChange(kind: .insert, table: "people", rowID: 3)]])
        token.cancel()
        await pool.close()
    }
}
