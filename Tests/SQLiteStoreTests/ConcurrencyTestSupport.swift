import Dispatch
import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// A one-shot signal between threads and tasks, for tests that need to know
/// that something has happened rather than to wait and hope.
///
/// Waits give up after `timeout` with ``GateTimeout``, so that a broken
/// implementation fails a test instead of hanging the suite. The timeout is
/// a guard against hangs, not a measurement.
final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())
    private let semaphore = DispatchSemaphore(value: 0)
    let name: String

    init(_ name: String) { self.name = name }

    static let timeout: Duration = .seconds(240)

    var isOpen: Bool { state.withLock { $0.isOpen } }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.isOpen else { return [] }
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        semaphore.signal()
        for waiter in waiters { waiter.resume() }
    }

    /// Blocks the current thread: use it on threads of your own or inside
    /// access closures, never directly in an `async` test body.
    func waitBlocking() throws {
        let seconds = Double(Self.timeout.components.seconds)
        guard semaphore.wait(timeout: .now() + seconds) == .success else { throw GateTimeout(gate: name) }
        semaphore.signal()  // stays open for later waiters
    }

    /// Suspends the current task until the gate opens.
    func wait() async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let isOpen = self.state.withLock { state -> Bool in
                        if state.isOpen { return true }
                        state.waiters.append(continuation)
                        return false
                    }
                    if isOpen { continuation.resume() }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: Self.timeout)
                return false
            }
            let opened = try await group.next() ?? false
            group.cancelAll()
            if !opened {
                // Let the first task finish.
                self.open()
                throw GateTimeout(gate: name)
            }
        }
    }
}

struct GateTimeout: Error, CustomStringConvertible {
    let gate: String
    var description: String { "gave up waiting for \(gate)" }
}

/// An in-memory queue with an empty table `t (id, a)`.
func makeQueue() throws -> DatabaseQueue {
    let queue = try DatabaseQueue.inMemory()
    try queue.write { db in try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a)") }
    return queue
}

/// The number of rows in `t`.
func rowCount(_ reader: some DatabaseReader) throws -> Int {
    try reader.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") ?? -1 }
}

/// A query that runs for hours unless interrupted.
let endlessQuery = """
    WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000000)
    SELECT count(*) FROM c
    """

func isMisuse(_ error: any Error, mentioning text: String) -> Bool {
    guard let error = error as? SQLiteError else { return false }
    return error.code == .misuse && error.message.contains(text)
}

/// An access that holds its connection until ``finish()``.
struct HeldAccess {
    private let release: Gate
    private let task: Task<Void, any Error>

    /// Starts an access through `access` (such as `{ try await queue.write($0) }`)
    /// and returns once its closure is running.
    static func start(
        _ access: @escaping @Sendable (@escaping @Sendable (Database) throws -> Void) async throws -> Void
    ) async throws -> HeldAccess {
        let holding = Gate("holding")
        let release = Gate("release")
        let task = Task {
            try await access { _ in
                holding.open()
                try release.waitBlocking()
            }
        }
        try await holding.wait()
        return HeldAccess(release: release, task: task)
    }

    /// Lets the access end, and waits for it.
    func finish() async throws {
        release.open()
        try await task.value
    }
}

/// Starts `access`, whose closure calls ``Database/runEndless(_:signalling:)``
/// with the gate it is given; cancels the task once the endless statement
/// runs, and expects `CancellationError`.
func expectCancellationWhileRunning<T: Sendable>(
    _ access: @escaping @Sendable (Gate) async throws -> T, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let running = Gate("endless statement running")
    let task = Task { try await access(running) }
    try await running.wait()
    task.cancel()
    await #expect(throws: CancellationError.self, sourceLocation: sourceLocation) { try await task.value }
}

extension Database {
    /// Runs `sql` (built on ``endlessQuery``, which it must contain) and
    /// opens `gate` as soon as it starts running: it only ends when
    /// interrupted.
    func runEndless(_ sql: String = endlessQuery, signalling gate: Gate) throws {
        trace(options: .statements) { event in
            if event.sql.contains("RECURSIVE") { gate.open() }
        }
        defer { trace(nil) }
        try execute(sql: sql)
    }
}
