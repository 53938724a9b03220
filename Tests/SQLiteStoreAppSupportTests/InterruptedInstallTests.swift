import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import SQLiteStoreAppSupport

private let probeDirectoryVariable = "SQLITESTORE_INSTALL_PROBE_DIRECTORY"
private let isProbe = ProcessInfo.processInfo.environment[probeDirectoryVariable] != nil

/// Runs in a child process started by ``InterruptedInstallTests``, which
/// kills it. Skipped otherwise.
@Suite("Interrupted install probe")
struct InterruptedInstallProbe {
    @Test(
        "Child process: a template install that the parent kills",
        .enabled(if: isProbe, "run by InterruptedInstallTests"))
    func install() throws {
        let directory = try #require(ProcessInfo.processInfo.environment[probeDirectoryVariable])
        try DatabaseTemplate.install(
            from: URL(fileURLWithPath: directory + "/template.sqlite"),
            to: URL(fileURLWithPath: directory + "/out/app.sqlite"))
    }
}

/// Starts this test binary again, running only the probe.
private func startProbe(directory: String) throws -> ChildProcess {
    try ChildProcess.startingTestProbe(
        filter: "InterruptedInstallProbe", environment: [probeDirectoryVariable: directory])
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

@Suite(
    "An interrupted template install leaves no file behind", .enabled(if: isLinux && !isProbe, "needs Linux's /proc"))
struct InterruptedInstallTests {
    @Test("SIGKILL during a template install leaves nothing in the destination directory")
    func killedInstall() async throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path("out"), withIntermediateDirectories: false)
        // Large enough that the copy and its flush take a while.
        let template = try Database(path: dir.path("template.sqlite"))
        try template.execute(
            "CREATE TABLE t (a TEXT, b BLOB); INSERT INTO t VALUES ('from template', zeroblob(48000000))")
        template.close()
        let templateSize = fileSize(dir.path("template.sqlite"))

        let process = try startProbe(directory: dir.url.path)
        let out = dir.path("out")
        // Polled on a thread of its own, not a cooperative one.
        let sawCopy = try await onOwnThread {
            // Bounded by livenessTimeout, usually a few milliseconds.
            let deadline = ContinuousClock.now.advanced(by: livenessTimeout)
            while ContinuousClock.now < deadline && process.isRunning {
                let entries = try FileManager.default.contentsOfDirectory(atPath: out)
                if hasFileOpen(in: out, pid: process.processIdentifier) || !entries.isEmpty { return true }
                usleep(1000)
            }
            return false
        }
        process.send(SIGKILL)
        await process.exited()

        #expect(sawCopy, "the copy was not seen in progress")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path("out")).sorted()
        // Killed before publishing: nothing; a moment after: the whole file.
        #expect(left.isEmpty || (left == ["app.sqlite"] && fileSize(dir.path("out/app.sqlite")) == templateSize))
    }
}
