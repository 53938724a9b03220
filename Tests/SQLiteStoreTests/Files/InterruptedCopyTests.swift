import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

private let probeModeVariable = "SQLITESTORE_COPY_PROBE"
private let probeDirectoryVariable = "SQLITESTORE_COPY_PROBE_DIRECTORY"
private let isProbe = ProcessInfo.processInfo.environment[probeModeVariable] != nil

/// Runs in a child process started by ``InterruptedCopyTests``, which
/// interrupts it. Skipped otherwise.
@Suite("Interrupted copy probe")
struct InterruptedCopyProbe {
    @Test("Child process: a copy that the parent interrupts", .enabled(if: isProbe, "run by InterruptedCopyTests"))
    func copy() throws {
        let environment = ProcessInfo.processInfo.environment
        let mode = try #require(environment[probeModeVariable])
        let directory = try #require(environment[probeDirectoryVariable])
        switch mode {
        case "stall":
            // The portable path, with a named temporary file, stopped
            // half-way until a signal ends the process.
            TemporaryFileCleanup.installSignalHandlers()
            let staged = try StagedFile.create(
                for: directory + "/out/picture.bin", mode: 0o644, allowsUnnamed: false)
            try Data(repeating: 1, count: 4096).withUnsafeBytes { try staged.write($0) }
            #expect(FileManager.default.createFile(atPath: directory + "/ready", contents: nil))
            ChildProcess.probeWaitsForItsEnd()
            Issue.record("the parent did not interrupt the copy")
        case "backup":
            // A backup stopped after its first step, when SQLite has the
            // staging file and its journal open, until a signal ends it.
            TemporaryFileCleanup.installSignalHandlers()
            let db = try Database(path: directory + "/source.sqlite")
            var options = BackupOptions()
            options.pagesPerStep = 1
            try db.backup(toPath: directory + "/out/copy.sqlite", options: options) { _ in
                #expect(FileManager.default.createFile(atPath: directory + "/ready", contents: nil))
                ChildProcess.probeWaitsForItsEnd()
                Issue.record("the parent did not interrupt the backup")
            }
        default:
            Issue.record("unknown probe mode \(mode)")
        }
    }
}

/// Starts this test binary again, running only the probe, in `mode`.
private func startProbe(_ mode: String, directory: String) throws -> ChildProcess {
    try ChildProcess.startingTestProbe(
        filter: "InterruptedCopyProbe",
        environment: [probeModeVariable: mode, probeDirectoryVariable: directory], log: directory + "/child.log")
}

/// Whether process `pid` has a file open in `directory`: a named one, or
/// an unnamed `O_TMPFILE` one (shown by Linux as `directory/#123 (deleted)`).
private func hasFileOpen(in directory: String, pid: Int32) -> Bool {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
    return descriptors.contains { descriptor in
        let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)")
        return target?.hasPrefix(directory + "/") == true
    }
}

@Suite("Interrupted copies leave no file behind", .enabled(if: isLinux && !isProbe, "needs Linux's /proc"))
struct InterruptedCopyTests {
    @Test(
        "A signal during a copy through a named temporary file removes it, then ends the process",
        arguments: [SIGINT, SIGTERM, SIGHUP])
    func signalRemovesNamedTemporaryFile(signal: Int32) async throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path("out"), withIntermediateDirectories: false)
        let process = try startProbe("stall", directory: dir.url.path)
        let (during, log) = try await interrupt(process, with: signal, once: "ready", in: dir)
        #expect(
            during.count == 1 && during.first?.hasSuffix(".tmp") == true, "no temporary file while copying:\n\(log)")
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(process.terminationStatus == signal)
        #expect(try dir.entries(in: "out").isEmpty)
    }

    @Test(
        "A signal during a backup removes its staging file and the journal beside it, then ends the process",
        arguments: [SIGINT, SIGTERM, SIGHUP])
    func signalRemovesBackupStagingFiles(signal: Int32) async throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path("out"), withIntermediateDirectories: false)
        let source = try Database(path: dir.path("source.sqlite"))
        try source.execute("CREATE TABLE t (b BLOB); INSERT INTO t VALUES (zeroblob(100000))")
        source.close()
        try Data("kept".utf8).write(to: URL(fileURLWithPath: dir.path("out/other.txt")))
        let process = try startProbe("backup", directory: dir.url.path)
        let (during, log) = try await interrupt(process, with: signal, once: "ready", in: dir)
        #expect(during.contains { $0.hasSuffix(".tmp-journal") }, "no journal while backing up: \(during)\n\(log)")
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(process.terminationStatus == signal)
        #expect(try dir.entries(in: "out") == ["other.txt"])
    }
}

/// Waits (on a thread of its own, not a cooperative one) until the probe
/// has made `marker` in `dir`, takes what `out` holds then, sends `signal`
/// and waits for the probe to end: what `out` held, and the probe's log.
private func interrupt(_ process: ChildProcess, with signal: Int32, once marker: String, in dir: TemporaryDirectory)
    async throws -> (during: [String], log: String)
{
    let ready = dir.path(marker)
    // What `out` holds is taken, and the signal sent, on the same thread
    // that saw the marker: no wait for a cooperative thread in between.
    let during = try await onOwnThread { () throws -> [String] in
        // A child test binary can take half a minute to start on a loaded machine.
        let deadline = ContinuousClock.now.advanced(by: livenessTimeout)
        while ContinuousClock.now < deadline && process.isRunning && !FileManager.default.fileExists(atPath: ready) {
            usleep(1000)
        }
        let during = try dir.entries(in: "out")
        process.send(signal)
        return during
    }
    await process.exited()
    return (during, (try? String(contentsOfFile: dir.path("child.log"), encoding: .utf8)) ?? "")
}
