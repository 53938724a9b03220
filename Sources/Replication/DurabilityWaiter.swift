import Dispatch
import Foundation

/// Waits until the replica holds what is committed, for many writers at
/// once with as few syncs as can be (group commit): `records serve
/// --durable` acknowledges a write only once ``waitUntilReplicated()``
/// returns.
///
/// At most one sync runs at a time. A sync covers every commit made before
/// it started, so a writer that arrives when no sync runs starts one, and a
/// writer that arrives while one runs (which may have started before its
/// commit) waits for the next, which starts as soon as the running one ends
/// and covers every writer that queued meanwhile. Under load, each sync
/// serves the whole queue: throughput does not fall to one write per sync.
///
/// The sync function blocks (Litestream's control socket): it runs on a
/// dispatch queue of its own, never on Swift's cooperative threads.
///
/// ```swift
/// let waiter = DurabilityWaiter(timeout: .seconds(5)) { _ = try supervisor.syncAndWait() }
/// try await store.save(person)               // committed locally
/// try await waiter.waitUntilReplicated()     // and now in the replica
/// ```
public final class DurabilityWaiter: @unchecked Sendable {
    /// The most a writer waits before ``waitUntilReplicated()`` throws.
    public let timeout: Duration

    private let sync: @Sendable () throws -> Void
    private let queue = DispatchQueue(label: "records.durability-sync")
    // Guarded by `lock`.
    private let lock = NSLock()
    /// Syncs started so far; sync number `started` is the running one.
    private var started = 0
    private var running = false
    /// The writers waiting, by the number of the sync that covers them.
    private var waiting: [Int: [UInt64: CheckedContinuation<Void, any Error>]] = [:]
    private var nextWriter: UInt64 = 0

    /// A waiter that calls `sync` to ship what is committed and wait until
    /// the replica holds it (it throws when it cannot).
    ///
    /// - Parameter timeout: The most a writer waits: a sync that takes
    ///   longer fails its writers (it still runs to its end before the next
    ///   starts).
    public init(timeout: Duration = .seconds(5), sync: @escaping @Sendable () throws -> Void) {
        self.timeout = timeout
        self.sync = sync
    }

    /// How many syncs were started so far.
    public var syncCount: Int { lock.withLock { started } }

    /// How many writers wait now.
    var waitingCount: Int { lock.withLock { waiting.values.reduce(0) { $0 + $1.count } } }

    /// Returns once a sync that started after this call (so after the
    /// caller's commit) has succeeded.
    ///
    /// - Throws: What the sync threw (Litestream down, the replica
    ///   unreachable), or ``ReplicationError`` when no sync succeeded
    ///   within ``timeout``.
    public func waitUntilReplicated() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let (writer, needed, startNow): (UInt64, Int, Bool) = lock.withLock {
                nextWriter += 1
                let needed = started + 1
                waiting[needed, default: [:]][nextWriter] = continuation
                guard !running else { return (nextWriter, needed, false) }
                running = true
                started = needed
                return (nextWriter, needed, true)
            }
            if startNow { run(needed) }
            let (seconds, attoseconds) = timeout.components
            let delay = DispatchTimeInterval.nanoseconds(
                Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in
                self?.expire(writer, waitingFor: needed)
            }
        }
    }

    private func run(_ number: Int) {
        queue.async { [self] in
            let result = Result { try sync() }
            finished(number, result)
        }
    }

    /// Answers sync `number`'s writers, and starts the next sync at once
    /// when writers wait for it.
    private func finished(_ number: Int, _ result: Result<Void, any Error>) {
        let (writers, startNext): ([CheckedContinuation<Void, any Error>], Bool) = lock.withLock {
            let writers = waiting.removeValue(forKey: number).map { Array($0.values) } ?? []
            if let queued = waiting[number + 1], !queued.isEmpty {
                started = number + 1
                return (writers, true)
            }
            running = false
            return (writers, false)
        }
        if startNext { run(number + 1) }
        for writer in writers { writer.resume(with: result) }
    }

    /// Fails a writer still waiting after ``timeout``.
    private func expire(_ writer: UInt64, waitingFor number: Int) {
        let continuation: CheckedContinuation<Void, any Error>? = lock.withLock {
            let found = waiting[number]?.removeValue(forKey: writer)
            if waiting[number]?.isEmpty == true { waiting[number] = nil }
            return found
        }
        continuation?.resume(
            throwing: ReplicationError("the replica did not confirm the write within \(timeout)"))
    }
}
