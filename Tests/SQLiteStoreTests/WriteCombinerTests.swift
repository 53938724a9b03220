import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// ``WriteCombiner``: writes that wait for the writer together share one
/// transaction, each in its own savepoint, and each is answered on its own.
@Suite("Write combining", .tags(.concurrency))
struct WriteCombinerTests {
    private struct Invalid: Error, Equatable {}
    private struct DiskFailed: Error, Equatable {}

    /// A pool on a new file with the table `t (id, a UNIQUE)`.
    private static func makePool(
        _ directory: TemporaryDirectory, groupCommit: Bool = false, sync: (@Sendable () throws -> Void)? = nil
    ) throws -> DatabasePool {
        let path = directory.path("combined.sqlite")
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a UNIQUE)") }
        try queue.close()
        var configuration = Configuration()
        configuration.groupCommit = groupCommit
        return try DatabasePool(
            path: path, configuration: configuration, maximumReaderCount: DatabasePool.defaultMaximumReaderCount,
            sync: sync)
    }

    /// Holds the pool's writer until `release` opens.
    private static func holdWriter(_ pool: DatabasePool, release: Gate) async throws -> Task<Void, any Error> {
        let held = Gate("writer held")
        let holder = Task {
            try await pool.writeWithoutTransaction { _ in
                held.open()
                try release.waitBlocking()
            }
        }
        try await held.wait()
        return holder
    }

    /// Starts `values.count` combined inserts, one task each, and returns
    /// once all of them wait for a transaction.
    private static func startInserts(
        _ writes: WriteCombiner, _ values: [Int], failingOn failing: Set<Int> = []
    ) async -> [Task<Int64, any Error>] {
        let tasks = values.map { value in
            Task {
                try await writes.write { db -> Int64 in
                    try db.execute("INSERT INTO t (a) VALUES (\(value))")
                    if failing.contains(value) { throw Invalid() }
                    return db.lastInsertedRowID
                }
            }
        }
        #expect(await eventually { writes.waitingCount == values.count })
        return tasks
    }

    private static func values(_ pool: DatabasePool) async throws -> [Int] {
        try await pool.read { db in try db.fetchAll(Int.self, "SELECT a FROM t ORDER BY a") }
    }

    @Test("Writes that wait together share one transaction, and each returns its own result")
    func shareOneTransaction() async throws {
        let directory = try TemporaryDirectory()
        let pool = try Self.makePool(directory)
        let writes = WriteCombiner(pool)
        let release = Gate("release the writer")
        let holder = try await Self.holdWriter(pool, release: release)
        let tasks = await Self.startInserts(writes, Array(1...10))
        release.open()
        try await holder.value
        var ids: [Int64] = []
        for task in tasks { ids.append(try await task.value) }
        #expect(Set(ids).count == 10)
        // Each got the row it inserted.
        let rows = try await pool.read { db in
            try db.fetchAll("SELECT id, a FROM t ORDER BY id").map { row -> (Int64, Int) in
                (try row[0], try row[1])
            }
        }
        for (index, id) in ids.enumerated() {
            #expect(rows.first { $0.0 == id }?.1 == index + 1)
        }
        #expect(writes.statistics.transactions == 1)
        #expect(writes.statistics.largestBatch == 10)
    }

    @Test("A lone write runs at once in a transaction of its own")
    func loneWrite() async throws {
        let directory = try TemporaryDirectory()
        let pool = try Self.makePool(directory)
        let writes = WriteCombiner(pool)
        for value in 1...3 {
            _ = try await writes.write { db in try db.execute("INSERT INTO t (a) VALUES (\(value))") }
        }
        #expect(writes.statistics.transactions == 3)
        #expect(writes.statistics.largestBatch == 1)
        #expect(try await Self.values(pool) == [1, 2, 3])
    }

    @Test("A transaction takes at most the maximum batch size; the rest wait for the next")
    func batchSizeLimit() async throws {
        let directory = try TemporaryDirectory()
        let pool = try Self.makePool(directory)
        let writes = WriteCombiner(pool, maximumBatchSize: 3)
        let release = Gate("release the writer")
        let holder = try await Self.holdWriter(pool, release: release)
        let tasks = await Self.startInserts(writes, Array(1...7))
        release.open()
        try await holder.value
        for task in tasks { _ = try await task.value }
        #expect(writes.statistics.largestBatch == 3)
        #expect(writes.statistics.transactions == 3)
        #expect(try await Self.values(pool) == Array(1...7))
    }

    @Test("A write that throws is undone alone: the others of its transaction commit")
    func failingWriteFailsAlone() async throws {
        let directory = try TemporaryDirectory()
        let pool = try Self.makePool(directory)
        let writes = WriteCombiner(pool)
        try await pool.write { db in try db.execute("INSERT INTO t (a) VALUES (5)") }
        let release = Gate("release the writer")
        let holder = try await Self.holdWriter(pool, release: release)
        // 3 throws after its insert; 5 breaks the UNIQUE constraint.
        let tasks = await Self.startInserts(writes, [1, 2, 3, 4, 5, 6], failingOn: [3])
        release.open()
        try await holder.value
        var failures: [Int: any Error] = [:]
        for (index, task) in tasks.enumerated() {
            do {
                _ = try await task.value
            } catch {
                failures[index + 1] = error
            }
        }
        #expect(failures.keys.sorted() == [3, 5])
        #expect(failures[3] is Invalid)
        #expect((failures[5] as? SQLiteError)?.code == .constraint)
        #expect(try await Self.values(pool) == [1, 2, 4, 5, 6])
        #expect(writes.statistics.transactions == 1)
    }

    @Test("The finishing step runs once per transaction, after its writes, seeing what they kept")
    func finishingRunsOncePerTransaction() async throws {
        let directory = try TemporaryDirectory()
        let pool = try Self.makePool(directory)
        try await pool.write { db in try db.execute("CREATE TABLE seen (rows INTEGER)") }
        // Each run records how many rows its transaction's writes left.
        let writes = WriteCombiner(pool) { db in
            let rows = try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") ?? -1
            try db.execute("INSERT INTO seen (rows) VALUES (\(rows))")
        }
        let release = Gate("release the writer")
        let holder = try await Self.holdWriter(pool, release: release)
        // 3 throws: its row is undone before the finishing step runs.
        let tasks = await Self.startInserts(writes, Array(1...6), failingOn: [3])
        release.open()
        try await holder.value
        for (index, task) in tasks.enumerated() {
            if index + 1 == 3 {
                await #expect(throws: Invalid.self) { try await task.value }
            } else {
                _ = try await task.value
            }
        }
        _ = try await writes.write { db in try db.execute("INSERT INTO t (a) VALUES (7)") }
        #expect(writes.statistics.transactions == 2)
        let seen = try await pool.read { db in try db.fetchAll(Int.self, "SELECT rows FROM seen ORDER BY rowid") }
        #expect(seen == [5, 6])
    }

    @Test("A finishing step that throws fails every write of its transaction, and keeps none")
    func failingFinishFailsTheBatch() async throws {
        let directory = try TemporaryDirectory()
        let pool = try Self.makePool(directory)
        let writes = WriteCombiner(pool) { db in
            if try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t WHERE a = 4") == 1 { throw DiskFailed() }
        }
        let release = Gate("release the writer")
        let holder = try await Self.holdWriter(pool, release: release)
        let tasks = await Self.startInserts(writes, Array(1...5))
        release.open()
        try await holder.value
        for task in tasks {
            await #expect(throws: DiskFailed.self) { try await task.value }
        }
        #expect(try await Self.values(pool) == [])
        // The next transaction, without the row the check refuses, lands.
        _ = try await writes.write { db in try db.execute("INSERT INTO t (a) VALUES (1)") }
        #expect(try await Self.values(pool) == [1])
    }

    @Test("A failed sync fails every write of its transaction: none is answered as written")
    func failedSyncFailsTheBatch() async throws {
        let directory = try TemporaryDirectory()
        let failing = Flag()
        let pool = try Self.makePool(directory, groupCommit: true) {
            if failing.isSet { throw DiskFailed() }
        }
        let writes = WriteCombiner(pool)
        let release = Gate("release the writer")
        let holder = try await Self.holdWriter(pool, release: release)
        let tasks = await Self.startInserts(writes, Array(1...5))
        failing.set()
        release.open()
        _ = try? await holder.value
        for task in tasks {
            await #expect(throws: DiskFailed.self) { _ = try await task.value }
        }
        #expect(writes.statistics.transactions == 1)
        #expect(writes.statistics.largestBatch == 5)
    }

    @Test("Cancelling a waiting write removes it alone: the others land once each")
    func cancelledWriteLeavesTheOthers() async throws {
        let directory = try TemporaryDirectory()
        let pool = try Self.makePool(directory)
        let writes = WriteCombiner(pool)
        let release = Gate("release the writer")
        let holder = try await Self.holdWriter(pool, release: release)
        let tasks = await Self.startInserts(writes, Array(1...5))
        tasks[2].cancel()
        #expect(await eventually { writes.waitingCount == 4 })
        release.open()
        try await holder.value
        for (index, task) in tasks.enumerated() where index != 2 { _ = try await task.value }
        await #expect(throws: CancellationError.self) { _ = try await tasks[2].value }
        #expect(try await Self.values(pool) == [1, 2, 4, 5])
        #expect(writes.statistics.transactions == 1)
    }

    @Test("A write whose task is already cancelled does not run")
    func alreadyCancelled() async throws {
        let directory = try TemporaryDirectory()
        let pool = try Self.makePool(directory)
        let writes = WriteCombiner(pool)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await writes.write { db in try db.execute("INSERT INTO t (a) VALUES (1)") }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await Self.values(pool).isEmpty)
    }
}
