import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

@Suite("DatabasePool", .tags(.concurrency))
struct DatabasePoolTests {
    /// A pool over a new file with a table `t`, in a directory removed with
    /// the fixture.
    private final class Fixture: Sendable {
        let directory: TemporaryDirectory
        let pool: DatabasePool
        var path: String { pool.path }

        init(maximumReaderCount: Int = 4) throws {
            directory = try TemporaryDirectory()
            pool = try DatabasePool(path: directory.path("pool.sqlite"), maximumReaderCount: maximumReaderCount)
            try pool.write { db in try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a)") }
        }
    }

    private static let countSQL = "SELECT COUNT(*) FROM t"

    // MARK: - Opening

    @Test("A pool puts the file in WAL mode")
    func walMode() throws {
        let fixture = try Fixture()
        #expect(try fixture.pool.read { db in try db.fetchOne(String.self, "PRAGMA journal_mode") } == "wal")
        #expect(try Database(path: fixture.path).fetchOne(String.self, "PRAGMA journal_mode") == "wal")
    }

    @Test(
        "A pool refuses databases other connections cannot share",
        arguments: [":memory:", "", "file::memory:?cache=shared"])
    func refusesPrivateDatabases(path: String) throws {
        #expect {
            try DatabasePool(path: path)
        } throws: { error in
            isMisuse(error, mentioning: "use DatabaseQueue")
        }
    }

    @Test("A pool needs at least one reader", arguments: [0, -1])
    func refusesNoReaders(count: Int) throws {
        let directory = try TemporaryDirectory()
        #expect {
            try DatabasePool(path: directory.path("p.sqlite"), maximumReaderCount: count)
        } throws: { error in
            isMisuse(error, mentioning: "at least one reader")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("p.sqlite")))
    }

    @Test("A pool on a path it cannot open fails at init")
    func badPath() throws {
        let directory = try TemporaryDirectory()
        #expect {
            try DatabasePool(path: directory.path("missing/p.sqlite"))
        } throws: { error in
            (error as? SQLiteError)?.code == .cantOpen
        }
    }

    @Test("The default reader count suits the machine")
    func defaultReaderCount() throws {
        let count = DatabasePool.defaultMaximumReaderCount
        #expect(count >= 4 && count <= 16)
        #expect(count >= min(16, ProcessInfo.processInfo.activeProcessorCount))
        let fixture = try Fixture(maximumReaderCount: 2)
        #expect(fixture.pool.maximumReaderCount == 2)
    }

    // MARK: - Reading and writing

    @Test("A read cannot write")
    func readIsReadOnly() async throws {
        let fixture = try Fixture()
        await #expect {
            try await fixture.pool.read { db in try db.execute("INSERT INTO t (a) VALUES (1)") }
        } throws: { error in
            (error as? SQLiteError)?.code == .readOnly
        }
        #expect(try await fixture.pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 0)
    }

    @Test("A write whose closure throws is rolled back")
    func writeRollsBack() throws {
        let fixture = try Fixture()
        struct Failure: Error {}
        #expect(throws: Failure.self) {
            try fixture.pool.write { db in
                try db.execute("INSERT INTO t (a) VALUES (1)")
                throw Failure()
            }
        }
        #expect(try fixture.pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 0)
    }

    @Test("Every read that starts after a write returns sees it, sync and async")
    func readYourWrites() async throws {
        let fixture = try Fixture()
        let pool = fixture.pool
        for expected in 1...50 {
            try await pool.write { db in try db.execute("INSERT INTO t (a) VALUES (?)", arguments: [expected]) }
            #expect(try await pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == expected)
        }
        try await onOwnThread {
            for expected in 51...100 {
                try pool.write { db in try db.execute("INSERT INTO t (a) VALUES (?)", arguments: [expected]) }
                #expect(try pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == expected)
            }
        }
    }

    @Test("writeWithoutTransaction runs on the writer outside a transaction")
    func writeWithoutTransaction() async throws {
        let fixture = try Fixture()
        let inside = try await fixture.pool.writeWithoutTransaction { db in
            try db.execute("INSERT INTO t (a) VALUES (1)")
            return db.isInsideTransaction
        }
        #expect(!inside)
        #expect(
            try await fixture.pool.writeWithoutTransaction { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 1)
    }

    // MARK: - Concurrency

    @Test("Reads run at the same time as each other")
    func concurrentReads() async throws {
        let fixture = try Fixture(maximumReaderCount: 2)
        let firstIn = Gate("first read running")
        let secondIn = Gate("second read running")
        // Each read waits inside its closure for the other: serialized
        // reads would never both get in.
        async let first: Int = fixture.pool.read { db in
            firstIn.open()
            try secondIn.waitBlocking()
            return try db.fetchOne(Int.self, sql: Self.countSQL) ?? -1
        }
        async let second: Int = fixture.pool.read { db in
            secondIn.open()
            try firstIn.waitBlocking()
            return try db.fetchOne(Int.self, sql: Self.countSQL) ?? -1
        }
        #expect(try await [first, second] == [0, 0])
    }

    @Test("Reads wait in line when every reader is busy")
    func readerLimit() async throws {
        let fixture = try Fixture(maximumReaderCount: 1)
        let held = try await HeldAccess.start { try await fixture.pool.read($0) }
        let waiting = Task { try await fixture.pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } }
        try #require(await eventually { fixture.pool.waitingReaderCount == 1 }, "read in line")
        // Writes do not need a reader.
        try await fixture.pool.write { db in try db.execute("INSERT INTO t (a) VALUES (1)") }
        try await held.finish()
        #expect(try await waiting.value == 1)
    }

    @Test("A write runs and commits while a read is in progress, which does not see it")
    func writeDuringRead() async throws {
        let fixture = try Fixture()
        let pool = fixture.pool
        let firstCount = Gate("first count")
        let written = Gate("written")
        let reading = Task {
            try await pool.read { db -> [Int] in
                let before = try db.fetchOne(Int.self, sql: Self.countSQL) ?? -1
                firstCount.open()
                try written.waitBlocking()
                let after = try db.fetchOne(Int.self, sql: Self.countSQL) ?? -1
                return [before, after]
            }
        }
        try await firstCount.wait()
        // The read is holding its snapshot; the write does not wait for it.
        try await pool.write { db in try db.execute("INSERT INTO t (a) VALUES (1)") }
        written.open()
        #expect(try await reading.value == [0, 0])
        #expect(try await pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 1)
    }

    @Test("A read keeps one snapshot across its statements while writes commit")
    func snapshotIsolation() async throws {
        let fixture = try Fixture()
        let pool = fixture.pool
        try await pool.write { db in try db.execute("INSERT INTO t (a) VALUES (10)") }
        let started = Gate("read started")
        let written = Gate("written")
        let reading = Task {
            try await pool.read { db -> [Int] in
                let sum = try db.fetchOne(Int.self, "SELECT SUM(a) FROM t") ?? -1
                started.open()
                try written.waitBlocking()
                // Several writes committed since: still the same database.
                let count = try db.fetchOne(Int.self, sql: Self.countSQL) ?? -1
                let rows = try db.fetchAll(Int.self, "SELECT a FROM t ORDER BY id")
                return [sum, count] + rows
            }
        }
        try await started.wait()
        for value in [20, 30] {
            try await pool.write { db in try db.execute("INSERT INTO t (a) VALUES (?)", arguments: [value]) }
        }
        try await pool.write { db in try db.execute("UPDATE t SET a = 0") }
        written.open()
        #expect(try await reading.value == [10, 1, 10])
        let now = try await pool.read { db in try db.fetchAll(Int.self, "SELECT a FROM t ORDER BY id") }
        #expect(now == [0, 0, 0])
    }

    @Test("write(_:thenRead:) reads what its write committed, and no later write")
    func writeThenRead() async throws {
        let fixture = try Fixture()
        let pool = fixture.pool
        let snapshotTaken = Gate("snapshot taken")
        let laterWrite = Gate("later write committed")
        let reading = Task {
            try await pool.write { db -> Int64 in
                try db.execute("INSERT INTO t (a) VALUES ('mine')")
                return db.lastInsertedRowID
            } thenRead: { db, id -> [String] in
                snapshotTaken.open()
                // The writer is free: another write commits meanwhile.
                try laterWrite.waitBlocking()
                let mine = try db.fetchOne(String.self, "SELECT a FROM t WHERE id = ?", arguments: [id])
                return [mine ?? "missing"] + (try db.fetchAll(String.self, "SELECT a FROM t ORDER BY id"))
            }
        }
        try await snapshotTaken.wait()
        try await pool.write { db in try db.execute("INSERT INTO t (a) VALUES ('later')") }
        laterWrite.open()
        #expect(try await reading.value == ["mine", "mine"])
        #expect(try await pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 2)
    }

    @Test("Synchronous write(_:thenRead:) sees its write; a failed write skips the read")
    func writeThenReadSync() throws {
        let fixture = try Fixture()
        let count = try fixture.pool.write { db in
            try db.execute("INSERT INTO t (a) VALUES (1)")
        } thenRead: { db, _ in
            try db.fetchOne(Int.self, sql: Self.countSQL)
        }
        #expect(count == 1)
        struct Failure: Error {}
        let readRan = Flag()
        #expect(throws: Failure.self) {
            try fixture.pool.write { db in
                try db.execute("INSERT INTO t (a) VALUES (2)")
                throw Failure()
            } thenRead: { _, _ in
                readRan.set()
            }
        }
        #expect(!readRan.isSet)
        // A failing read leaves the write committed.
        #expect(throws: Failure.self) {
            try fixture.pool.write { db in
                try db.execute("INSERT INTO t (a) VALUES (3)")
            } thenRead: { _, _ in
                throw Failure()
            }
        }
        #expect(try fixture.pool.read { db in try db.fetchAll(Int.self, "SELECT a FROM t ORDER BY id") } == [1, 3])
        // Neither the writer nor the reader was left held.
        #expect(try fixture.pool.write { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 2)
    }

    @Test("Two pools on one file, like two processes, write at once without SQLITE_BUSY")
    func twoPoolsOneFile() async throws {
        let fixture = try Fixture()
        let other = try DatabasePool(path: fixture.path)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for pool in [fixture.pool, other] {
                group.addTask {
                    for index in 0..<100 {
                        try await pool.write { db in
                            try db.execute("INSERT INTO t (a) VALUES (?)", arguments: [index])
                        }
                        _ = try await pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await other.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 200)
    }

    // MARK: - Re-entrancy

    @Test("Using the pool from inside one of its access closures throws instead of deadlocking")
    func reentrancy() throws {
        let fixture = try Fixture(maximumReaderCount: 1)
        let pool = fixture.pool
        #expect {
            try pool.read { _ in try pool.read { _ in 1 } }
        } throws: { error in
            isMisuse(error, mentioning: "DatabasePool.read was called from inside")
        }
        #expect {
            try pool.read { _ in try pool.write { _ in 1 } }
        } throws: { error in
            isMisuse(error, mentioning: "DatabasePool.write")
        }
        #expect {
            try pool.write { _ in try pool.read { _ in 1 } }
        } throws: { error in
            isMisuse(error, mentioning: "DatabasePool.read")
        }
        #expect {
            try pool.write { _ in
                1
            } thenRead: { _, _ in
                try pool.write { _ in 1 }
            }
        } throws: { error in
            isMisuse(error, mentioning: "DatabasePool.write")
        }
        #expect {
            try pool.read { _ in
                try pool.write { _ in
                    1
                } thenRead: { _, _ in
                    1
                }
            }
        } throws: { error in
            isMisuse(error, mentioning: "write(_:thenRead:)")
        }
        #expect {
            try pool.read { _ in try pool.close() }
        } throws: { error in
            isMisuse(error, mentioning: "DatabasePool.close")
        }
        #expect(try pool.write { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 0)
        #expect(try pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 0)
    }

    // MARK: - Cancellation

    @Test("Cancelling an async read interrupts its long query; the reader stays usable", .timeLimit(.minutes(2)))
    func cancelLongRead() async throws {
        let fixture = try Fixture(maximumReaderCount: 1)
        try await expectCancellationWhileRunning { running in
            try await fixture.pool.read { db in try db.runEndless(signalling: running) }
        }
        try await fixture.pool.write { db in try db.execute("INSERT INTO t (a) VALUES (1)") }
        // The one reader: out of its old snapshot.
        #expect(try await fixture.pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 1)
    }

    @Test("Cancelling an async write interrupts it and rolls it back", .timeLimit(.minutes(2)))
    func cancelLongWrite() async throws {
        let fixture = try Fixture()
        try await expectCancellationWhileRunning { running in
            try await fixture.pool.write { db in
                try db.execute("INSERT INTO t (a) VALUES ('undone')")
                try db.runEndless("INSERT INTO t (a) \(endlessQuery)", signalling: running)
            }
        }
        #expect(try await fixture.pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 0)
        try await fixture.pool.write { db in try db.execute("INSERT INTO t (a) VALUES ('kept')") }
        #expect(try await fixture.pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 1)
    }

    @Test("Cancelling write(_:thenRead:) during its read interrupts the read; the write stays", .timeLimit(.minutes(2)))
    func cancelThenRead() async throws {
        let fixture = try Fixture()
        try await expectCancellationWhileRunning { running in
            try await fixture.pool.write { db in
                try db.execute("INSERT INTO t (a) VALUES (1)")
            } thenRead: { db, _ in
                try db.runEndless(signalling: running)
            }
        }
        #expect(try await fixture.pool.read { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 1)
        #expect(try await fixture.pool.write { db in try db.fetchOne(Int.self, sql: Self.countSQL) } == 1)
    }

    @Test("A read cancelled while every reader is busy never runs")
    func cancelWhileWaitingForReader() async throws {
        let fixture = try Fixture(maximumReaderCount: 1)
        let held = try await HeldAccess.start { try await fixture.pool.read($0) }
        let ran = Flag()
        let waiting = Task { try await fixture.pool.read { _ in ran.set() } }
        try #require(await eventually { fixture.pool.waitingReaderCount == 1 }, "read in line")
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        try await held.finish()
        #expect(!ran.isSet)
        #expect(fixture.pool.waitingReaderCount == 0)
    }

    // MARK: - Closing

    @Test("Using a closed pool throws, sync and async")
    func useAfterClose() async throws {
        let fixture = try Fixture()
        await fixture.pool.close()
        let pool = fixture.pool
        await #expect {
            try await pool.read { _ in 1 }
        } throws: { error in
            isMisuse(error, mentioning: "database pool is closed")
        }
        await #expect {
            try await pool.write { _ in 1 }
        } throws: { error in
            isMisuse(error, mentioning: "closed")
        }
        await #expect {
            try await pool.write { _ in
                1
            } thenRead: { _, _ in
                1
            }
        } throws: { error in
            isMisuse(error, mentioning: "closed")
        }
        try await onOwnThread {
            #expect {
                try pool.read { _ in 1 }
            } throws: { error in
                isMisuse(error, mentioning: "closed")
            }
            #expect {
                try pool.writeWithoutTransaction { _ in 1 }
            } throws: { error in
                isMisuse(error, mentioning: "closed")
            }
            try pool.close()
        }
        await pool.close()
    }

    @Test("close() waits for running reads and writes, then closes every connection")
    func closeWaits() async throws {
        let fixture = try Fixture()
        let pool = fixture.pool
        let reading = Gate("reading")
        let writing = Gate("writing")
        let release = Gate("release")
        let read = Task {
            try await pool.read { db -> [Int?] in
                let before = try db.fetchOne(Int.self, sql: Self.countSQL)
                reading.open()
                try release.waitBlocking()
                return [before, try db.fetchOne(Int.self, sql: Self.countSQL)]
            }
        }
        let write = Task {
            try await pool.write { db in
                writing.open()
                try release.waitBlocking()
                try db.execute("INSERT INTO t (a) VALUES (1)")
            }
        }
        try await reading.wait()
        try await writing.wait()
        let closing = Task { try await onOwnThread { try pool.close() } }
        try #require(await eventually { pool.isClosing }, "close begun")
        release.open()
        #expect(try await read.value == [0, 0])
        try await write.value
        try await closing.value
        // Every connection is closed, the writer last: it checkpointed the
        // WAL into the database file and deleted it.
        #expect(!FileManager.default.fileExists(atPath: fixture.path + "-wal"))
        // The write was committed before the writer closed.
        let check = try Database(path: fixture.path)
        #expect(try check.fetchOne(Int.self, sql: Self.countSQL) == 1)
    }

    @Test("write(_:thenRead:) accepted before close() completes its read")
    func closeDuringWriteThenRead() async throws {
        let fixture = try Fixture()
        let pool = fixture.pool
        let writing = Gate("writing")
        let release = Gate("release")
        let task = Task {
            try await pool.write { db in
                writing.open()
                try release.waitBlocking()
                try db.execute("INSERT INTO t (a) VALUES (1)")
            } thenRead: { db, _ in
                try db.fetchOne(Int.self, sql: Self.countSQL)
            }
        }
        try await writing.wait()
        let closing = Task { await pool.close() }
        try #require(await eventually { pool.isClosing }, "close begun")
        release.open()
        #expect(try await task.value == 1)
        await closing.value
    }
}
