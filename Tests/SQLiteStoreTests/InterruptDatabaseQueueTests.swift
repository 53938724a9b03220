import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// Expects `task` to fail with SQLite's `SQLITE_INTERRUPT`.
private func expectInterrupted<T: Sendable>(
    _ task: Task<T, any Error>, sourceLocation: SourceLocation = #_sourceLocation
) async {
    let error = await #expect(throws: SQLiteError.self, sourceLocation: sourceLocation) { try await task.value }
    #expect(error?.code == .interrupt, sourceLocation: sourceLocation)
}

/// Calls `interrupt` over and over on a thread of its own until the
/// returned flag is set, then opens `done`.
private func interruptRepeatedly(_ interrupt: @escaping @Sendable () -> Void) -> (stop: Flag, done: Gate) {
    let stop = Flag()
    let done = Gate("interrupting thread finished")
    Thread {
        // A pause between calls, still thousands a second: two of these
        // spinning flat out took both cores of a loaded machine from the
        // accesses they race, and the tests ran past their time limit.
        while !stop.isSet {
            interrupt()
            Thread.sleep(forTimeInterval: 0.000_05)
        }
        done.open()
    }.start()
    return (stop, done)
}

@Suite("DatabaseQueue.interrupt()", .tags(.concurrency))
struct InterruptDatabaseQueueTests {
    @Test("Interrupting from another thread stops an endless read with .interrupt", .timeLimit(.minutes(2)))
    func interruptsEndlessRead() async throws {
        let queue = try makeQueue()
        let running = Gate("endless read running")
        let access = Task {
            try await onOwnThread { try queue.read { db in try db.runEndless(signalling: running) } }
        }
        try await running.wait()
        queue.interrupt()
        await expectInterrupted(access)
    }

    @Test("An interrupted write is rolled back and the queue stays usable", .timeLimit(.minutes(2)))
    func interruptedWriteRolledBack() async throws {
        let queue = try makeQueue()
        let running = Gate("endless write running")
        let access = Task {
            try await onOwnThread {
                try queue.write { db in
                    try db.execute("INSERT INTO t (a) VALUES ('undone')")
                    try db.runEndless("INSERT INTO t (a) \(endlessQuery)", signalling: running)
                }
            }
        }
        try await running.wait()
        queue.interrupt()
        await expectInterrupted(access)
        #expect(try rowCount(queue) == 0)
        try await queue.write { db in try db.execute("INSERT INTO t (a) VALUES ('kept')") }
        #expect(try rowCount(queue) == 1)
    }

    @Test("An interrupted async access throws .interrupt, not CancellationError", .timeLimit(.minutes(2)))
    func interruptsAsyncAccess() async throws {
        let queue = try makeQueue()
        let running = Gate("endless async read running")
        let access = Task { try await queue.read { db in try db.runEndless(signalling: running) } }
        try await running.wait()
        queue.interrupt()
        await expectInterrupted(access)
        #expect(try await queue.read { db in try db.fetchOne(Int.self, "SELECT 1") } == 1)
    }

    @Test("Interrupting an idle queue does not affect the next access")
    func interruptIdleIsHarmless() throws {
        let queue = try makeQueue()
        queue.interrupt()
        try queue.write { db in try db.execute("INSERT INTO t (a) VALUES (1)") }
        #expect(try rowCount(queue) == 1)
    }

    @Test("Interrupting a closed queue does nothing")
    func interruptClosedQueue() throws {
        let queue = try makeQueue()
        try queue.close()
        queue.interrupt()
        #expect(throws: SQLiteError.self) { try rowCount(queue) }
    }

    @Test("Interrupting in a loop while the queue closes does not crash", .timeLimit(.minutes(2)))
    func interruptRacingClose() async throws {
        for _ in 0..<20 {
            let queue = try makeQueue()
            let (stop, done) = interruptRepeatedly { queue.interrupt() }
            // Accesses still running or waiting while the queue closes,
            // interrupted or not: what matters is that nothing reaches a
            // closed handle.
            let accesses = (0..<5).map { _ in
                Task { try await queue.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") } }
            }
            await queue.close()
            for access in accesses { _ = try? await access.value }
            stop.set()
            try await done.wait()
        }
    }

    @Test(
        "Interrupting in a loop while an access closure closes the connection does not crash",
        .timeLimit(.minutes(2)))
    func interruptRacingClosureClose() async throws {
        let dir = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: dir.path("queue.sqlite"))
        let (stop, done) = interruptRepeatedly { queue.interrupt() }
        for _ in 0..<20 {
            #expect(throws: SQLiteError.self) { try queue.writeWithoutTransaction { db in db.close() } }
        }
        stop.set()
        try await done.wait()
        #expect(try await queue.read { db in try db.fetchOne(Int.self, "SELECT 1") } == 1)
        await queue.close()
    }
}

@Suite("DatabasePool.interrupt()", .tags(.concurrency))
struct InterruptDatabasePoolTests {
    private let dir: TemporaryDirectory
    private let pool: DatabasePool

    init() throws {
        dir = try TemporaryDirectory()
        pool = try DatabasePool(path: dir.path("pool.sqlite"), maximumReaderCount: 3)
        try pool.write { db in try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a)") }
    }

    private func count() throws -> Int {
        try pool.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") ?? -1 }
    }

    @Test("One interrupt stops the running write and every running read", .timeLimit(.minutes(2)))
    func interruptsWriterAndReaders() async throws {
        let pool = pool
        let readsRunning = [Gate("read 1 running"), Gate("read 2 running")]
        let writeRunning = Gate("write running")
        let reads = readsRunning.map { running in
            Task { try await onOwnThread { try pool.read { db in try db.runEndless(signalling: running) } } }
        }
        let write = Task {
            try await onOwnThread {
                try pool.write { db in
                    try db.execute("INSERT INTO t (a) VALUES ('undone')")
                    try db.runEndless("INSERT INTO t (a) \(endlessQuery)", signalling: writeRunning)
                }
            }
        }
        for gate in readsRunning + [writeRunning] { try await gate.wait() }
        pool.interrupt()
        for read in reads {
            await expectInterrupted(read)
        }
        await expectInterrupted(write)
        #expect(try count() == 0)
    }

    @Test("The pool stays usable after an interrupt", .timeLimit(.minutes(2)))
    func usableAfterInterrupt() async throws {
        let pool = pool
        let running = Gate("endless async write running")
        let write = Task {
            try await pool.write { db in try db.runEndless("INSERT INTO t (a) \(endlessQuery)", signalling: running) }
        }
        try await running.wait()
        pool.interrupt()
        await expectInterrupted(write)
        try await pool.write { db in try db.execute("INSERT INTO t (a) VALUES (1)") }
        #expect(try await pool.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") } == 1)
    }

    @Test("Interrupting an idle pool does not affect the next accesses")
    func interruptIdleIsHarmless() throws {
        _ = try count()  // opens a reader
        pool.interrupt()
        try pool.write { db in try db.execute("INSERT INTO t (a) VALUES (1)") }
        #expect(try count() == 1)
    }

    @Test("Interrupting in a loop while the pool closes does not crash", .timeLimit(.minutes(2)))
    func interruptRacingClose() async throws {
        for index in 0..<10 {
            let pool = try DatabasePool(path: dir.path("race\(index).sqlite"), maximumReaderCount: 2)
            let (stop, done) = interruptRepeatedly { pool.interrupt() }
            let writes = (0..<3).map { _ in
                Task { try await pool.write { db in try db.execute("CREATE TABLE IF NOT EXISTS t (a)") } }
            }
            let reads = (0..<3).map { _ in
                Task { try await pool.read { db in try db.fetchOne(Int.self, "SELECT 1") } }
            }
            await pool.close()
            for write in writes { _ = try? await write.value }
            for read in reads { _ = try? await read.value }
            stop.set()
            try await done.wait()
        }
    }
}
