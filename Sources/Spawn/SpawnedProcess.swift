import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with `posix_spawn`, in place of Foundation's
/// `Process.run()`.
///
/// On Linux, `Process.run()` (Swift 6.3.1) lists `/proc/self/fd` with a
/// 256-byte copy of each directory entry, which can read past glibc's
/// buffer into an unmapped page and crash the parent; the more descriptors
/// it has open (a server's connections), the likelier. This type starts the
/// child without that listing, and with nothing of the parent's but its
/// standard streams:
///
/// - Descriptors: the child gets only standard input, output and error, as
///   asked; every other descriptor of the parent is closed in the child,
///   whether or not it was opened close-on-exec.
/// - Signals: the child starts with no signal blocked and every signal's
///   default action, whatever the spawning thread blocked or the parent
///   ignores (`SIGPIPE`, say).
///
/// A thread of its own waits for the child; ``waitUntilExit()`` blocks
/// until then, and the `onExit` handler given at the start runs on that
/// thread once the child has exited.
public final class SpawnedProcess: @unchecked Sendable {
    /// How a child ended.
    public enum Termination: Sendable, Hashable {
        /// It exited with this status (0 to 255; -1 when something else
        /// collected the child first, as when `SIGCHLD` is ignored).
        case exited(status: Int32)
        /// This signal ended it.
        case killed(signal: Int32)

        /// The exit status, or the number of the signal that ended the
        /// child, as Foundation's `Process.terminationStatus` gives it.
        public var status: Int32 {
            switch self {
            case .exited(let status): status
            case .killed(let signal): signal
            }
        }

        /// The ending `waitpid` reported as `raw`.
        init(waitStatus raw: Int32) {
            let signal = raw & 0x7F
            self = signal == 0 ? .exited(status: (raw >> 8) & 0xFF) : .killed(signal: signal)
        }
    }

    /// Where one of the child's standard streams goes.
    public enum StandardStream {
        /// The parent's own stream.
        case inherited
        /// `/dev/null`: nothing to read, and what is written is dropped.
        case nullDevice
        /// An open file (or socket, or pipe end) the parent keeps.
        case fileHandle(FileHandle)
        /// The pipe's end for the child's side of the stream (the reading
        /// end for standard input, else the writing end), which the parent
        /// closes once the child has started; the parent uses the other.
        case pipe(Pipe)
    }

    /// The child's process identifier.
    public let processIdentifier: Int32

    /// The pipes and files given for the standard streams, kept for as long
    /// as this object is (as `Process` keeps them): a pipe released while
    /// the child runs would close its reading end, and the child's next
    /// write would end it with `SIGPIPE`.
    private let streams: [StandardStream]

    /// Guards `ended` and signals its change.
    private let condition = NSCondition()
    private var ended: Termination?

    /// Starts `executable` with `arguments`.
    ///
    /// - Parameters:
    ///   - executable: The program's path (not looked up on `PATH`); also
    ///     the child's first argument.
    ///   - arguments: The arguments after the program's path.
    ///   - environment: The child's whole environment; nil gives it this
    ///     process's.
    ///   - workingDirectory: The child's working directory; nil keeps this
    ///     process's.
    ///   - standardInput: Where the child reads.
    ///   - standardOutput: Where the child writes its output.
    ///   - standardError: Where the child writes its errors. Pipes and
    ///     file handles given for the streams are kept with this object.
    ///   - ownProcessGroup: Whether the child leads a process group of its
    ///     own, so that a terminal's Ctrl-C, sent to the parent's group,
    ///     does not reach it (as Foundation's `Process` does); false
    ///     leaves it in the parent's group.
    ///   - onExit: Called once the child has exited, with this process and
    ///     how it ended, on the thread that waited for it.
    /// - Throws: When the child cannot start, the error Foundation's
    ///   `Process.run()` gives for the same cause, with the same words:
    ///   `CocoaError.fileReadNoSuchFile` when there is no such program,
    ///   `CocoaError.fileReadNoPermission` when it may not be run; else a
    ///   `POSIXError` with `posix_spawn`'s code (`ENOEXEC`, `ETXTBSY`…).
    public init(
        executable: String, arguments: [String] = [], environment: [String: String]? = nil,
        workingDirectory: String? = nil, standardInput: StandardStream = .inherited,
        standardOutput: StandardStream = .inherited, standardError: StandardStream = .inherited,
        ownProcessGroup: Bool = false, onExit: (@Sendable (SpawnedProcess, Termination) -> Void)? = nil
    ) throws {
        streams = [standardInput, standardOutput, standardError]
        processIdentifier = try spawn(
            executable, [executable] + arguments,
            environment: (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" },
            workingDirectory: workingDirectory, streams: streams, ownProcessGroup: ownProcessGroup)
        let waiter = Thread { [self] in
            let termination = reap()
            onExit?(self, termination)
        }
        // Room for the handler's own calls (logging, formatting).
        waiter.stackSize = 1 << 20
        waiter.start()
    }

    /// Whether the child has not yet been found to have exited.
    public var isRunning: Bool { termination == nil }

    /// How the child ended; nil while it runs.
    public var termination: Termination? {
        condition.lock()
        defer { condition.unlock() }
        return ended
    }

    /// Sends `signal` to the child, unless it has exited: once it has been
    /// waited for, its process identifier may be another process's, and
    /// nothing is sent.
    public func send(_ signal: Int32) {
        condition.lock()
        defer { condition.unlock() }
        if ended == nil { signalProcess(processIdentifier, signal) }
    }

    /// Asks the child to end (`SIGTERM`).
    public func terminate() { send(SIGTERM) }

    /// Ends the child at once (`SIGKILL`).
    public func kill() { send(SIGKILL) }

    /// Blocks the calling thread until the child has exited; how it ended.
    @discardableResult
    public func waitUntilExit() -> Termination {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let ended { return ended }
            condition.wait()
        }
    }

    /// Waits for the child to exit without collecting it, then collects it
    /// and records how it ended while holding the lock that ``send(_:)``
    /// takes: no signal can reach another process that got its number.
    private func reap() -> Termination {
        var info = siginfo_t()
        while waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
        condition.lock()
        defer { condition.unlock() }
        var raw: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(processIdentifier, &raw, 0) } while result == -1 && errno == EINTR
        // Collected by someone else (SIGCHLD ignored): no status to give.
        let termination = result == processIdentifier ? Termination(waitStatus: raw) : .exited(status: -1)
        ended = termination
        condition.broadcast()
        return termination
    }
}

/// `kill(2)`, which ``SpawnedProcess/kill()`` hides inside the class.
private func signalProcess(_ pid: pid_t, _ signal: Int32) {
    _ = kill(pid, signal)
}

#if canImport(Darwin)
    private typealias FileActions = posix_spawn_file_actions_t?
    private typealias Attributes = posix_spawnattr_t?
#else
    private typealias FileActions = posix_spawn_file_actions_t
    private typealias Attributes = posix_spawnattr_t
#endif

/// Starts `executable` with `arguments` (its own path first) and
/// `environment` (`NAME=value` strings), its standard input, output and
/// error set from `streams` and no other descriptor of this process; its
/// process identifier.
private func spawn(
    _ executable: String, _ arguments: [String], environment: [String], workingDirectory: String?,
    streams: [SpawnedProcess.StandardStream], ownProcessGroup: Bool
) throws -> pid_t {
    #if canImport(Darwin)
        var actions: FileActions = nil
        var attributes: Attributes = nil
    #else
        var actions = FileActions()
        var attributes = Attributes()
    #endif
    try check(posix_spawn_file_actions_init(&actions))
    defer { posix_spawn_file_actions_destroy(&actions) }
    try check(posix_spawnattr_init(&attributes))
    defer { posix_spawnattr_destroy(&attributes) }

    // The parent's copies of the pipe ends given to the child, closed once
    // it runs, each once.
    var childEnds: [FileHandle] = []
    for (target, stream) in zip([STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO], streams) {
        switch stream {
        case .inherited:
            continue
        case .nullDevice:
            let flags = target == STDIN_FILENO ? O_RDONLY : O_WRONLY
            try check(posix_spawn_file_actions_addopen(&actions, target, "/dev/null", flags, 0))
        case .fileHandle(let handle):
            try check(posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target))
        case .pipe(let pipe):
            let end = target == STDIN_FILENO ? pipe.fileHandleForReading : pipe.fileHandleForWriting
            try check(posix_spawn_file_actions_adddup2(&actions, end.fileDescriptor, target))
            if !childEnds.contains(where: { $0 === end }) { childEnds.append(end) }
        }
    }
    try closeFromThree(&actions)
    if let workingDirectory { try changeDirectory(&actions, to: workingDirectory) }
    try startWithDefaultSignals(&attributes, ownProcessGroup: ownProcessGroup)

    var pid: pid_t = 0
    let code = withCStrings(arguments) { argv in
        withCStrings(environment) { envp in posix_spawn(&pid, executable, &actions, &attributes, argv, envp) }
    }
    guard code == 0 else { throw startError(code, executable: executable) }
    for end in childEnds { try? end.close() }
    return pid
}

/// Closes every descriptor from 3 up in the child, after its standard
/// streams have been set up from them.
private func closeFromThree(_ actions: inout FileActions) throws {
    #if canImport(Darwin)
        // Done by the attributes' POSIX_SPAWN_CLOEXEC_DEFAULT.
    #else
        if let closeFrom = GlibcSpawnExtensions.closeFrom {
            try check(closeFrom(&actions, 3))
        } else {
            // Before glibc 2.34: each descriptor open now. One that another
            // thread opens before the child starts stays open in it unless
            // it is close-on-exec.
            for descriptor in openDescriptors() where descriptor > STDERR_FILENO {
                try check(posix_spawn_file_actions_addclose(&actions, descriptor))
            }
        }
    #endif
}

/// Makes the child start in `path`.
private func changeDirectory(_ actions: inout FileActions, to path: String) throws {
    #if canImport(Darwin)
        try check(posix_spawn_file_actions_addchdir_np(&actions, path))
    #else
        guard let changeDirectory = GlibcSpawnExtensions.changeDirectory else {
            throw CocoaError(.featureUnsupported)
        }
        try check(changeDirectory(&actions, path))
    #endif
}

/// No signal blocked and every signal's default action in the child,
/// whatever the spawning thread blocks and this process ignores or
/// handles; and, if asked, a process group of its own.
private func startWithDefaultSignals(_ attributes: inout Attributes, ownProcessGroup: Bool) throws {
    var none = sigset_t()
    sigemptyset(&none)
    try check(posix_spawnattr_setsigmask(&attributes, &none))
    var all = sigset_t()
    sigfillset(&all)
    sigdelset(&all, SIGKILL)
    sigdelset(&all, SIGSTOP)
    try check(posix_spawnattr_setsigdefault(&attributes, &all))
    var flags = Int32(POSIX_SPAWN_SETSIGMASK) | Int32(POSIX_SPAWN_SETSIGDEF)
    if ownProcessGroup {
        try check(posix_spawnattr_setpgroup(&attributes, 0))
        flags |= Int32(POSIX_SPAWN_SETPGROUP)
    }
    #if canImport(Darwin)
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
    #endif
    try check(posix_spawnattr_setflags(&attributes, Int16(flags)))
}

/// Throws `code`, a `posix_spawn*` function's result, unless it is 0.
private func check(_ code: Int32) throws {
    guard code == 0 else { throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EINVAL) }
}

/// What Foundation's `Process.run()` throws when `posix_spawn` fails with
/// `code`: the same words for a missing program or one that may not run.
private func startError(_ code: Int32, executable: String) -> Error {
    let underlying = NSError(domain: NSPOSIXErrorDomain, code: Int(code))
    let userInfo: [String: Any] = [NSFilePathErrorKey: executable, NSUnderlyingErrorKey: underlying]
    switch code {
    case ENOENT: return CocoaError(.fileReadNoSuchFile, userInfo: userInfo)
    case EACCES, EPERM: return CocoaError(.fileReadNoPermission, userInfo: userInfo)
    default: return POSIXError(POSIXErrorCode(rawValue: code) ?? .EINVAL)
    }
}

#if !canImport(Darwin)
    /// glibc's `posix_spawn` extensions, which Swift's Glibc module does not
    /// declare, looked up once: nil in a glibc too old to have them
    /// (closing from a descriptor up came in 2.34, changing directory in
    /// 2.29).
    private enum GlibcSpawnExtensions {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        typealias ChangeDirectory =
            @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

        static let closeFrom: CloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")
        static let changeDirectory: ChangeDirectory? = symbol("posix_spawn_file_actions_addchdir_np")

        private static func symbol<T>(_ name: String) -> T? {
            // RTLD_DEFAULT: the program's own symbols and its libraries'.
            guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
            return unsafeBitCast(address, to: T.self)
        }
    }

    /// This process's open descriptors, from `/proc/self/fd` (without the
    /// one that lists them). Each entry's name is read in place up to its
    /// terminating zero: a copy of the whole `d_name` array may read past
    /// the end of glibc's buffer (the crash of `Process.run()`).
    func openDescriptors() -> [Int32] {
        guard let directory = opendir("/proc/self/fd") else { return [] }
        defer { closedir(directory) }
        let own = dirfd(directory)
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        var descriptors: [Int32] = []
        while let entry = readdir(directory) {
            let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            if let descriptor = Int32(name), descriptor != own { descriptors.append(descriptor) }
        }
        return descriptors
    }
#endif

/// `strings` as a NULL-terminated array of C strings, for `body`.
private func withCStrings<R>(
    _ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R
) -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
