import Dispatch
import Foundation
import TestSupport
import Testing

@testable import Replication

/// The group commit of `records serve --durable`, with fake syncs: one
/// sync at a time, each covering every writer that arrived before it
/// started, failures and timeouts reaching the writers.
@Suite("Durability waiter", .tags(.concurrency))
struct DurabilityWaiterTests {
    /// A sync that counts its calls; the first blocks until ``open()``.
    private final class GatedSync: @unchecked Sendable {
        private let lock = NSLock()
        private let gate = DispatchSemaphore(value: 0)
        private var calls = 0

        var count: Int { lock.withLock { calls } }

        func sync() {
            let first = lock.withLock {
                calls += 1
                return calls == 1
            }
            if first { gate.wait() }
        }

        func open() { gate.signal() }
    }

    @Test("Sixteen concurrent writers share two syncs: the one running when they came, and the next")
    func concurrentWritersShareSyncs() async throws {
        let fake = GatedSync()
        let waiter = DurabilityWaiter(timeout: livenessTimeout) { fake.sync() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<16 { group.addTask { try await waiter.waitUntilReplicated() } }
            // The first writer's sync holds; the other fifteen queue behind it.
            #expect(await eventually { waiter.waitingCount == 16 })
            fake.open()
            try await group.waitForAll()
        }
        #expect(waiter.syncCount == 2)
        #expect(fake.count == 2)
        #expect(waiter.waitingCount == 0)
    }

    @Test("Every writer returns only after a sync that started after its commit has ended")
    func aWriterIsCoveredBySyncThatStartedAfterIt() async throws {
        let ledger = Ledger()
        let waiter = DurabilityWaiter(timeout: livenessTimeout) {
            let upTo = ledger.committed
            usleep(500)
            ledger.replicated(upTo)
        }
        let writers = 64
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<writers {
                group.addTask {
                    if index % 3 == 0 { try await Task.sleep(for: .microseconds(200 * index)) }
                    let mine = ledger.commit()
                    try await waiter.waitUntilReplicated()
                    let held = ledger.replicatedUpTo
                    #expect(held >= mine, "commit \(mine) acknowledged with the replica at \(held)")
                }
            }
            try await group.waitForAll()
        }
        #expect(waiter.syncCount >= 1)
        #expect(waiter.syncCount <= writers)
    }

    @Test("A failed sync fails its writers, and the next writer's sync is tried anew")
    func aFailedSyncFailsItsWriters() async throws {
        let failures = Failures(remaining: 1)
        let waiter = DurabilityWaiter(timeout: livenessTimeout) { try failures.sync() }
        await #expect(throws: ReplicationError("cannot reach Litestream's control socket")) {
            try await waiter.waitUntilReplicated()
        }
        try await waiter.waitUntilReplicated()
        #expect(waiter.syncCount == 2)
    }

    @Test("A sync that hangs fails its writers after the timeout")
    func aHangingSyncTimesOut() async throws {
        let fake = GatedSync()
        let waiter = DurabilityWaiter(timeout: .milliseconds(50)) { fake.sync() }
        let error = await #expect(throws: ReplicationError.self) { try await waiter.waitUntilReplicated() }
        #expect(error?.message.contains("did not confirm the write within") == true)
        #expect(waiter.waitingCount == 0)
        fake.open()
    }

    /// Commits numbered in order, and how far the fake replica holds them.
    private final class Ledger: @unchecked Sendable {
        private let lock = NSLock()
        private var last = 0
        private var held = 0
        var committed: Int { lock.withLock { last } }
        var replicatedUpTo: Int { lock.withLock { held } }
        func commit() -> Int {
            lock.withLock {
                last += 1
                return last
            }
        }
        func replicated(_ upTo: Int) { lock.withLock { held = max(held, upTo) } }
    }

    private final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var remaining: Int
        init(remaining: Int) { self.remaining = remaining }
        func sync() throws {
            let fail = lock.withLock {
                defer { remaining -= 1 }
                return remaining > 0
            }
            if fail { throw ReplicationError("cannot reach Litestream's control socket") }
        }
    }
}
