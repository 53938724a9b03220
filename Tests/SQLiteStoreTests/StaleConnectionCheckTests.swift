import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// What a test's check sees and does: whether to call the connection
/// stale, how many connections were given a check, how many checks ran,
/// and the reasons reported when a connection was replaced.
private final class CheckProbe: Sendable {
    let stale = Locked(false)
    let failing = Locked(false)
    let connectionsOpened = Locked(0)
    let checksRun = Locked(0)
    let replacements = Locked<[String]>([])

    func check(every interval: Duration) -> StaleConnectionCheck {
        StaleConnectionCheck(every: interval, onReplace: { reason in self.replacements.withLock { $0.append(reason) } })
        {
            let number = self.connectionsOpened.withLock { count in
                count += 1
                return count
            }
            return { _ in
                self.checksRun.withLock { $0 += 1 }
                if self.failing.withLock({ $0 }) { throw SQLiteError.misuse("the check cannot run") }
                return self.stale.withLock { $0 } ? "connection \(number) fell behind" : nil
            }
        }
    }
}

/// A connection that stops following its database is replaced before an
/// access uses it, and only when the configuration's check says so.
@Suite("A stale connection is replaced")
struct StaleConnectionCheckTests {
    private func queue(_ dir: TemporaryDirectory, _ probe: CheckProbe, every interval: Duration = .zero) throws
        -> DatabaseQueue
    {
        var configuration = Configuration()
        configuration.staleConnectionCheck = probe.check(every: interval)
        let queue = try DatabaseQueue(path: dir.path("db.sqlite"), configuration: configuration)
        try queue.write { db in
            try db.execute("CREATE TABLE t (a INTEGER)")
            try db.execute("INSERT INTO t VALUES (1)")
        }
        // A temporary table lives only as long as its connection.
        try queue.writeWithoutTransaction { db in try db.execute("CREATE TEMP TABLE marker (x)") }
        return queue
    }

    private func hasMarker(_ queue: DatabaseQueue) throws -> Bool {
        try queue.read { db in
            try db.fetchOne(Int.self, "SELECT COUNT(*) FROM temp.sqlite_master WHERE name = 'marker'") == 1
        }
    }

    @Test("A queue keeps its connection while the check finds it current")
    func currentConnectionIsKept() throws {
        let dir = try TemporaryDirectory()
        let probe = CheckProbe()
        let queue = try queue(dir, probe)
        for _ in 0..<5 { #expect(try hasMarker(queue)) }
        #expect(probe.connectionsOpened.withLock { $0 } == 1)
        #expect(probe.checksRun.withLock { $0 } >= 5)
        #expect(probe.replacements.withLock { $0 }.isEmpty)
    }

    @Test("A queue replaces a stale connection before the access, which reads the same database")
    func staleConnectionIsReplaced() throws {
        let dir = try TemporaryDirectory()
        let probe = CheckProbe()
        let queue = try queue(dir, probe)
        probe.stale.withLock { $0 = true }
        let rows = try queue.read { db in try db.fetchAll(Int.self, "SELECT a FROM t") }
        #expect(rows == [1])
        probe.stale.withLock { $0 = false }
        #expect(try !hasMarker(queue))
        #expect(probe.replacements.withLock { $0 } == ["connection 1 fell behind"])
        #expect(probe.connectionsOpened.withLock { $0 } == 2)
        // The new connection is the queue's from now on.
        try queue.writeWithoutTransaction { db in try db.execute("CREATE TEMP TABLE marker (x)") }
        #expect(try hasMarker(queue))
        #expect(try hasMarker(queue))
    }

    @Test("Between two checks of a connection at least the interval passes")
    func checksAreSpacedByTheInterval() throws {
        let dir = try TemporaryDirectory()
        let probe = CheckProbe()
        let queue = try queue(dir, probe, every: .seconds(3600))
        probe.stale.withLock { $0 = true }
        for _ in 0..<5 { #expect(try hasMarker(queue)) }
        #expect(probe.checksRun.withLock { $0 } == 0)
        #expect(probe.replacements.withLock { $0 }.isEmpty)
    }

    @Test("A check that throws leaves the connection in place")
    func failingCheckKeepsTheConnection() throws {
        let dir = try TemporaryDirectory()
        let probe = CheckProbe()
        let queue = try queue(dir, probe)
        probe.failing.withLock { $0 = true }
        probe.stale.withLock { $0 = true }
        #expect(try hasMarker(queue))
        #expect(probe.replacements.withLock { $0 }.isEmpty)
        #expect(probe.connectionsOpened.withLock { $0 } == 1)
    }

    @Test("An async access is checked like a synchronous one")
    func asyncAccessIsChecked() async throws {
        let dir = try TemporaryDirectory()
        let probe = CheckProbe()
        let queue = try queue(dir, probe)
        probe.stale.withLock { $0 = true }
        let count = try await queue.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") }
        #expect(count == 1)
        #expect(probe.replacements.withLock { $0 }.count == 1)
    }

    @Test("A pool's readers are checked and replaced, and see the writer's commits")
    func poolReadersAreReplaced() throws {
        let dir = try TemporaryDirectory()
        let probe = CheckProbe()
        var configuration = Configuration()
        configuration.staleConnectionCheck = probe.check(every: .zero)
        let pool = try DatabasePool(path: dir.path("db.sqlite"), configuration: configuration)
        try pool.write { db in
            try db.execute("CREATE TABLE t (a INTEGER)")
            try db.execute("INSERT INTO t VALUES (1)")
        }
        #expect(try pool.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") } == 1)
        let openedBefore = probe.connectionsOpened.withLock { $0 }
        probe.stale.withLock { $0 = true }
        try pool.write { db in try db.execute("INSERT INTO t VALUES (2)") }
        #expect(try pool.read { db in try db.fetchAll(Int.self, "SELECT a FROM t ORDER BY a") } == [1, 2])
        #expect(probe.connectionsOpened.withLock { $0 } > openedBefore)
        #expect(!probe.replacements.withLock { $0 }.isEmpty)
    }

    @Test("A private in-memory queue is never checked, since a new connection would lose its data")
    func inMemoryQueueIsNotChecked() throws {
        let probe = CheckProbe()
        var configuration = Configuration()
        configuration.staleConnectionCheck = probe.check(every: .zero)
        probe.stale.withLock { $0 = true }
        let queue = try DatabaseQueue.inMemory(configuration: configuration)
        try queue.write { db in try db.execute("CREATE TABLE t (a INTEGER)") }
        #expect(try queue.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") } == 0)
        #expect(probe.connectionsOpened.withLock { $0 } == 0)
    }
}
