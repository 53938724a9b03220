import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

@Suite("DatabaseQueue", .tags(.concurrency))
struct DatabaseQueueTests {
    // MARK: - Reading and writing

    @Test("A write is committed and a later read sees it")
    func writeThenRead() throws {
        let queue = try makeQueue()
        let id = try queue.write { db in
            try db.execute("INSERT INTO t (a) VALUES (?)", arguments: ["x"])
            return db.lastInsertedRowID
        }
        let value = try queue.read { db in try db.fetchOne(String.self, "SELECT a FROM t WHERE id = ?", arguments: [id])
        }
        #expect(value == "x")
    }

    @Test("Async write and read run on the connection and return their results")
    func asyncWriteThenRead() async throws {
        let queue = try makeQueue()
        try await queue.write { db in try db.execute("INSERT INTO t (a) VALUES (1), (2)") }
        let sum = try await queue.read { db in try db.fetchOne(Int.self, "SELECT SUM(a) FROM t") }
        #expect(sum == 3)
    }

    @Test("A write whose closure throws is rolled back and its error rethrown")
    func writeRollsBack() throws {
        let queue = try makeQueue()
        struct Failure: Error {}
        #expect(throws: Failure.self) {
            try queue.write { db in
                try db.execute("INSERT INTO t (a) VALUES (1)")
                throw Failure()
            }
        }
        #expect(try rowCount(queue) == 0)
        // The connection is left outside any transaction.
        try queue.write { db in try db.execute("INSERT INTO t (a) VALUES (2)") }
        #expect(try rowCount(queue) == 1)
    }

    @Test("An async write whose closure throws is rolled back")
    func asyncWriteRollsBack() async throws {
        let queue = try makeQueue()
        await #expect(throws: SQLiteError.self) {
            try await queue.write { db in
                try db.execute("INSERT INTO t (a) VALUES (1)")
                try db.execute("INSERT INTO t (id, a) VALUES (1, 'duplicate')")
            }
        }
        #expect(try await queue.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") } == 0)
    }

    @Test("A write runs in an immediate transaction")
    func writeIsImmediate() throws {
        let dir = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: dir.path("q.sqlite"))
        try queue.write { db in try db.execute("CREATE TABLE t (a)") }
        // Inside the write, another connection cannot start writing: the
        // write lock was taken by BEGIN IMMEDIATE before anything ran.
        var configuration = Configuration()
        configuration.busyTimeout = .zero
        let other = try Database(path: dir.path("q.sqlite"), configuration: configuration)
        try queue.write { db in
            #expect(db.isInsideTransaction)
            #expect {
                try other.execute("BEGIN IMMEDIATE")
            } throws: { error in
                (error as? SQLiteError)?.code == .busy
            }
        }
    }

    @Test("A read that writes is rolled back and fails; the connection can write again afterwards")
    func readIsReadOnly() throws {
        let queue = try makeQueue()
        #expect {
            try queue.read { db in try db.execute("INSERT INTO t (a) VALUES (1)") }
        } throws: { error in
            (error as? SQLiteError)?.code == .readOnly
        }
        #expect {
            try queue.read { db in try db.execute("CREATE TABLE other (a)") }
        } throws: { error in
            (error as? SQLiteError)?.code == .readOnly
        }
        #expect(try rowCount(queue) == 0)
        #expect(try queue.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM sqlite_master") } == 1)
        try queue.write { db in try db.execute("INSERT INTO t (a) VALUES (1)") }
        #expect(try rowCount(queue) == 1)
    }

    @Test("Reads and writes keep the connection's prepared statements: nothing is re-prepared")
    func statementsSurviveAccesses() throws {
        let queue = try makeQueue()
        let sql = "SELECT COUNT(*) FROM t"
        for _ in 0..<3 {
            _ = try queue.read { db in try db.fetchOne(Int.self, sql: sql) }
            try queue.write { db in try db.execute("INSERT INTO t (a) VALUES (1)") }
            _ = try queue.write { db in try db.fetchOne(Int.self, sql: sql) }
        }
        let reprepared = try queue.read { db in
            sqlite3_stmt_status(try db.cachedStatement(sql: sql).sqliteStatement, SQLITE_STMTSTATUS_REPREPARE, 0)
        }
        #expect(reprepared == 0)
    }

    @Test("A read runs in a transaction, closed when it returns")
    func readTransaction() throws {
        let queue = try makeQueue()
        #expect(try queue.read { db in db.isInsideTransaction })
        #expect(try queue.writeWithoutTransaction { db in db.isInsideTransaction } == false)
    }

    @Test("writeWithoutTransaction runs what cannot run in a transaction")
    func writeWithoutTransaction() throws {
        let dir = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: dir.path("v.sqlite"))
        try queue.writeWithoutTransaction { db in
            try db.execute("CREATE TABLE t (a); INSERT INTO t VALUES (1)")
            try db.execute("VACUUM")
        }
        #expect(throws: SQLiteError.self) {
            try queue.write { db in try db.execute("VACUUM") }
        }
        #expect(try queue.read { db in try db.fetchOne(Int.self, "SELECT a FROM t") } == 1)
    }

    @Test("writeWithoutTransaction rolls back a transaction its closure leaves open, and says so")
    func writeWithoutTransactionLeftOpen() async throws {
        let queue = try makeQueue()
        #expect {
            try queue.writeWithoutTransaction { db in
                try db.execute("BEGIN; INSERT INTO t (a) VALUES (1)")
            }
        } throws: { error in
            isMisuse(error, mentioning: "transaction open")
        }
        await #expect {
            try await queue.writeWithoutTransaction { db in
                try db.execute("BEGIN; INSERT INTO t (a) VALUES (1)")
            }
        } throws: { error in
            isMisuse(error, mentioning: "rolled back")
        }
        #expect(try rowCount(queue) == 0)
        try await queue.write { db in try db.execute("INSERT INTO t (a) VALUES (2)") }
        #expect(try rowCount(queue) == 1)
    }

    @Test("An in-memory queue keeps its data between accesses; a bad path fails at init")
    func openingErrors() throws {
        let queue = try makeQueue()
        try queue.write { db in try db.execute("INSERT INTO t (a) VALUES (1)") }
        #expect(try rowCount(queue) == 1)
        let dir = try TemporaryDirectory()
        #expect {
            try DatabaseQueue(path: dir.path("missing/dir/q.sqlite"))
        } throws: { error in
            (error as? SQLiteError)?.code == .cantOpen
        }
    }

    // MARK: - Serialization

    @Test("Synchronous writes from many threads are serialized: no update is lost")
    func threadsAreSerialized() async throws {
        let queue = try DatabaseQueue.inMemory()
        try await queue.write { db in try db.execute("CREATE TABLE counter (n); INSERT INTO counter VALUES (0)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try await onOwnThread {
                        for _ in 0..<100 {
                            try queue.write { db in
                                // Read, then write: only safe if nothing runs in between.
                                let n = try db.fetchOne(Int.self, "SELECT n FROM counter") ?? 0
                                try db.execute("UPDATE counter SET n = ?", arguments: [n + 1])
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await queue.read { db in try db.fetchOne(Int.self, "SELECT n FROM counter") } == 400)
    }

    @Test("Accesses waiting for the connection are served in the order they asked")
    func firstComeFirstServed() async throws {
        let queue = try makeQueue()
        let held = try await HeldAccess.start { try await queue.write($0) }
        var writes: [Task<Void, any Error>] = []
        for value in 1...5 {
            writes.append(
                Task {
                    try await queue.write { db in try db.execute("INSERT INTO t (a) VALUES (?)", arguments: [value]) }
                })
            try #require(await eventually { queue.waitingCount == value }, "write \(value) in line")
        }
        try await held.finish()
        for write in writes { try await write.value }
        let values = try await queue.read { db in try db.fetchAll(Int.self, "SELECT a FROM t ORDER BY id") }
        #expect(values == [1, 2, 3, 4, 5])
    }

    // MARK: - Re-entrancy

    @Test("Reading or writing from inside an access of the same queue throws instead of deadlocking")
    func reentrancy() throws {
        let queue = try makeQueue()
        #expect {
            try queue.write { _ in try queue.read { _ in 1 } }
        } throws: { error in
            isMisuse(error, mentioning: "DatabaseQueue.read was called from inside")
        }
        #expect {
            try queue.read { _ in try queue.write { _ in 1 } }
        } throws: { error in
            isMisuse(error, mentioning: "DatabaseQueue.write")
        }
        #expect {
            try queue.write { _ in try queue.writeWithoutTransaction { _ in 1 } }
        } throws: { error in
            isMisuse(error, mentioning: "writeWithoutTransaction")
        }
        #expect {
            try queue.write { _ in try queue.close() }
        } throws: { error in
            isMisuse(error, mentioning: "DatabaseQueue.close")
        }
        // The failed attempts left the queue usable and open.
        try queue.write { db in try db.execute("INSERT INTO t (a) VALUES (1)") }
        #expect(try rowCount(queue) == 1)
    }

    @Test("Re-entrant use is detected inside async accesses too")
    func reentrancyInsideAsyncAccess() async throws {
        let queue = try makeQueue()
        await #expect {
            try await queue.write { _ in try queue.read { _ in 1 } }
        } throws: { error in
            isMisuse(error, mentioning: "DatabaseQueue.read")
        }
        #expect(try await queue.read { _ in 1 } == 1)
    }

    @Test("Accessing another queue from inside an access is allowed")
    func otherQueueInside() throws {
        let first = try makeQueue()
        let second = try makeQueue()
        try first.write { db in
            let values = try second.read { db in try db.fetchAll(Int.self, "SELECT a FROM t") }
            try db.execute("INSERT INTO t (a) VALUES (?)", arguments: [values.count])
        }
        #expect(try rowCount(first) == 1)
    }

    // MARK: - Cancellation

    @Test("Cancelling an async read interrupts its long query; the queue stays usable", .timeLimit(.minutes(2)))
    func cancelLongRead() async throws {
        let queue = try makeQueue()
        try await expectCancellationWhileRunning { running in
            try await queue.read { db in try db.runEndless(signalling: running) }
        }
        // Same connection: out of its read transaction and writable again.
        try await queue.write { db in try db.execute("INSERT INTO t (a) VALUES (1)") }
        #expect(try await queue.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") } == 1)
    }

    @Test("Cancelling an async write interrupts it and rolls back what it did", .timeLimit(.minutes(2)))
    func cancelLongWrite() async throws {
        let queue = try makeQueue()
        try await expectCancellationWhileRunning { running in
            try await queue.write { db in
                try db.execute("INSERT INTO t (a) VALUES ('undone')")
                try db.runEndless("INSERT INTO t (a) \(endlessQuery)", signalling: running)
            }
        }
        #expect(try rowCount(queue) == 0)
        try await queue.write { db in try db.execute("INSERT INTO t (a) VALUES ('kept')") }
        #expect(try rowCount(queue) == 1)
    }

    @Test("A write cancelled between its statements is rolled back when its closure returns")
    func cancelBetweenStatements() async throws {
        let queue = try makeQueue()
        let inserted = Gate("inserted")
        let cancelled = Gate("cancelled")
        let task = Task {
            try await queue.write { db in
                try db.execute("INSERT INTO t (a) VALUES (1)")
                inserted.open()
                try cancelled.waitBlocking()
                // Too short for any interruption to reach.
                try db.execute("INSERT INTO t (a) VALUES (2)")
            }
        }
        try await inserted.wait()
        task.cancel()
        cancelled.open()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try rowCount(queue) == 0)
    }

    @Test("An access cancelled while waiting for the connection never runs")
    func cancelWhileWaiting() async throws {
        let queue = try makeQueue()
        let held = try await HeldAccess.start { try await queue.write($0) }
        let ran = Flag()
        let waiting = Task {
            try await queue.write { db in
                ran.set()
                try db.execute("INSERT INTO t (a) VALUES (1)")
            }
        }
        try #require(await eventually { queue.waitingCount == 1 }, "write in line")
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(queue.waitingCount == 0)
        try await held.finish()
        #expect(!ran.isSet)
        #expect(try rowCount(queue) == 0)
    }

    @Test("An access from an already cancelled task throws without running")
    func alreadyCancelled() async throws {
        let queue = try makeQueue()
        let ran = Flag()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await queue.write { db in
                ran.set()
                try db.execute("INSERT INTO t (a) VALUES (1)")
            }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(!ran.isSet)
        #expect(try rowCount(queue) == 0)
    }

    // MARK: - Closing

    @Test("Using a closed queue throws; closing twice is harmless")
    func useAfterClose() throws {
        let queue = try makeQueue()
        try queue.close()
        #expect {
            try queue.read { _ in 1 }
        } throws: { error in
            isMisuse(error, mentioning: "database queue is closed")
        }
        #expect {
            try queue.write { _ in 1 }
        } throws: { error in
            isMisuse(error, mentioning: "closed")
        }
        try queue.close()
    }

    @Test("Using a queue closed by the async close() throws in async accesses")
    func asyncUseAfterClose() async throws {
        let queue = try makeQueue()
        await queue.close()
        await #expect {
            try await queue.read { _ in 1 }
        } throws: { error in
            isMisuse(error, mentioning: "closed")
        }
        await #expect {
            try await queue.writeWithoutTransaction { _ in 1 }
        } throws: { error in
            isMisuse(error, mentioning: "closed")
        }
        await queue.close()
    }

    @Test("close() waits for the running access and those in line, then closes the connection")
    func closeWaits() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("close.sqlite")
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in try db.execute("CREATE TABLE t (a)") }
        let holding = Gate("holding")
        let release = Gate("release")
        let running = Task {
            try await queue.write { db in
                holding.open()
                try release.waitBlocking()
                try db.execute("INSERT INTO t VALUES ('running')")
            }
        }
        try await holding.wait()
        let inLine = Task { try await queue.write { db in try db.execute("INSERT INTO t VALUES ('in line')") } }
        try #require(await eventually { queue.waitingCount == 1 }, "write in line")
        let closed = Flag()
        let closing = Task {
            await queue.close()
            closed.set()
        }
        // Once close() has begun, new accesses are refused...
        try #require(await eventually { queue.isClosing }, "close begun")
        #expect {
            try queue.read { _ in 0 }
        } throws: { error in
            isMisuse(error, mentioning: "closed")
        }
        // ...but close() has not finished: an access is still running.
        #expect(!closed.isSet)
        release.open()
        try await running.value
        try await inLine.value
        await closing.value
        #expect(closed.isSet)
        // Both writes were made before the connection closed.
        let check = try Database(path: path)
        #expect(try check.fetchAll(String.self, "SELECT a FROM t ORDER BY rowid") == ["running", "in line"])
    }
}
