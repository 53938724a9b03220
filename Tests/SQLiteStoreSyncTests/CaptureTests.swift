import Foundation
import SQLiteStore
import Testing

@testable import SQLiteStoreSync

/// The people table of the tests, and its sync declaration.
enum People {
    static let table = SyncedTable("people", columns: ["first", "last", "age", "picture"], largeColumns: ["picture"])
    static let schema = SyncSchema(tables: [table])
    static let create = """
        CREATE TABLE people (id INTEGER PRIMARY KEY, first TEXT, last TEXT, age INTEGER, picture BLOB)
        """

    /// A new in-memory replica with the people table and the engine installed.
    static func replica(_ schema: SyncSchema = schema) throws -> DatabaseQueue {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(sql: create)
            try schema.install(in: db)
        }
        return queue
    }
}

struct CaptureTests {
    private func outbox(_ db: Database) throws -> [(col: Int, value: SQLiteValue)] {
        try db.fetchAll("SELECT col, value FROM sqlitestore_sync_outbox ORDER BY seq").map {
            (try $0.decode(Int.self, at: 0), try $0[1])
        }
    }

    @Test func anInsertRecordsEveryColumnUnderANewGlobalIdentity() throws {
        let queue = try People.replica()
        try queue.write { db in
            try db.execute("INSERT INTO people (first, last, age) VALUES (\("Ada"), \("Lovelace"), \(36))")
            let entries = try outbox(db)
            #expect(entries.map(\.col) == [0, 1, 2, 3])
            #expect(entries.map(\.value) == [.text("Ada"), .text("Lovelace"), .integer(36), .null])
            let gid = try db.fetchOne(Data.self, "SELECT gid FROM sqlitestore_sync_rows WHERE local_id = 1")
            #expect(gid?.count == 16)
        }
    }

    /// Checks that every row's identity is a version 7 UUID holding the
    /// milliseconds of its first version, each made after the one before.
    private func expectTimeOrderedIdentities(_ db: Database, count: Int) throws {
        let rows = try db.fetchAll(
            """
            SELECT r.gid, c.clock FROM sqlitestore_sync_rows AS r
            JOIN sqlitestore_sync_cells AS c ON c.row = r.id AND c.col = 0
            ORDER BY r.local_id
            """)
        let gids = try rows.map { try $0.decode(Data.self, at: 0) }
        #expect(gids.count == count)
        #expect(Set(gids).count == count)
        for (gid, row) in zip(gids, rows) {
            let bytes = [UInt8](gid)
            #expect(bytes.count == 16)
            guard bytes.count == 16 else { continue }
            #expect(bytes[6] >> 4 == 7, "version 7")
            #expect(bytes[8] >> 6 == 2, "RFC 9562 variant")
            let milliseconds = bytes[0..<6].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            #expect(milliseconds == (try row.decode(Int64.self, at: 1)) >> 16)
        }
        // Made in order on one replica: each sorts after the one before.
        for (earlier, later) in zip(gids, gids.dropFirst()) {
            #expect(earlier.lexicographicallyPrecedes(later))
        }
    }

    @Test func newIdentitiesAreVersion7UUIDsThatGrowWithTheClock() throws {
        let queue = try People.replica()
        try queue.write { db in
            for index in 0..<300 { try db.execute("INSERT INTO people (age) VALUES (\(index))") }
            try expectTimeOrderedIdentities(db, count: 300)
        }
    }

    @Test func rowsWrittenBeforeInstallationGetTimeOrderedIdentities() throws {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(sql: People.create)
            for index in 0..<50 { try db.execute("INSERT INTO people (first) VALUES (\("Row \(index)"))") }
            try People.schema.install(in: db)
            try expectTimeOrderedIdentities(db, count: 50)
        }
    }

    @Test func anUpdateRecordsOnlyTheColumnsItChanged() throws {
        let queue = try People.replica()
        try queue.write { db in
            try db.execute("INSERT INTO people (first, last, age) VALUES (\("Ada"), \("Lovelace"), \(36))")
            try db.execute("DELETE FROM sqlitestore_sync_outbox")
            try db.execute("UPDATE people SET age = \(37), first = \("Ada") WHERE id = 1")
            #expect(try outbox(db).map(\.col) == [2])
            #expect(try outbox(db).map(\.value) == [.integer(37)])
        }
    }

    @Test func aSecondEditOfAColumnReplacesTheFirstInTheOutbox() throws {
        let queue = try People.replica()
        try queue.write { db in
            try db.execute("INSERT INTO people (first) VALUES (\("Ada"))")
            try db.execute("UPDATE people SET first = \("Augusta") WHERE id = 1")
            let firsts = try outbox(db).filter { $0.col == 0 }
            #expect(firsts.map(\.value) == [.text("Augusta")])
        }
    }

    @Test func versionsGrowWithEachWrite() throws {
        let queue = try People.replica()
        try queue.write { db in
            try db.execute("INSERT INTO people (first) VALUES (\("Ada"))")
            let first = try db.fetchOne(Int64.self, "SELECT clock FROM sqlitestore_sync_cells WHERE col = 0")!
            try db.execute("UPDATE people SET first = \("Augusta") WHERE id = 1")
            let second = try db.fetchOne(Int64.self, "SELECT clock FROM sqlitestore_sync_cells WHERE col = 0")!
            #expect(second > first)
            // Milliseconds since 1970 in the high bits: after 2020.
            #expect(second >> 16 > 1_577_836_800_000)
        }
    }

    @Test func aDeleteLeavesATombstoneAndDropsTheRowsPendingEdits() throws {
        let queue = try People.replica()
        try queue.write { db in
            try db.execute("INSERT INTO people (first) VALUES (\("Ada"))")
            try db.execute("DELETE FROM people WHERE id = 1")
            #expect(try outbox(db).map(\.col) == [Bookkeeping.deleteColumn])
            let row = try db.fetchOne("SELECT local_id, deleted FROM sqlitestore_sync_rows")!
            #expect(try row[0] == .null)
            #expect(try row[1] == .integer(1))
            // The local ID can be used again: a new row, a new identity.
            try db.execute("INSERT INTO people (id, first) VALUES (1, \("Grace"))")
            #expect(try db.fetchOne(Int.self, "SELECT COUNT(DISTINCT gid) FROM sqlitestore_sync_rows") == 2)
        }
    }

    @Test func replacingARowRewritesItsColumnsUnderTheSameIdentity() throws {
        let queue = try People.replica()
        try queue.write { db in
            try db.execute("INSERT INTO people (first, age) VALUES (\("Ada"), \(36))")
            let gid = try db.fetchOne(Data.self, "SELECT gid FROM sqlitestore_sync_rows WHERE local_id = 1")
            try db.execute("INSERT OR REPLACE INTO people (id, first) VALUES (1, \("Augusta"))")
            #expect(try db.fetchOne(Data.self, "SELECT gid FROM sqlitestore_sync_rows WHERE local_id = 1") == gid)
            #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM sqlitestore_sync_rows") == 1)
            #expect(try outbox(db).map(\.value) == [.text("Augusta"), .null, .null, .null])
            #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM sqlitestore_sync_cells") == 4)
        }
    }

    /// With recursive triggers on, a replace deletes the old row through
    /// its delete trigger: the old identity becomes a tombstone, the new
    /// row gets an identity of its own, and the outbox holds the deletion
    /// and the new row's values. Either way one live identity remains.
    @Test func replacingARowWithRecursiveTriggersDeletesItAndRecordsANewOne() throws {
        let queue = try People.replica()
        try queue.writeWithoutTransaction { db in try db.execute("PRAGMA recursive_triggers = ON") }
        try queue.write { db in
            try db.execute("INSERT INTO people (first, age) VALUES (\("Ada"), \(36))")
            let old = try db.fetchOne(Data.self, "SELECT gid FROM sqlitestore_sync_rows WHERE local_id = 1")
            try db.execute("DELETE FROM sqlitestore_sync_outbox")
            try db.execute("INSERT OR REPLACE INTO people (id, first) VALUES (1, \("Augusta"))")
            let new = try db.fetchOne(Data.self, "SELECT gid FROM sqlitestore_sync_rows WHERE local_id = 1")
            #expect(new != nil && new != old)
            #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM sqlitestore_sync_rows WHERE local_id = 1") == 1)
            #expect(try db.fetchOne(Int.self, "SELECT deleted FROM sqlitestore_sync_rows WHERE gid = \(old)") == 1)
            let entries = try db.fetchAll("SELECT gid, col, value FROM sqlitestore_sync_outbox ORDER BY seq").map {
                (try $0.decode(Data.self, at: 0), try $0.decode(Int.self, at: 1), try $0[2])
            }
            #expect(entries.map(\.0) == [old, new, new, new, new])
            #expect(entries.map(\.1) == [-1, 0, 1, 2, 3])
            #expect(entries.map(\.2) == [.null, .text("Augusta"), .null, .null, .null])
        }
    }

    @Test func changingALocalIDKeepsTheGlobalIdentity() throws {
        let queue = try People.replica()
        try queue.write { db in
            try db.execute("INSERT INTO people (first) VALUES (\("Ada"))")
            let gid = try db.fetchOne(Data.self, "SELECT gid FROM sqlitestore_sync_rows WHERE local_id = 1")
            try db.execute("UPDATE people SET id = 7 WHERE id = 1")
            #expect(try db.fetchOne(Data.self, "SELECT gid FROM sqlitestore_sync_rows WHERE local_id = 7") == gid)
        }
    }

    @Test func writesAppliedFromSyncAreNotCaptured() throws {
        let queue = try People.replica()
        try queue.write { db in
            try db.execute("UPDATE sqlitestore_sync_state SET applying = 1")
            try db.execute("INSERT INTO people (first) VALUES (\("Ada"))")
            try db.execute("UPDATE sqlitestore_sync_state SET applying = 0")
            #expect(try outbox(db).isEmpty)
        }
    }

    @Test func rowsWrittenBeforeInstallationAreQueued() throws {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(sql: People.create)
            try db.execute("INSERT INTO people (first, age) VALUES (\("Ada"), \(36))")
            try People.schema.install(in: db)
            #expect(try outbox(db).map(\.value) == [.text("Ada"), .null, .integer(36), .null])
            // Installing again queues nothing twice.
            try People.schema.install(in: db)
            #expect(try outbox(db).count == 4)
        }
    }

    @Test func aDeclarationThatDoesNotMatchTheTableIsRefused() throws {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(sql: People.create)
            let wrong = SyncSchema(tables: [SyncedTable("people", columns: ["first", "nickname"])])
            #expect {
                try wrong.install(in: db)
            } throws: { ($0 as? SyncError)?.kind == .invalidDeclaration }
            let missing = SyncSchema(tables: [SyncedTable("pets", columns: ["name"])])
            #expect {
                try missing.install(in: db)
            } throws: { ($0 as? SyncError)?.kind == .invalidDeclaration }
        }
    }
}
