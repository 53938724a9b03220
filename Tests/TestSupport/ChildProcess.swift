import Foundation
import Spawn

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

/// A started child process whose exit is awaited, not waited for: Spawn's
/// thread waits for the child (`waitpid`), and the awaiting tasks hold no
/// thread meanwhile.
///
/// The child is started with `posix_spawn` (Spawn's `SpawnedProcess`),
/// not `Process.run()`: on Linux, Foundation's `run()` (Swift 6.3.1) reads
/// `/proc/self/fd` with a 256-byte copy of each directory entry, which now
/// and then reads past glibc's buffer into an unmapped page and crashes the
/// test process (seen in the suite once several tests started children at
/// the same time). The `Process` given only describes the child: its
/// executable, arguments, environment, working directory and standard
/// streams. Nothing else of the test process leaks into the child (a
/// pipe's write end held by another child would keep its reader waiting),
/// and it starts with default signal handling.
public final class ChildProcess: Sendable {
    /// The child's process identifier.
    public let processIdentifier: Int32
    private let child: SpawnedProcess
    private let exit: ExitSignal

    /// Starts the child `process` describes (configured, never run).
    public init(starting process: Process) throws {
        guard let executable = process.executableURL?.path else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "no executable to start"])
        }
        let exit = ExitSignal()
        child = try SpawnedProcess(
            executable: executable, arguments: process.arguments ?? [], environment: process.environment,
            workingDirectory: process.currentDirectoryURL?.path, standardInput: Self.stream(process.standardInput),
            standardOutput: Self.stream(process.standardOutput), standardError: Self.stream(process.standardError)
        ) { _, _ in exit.signal() }
        self.exit = exit
        processIdentifier = child.processIdentifier
    }

    /// A `Process`'s standard stream as Spawn's: a pipe or an open file,
    /// `/dev/null` for `FileHandle.nullDevice` (which has no descriptor),
    /// anything else inherited.
    private static func stream(_ stream: Any?) -> SpawnedProcess.StandardStream {
        switch stream {
        case let handle as FileHandle: handle === FileHandle.nullDevice ? .nullDevice : .fileHandle(handle)
        case let pipe as Pipe: .pipe(pipe)
        default: .inherited
        }
    }

    /// Whether the child has not yet exited.
    public var isRunning: Bool { child.isRunning }

    /// The exit status, or the signal that ended the child; valid once it
    /// has exited.
    public var terminationStatus: Int32 { child.termination?.status ?? 0 }

    /// Whether the child exited or was ended by a signal; valid once it
    /// has exited.
    public var terminationReason: Process.TerminationReason {
        guard case .killed = child.termination else { return .exit }
        return .uncaughtSignal
    }

    /// Sends `signal` to the child, unless it has already been waited for
    /// (its process identifier may then be another process's).
    public func send(_ signal: Int32) { child.send(signal) }

    /// Suspends until the child has exited; its exit status (or the signal
    /// that ended it).
    @discardableResult
    public func exited() async -> Int32 {
        await exit.wait()
        return terminationStatus
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

extension ChildProcess {
    /// For a probe (see ``startingTestProbe(filter:environment:log:)``) that
    /// has reached its moment: waits for the parent's signal, at most
    /// ``livenessTimeout``. Until then the probe keeps what it holds open.
    ///
    /// Not shorter: the parent's next step after seeing the moment may wait
    /// a minute for a cooperative thread on a loaded machine, and a probe
    /// that gave up and exited first would close what the parent checks.
    public static func probeWaitsForItsEnd() {
        let deadline = ContinuousClock.now.advanced(by: livenessTimeout)
        while ContinuousClock.now < deadline { usleep(100_000) }
    }

    /// Starts this test binary again, running only the tests `filter`
    /// selects: a probe suite that does its part in a child process (and
    /// skips itself unless one of `environment`'s variables is set).
    ///
    /// - Parameters:
    ///   - filter: The `--filter` for the child's run, usually the probe
    ///     suite's type name.
    ///   - environment: Added to this process's environment.
    ///   - log: A file for the child's standard output and error, created
    ///     empty; nil discards them. Standard input is empty.
    public static func startingTestProbe(
        filter: String, environment extra: [String: String], log: String? = nil
    ) throws -> ChildProcess {
        let process = Process()
        process.executableURL = URL(
            fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = ["--testing-library", "swift-testing", "--filter", filter]
        process.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        process.standardInput = FileHandle.nullDevice
        var handle: FileHandle?
        defer { try? handle?.close() }
        if let log {
            guard FileManager.default.createFile(atPath: log, contents: nil),
                let opened = FileHandle(forWritingAtPath: log)
            else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: log]) }
            handle = opened
            process.standardOutput = opened
            process.standardError = opened
        } else {
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
        }
        return try ChildProcess(starting: process)
    }
}
