import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// ``Configuration/groupCommit``: writes answered only after a sync that
/// began once they ended, syncs shared by the writes that end together,
/// and a failed sync never taken for a success.
@Suite("Group commit", .tags(.concurrency))
struct GroupCommitTests {
    /// Counts the syncs it runs; the `gated` ones (by number, from 1)
    /// wait for `gate`.
    private final class Syncs: Sendable {
        let gate = Gate("gated syncs")
        private let counted = Locked(0)
        private let failure: (any Error)?
        private let gated: Set<Int>

        init(failing failure: (any Error)? = nil, gated: Set<Int> = [1]) {
            self.failure = failure
            self.gated = gated
        }

        var count: Int { counted.withLock { $0 } }

        func sync() throws {
            let number = counted.withLock { count in
                count += 1
                return count
            }
            if gated.contains(number) { try gate.waitBlocking() }
            if let failure { throw failure }
        }
    }

    private struct DiskFailed: Error, Equatable {}

    @Test(
        "A write is answered after a sync that began once it ended; writes that end during a sync share the next, which starts at once; a third sync waits for one to end"
    )
    func sharedSyncs() async throws {
        let syncs = Syncs(gated: [1, 2])
        let commits = CommitSync(sync: { try syncs.sync() })
        let answered = Locked<[Int]>([])
        func waiting(_ ticket: UInt64, _ label: Int) -> Task<Void, any Error> {
            Task {
                try await commits.waitUntilSynced(ticket)
                answered.withLock { $0.append(label) }
            }
        }
        let first = commits.accessEnded()
        let firstWait = waiting(first, 1)
        #expect(await eventually { syncs.count == 1 })
        // These end while the first sync runs, which does not cover them:
        // one more sync starts for both, without waiting for the first.
        let second = commits.accessEnded()
        let third = commits.accessEnded()
        let laterWaits = [waiting(second, 2), waiting(third, 3)]
        #expect(await eventually { syncs.count == 2 })
        // This one ends while two run: it waits for one of them to end.
        let fourth = commits.accessEnded()
        let lastWait = waiting(fourth, 4)
        try await Task.sleep(for: .milliseconds(50))
        #expect(answered.withLock { $0 }.isEmpty)
        #expect(syncs.count == 2)
        #expect(commits.syncCount == 2)
        syncs.gate.open()
        try await firstWait.value
        for wait in laterWaits { try await wait.value }
        try await lastWait.value
        #expect(answered.withLock { $0 }.sorted() == [1, 2, 3, 4])
        // One for the first, one shared by the two that ended during it,
        // one for the last.
        #expect(syncs.count == 3)
        #expect(commits.syncCount == 3)
        // An access already covered waits for nothing more.
        try await commits.waitUntilSynced(second)
        try commits.waitUntilSyncedBlocking(fourth)
        #expect(syncs.count == 3)
    }

    @Test("A sync that ends first answers every write that ended before it began, also those an earlier sync covers")
    func aLaterSyncAnswersEarlierWrites() async throws {
        // The first sync stays gated; the second, which began after both
        // writes ended, answers both.
        let syncs = Syncs(gated: [1])
        let commits = CommitSync(sync: { try syncs.sync() })
        let first = commits.accessEnded()
        let firstWait = Task { try await commits.waitUntilSynced(first) }
        #expect(await eventually { syncs.count == 1 })
        let second = commits.accessEnded()
        try await commits.waitUntilSynced(second)
        try await firstWait.value
        #expect(syncs.count == 2)
        syncs.gate.open()
    }

    @Test("A failed sync fails the writes waiting for it and every write after it")
    func failedSyncSticks() async throws {
        let syncs = Syncs(failing: DiskFailed())
        syncs.gate.open()
        let commits = CommitSync(sync: { try syncs.sync() })
        await #expect(throws: DiskFailed.self) { try await commits.waitUntilSynced(commits.accessEnded()) }
        await #expect(throws: DiskFailed.self) { try await commits.waitUntilSynced(commits.accessEnded()) }
        #expect(throws: DiskFailed.self) { try commits.waitUntilSyncedBlocking(commits.accessEnded()) }
        // The second and third were refused without another sync.
        #expect(syncs.count == 1)
    }

    @Test("A pool with group commit writes with synchronous NORMAL, syncs its log, and loses no write")
    func pool() async throws {
        let directory = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.groupCommit = true
        configuration.synchronous = .full
        let pool = try DatabasePool(path: directory.path("group.sqlite"), configuration: configuration)
        let commits = try #require(pool.commitSync)
        // The blocking write waits for a sync as well.
        let first = commits.syncCount
        try Self.blockingWrite(pool, "CREATE TABLE t (id INTEGER PRIMARY KEY, a)")
        #expect(commits.syncCount > first)
        #expect(try await pool.write { db in try db.fetchOne(Int.self, "PRAGMA synchronous") } == 1)
        let before = commits.syncCount
        try await withThrowingTaskGroup(of: Void.self) { group in
            for value in 0..<100 {
                group.addTask {
                    try await pool.write { db in try db.execute("INSERT INTO t (a) VALUES (?)", arguments: [value]) }
                }
            }
            try await group.waitForAll()
        }
        let syncs = commits.syncCount - before
        #expect((1...100).contains(syncs))
        // The other write methods wait for a sync too.
        try await pool.writeWithoutTransaction { db in try db.execute("INSERT INTO t (a) VALUES (100)") }
        _ = try await pool.write({ db in try db.execute("INSERT INTO t (a) VALUES (101)") }, thenRead: { _, _ in 0 })
        #expect(commits.syncCount > before + syncs)
        #expect(try await pool.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM t") } == 102)
        await pool.close()
        // Closed: the log was checkpointed into the file.
        let reopened = try DatabaseQueue(path: directory.path("group.sqlite"))
        #expect(try await reopened.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM t") } == 102)
    }

    @Test(
        "A write access that commits nothing waits for no sync of its own, only for the one covering a commit it could read"
    )
    func accessesThatCommitNothing() async throws {
        let directory = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.groupCommit = true
        let counting = Syncs()
        counting.gate.open()
        let pool = try DatabasePool(
            path: directory.path("quiet.sqlite"), configuration: configuration, maximumReaderCount: 2,
            sync: { try counting.sync() })
        try await pool.write { db in try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a)") }
        let before = counting.count
        // A write transaction that only reads, one that rolls back, one without a transaction that reads.
        #expect(try await pool.write { db in try db.fetchOne(Int.self, "SELECT count(*) FROM t") } == 0)
        struct Undo: Error {}
        await #expect(throws: Undo.self) {
            try await pool.write { db in
                try db.execute("INSERT INTO t (a) VALUES (1)")
                throw Undo()
            }
        }
        _ = try await pool.writeWithoutTransaction { db in try db.fetchOne(Int.self, "SELECT count(*) FROM t") }
        #expect(counting.count == before)
        // A commit is synced before its write returns.
        try await pool.write { db in try db.execute("INSERT INTO t (a) VALUES (2)") }
        #expect(counting.count == before + 1)
        await pool.close()

        // While a commit's sync runs, a write that commits nothing but
        // could read it waits for that sync, and starts no other.
        let gated = Syncs(gated: [2])
        let second = try DatabasePool(
            path: directory.path("gated.sqlite"), configuration: configuration, maximumReaderCount: 2,
            sync: { try gated.sync() })
        try await second.write { db in try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a)") }
        #expect(gated.count == 1)
        let answered = Locked<[String]>([])
        let insert = Task {
            try await second.write { db in try db.execute("INSERT INTO t (a) VALUES (1)") }
            answered.withLock { $0.append("insert") }
        }
        #expect(await eventually { gated.count == 2 })
        let reading = Task {
            let count = try await second.write { db in try db.fetchOne(Int.self, "SELECT count(*) FROM t") }
            answered.withLock { $0.append("read \(count ?? -1)") }
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(answered.withLock { $0 }.isEmpty)
        gated.gate.open()
        try await insert.value
        try await reading.value
        #expect(answered.withLock { $0 }.sorted() == ["insert", "read 1"])
        #expect(gated.count == 2)
        await second.close()
    }

    private static func blockingSynchronousMode(_ pool: DatabasePool) throws -> Int? {
        try pool.write { db in try db.fetchOne(Int.self, "PRAGMA synchronous") }
    }

    /// The pool's synchronous write, which an `async` test would not pick.
    private static func blockingWrite(_ pool: DatabasePool, _ sql: String) throws {
        try pool.write { db in try db.execute(sql: sql) }
    }

    @Test("Without group commit a pool keeps the synchronous mode it is given and syncs nothing itself")
    func off() throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("plain.sqlite"))
        #expect(pool.commitSync == nil)
        #expect(try Self.blockingSynchronousMode(pool) == 2)
    }
}
