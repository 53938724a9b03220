import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

#if canImport(Glibc)
    import Glibc
#endif

/// Children that run until killed: by the test, or by a watchdog thread
/// once `deadline` has passed (so that a broken wait fails the test then,
/// instead of hanging it).
private final class Sleepers: Sendable {
    private let pids = Locked<[Int32]>([])
    private let expired = Locked(false)
    private let startedCount = Locked(0)

    init(deadline: Duration) {
        let (seconds, _) = deadline.components
        Thread { [self] in
            Thread.sleep(forTimeInterval: TimeInterval(seconds))
            expired.withLock { $0 = true }
            killAll()
        }.start()
    }

    /// Records a started child; the number started so far.
    func started(_ pid: Int32) -> Int {
        let count = startedCount.withLock {
            $0 += 1
            return $0
        }
        pids.withLock { $0.append(pid) }
        if expired.withLock({ $0 }) { kill(pid, SIGKILL) }
        return count
    }

    /// Kills the children recorded so far, once each (a later call kills
    /// none of them: their numbers may belong to other processes by then).
    func killAll() {
        let all = pids.withLock { pids in
            let all = pids
            pids = []
            return all
        }
        for pid in all { kill(pid, SIGKILL) }
    }
}

@Suite("Child processes: waiting for them holds no cooperative thread")
struct ChildProcessTests {
    /// More children than the cooperative pool has threads, each running
    /// until killed: if waiting for a child held a thread, the pool would be
    /// full until the watchdog killed them, and this test's own task could
    /// not resume before one had ended. Here it resumes while all of them
    /// still run, and kills them itself.
    @Test("A task can run while more children than cooperative threads are being waited for")
    func waitingLeavesThePoolFree() async throws {
        let count = 2 * ProcessInfo.processInfo.activeProcessorCount + 1
        let sleepers = Sleepers(deadline: .seconds(300))
        let finished = Locked(0)
        let (allStarted, signal) = AsyncStream.makeStream(of: Void.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask {
                    _ = try await ChildProcess.run(URL(fileURLWithPath: "/bin/sleep"), ["600"]) { child in
                        if sleepers.started(child.processIdentifier) == count { signal.finish() }
                    }
                    finished.withLock { $0 += 1 }
                }
            }
            for await _ in allStarted {}
            // Running again, on a cooperative thread: no child may have
            // ended yet.
            #expect(finished.withLock { $0 } == 0)
            sleepers.killAll()
            try await group.waitForAll()
        }
        #expect(finished.withLock { $0 } == count)
    }
}
