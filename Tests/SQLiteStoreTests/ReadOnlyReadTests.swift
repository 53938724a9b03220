import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// Writes attempted from a read access, each of which must throw and leave
/// the database as it was.
private let writesInsideRead = [
    "COMMIT; INSERT INTO t VALUES (99)",
    "INSERT INTO t VALUES (99)",
    "BEGIN; INSERT INTO t VALUES (99); COMMIT",
    "PRAGMA user_version = 99",
    "ROLLBACK; PRAGMA user_version = 99",
]

/// Reads are read-only for real: no statement that writes runs inside one,
/// on a queue and on a pool reader.
@Suite("Read accesses cannot write")
struct ReadOnlyReadTests {
    private func setUp(_ writer: some DatabaseWriter) throws {
        try writer.write { db in
            try db.execute("CREATE TABLE t (a INTEGER)")
            try db.execute("INSERT INTO t VALUES (1)")
        }
    }

    private func state(_ reader: some DatabaseReader) throws -> [Int] {
        try reader.read { db in
            try db.fetchAll(Int.self, "SELECT a FROM t ORDER BY a")
                + [db.fetchOne(Int.self, "PRAGMA user_version") ?? -1]
        }
    }

    @Test("A queue's read refuses every kind of write and keeps the database unchanged", arguments: writesInsideRead)
    func queueReadRefusesWrites(sql: String) throws {
        let dir = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: dir.path("db.sqlite"))
        try setUp(queue)
        #expect(throws: SQLiteError.self) { try queue.read { db in try db.execute(sql: sql) } }
        #expect(try state(queue) == [1, 0])
        // The connection is still usable for writes afterwards.
        try queue.write { db in try db.execute("INSERT INTO t VALUES (2)") }
        #expect(try state(queue) == [1, 2, 0])
    }

    @Test(
        "A pool reader's read refuses every kind of write and keeps the database unchanged",
        arguments: writesInsideRead)
    func poolReadRefusesWrites(sql: String) throws {
        let dir = try TemporaryDirectory()
        let pool = try DatabasePool(path: dir.path("db.sqlite"))
        try setUp(pool)
        #expect(throws: SQLiteError.self) { try pool.read { db in try db.execute(sql: sql) } }
        #expect(try state(pool) == [1, 0])
    }

    @Test("A write refused inside a read says it is read-only")
    func refusedWriteIsReadOnlyError() throws {
        let queue = try DatabaseQueue.inMemory()
        try setUp(queue)
        let error = #expect(throws: SQLiteError.self) {
            try queue.read { db in try db.execute("INSERT INTO t VALUES (5)") }
        }
        #expect(error?.code == .readOnly)
    }

    @Test("A write refused inside a read never runs: the rest of the read does not see it")
    func refusedWriteNeverRuns() throws {
        let queue = try DatabaseQueue.inMemory()
        try setUp(queue)
        let seen = try queue.read { db -> [Int] in
            #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (6)") }
            #expect(throws: SQLiteError.self) { try db.execute("PRAGMA user_version = 6") }
            return try db.fetchAll(Int.self, "SELECT a FROM t") + [db.fetchOne(Int.self, "PRAGMA user_version") ?? -1]
        }
        #expect(seen == [1, 0])
        #expect(try state(queue) == [1, 0])
    }

    @Test("A cached write statement prepared in a write is refused in a later read")
    func cachedWriteStatementRefusedInRead() throws {
        let queue = try DatabaseQueue.inMemory()
        try setUp(queue)
        try queue.write { db in try db.cachedStatement("INSERT INTO t VALUES (7)").execute() }
        #expect(throws: SQLiteError.self) {
            try queue.read { db in try db.cachedStatement("INSERT INTO t VALUES (7)").execute() }
        }
        #expect(try state(queue) == [1, 7, 0])
    }

    @Test("A cursor over a writing statement is refused inside a read")
    func cursorWriteRefusedInRead() throws {
        let queue = try DatabaseQueue.inMemory()
        try setUp(queue)
        #expect(throws: SQLiteError.self) {
            try queue.read { db in _ = try db.fetchAll("INSERT INTO t VALUES (8) RETURNING a") }
        }
        #expect(try state(queue) == [1, 0])
    }

    @Test("Reads keep using cached statements: no re-preparation across reads and writes")
    func readsKeepCachedStatements() throws {
        let queue = try DatabaseQueue.inMemory()
        try setUp(queue)
        let statement = try queue.read { db in try db.cachedStatement("SELECT a FROM t") }
        try queue.write { db in try db.execute("INSERT INTO t VALUES (3)") }
        for _ in 0..<3 {
            let again = try queue.read { db in
                _ = try db.fetchAll(Int.self, "SELECT a FROM t")
                return try db.cachedStatement("SELECT a FROM t")
            }
            #expect(again === statement)
        }
        #expect(statement.repreparedCount == 0)
    }
}

/// A PRAGMA that only reports a setting still runs inside a read.
@Suite("Read accesses may query settings")
struct ReadOnlyReadPragmaTests {
    @Test("PRAGMA journal_mode without argument runs in a read")
    func pragmaQueryAllowed() throws {
        let dir = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: dir.path("db.sqlite"))
        #expect(try queue.read { db in try db.fetchOne(String.self, "PRAGMA journal_mode") } == "delete")
    }
}
