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

/// A started child process whose exit is awaited, not waited for: a thread
/// of its own waits for the child (`waitpid`), and the awaiting tasks hold
/// no thread meanwhile.
///
/// The child is started with `posix_spawn`, not `Process.run()`: on Linux,
/// Foundation's `run()` (Swift 6.3.1) reads `/proc/self/fd` with a 256-byte
/// copy of each directory entry, which now and then reads past glibc's
/// buffer into an unmapped page and crashes the test process (seen in the
/// suite once several tests started children at the same time). The
/// `Process` given only describes the child: its executable, arguments,
/// environment, working directory and standard streams.
public final class ChildProcess: Sendable {
    /// The child's process identifier.
    public let processIdentifier: Int32
    private let exit = ExitSignal()
    private let status = ExitStatus()

    /// Starts the child `process` describes (configured, never run).
    public init(starting process: Process) throws {
        guard let executable = process.executableURL?.path else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "no executable to start"])
        }
        let arguments = [executable] + (process.arguments ?? [])
        let environment = (process.environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The parent's ends of pipes given to the child, closed once it runs.
        var parentEnds: [FileHandle] = []
        for (stream, target) in [
            (process.standardInput, STDIN_FILENO), (process.standardOutput, STDOUT_FILENO),
            (process.standardError, STDERR_FILENO),
        ] {
            let descriptor: Int32
            switch stream {
            case let handle as FileHandle:
                descriptor = handle.fileDescriptor
            case let pipe as Pipe:
                let childEnd = target == STDIN_FILENO ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                descriptor = childEnd.fileDescriptor
                if !parentEnds.contains(where: { $0 === childEnd }) { parentEnds.append(childEnd) }
            default:
                continue  // inherited
            }
            posix_spawn_file_actions_adddup2(&actions, descriptor, target)
        }
        // Nothing else of the test process leaks into the child (a pipe's
        // write end held by another child would keep its reader waiting).
        if let closeFrom = SpawnExtensions.closeFrom { _ = closeFrom(&actions, 3) }
        if let directory = process.currentDirectoryURL?.path {
            guard let changeDirectory = SpawnExtensions.changeDirectory else {
                throw CocoaError(.featureUnsupported)
            }
            _ = changeDirectory(&actions, directory)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child starts with no signal blocked and every signal's
        // default action, whatever the test process's threads had.
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var pid: pid_t = 0
        let code = withCStrings(arguments) { argv in
            withCStrings(environment) { envp in posix_spawn(&pid, executable, &actions, &attributes, argv, envp) }
        }
        guard code == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EINVAL)
        }
        for end in parentEnds { try? end.close() }
        processIdentifier = pid

        // The wait holds a thread of its own, never a cooperative one.
        let exit = self.exit
        let status = self.status
        let child = pid
        let waiter = Thread {
            var raw: Int32 = 0
            while waitpid(child, &raw, 0) == -1 && errno == EINTR {}
            status.set(raw)
            exit.signal()
        }
        waiter.stackSize = 1 << 16
        waiter.start()
    }

    /// Whether the child has not yet exited.
    public var isRunning: Bool { status.get() == nil }

    /// The exit status, or the signal that ended the child; valid once it
    /// has exited.
    public var terminationStatus: Int32 {
        guard let raw = status.get() else { return 0 }
        return raw & 0x7F == 0 ? (raw >> 8) & 0xFF : raw & 0x7F
    }

    /// Whether the child exited or was ended by a signal; valid once it
    /// has exited.
    public var terminationReason: Process.TerminationReason {
        guard let raw = status.get() else { return .exit }
        return raw & 0x7F == 0 ? .exit : .uncaughtSignal
    }

    /// Sends `signal` to the child, unless it has already been waited for
    /// (its process identifier may then be another process's).
    public func send(_ signal: Int32) {
        guard isRunning else { return }
        kill(processIdentifier, signal)
    }

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

/// glibc's `posix_spawn` extensions, which Swift's Glibc module does not
/// declare, looked up once.
private enum SpawnExtensions {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias ChangeDirectory =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    static let closeFrom: CloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")
    static let changeDirectory: ChangeDirectory? = symbol("posix_spawn_file_actions_addchdir_np")

    private static func symbol<T>(_ name: String) -> T? {
        guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(address, to: T.self)
    }
}

/// `strings` as a NULL-terminated array of C strings, for `body`.
private func withCStrings<R>(
    _ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R
) -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

/// The raw `waitpid` status, once the child has exited.
private final class ExitStatus: @unchecked Sendable {
    private var raw: Int32?
    private let lock = NSLock()

    func set(_ value: Int32) { lock.withLock { raw = value } }
    func get() -> Int32? { lock.withLock { raw } }
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
