import Dispatch
import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// Runs `body` on a thread of its own and returns its result, or nil when
/// it has not returned within ``Gate/timeout``: a call that would loop
/// forever then fails its test instead of hanging the suite (its thread is
/// left behind). A guard against hangs, not a measurement.
func returnsInTime<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T? {
    let result = Locked<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        let value = body()
        result.withLock { $0 = value }
        done.signal()
    }
    thread.start()
    guard done.wait(timeout: .now() + Double(Gate.timeout.components.seconds)) == .success else { return nil }
    return result.withLock { $0 }
}

/// What running some SQL did: the error it threw, and the rows of `t` after.
struct SQLOutcome: Sendable {
    var error: SQLiteError?
    var otherError: String?
    var rows: [Int] = []
}

/// Runs `sql` with `execute` on a fresh in-memory database holding an empty
/// table `t (a)`, on a thread of its own (see ``returnsInTime(_:)``).
func executeOnFreshDatabase(_ sql: String, arguments: StatementArguments = StatementArguments()) -> SQLOutcome? {
    returnsInTime {
        var outcome = SQLOutcome()
        do {
            let db = try Database.inMemory()
            try db.execute("CREATE TABLE t (a)")
            do {
                try db.execute(sql: sql, arguments: arguments)
            } catch let error as SQLiteError {
                outcome.error = error
            }
            outcome.rows = try db.fetchAll(Int.self, "SELECT a FROM t ORDER BY a")
        } catch {
            outcome.otherError = "\(error)"
        }
        return outcome
    }
}

/// SQL text with a NUL, and the NUL's byte offset; shown with `\0` in test
/// output, where a raw NUL would cut the line.
struct NULCase: Sendable, CustomTestStringConvertible {
    let sql: String
    let offset: Int
    init(_ sql: String, _ offset: Int) {
        self.sql = sql
        self.offset = offset
    }
    var testDescription: String {
        sql.replacingOccurrences(of: "\u{0}", with: "\\0").replacingOccurrences(of: "\n", with: "\\n")
    }
}

@Suite("SQL text with NUL characters and empty statements")
struct NULInSQLTests {
    @Test(
        "SQL text holding a NUL is refused with a misuse error naming it, and nothing runs",
        arguments: [
            NULCase("SELECT 1;\u{0} x", 9),
            NULCase("\u{0}SELECT 1", 0),
            NULCase("SELECT 1\u{0}", 8),
            NULCase("\u{0}", 0),
            NULCase("\u{0}\u{0}\u{0}", 0),
            NULCase("-- a comment\n\u{0}", 13),
            NULCase("/* a comment */\u{0}", 15),
            NULCase(";;;\u{0};;", 3),
            NULCase("INSERT INTO t VALUES (1);\u{0}INSERT INTO t VALUES (2)", 25),
            NULCase("INSERT INTO t VALUES ('a\u{0}b')", 24),
        ])
    func nulRefused(_ nul: NULCase) throws {
        let outcome = try #require(executeOnFreshDatabase(nul.sql), "execute did not return")
        #expect(outcome.otherError == nil)
        let error = try #require(outcome.error)
        #expect(error.code == .misuse)
        #expect(error.message.contains("NUL character at byte \(nul.offset)"))
        #expect(outcome.rows.isEmpty)
    }

    @Test("Preparing or fetching SQL text with a NUL is refused the same way")
    func nulRefusedWhenPreparing() throws {
        let db = try Database.inMemory()
        for sql in ["SELECT 1\u{0}", "\u{0}SELECT 1", "SELECT 1;\u{0} x"] {
            #expect(
                sqliteError { _ = try db.makeStatement(sql: sql) }.map {
                    $0.code == .misuse && $0.message.contains("NUL")
                }
                    == true)
            #expect(
                sqliteError { _ = try db.fetchAll(sql: sql) }.map { $0.code == .misuse && $0.message.contains("NUL") }
                    == true)
            #expect(sqliteError { _ = try db.fetchOne(Int.self, sql: sql) }?.code == .misuse)
        }
        // The connection is fine afterwards.
        #expect(try db.fetchOne(Int.self, "SELECT 1") == 1)
    }

    @Test("SQL text longer than the C API's Int32 length is refused with SQLITE_TOOBIG, not a trap")
    func tooLongForTheCAPI() throws {
        // The check itself: a real 2 GiB string would be too heavy for a test.
        #expect(throws: Never.self) { try SQLScanner.checkLength(Int(Int32.max), sql: "") }
        let error = sqliteError { try SQLScanner.checkLength(Int(Int32.max) + 1, sql: "SELECT 1") }
        #expect(error?.code == .tooBig)
    }

    @Test("Text holding a NUL is stored whole when it is a bound argument")
    func nulAsArgument() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (s TEXT)")
        try db.execute("INSERT INTO t VALUES (?)", arguments: ["a\u{0}b"])
        #expect(try db.fetchOne(String.self, "SELECT s FROM t") == "a\u{0}b")
    }

    @Test("Runs of semicolons between and after statements are skipped")
    func semicolonRuns() throws {
        let outcome = try #require(
            executeOnFreshDatabase(";;INSERT INTO t VALUES (1);;;; ;\n; INSERT INTO t VALUES (2);;;"))
        #expect(outcome.error == nil)
        #expect(outcome.rows == [1, 2])
    }

    @Test("Only semicolons, blanks or comments run nothing", arguments: [";", ";;;;", " ; ; ", "-- c", "/* c */;", ""])
    func nothingToRun(sql: String) throws {
        let outcome = try #require(executeOnFreshDatabase(sql))
        #expect(outcome.error == nil)
        #expect(outcome.rows.isEmpty)
    }

    @Test("Arguments with SQL that holds no statement are refused")
    func argumentsWithoutStatement() throws {
        let outcome = try #require(executeOnFreshDatabase(";;;", arguments: [1]))
        #expect(outcome.error?.code == .misuse)
        #expect(outcome.error?.message.contains("no statement") == true)
    }

    @Test("An unterminated comment after a statement ends the text")
    func unterminatedComment() throws {
        let outcome = try #require(executeOnFreshDatabase("INSERT INTO t VALUES (1); /* never closed"))
        #expect(outcome.error == nil)
        #expect(outcome.rows == [1])
    }
}

@Suite("BLOB handle ranges")
struct BlobRangeTests {
    private func makeDatabase() throws -> Database {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)")
        try db.execute("INSERT INTO t VALUES (1, x'00010203040506070809')")
        return db
    }

    @Test(
        "read(count:at:) refuses any range outside the blob before allocating, overflow included",
        arguments: [
            (0, Int.max), (Int.max, Int.max), (Int.max, 1), (1, Int.max), (Int.max - 5, 10), (5, Int.max - 2),
            (0, -1), (0, Int.min), (-1, 1), (Int.min, 1), (Int.min, Int.max), (11, 0),
        ])
    func readCount(offset: Int, count: Int) throws {
        let db = try makeDatabase()
        let blob = try db.openBlob(table: "t", column: "b", rowID: 1)
        let error = blobError { _ = try blob.read(count: count, at: offset) }
        #expect(error?.reason == .outOfBounds(offset: offset, count: count, size: 10))
        #expect(try blob.read(count: 10) == Data(0..<10))
    }

    @Test(
        "read(into:at:) and write(_:at:) refuse offsets that would overflow or are negative",
        arguments: [Int.max, Int.max - 1, Int.max - 3, 9, -1, Int.min])
    func intoAndWrite(offset: Int) throws {
        let db = try makeDatabase()
        try db.withBlob(table: "t", column: "b", rowID: 1, access: .readWrite) { blob in
            var bytes = [UInt8](repeating: 0, count: 4)
            let readError = blobError { try bytes.withUnsafeMutableBytes { try blob.read(into: $0, at: offset) } }
            #expect(readError?.reason == .outOfBounds(offset: offset, count: 4, size: 10))
            let writeError = blobError { try blob.write(Data([1, 2, 3, 4]), at: offset) }
            #expect(writeError?.reason == .outOfBounds(offset: offset, count: 4, size: 10))
        }
        #expect(try db.fetchOne(Data.self, "SELECT b FROM t") == Data(0..<10))
    }

    @Test("readChunks refuses a chunk size of zero or less with a misuse error", arguments: [0, -1, Int.min])
    func badChunkSize(size: Int) throws {
        let db = try makeDatabase()
        let blob = try db.openBlob(table: "t", column: "b", rowID: 1)
        var calls = 0
        let error = sqliteError { try blob.readChunks(ofSize: size) { _ in calls += 1 } }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("chunk size") == true)
        #expect(calls == 0)
    }

    @Test("readChunks with a chunk size larger than the blob, up to Int.max, reads it in one piece")
    func hugeChunkSize() throws {
        let db = try makeDatabase()
        let blob = try db.openBlob(table: "t", column: "b", rowID: 1)
        var chunks: [Data] = []
        try blob.readChunks(ofSize: Int.max) { chunks.append(Data($0)) }
        #expect(chunks == [Data(0..<10)])
    }

    @Test("A closed handle refuses a huge read with a misuse error, not a crash")
    func closedHandleHugeRead() throws {
        let db = try makeDatabase()
        let blob = try db.openBlob(table: "t", column: "b", rowID: 1)
        try blob.close()
        #expect(sqliteError { _ = try blob.read(count: Int.max, at: 0) }?.code == .misuse)
    }
}

@Suite("Transactions never return normally without their changes", .tags(.concurrency))
struct TransactionIntegrityTests {
    struct Failure: Error {}

    private func makeFile() throws -> (TemporaryDirectory, String) {
        let dir = try TemporaryDirectory()
        let path = dir.path("t.sqlite")
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t (a INTEGER)")
        db.close()
        return (dir, path)
    }

    private func values(_ db: Database) throws -> [Int] {
        try db.fetchAll(Int.self, "SELECT a FROM t ORDER BY a")
    }

    private func makeMemory() throws -> Database {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (a INTEGER)")
        return db
    }

    @Test("Closing the connection inside transaction(_:) makes it throw; the insert is rolled back")
    func closeInsideTransaction() throws {
        let (dir, path) = try makeFile()
        let db = try Database(path: path)
        let error = sqliteError {
            try db.transaction { db in
                try db.execute("INSERT INTO t VALUES (1)")
                db.close()
            }
        }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("closed inside transaction") == true)
        #expect(try values(Database(path: path)) == [])
        _ = dir
    }

    @Test("Closing the connection inside savepoint(_:) makes it throw; the insert is rolled back")
    func closeInsideSavepoint() throws {
        let (dir, path) = try makeFile()
        let db = try Database(path: path)
        let error = sqliteError {
            try db.savepoint { db in
                try db.execute("INSERT INTO t VALUES (1)")
                db.close()
            }
        }
        #expect(error?.code == .misuse)
        #expect(try values(Database(path: path)) == [])
        _ = dir
    }

    @Test(
        "Transaction-control SQL inside transaction(_:) is refused before it runs, and the transaction throws",
        arguments: [
            "COMMIT", "END", "ROLLBACK", "BEGIN", "SAVEPOINT x", "RELEASE sqlitestore_savepoint_1",
            "  -- why\n commit transaction", "INSERT INTO t VALUES (2); COMMIT",
        ])
    func controlInsideTransaction(sql: String) throws {
        let db = try makeMemory()
        let error = sqliteError {
            try db.transaction { db in
                try db.execute("INSERT INTO t VALUES (1)")
                try db.execute(sql: sql)
                try db.execute("INSERT INTO t VALUES (3)")
            }
        }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("refused inside transaction(_:) and savepoint(_:)") == true)
        #expect(try values(db) == [])
        #expect(!db.isInsideTransaction)
    }

    @Test("RELEASE by SQL inside savepoint(_:) is refused; the savepoint throws and keeps nothing")
    func releaseInsideSavepoint() throws {
        let db = try makeMemory()
        let error = sqliteError {
            try db.savepoint { db in
                try db.execute("INSERT INTO t VALUES (1)")
                try db.execute("RELEASE SAVEPOINT sqlitestore_savepoint_1")
            }
        }
        #expect(error?.code == .misuse)
        #expect(try values(db) == [])
        #expect(!db.isInsideTransaction)
    }

    @Test("A refused RELEASE that the closure swallows changes nothing: the savepoint returns and keeps the work")
    func swallowedRelease() throws {
        let db = try makeMemory()
        try db.transaction { db in
            try db.savepoint { db in
                try db.execute("INSERT INTO t VALUES (1)")
                try? db.execute("RELEASE SAVEPOINT sqlitestore_savepoint_1")
                try? db.execute("ROLLBACK")
            }
            #expect(db.isInsideTransaction)
        }
        #expect(try values(db) == [1])
    }

    @Test("ROLLBACK TO by SQL inside a nested savepoint is refused; only that savepoint is undone")
    func rollbackToInsideNestedSavepoint() throws {
        let db = try makeMemory()
        try db.transaction { db in
            try db.execute("INSERT INTO t VALUES (1)")
            #expect(throws: SQLiteError.self) {
                try db.savepoint { db in
                    try db.execute("INSERT INTO t VALUES (2)")
                    try db.execute("ROLLBACK TO SAVEPOINT sqlitestore_savepoint_1")
                }
            }
        }
        #expect(try values(db) == [1])
    }

    @Test("A COMMIT statement cached outside a transaction is still refused inside one")
    func cachedCommitRefused() throws {
        let db = try makeMemory()
        try db.execute("BEGIN")
        try db.execute("COMMIT")
        let commit = try db.cachedStatement("COMMIT")
        #expect(throws: SQLiteError.self) {
            try db.transaction { db in
                try db.execute("INSERT INTO t VALUES (1)")
                try commit.execute()
            }
        }
        #expect(try values(db) == [])
    }

    @Test("Outside transaction(_:) and savepoint(_:), BEGIN, COMMIT and ROLLBACK by SQL work as in SQLite")
    func controlOutsideScopes() throws {
        let db = try makeMemory()
        try db.execute("BEGIN; INSERT INTO t VALUES (1); COMMIT")
        try db.execute("BEGIN IMMEDIATE")
        try db.execute("INSERT INTO t VALUES (2)")
        try db.execute("ROLLBACK")
        try db.execute("SAVEPOINT s; INSERT INTO t VALUES (3); RELEASE s")
        #expect(try values(db) == [1, 3])
    }

    @Test("A transaction ended through the C API inside the closure makes transaction(_:) throw")
    func endedThroughCAPI() throws {
        let db = try makeMemory()
        let error = sqliteError {
            try db.transaction { db in
                try db.execute("INSERT INTO t VALUES (1)")
                #expect(sqlite3_exec(db.sqliteConnection, "ROLLBACK", nil, nil, nil) == SQLITE_OK)
            }
        }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("ended before its closure returned") == true)
        #expect(try values(db) == [])
    }

    @Test("A savepoint whose transaction was rolled back through the C API throws")
    func savepointEndedThroughCAPI() throws {
        let db = try makeMemory()
        let error = sqliteError {
            try db.savepoint { db in
                try db.execute("INSERT INTO t VALUES (1)")
                _ = sqlite3_exec(db.sqliteConnection, "ROLLBACK", nil, nil, nil)
            }
        }
        #expect(error?.code == .misuse)
        #expect(try values(db) == [])
    }

    @Test("The library's own nested savepoints still run inside a transaction")
    func nestedSavepointsStillWork() throws {
        let db = try makeMemory()
        try db.transaction { db in
            try db.savepoint { db in
                try db.execute("INSERT INTO t VALUES (1)")
                try? db.savepoint { db in
                    try db.execute("INSERT INTO t VALUES (2)")
                    throw Failure()
                }
            }
        }
        #expect(try values(db) == [1])
    }
}

@Suite("Closing a connection from inside an access", .tags(.concurrency))
struct CloseInsideAccessTests {
    private func makeFile() throws -> (TemporaryDirectory, String) {
        let dir = try TemporaryDirectory()
        let path = dir.path("q.sqlite")
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t (a INTEGER)")
        db.close()
        return (dir, path)
    }

    @Test("A queue's write that closes its Database throws, is rolled back, and the queue stays usable")
    func queueWrite() throws {
        let (dir, path) = try makeFile()
        let queue = try DatabaseQueue(path: path)
        let error = sqliteError {
            try queue.write { db in
                try db.execute("INSERT INTO t VALUES (1)")
                db.close()
            }
        }
        #expect(error?.code == .misuse)
        #expect(try rowCount(queue) == 0)
        try queue.write { db in try db.execute("INSERT INTO t VALUES (2)") }
        #expect(try rowCount(queue) == 1)
        try queue.close()
        _ = dir
    }

    @Test("A queue's read or writeWithoutTransaction that closes its Database throws; the next access works")
    func queueReadAndWriteWithoutTransaction() async throws {
        let (dir, path) = try makeFile()
        let queue = try DatabaseQueue(path: path)
        #expect(throws: SQLiteError.self) { try queue.read { db in db.close() } }
        #expect(try rowCount(queue) == 0)
        let error = sqliteError { try queue.writeWithoutTransaction { db in db.close() } }
        #expect(error?.message.contains("closed the Database it was given") == true)
        await #expect(throws: SQLiteError.self) { try await queue.write { db in db.close() } }
        try await queue.write { db in try db.execute("INSERT INTO t VALUES (1)") }
        #expect(try rowCount(queue) == 1)
        _ = dir
    }

    @Test("An in-memory queue whose Database was closed by an access says so on every later access")
    func inMemoryQueue() throws {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in try db.execute("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1)") }
        #expect(throws: SQLiteError.self) { try queue.write { db in db.close() } }
        for _ in 0..<2 {
            let error = sqliteError { _ = try rowCount(queue) }
            #expect(error?.code == .misuse)
            #expect(error?.message.contains("in-memory database is gone") == true)
        }
        try queue.close()
    }

    @Test("A pool's write or read that closes its Database throws; the pool opens a new connection")
    func pool() throws {
        let (dir, path) = try makeFile()
        let pool = try DatabasePool(path: path, maximumReaderCount: 1)
        #expect(throws: SQLiteError.self) {
            try pool.write { db in
                try db.execute("INSERT INTO t VALUES (1)")
                db.close()
            }
        }
        #expect(throws: SQLiteError.self) { try pool.read { db in db.close() } }
        #expect(try rowCount(pool) == 0)
        try pool.write { db in try db.execute("INSERT INTO t VALUES (2)") }
        #expect(try rowCount(pool) == 1)
        #expect(try pool.read { db in try db.fetchOne(String.self, "PRAGMA journal_mode") } == "wal")
        try pool.close()
        _ = dir
    }
}

@Suite("Waiting for another connection's lock", .tags(.concurrency))
struct BusyWaitingTests {
    @Test("A write waits for a lock that another connection releases while it waits")
    func waitsForRelease() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("busy.sqlite")
        let holder = try Database(path: path)
        try holder.execute("CREATE TABLE t (a)")
        var configuration = Configuration()
        configuration.busyTimeout = .seconds(60)
        let waiter = try Database(path: path, configuration: configuration)
        // Read the schema now: preparing the INSERT must not need the lock.
        #expect(try waiter.fetchAll("SELECT a FROM t").isEmpty)
        try holder.execute("BEGIN EXCLUSIVE")
        try holder.execute("INSERT INTO t VALUES (1)")

        let waiting = Gate("the waiter's INSERT started")
        let released = Gate("the holder committed")
        // Used by the holder's thread only from here on.
        nonisolated(unsafe) let holderConnection = holder
        let holderThread = Thread {
            // The holder keeps its lock until the waiter is running into it,
            // then a little longer so that the waiter retries.
            try? waiting.waitBlocking()
            Thread.sleep(forTimeInterval: 0.1)
            try? holderConnection.execute("COMMIT")
            released.open()
        }
        waiter.trace { event in if event.sql.hasPrefix("INSERT") { waiting.open() } }
        holderThread.start()
        try waiter.execute("INSERT INTO t VALUES (2)")
        #expect(released.isOpen)
        #expect(try waiter.fetchAll(Int.self, "SELECT a FROM t ORDER BY a") == [1, 2])
    }

    @Test("With a zero busy timeout, a locked database fails at once with SQLITE_BUSY")
    func zeroTimeout() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("busy.sqlite")
        let holder = try Database(path: path)
        try holder.execute("CREATE TABLE t (a)")
        var configuration = Configuration()
        configuration.busyTimeout = .zero
        let other = try Database(path: path, configuration: configuration)
        try holder.execute("BEGIN EXCLUSIVE")
        #expect(sqliteError { try other.execute("INSERT INTO t VALUES (2)") }?.code == .busy)
        try holder.execute("COMMIT")
        try other.execute("INSERT INTO t VALUES (2)")
    }

    @Test("The longer a connection has waited, the more often it tries: never less often than a newcomer")
    func olderWaitersTryMoreOften() {
        let second: UInt64 = 1_000_000_000
        for attempt in Int32(0)...40 {
            var previous = UInt64.max
            for waited in stride(from: UInt64(0), through: 10 * second, by: Int(second / 4)) {
                let interval = BusyWaiter.interval(attempt: attempt, waited: waited)
                #expect(interval <= previous)
                #expect(interval <= BusyWaiter.longestInterval)
                #expect(interval > 0)
                previous = interval
            }
        }
        // A newcomer backs off to the longest pause; a waiter of 5 s tries
        // ten times as often.
        #expect(BusyWaiter.interval(attempt: 10, waited: 0) == BusyWaiter.longestInterval)
        #expect(BusyWaiter.interval(attempt: 10, waited: 5 * second) == BusyWaiter.shortestInterval)
        // The first tries come quickly: a lock is often freed within a
        // millisecond.
        #expect(BusyWaiter.interval(attempt: 0, waited: 0) == 1_000_000)
    }

    @Test("Cancelling an async write that waits for another process's lock ends the wait")
    func cancelWhileWaitingForLock() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("busy.sqlite")
        let holder = try Database(path: path)
        try holder.execute("CREATE TABLE t (a)")
        var configuration = Configuration()
        configuration.busyTimeout = .seconds(3600)
        let waiting = Gate("BEGIN IMMEDIATE started")
        configuration.trace = { event in if event.sql.hasPrefix("BEGIN IMMEDIATE") { waiting.open() } }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try holder.execute("BEGIN EXCLUSIVE")

        let finished = Gate("the cancelled write returned")
        let task = Task {
            defer { finished.open() }
            try await queue.write { db in try db.execute("INSERT INTO t VALUES (1)") }
        }
        try await waiting.wait()
        task.cancel()
        // Without the fix the write would wait the full hour; the gate's
        // timeout turns that into a failure. The lock is released in any
        // case so that the task can end.
        let endedWhileLocked: Bool
        do {
            try await finished.wait()
            endedWhileLocked = true
        } catch {
            endedWhileLocked = false
        }
        try holder.execute("COMMIT")
        #expect(endedWhileLocked)
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try holder.fetchOne(Int.self, "SELECT COUNT(*) FROM t") == 0)
        try await queue.write { db in try db.execute("INSERT INTO t VALUES (2)") }
        await queue.close()
    }
}
