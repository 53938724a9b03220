import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// Tests run as tasks on Swift's cooperative thread pool, which has one
// thread per core: two on a two-core machine. A test that blocks its
// thread (`Process.waitUntilExit`, a blocking read of a pipe) takes one of
// them away from every other test for as long as its child runs, and two
// such tests stop the whole suite. These helpers wait for child processes
// and do blocking work without holding a cooperative thread.

/// Runs `work` on a thread of its own and suspends until it returns, so
/// that a blocking call inside (a read of a pipe or socket, a poll with
/// `usleep`) holds that thread, not one of the cooperative pool's.
public func onOwnThread<T: Sendable, E: Error>(_ work: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, E>, Never>) in
        let thread = Thread { continuation.resume(returning: Result { () throws(E) -> T in try work() }) }
        thread.stackSize = 1 << 20
        thread.start()
    }
    return try result.get()
}

/// A started child process whose exit is awaited, not waited for: the
/// waiting task is resumed from the process's termination handler and
/// holds no thread meanwhile.
public final class ChildProcess: Sendable {
    /// The running (or finished) process. Its configuration must not be
    /// changed once started.
    public let process: Process
    private let exit = ExitSignal()

    /// Starts `process`, configured but not yet run.
    public init(starting process: Process) throws {
        self.process = process
        // Set before `run()`, so that no exit can come before it.
        let exit = self.exit
        process.terminationHandler = { _ in exit.signal() }
        try process.run()
    }

    /// The child's process identifier.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Whether the child has not yet exited.
    public var isRunning: Bool { process.isRunning }

    /// The exit status, or the signal that ended the child; valid once it
    /// has exited.
    public var terminationStatus: Int32 { process.terminationStatus }

    /// Whether the child exited or was ended by a signal; valid once it
    /// has exited.
    public var terminationReason: Process.TerminationReason { process.terminationReason }

    /// Sends `signal` to the child.
    public func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Suspends until the child has exited; its exit status (or the signal
    /// that ended it).
    @discardableResult
    public func exited() async -> Int32 {
        await exit.wait()
        return process.terminationStatus
    }

    /// Suspends until the child has exited or `timeout` has passed; whether
    /// it exited.
    public func exited(within timeout: Duration) async -> Bool {
        await exit.wait(timeout: timeout)
    }
}

/// A one-time event (a child's exit) that tasks await.
private final class ExitSignal: @unchecked Sendable {
    private struct State {
        var done = false
        var next = 0
        var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]
    }

    private var state = State()
    private let lock = NSLock()

    func signal() {
        let waiters = lock.withLock {
            state.done = true
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    func wait() async {
        _ = await wait(timeout: nil)
    }

    /// True once signalled; false if `timeout` passed first.
    func wait(timeout: Duration?) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let id: Int? = lock.withLock {
                if state.done { return nil }
                let id = state.next
                state.next += 1
                state.waiters[id] = continuation
                return id
            }
            guard let id else { return continuation.resume(returning: true) }
            guard let timeout else { return }
            let (seconds, attoseconds) = timeout.components
            let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
                lock.withLock { state.waiters.removeValue(forKey: id) }?.resume(returning: false)
            }
        }
    }
}

/// What a finished child process did: its status and its output.
public struct ChildRun: Sendable, CustomStringConvertible {
    /// The exit status, or the number of the signal that ended the child.
    public let status: Int32
    /// Whether the child exited or was ended by a signal.
    public let reason: Process.TerminationReason
    /// Everything written to standard output (and to standard error, when
    /// they were merged).
    public let stdout: Data
    /// Everything written to standard error (empty when merged).
    public let stderr: Data

    /// Standard output as text.
    public var output: String { String(decoding: stdout, as: UTF8.self) }

    /// Standard error as text.
    public var errors: String { String(decoding: stderr, as: UTF8.self) }

    public var description: String { "exit \(status)\nstdout:\n\(output)\nstderr:\n\(errors)" }
}

extension ChildProcess {
    /// Runs `executable` to its end and returns its status and output,
    /// suspending (not blocking) while it runs.
    ///
    /// Its output goes to files, not pipes, so a full pipe cannot block
    /// the child and nothing has to read while it runs.
    ///
    /// - Parameters:
    ///   - environment: The child's whole environment; nil inherits this
    ///     process's.
    ///   - directory: The child's working directory; nil inherits this
    ///     process's.
    ///   - input: Standard input; nil is empty (`/dev/null`).
    ///   - mergingStandardError: Whether standard error goes to the same
    ///     file as standard output (then `stderr` is empty).
    ///   - whileRunning: Called on a thread of its own once the child has
    ///     started; the run waits for it to return and for the child to
    ///     exit. For work that polls or blocks.
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil,
        input: Data? = nil, mergingStandardError: Bool = false,
        whileRunning: (@Sendable (ChildProcess) -> Void)? = nil
    ) async throws -> ChildRun {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        defer { try? out.close() }
        let err = try FileHandle(forWritingTo: errURL)
        defer { try? err.close() }

        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = directory }
        process.standardOutput = out
        process.standardError = mergingStandardError ? out : err
        var inputHandle: FileHandle?
        defer { try? inputHandle?.close() }
        if let input {
            let inURL = scratch.appendingPathComponent("stdin")
            try input.write(to: inURL)
            inputHandle = try FileHandle(forReadingFrom: inURL)
            process.standardInput = inputHandle
        } else {
            process.standardInput = FileHandle.nullDevice
        }

        let child = try ChildProcess(starting: process)
        if let whileRunning { await onOwnThread { whileRunning(child) } }
        let status = await child.exited()
        return ChildRun(
            status: status, reason: child.terminationReason, stdout: try Data(contentsOf: outURL),
            stderr: try Data(contentsOf: errURL))
    }
}
