import Foundation
import TestSupport
import Testing

@testable import RecordsWeb

@Suite("Accounts: the password gate", .tags(.concurrency))
struct AccountsPasswordGateTests {
    /// Counts how many bodies run at once, and the most seen.
    final class Meter: @unchecked Sendable {
        private let lock = NSLock()
        private var now = 0
        private(set) var most = 0
        private(set) var finished = 0
        func enter() {
            lock.withLock {
                now += 1; most = max(most, now)
            }
        }
        func leave() {
            lock.withLock {
                now -= 1; finished += 1
            }
        }
        var peak: Int { lock.withLock { most } }
        var done: Int { lock.withLock { finished } }
    }

    struct Failure: Error {}

    @Test func noMoreThanTheLimitRunAtOnceAndAllRun() async throws {
        let gate = PasswordGate(limit: 2)
        let meter = Meter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    await gate.run {
                        meter.enter()
                        // Long enough for the others to queue up behind it.
                        for _ in 0..<20 { await Task.yield() }
                        try? await Task.sleep(for: .milliseconds(5))
                        meter.leave()
                    }
                }
            }
        }
        #expect(meter.peak <= 2)
        #expect(meter.done == 12)
        #expect(await gate.load == (0, 0))
    }

    @Test func aFailingBodyGivesItsPlaceBack() async throws {
        let gate = PasswordGate(limit: 1)
        for _ in 0..<3 {
            await #expect(throws: Failure.self) { try await gate.run { throw Failure() } }
        }
        #expect(await gate.run { 42 } == 42)
        #expect(await gate.load == (0, 0))
    }
}
