import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// `CallingThreadReads`: inside it, an `async` read that finds a reader
/// free runs on the calling thread; one that finds every reader busy waits
/// in line as always; cancelling still interrupts it; an error still frees
/// the reader.
///
/// Each test allows such reads only on a thread of its own, as the type
/// asks: a read blocking one of Swift's few shared threads could starve
/// the other tests running beside it.
@Suite("CallingThreadReads", .tags(.concurrency))
struct CallingThreadReadsTests {
    /// Runs jobs on a serial dispatch queue, which has a thread of its own.
    final class OwnThread: TaskExecutor, @unchecked Sendable {
        private let queue = DispatchQueue(label: "calling-thread-reads.tests")

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            let executor = asUnownedTaskExecutor()
            queue.async { job.runSynchronously(on: executor) }
        }
    }

    /// `body` with calling-thread reads allowed, on a thread of its own.
    private static func allowed<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await withTaskExecutorPreference(OwnThread()) {
            try await CallingThreadReads.$areAllowed.withValue(true) { try await body() }
        }
    }

    /// A pool over a new file in `directory`, with three rows in `t`.
    private static func pool(in directory: TemporaryDirectory, readers: Int = 2) throws -> DatabasePool {
        let pool = try DatabasePool(path: directory.path("reads.sqlite"), maximumReaderCount: readers)
        try pool.write { db in
            try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a)")
            try db.execute("INSERT INTO t (a) VALUES (1), (2), (3)")
        }
        return pool
    }

    @Test("Inside it, a pool's and a queue's async reads run on the calling thread")
    func readsRunHere() async throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let pool = try Self.pool(in: directory)
        let queue = try DatabaseQueue(path: directory.path("queue.sqlite"))
        try await Self.allowed {
            for _ in 0..<20 {
                let here = pthread_self()
                let (thread, count) = try await pool.read { db in
                    (pthread_self(), try db.fetchOne(Int.self, sql: "SELECT COUNT(*) FROM t"))
                }
                #expect(pthread_equal(here, thread) != 0)
                #expect(count == 3)
                let queueHere = pthread_self()
                let queueThread = try await queue.read { _ in pthread_self() }
                #expect(pthread_equal(queueHere, queueThread) != 0)
            }
        }
        #expect(CallingThreadReads.areAllowed == false)
    }

    @Test("Inside it, a read that finds every reader busy waits in line, then runs")
    func busyReadersStillQueue() async throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let pool = try Self.pool(in: directory, readers: 1)
        let held = try await HeldAccess.start { try await pool.read($0) }
        let waiting = Task {
            try await Self.allowed {
                try await pool.read { db in try db.fetchOne(Int.self, sql: "SELECT COUNT(*) FROM t") }
            }
        }
        try #require(await eventually { pool.waitingReaderCount == 1 }, "read in line")
        try await held.finish()
        #expect(try await waiting.value == 3)
    }

    @Test("Cancelling the task interrupts a read running on the calling thread", .timeLimit(.minutes(2)))
    func cancellationInterrupts() async throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let pool = try Self.pool(in: directory)
        try await expectCancellationWhileRunning { running in
            try await Self.allowed {
                try await pool.read { db in try db.runEndless(signalling: running) }
            }
        }
        // The reader is back and whole.
        #expect(try await pool.read { db in try db.fetchOne(Int.self, sql: "SELECT COUNT(*) FROM t") } == 3)
    }

    @Test("A read that fails on the calling thread throws its error and frees its reader")
    func errorsFreeTheReader() async throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let pool = try Self.pool(in: directory, readers: 1)
        try await Self.allowed { () async throws in
            await #expect {
                try await pool.read { db in try db.execute(sql: "SELECT * FROM missing") }
            } throws: { error in
                (error as? SQLiteError)?.message.contains("no such table: missing") == true
            }
            await #expect(throws: SQLiteError.self) {
                try await pool.read { db in try db.execute(sql: "INSERT INTO t (a) VALUES (4)") }
            }
            #expect(try await pool.read { db in try db.fetchOne(Int.self, sql: "SELECT COUNT(*) FROM t") } == 3)
        }
        #expect(pool.waitingReaderCount == 0)
    }
}
