import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

// What `records` does with the files it is pointed at (`--database`, the
// FILE of `coffee picture get`), and what an interrupted run leaves. Device
// nodes are made with mknod only inside the sandbox, never on /dev.

private func entries(_ directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
}

/// Whether process `pid` has a file open in `directory`, named or unnamed
/// (Linux shows an `O_TMPFILE` file as `directory/#123 (deleted)`).
private func hasFileOpen(in directory: String, pid: Int32) -> Bool {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
    return descriptors.contains { descriptor in
        let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)")
        return target?.hasPrefix(directory + "/") == true
    }
}

/// Waits, at most ``livenessTimeout``, until `pid` is writing in `directory`
/// (a file open there, or a new entry); false if it ended first.
private func waitForCopy(in directory: String, process: ChildProcess) -> Bool {
    let deadline = ContinuousClock.now.advanced(by: livenessTimeout)
    while ContinuousClock.now < deadline && process.isRunning {
        if hasFileOpen(in: directory, pid: process.processIdentifier) || !entries(directory).isEmpty { return true }
        usleep(500)
    }
    return false
}

@Suite("records: the files it is pointed at")
struct FileSafetyCLITests {
    @Test(
        "--database naming a character device is refused; the device stays",
        .enabled(if: isRoot, "mknod needs root"))
    func databaseIsDevice() async throws {
        let sandbox = try Sandbox()
        let null = sandbox.path("null")
        try SpecialFiles.makeNullDevice(at: null)
        let run = try await sandbox.runRaw(["--database", null, "people", "list"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("cannot install the database at \(null): it is a character device"))
        #expect(SpecialFiles.type(null) == .characterDevice)
    }

    @Test("--database naming a FIFO is refused; the FIFO stays")
    func databaseIsFIFO() async throws {
        let sandbox = try Sandbox()
        let fifo = sandbox.path("fifo")
        try SpecialFiles.makeFIFO(at: fifo)
        let run = try await sandbox.runRaw(["--database", fifo, "people", "list"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("cannot install the database at \(fifo): it is a FIFO (named pipe)"))
        #expect(SpecialFiles.type(fifo) == .fifo)
    }

    @Test("--database naming a dangling symbolic link creates the database where it points")
    func databaseIsDanglingLink() async throws {
        let sandbox = try Sandbox()
        let link = sandbox.path("link.sqlite")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real.sqlite")
        let run = try await sandbox.runRaw(["--database", link, "people", "list"])
        #expect(run.status == 0, "\(run)")
        #expect(!run.stderr.contains("keeps changing"))
        #expect(SpecialFiles.type(link) == .symbolicLink)
        #expect(SpecialFiles.type(sandbox.path("real.sqlite")) == .regular)
        #expect(
            try await sandbox.runRaw(["--database", sandbox.path("real.sqlite"), "people", "list"]).stdout == run.stdout
        )
    }

    @Test("--database ending in / names a directory: refused, and no file of that name appears")
    func databaseWithTrailingSlash() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.runRaw(["--database", sandbox.path("dir") + "/", "people", "list"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("the path names a directory, not a file"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("dir")))
    }

    @Test("--database with a name or a path too long says which, not that the folder is the problem")
    func databasePathTooLong() async throws {
        let sandbox = try Sandbox()
        let longName = try await sandbox.runRaw([
            "--database", sandbox.path(String(repeating: "n", count: 300)), "people", "list",
        ])
        #expect(longName.status == 1)
        #expect(longName.stderr.contains("is 300 bytes long, over the limit of 255 bytes for one name"))
        #expect(!longName.stderr.contains("cannot write in the directory"))
        let deep = sandbox.path(Array(repeating: "deep", count: 1100).joined(separator: "/"))
        let longPath = try await sandbox.runRaw(["--database", deep, "people", "list"])
        #expect(longPath.status == 1)
        #expect(longPath.stderr.contains("the path is \(deep.utf8.count) bytes long, over the limit of 4095 bytes"))
        #expect(!longPath.stderr.contains("does not exist"))
    }

    @Test("--database naming an empty 0600 file installs the sample there and keeps 0600")
    func databaseIsEmptyPrivateFile() async throws {
        let sandbox = try Sandbox()
        #expect(
            FileManager.default.createFile(
                atPath: sandbox.database, contents: Data(), attributes: [.posixPermissions: 0o600]))
        let run = try await sandbox.run("people", "list")
        #expect(run.status == 0, "\(run)")
        #expect(SpecialFiles.permissions(sandbox.database) == 0o600)
    }

    @Test(
        "picture get into a character device writes into it; the device stays",
        .enabled(if: isRoot, "mknod needs root"))
    func pictureIntoDevice() async throws {
        let sandbox = try Sandbox()
        let null = sandbox.path("null")
        try SpecialFiles.makeNullDevice(at: null)
        let run = try await sandbox.run("coffee", "picture", "get", "1", null)
        #expect(run.status == 0, "\(run)")
        #expect(SpecialFiles.type(null) == .characterDevice)
    }

    @Test("picture get into a FIFO writes the picture to its reader; the FIFO stays")
    func pictureIntoFIFO() async throws {
        let sandbox = try Sandbox()
        let fifo = sandbox.path("fifo")
        try SpecialFiles.makeFIFO(at: fifo)
        // A second name for the FIFO: if the FIFO were replaced, opening it
        // for writing still ends the reader, which would otherwise wait for
        // a writer forever.
        #expect(link(fifo, sandbox.path("fifo-kept")) == 0)
        let reader = FIFOReader(fifo)
        let run = try await sandbox.run("coffee", "picture", "get", "1", fifo)
        close(open(sandbox.path("fifo-kept"), O_WRONLY | O_NONBLOCK))
        let received = reader.received()
        #expect(run.status == 0, "\(run)")
        #expect(received.count == 135)
        #expect(received.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        #expect(SpecialFiles.type(fifo) == .fifo)
    }

    @Test("picture get --force through a symbolic link replaces the file it points to; the link stays")
    func pictureThroughLink() async throws {
        let sandbox = try Sandbox()
        let real = sandbox.path("real.png")
        #expect(
            FileManager.default.createFile(
                atPath: real, contents: Data("old".utf8), attributes: [.posixPermissions: 0o640]))
        try FileManager.default.createSymbolicLink(atPath: sandbox.path("link.png"), withDestinationPath: "real.png")
        let run = try await sandbox.run("coffee", "picture", "get", "1", sandbox.path("link.png"), "--force")
        #expect(run.status == 0, "\(run)")
        #expect(SpecialFiles.type(sandbox.path("link.png")) == .symbolicLink)
        #expect(fileSize(real) == 135)
        #expect(SpecialFiles.permissions(real) == 0o640)
    }
}

@Suite("records: interrupted runs leave no temporary file", .enabled(if: isLinux, "watches the copy through /proc"))
struct InterruptedRunCLITests {
    /// A sandbox whose coffee 1 has a 20 MiB picture, and an empty
    /// directory to copy it into.
    private func sandboxWithLargePicture() async throws -> (Sandbox, picture: String, output: String) {
        let sandbox = try Sandbox()
        let picture = sandbox.path("large.png")
        try writePicture(picture, count: 20 << 20)
        let set = try await sandbox.run("coffee", "picture", "set", "1", picture)
        try #require(set.status == 0, "\(set)")
        let output = sandbox.path("out")
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: false)
        return (sandbox, picture, output)
    }

    @Test(
        "picture get killed (SIGKILL or SIGINT) during the copy leaves nothing in the directory",
        arguments: [SIGKILL, SIGINT])
    func interruptedPictureGet(signal: Int32) async throws {
        let (sandbox, picture, output) = try await sandboxWithLargePicture()
        let copy = output + "/copy.png"
        var interrupted = 0
        for _ in 0..<3 {
            let started = Locked<ChildProcess?>(nil)
            let arguments = ["--database", sandbox.database, "coffee", "picture", "get", "1", copy]
            _ = try await sandbox.runRaw(arguments) { running in
                started.withLock { $0 = running }
                if waitForCopy(in: output, process: running) {
                    running.send(signal)
                }
            }
            let process = started.withLock { $0 }
            if process?.terminationReason == .uncaughtSignal {
                interrupted += 1
                #expect(process?.terminationStatus == signal)
            }
            let left = entries(output)
            let complete = left == ["copy.png"] ? try sameBytes(picture, copy) : false
            // Interrupted: nothing; finished first: the whole picture.
            #expect(left.isEmpty || complete, "left \(left)")
            try? FileManager.default.removeItem(atPath: copy)
        }
        #expect(interrupted > 0, "no run was interrupted during its copy")
    }

    @Test("A first run killed at any moment leaves no temporary file, and the next run works")
    func killedFirstRun() async throws {
        let allowed: Set<String> = [
            "records.sqlite", "records.sqlite-journal", "records.sqlite-wal", "records.sqlite-shm",
        ]
        // A few kills at different moments of start-up, install and migration.
        for delay: useconds_t in [0, 3_000, 10_000, 30_000, 80_000] {
            let sandbox = try Sandbox()
            _ = try await sandbox.runRaw(["people", "list"]) { process in
                usleep(delay)
                process.send(SIGKILL)
            }
            let left = Set(entries(sandbox.path("xdg/records")))
            #expect(left.isSubset(of: allowed), "after a kill at \(delay) µs: \(left.sorted())")
            let next = try await sandbox.runRaw(["people", "list"])
            #expect(next.status == 0, "after a kill at \(delay) µs: \(next)")
            #expect(Set(entries(sandbox.path("xdg/records"))) == ["records.sqlite"])
        }
    }
}

private func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? -1
}

@Suite("records: a database file it may not write", .disabled(if: isRoot, "root writes any file"), .tags(.unprivileged))
struct UnwritableDatabaseCLITests {
    /// The sandbox's database, made by a first run, then made read-only.
    private func readOnlyDatabase() async throws -> Sandbox {
        let sandbox = try Sandbox()
        try #require(try await sandbox.run("people", "list").status == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: sandbox.database)
        return sandbox
    }

    /// The database's file and the files beside it.
    private func databaseFiles(_ sandbox: Sandbox) -> [String] {
        entries(sandbox.root.path).filter { $0.hasPrefix("test.sqlite") }
    }

    @Test("A read-only command leaves no -wal or -shm file; once the file is writable again, writes work")
    func readLeavesNothing() async throws {
        let sandbox = try await readOnlyDatabase()
        let list = try await sandbox.run("people", "list")
        #expect(list.status == 0, "\(list)")
        #expect(list.stdout.contains("Lovelace"))
        #expect(databaseFiles(sandbox) == ["test.sqlite"])

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: sandbox.database)
        let add = try await sandbox.run("people", "add", "--first", "Grace", "--last", "Hopper", "--age", "85")
        #expect(add.status == 0, "\(add)")
    }

    @Test("A write fails with status 1 naming the file that is not writable, and changes nothing")
    func writeNamesTheFile() async throws {
        let sandbox = try await readOnlyDatabase()
        let before = try Data(contentsOf: URL(fileURLWithPath: sandbox.database))
        let add = try await sandbox.run("people", "add", "--first", "Grace", "--last", "Hopper", "--age", "85")
        #expect(add.status == 1, "\(add)")
        #expect(add.stderr.contains("the database file \(sandbox.database) is not writable"), "\(add)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: sandbox.database)) == before)
        #expect(databaseFiles(sandbox) == ["test.sqlite"])
    }
}
