import Foundation
import Replication
import TestSupport
import Testing

@testable import Spawn

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `executable` to its end on a thread of its own (no cooperative
/// thread waits): how it ended and what it wrote to its standard output,
/// read from a pipe. Standard input is empty.
private func run(
    _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
    workingDirectory: String? = nil, ownProcessGroup: Bool = false
) async throws -> (termination: SpawnedProcess.Termination, output: String, pid: Int32) {
    try await onOwnThread { () throws -> (SpawnedProcess.Termination, String, Int32) in
        let output = Pipe()
        let child = try SpawnedProcess(
            executable: executable, arguments: arguments, environment: environment,
            workingDirectory: workingDirectory, standardInput: .nullDevice, standardOutput: .pipe(output),
            ownProcessGroup: ownProcessGroup)
        // The parent's copy of the pipe's write end was closed at the
        // start: the read ends when the child's ends.
        let said = output.fileHandleForReading.readDataToEndOfFile()
        return (child.waitUntilExit(), String(decoding: said, as: UTF8.self), child.processIdentifier)
    }
}

/// A signal mask line of `/proc/…/status` (`SigBlk`, `SigIgn`), as a number.
private func signalMask(_ name: String, in status: String) -> UInt64? {
    status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
        .flatMap { UInt64($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) }
}

/// The bit of `signal` in such a mask.
private func bit(_ signal: Int32) -> UInt64 { 1 << UInt64(signal - 1) }

@Suite("Child processes started with posix_spawn")
struct SpawnedProcessTests {
    @Test("The exit status is reported, and the child gets exactly the environment given")
    func exitStatus() async throws {
        let env = try await run("/usr/bin/env", environment: ["ONLY": "this"])
        #expect(env.termination == .exited(status: 0))
        #expect(env.output == "ONLY=this\n")
        let three = try await run("/bin/sh", ["-c", "exit 3"])
        #expect(three.termination == .exited(status: 3))
        #expect(three.termination.status == 3)
    }

    @Test("A signal that ends the child is reported, to the exit handler too")
    func signals() async throws {
        let endings: [(Int32, (SpawnedProcess) -> Void)] = [(SIGTERM, { $0.terminate() }), (SIGKILL, { $0.kill() })]
        for (signal, end) in endings {
            let (ends, handler) = AsyncStream.makeStream(of: SpawnedProcess.Termination.self)
            let child = try SpawnedProcess(executable: "/bin/sleep", arguments: ["600"], standardInput: .nullDevice) {
                _, termination in
                handler.yield(termination)
                handler.finish()
            }
            #expect(child.isRunning)
            end(child)
            var reported = ends.makeAsyncIterator()
            let termination = await reported.next()
            #expect(termination == .killed(signal: signal))
            #expect(child.termination == termination)
            #expect(!child.isRunning)
            #expect(termination?.status == signal)
            // Collected: its number may be another process's now.
            child.kill()
        }
    }

    @Test("The pipes given are kept with the process: one the caller let go of still carries the output")
    func keepsItsPipes() async throws {
        let input = Pipe()
        weak var released: Pipe?
        let child: SpawnedProcess
        do {
            // As Litestream's supervisor does: it keeps no reference to the
            // output pipe (its reading handler holds the handle weakly).
            // Released, the pipe would close its reading end, and the
            // child's next write would end it by SIGPIPE.
            let output = Pipe()
            released = output
            child = try SpawnedProcess(
                executable: "/bin/sh", arguments: ["-c", "read go; echo written"], standardInput: .pipe(input),
                standardOutput: .pipe(output))
        }
        let reading = try #require(released?.fileHandleForReading)
        input.fileHandleForWriting.write(Data("go\n".utf8))
        let (termination, said) = await onOwnThread {
            let said = reading.readDataToEndOfFile()
            return (child.waitUntilExit(), String(decoding: said, as: UTF8.self))
        }
        #expect(termination == .exited(status: 0))
        #expect(said == "written\n")
    }

    @Test("A missing program, or one that may not run, is the error Process.run() gives, and Replication says which")
    func startErrors() async throws {
        let directory = try TemporaryDirectory()
        let missing = directory.path("no-such-program")
        let absent = try #require(throws: CocoaError.self) { try SpawnedProcess(executable: missing) }
        #expect(absent.code == .fileReadNoSuchFile)
        #expect(absent.filePath == missing)
        #expect(absent.localizedDescription.contains("The file doesn’t exist"))

        let plain = directory.path("not-executable")
        try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: plain))
        let refused = try #require(throws: CocoaError.self) { try SpawnedProcess(executable: plain) }
        #expect(refused.code == .fileReadNoPermission)

        let garbage = directory.path("garbage")
        try Data("not a program\n".utf8).write(to: URL(fileURLWithPath: garbage))
        chmod(garbage, 0o755)
        // A child that another test starts meanwhile may hold the
        // descriptor that wrote the file until it execs: "Text file busy"
        // for a moment.
        var unknown = try #require(throws: POSIXError.self) { try SpawnedProcess(executable: garbage) }
        for _ in 0..<50 where unknown.code == .ETXTBSY {
            try await Task.sleep(for: .milliseconds(100))
            unknown = try #require(throws: POSIXError.self) { try SpawnedProcess(executable: garbage) }
        }
        #expect(unknown.code == .ENOEXEC)

        // Litestream's runs say what they could not start, in the words
        // users saw before.
        let replica = ReplicaLocation.directory(directory.path("replica"))
        let restore = try #require(throws: ReplicationError.self) {
            try LitestreamRestore.history(executable: missing, replica: replica)
        }
        #expect(restore.message == "cannot run \(missing): \(absent.localizedDescription)")
        let supervisor = try LitestreamSupervisor(
            executable: missing, database: directory.path("db.sqlite"), replica: replica, log: { _ in })
        let start = try #require(throws: ReplicationError.self) { try supervisor.start() }
        #expect(start.message == "cannot run \(missing): \(absent.localizedDescription)")
        #expect(supervisor.processIdentifier == nil)
    }

    /// Lines a log closure received, from any thread.
    final class LoggedLines: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }

    @Test("What Litestream said before it ended is read to the end: the start's error and the log quote it all")
    func litestreamsLastWords() async throws {
        let directory = try TemporaryDirectory()
        // A stand-in that says a few lines and ends at once, as Litestream
        // does when its configuration or its replica is wrong.
        let program = directory.path("litestream")
        let words = (1...40).map { "line \($0) of what went wrong" }
        try Data(("#!/bin/sh\n" + words.map { "echo '\($0)'\n" }.joined() + "exit 3\n").utf8)
            .write(to: URL(fileURLWithPath: program))
        chmod(program, 0o755)
        let logged = LoggedLines()
        let supervisor = try LitestreamSupervisor(
            executable: program, database: directory.path("db.sqlite"),
            replica: .directory(directory.path("replica")), log: { line in logged.append(line) })
        let refused = await onOwnThread { () -> ReplicationError? in
            do {
                try supervisor.start(readyWithin: .seconds(600))
                return nil
            } catch let error as ReplicationError {
                return error
            } catch {
                return nil
            }
        }
        let message = try #require(refused?.message)
        // Its last lines, to the very last, though it ended at once.
        #expect(
            message.hasSuffix((36...40).map { "line \($0) of what went wrong" }.joined(separator: "\n")), "\(message)")
        #expect(logged.all.filter { $0.hasPrefix("litestream: ") } == words.map { "litestream: " + $0 })
    }

    @Test("The child starts with every signal's default action and none blocked, whatever the parent has")
    func defaultSignals() async throws {
        let (parent, child) = try await onOwnThread { () throws -> (String, String) in
            // This thread blocks SIGUSR2, and the process ignores SIGPIPE
            // (as `records` does) for as long as the child takes to start.
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGUSR2)
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            let previous = signal(SIGPIPE, SIG_IGN)
            defer { signal(SIGPIPE, previous) }
            let parent = try String(contentsOfFile: "/proc/thread-self/status", encoding: .utf8)
            let output = Pipe()
            let child = try SpawnedProcess(
                executable: "/bin/cat", arguments: ["/proc/self/status"], standardInput: .nullDevice,
                standardOutput: .pipe(output))
            let said = output.fileHandleForReading.readDataToEndOfFile()
            child.waitUntilExit()
            return (parent, String(decoding: said, as: UTF8.self))
        }
        // What the child would have inherited.
        #expect(signalMask("SigBlk", in: parent).map { $0 & bit(SIGUSR2) != 0 } == true)
        #expect(signalMask("SigIgn", in: parent).map { $0 & bit(SIGPIPE) != 0 } == true)
        #expect(signalMask("SigBlk", in: child) == 0, "\(child)")
        // Of signals 1 to 31: glibc's posix_spawn leaves its own two
        // (32 and 33, for threads) ignored in every child it starts.
        #expect(signalMask("SigIgn", in: child).map { $0 & 0x7FFF_FFFF } == 0, "\(child)")
    }

    @Test("The child gets no descriptor but its standard streams, though the parent's are not close-on-exec")
    func noDescriptorLeaks() async throws {
        // A file and a listening socket opened without close-on-exec (as
        // a server's connections might be), at numbers well above the
        // child's own.
        let file = open("/dev/null", O_RDONLY)
        try #require(file >= 0)
        defer { close(file) }
        let high = fcntl(file, F_DUPFD, 200)
        defer { close(high) }
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(socket >= 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0 && listen(socket, 1) == 0)
        for descriptor in [file, high, socket] { #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC == 0) }

        let listing = try await run("/bin/ls", ["/proc/self/fd"])
        #expect(listing.termination == .exited(status: 0))
        let descriptors = listing.output.split(separator: "\n").compactMap { Int32($0) }
        // 0, 1 and 2, and ls's own directory (the lowest free number).
        #expect(descriptors.sorted() == [0, 1, 2, 3], "\(descriptors)")
    }

    @Test("A child can lead a process group of its own, and start in another directory")
    func processGroupAndDirectory() async throws {
        /// The process group in `/proc/<pid>/stat`: the third field after
        /// the command's closing parenthesis.
        func group(_ stat: String) -> Int32? {
            guard let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 2 ? Int32(fields[2]) : nil
        }
        let own = try await run("/bin/cat", ["/proc/self/stat"], ownProcessGroup: true)
        #expect(group(own.output) == own.pid)
        let shared = try await run("/bin/cat", ["/proc/self/stat"])
        #expect(group(shared.output) == getpgrp())

        let directory = try TemporaryDirectory()
        let there = try await run("/bin/pwd", ["-P"], workingDirectory: directory.url.path)
        #expect(there.output == directory.url.resolvingSymlinksInPath().path + "\n")
    }

    #if !canImport(Darwin)
        @Test("Without glibc's close-from action, the descriptors to close are listed safely")
        func openDescriptorList() throws {
            let descriptor = open("/dev/null", O_RDONLY)
            try #require(descriptor >= 0)
            defer { close(descriptor) }
            let listed = openDescriptors()
            #expect(listed.contains(descriptor))
            #expect(listed.contains(STDERR_FILENO))
        }
    #endif
}
