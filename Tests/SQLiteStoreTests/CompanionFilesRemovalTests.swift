import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

private let writerVariable = "SQLITESTORE_COMPANION_WRITER_DATABASE"
private let isWriter = ProcessInfo.processInfo.environment[writerVariable] != nil

/// Runs in a child process started by ``CompanionFilesRemovalTests``: marks
/// that it is about to open the database, adds a row (waiting as long as
/// the database is locked), marks that the row is committed, and keeps its
/// connection open until the parent ends it. Skipped otherwise.
@Suite("Companion files writer probe")
struct CompanionFilesWriterProbe {
    @Test("Child process: a connection that adds a row and stays open", .enabled(if: isWriter, "run by a test"))
    func write() throws {
        let path = try #require(ProcessInfo.processInfo.environment[writerVariable])
        #expect(FileManager.default.createFile(atPath: path + ".opening", contents: nil))
        var configuration = Configuration()
        configuration.busyTimeout = .seconds(60)
        let db = try Database(path: path, configuration: configuration)
        try db.execute("INSERT INTO t VALUES (2)")
        #expect(FileManager.default.createFile(atPath: path + ".written", contents: nil))
        ChildProcess.probeWaitsForItsEnd()
        Issue.record("the parent did not end the writer")
    }
}

@Suite("The -wal and -shm files removed when a process's last connection closes")
struct CompanionFilesRemovalTests {
    @Test(
        "A process opening the database while the files are removed waits, and its commit is kept",
        .enabled(if: isLinux && !isWriter, "starts this test binary again through /proc"))
    func openingDuringRemovalWaitsAndKeepsItsCommit() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("db.sqlite")
        try makeWALDatabase(path)
        #expect(try dir.entries() == ["db.sqlite"], "the last connection removed its files")

        let opening = path + ".opening"
        let written = path + ".written"
        let writer = Locked<ChildProcess?>(nil)
        let wroteDuringRemoval = Locked(false)
        CompanionFiles.removalWillStart.withLock {
            $0 = { closing in
                guard closing == path, writer.withLock({ $0 }) == nil else { return }
                guard
                    let child = try? ChildProcess.startingTestProbe(
                        filter: "CompanionFilesWriterProbe", environment: [writerVariable: path],
                        log: dir.path("writer.log"))
                else { return }
                writer.withLock { $0 = child }
                // The writer reaches its open, then gets a moment to
                // commit: it must not get one before the files are gone.
                let deadline = ContinuousClock.now.advanced(by: livenessTimeout)
                while ContinuousClock.now < deadline && child.isRunning
                    && !FileManager.default.fileExists(atPath: opening)
                {
                    usleep(1000)
                }
                usleep(300_000)
                wroteDuringRemoval.withLock { $0 = FileManager.default.fileExists(atPath: written) }
            }
        }
        defer { CompanionFiles.removalWillStart.withLock { $0 = nil } }
        // This connection makes the -wal and -shm files, which its close
        // then removes: the writer starts in between, once the checks have
        // found nobody using them. All on a thread of its own, since the
        // close waits for the writer.
        let first = try await onOwnThread {
            let db = try Database(path: path)
            defer { db.close() }
            return try db.fetchAll(Int.self, "SELECT a FROM t")
        }
        #expect(first == [1])
        let child = try #require(writer.withLock { $0 }, "the removal did not run, or the writer did not start")
        #expect(!wroteDuringRemoval.withLock { $0 }, "the writer committed while the files were being removed")
        let committed = await onOwnThread {
            let deadline = ContinuousClock.now.advanced(by: livenessTimeout)
            while ContinuousClock.now < deadline && child.isRunning && !FileManager.default.fileExists(atPath: written)
            {
                usleep(1000)
            }
            return FileManager.default.fileExists(atPath: written)
        }
        if committed {
            // The writer's connection is still open: its commit is in the
            // -wal every process opening the database now reads.
            let check = try Database(path: path)
            #expect(try check.fetchAll(Int.self, "SELECT a FROM t ORDER BY a") == [1, 2])
            check.close()
        }
        child.send(SIGKILL)
        await child.exited()
        #expect(
            committed,
            "the writer did not commit: \((try? String(contentsOfFile: dir.path("writer.log"), encoding: .utf8)) ?? "")"
        )
        let reopened = try Database(path: path)
        #expect(try reopened.fetchAll(Int.self, "SELECT a FROM t ORDER BY a") == [1, 2], "kept after the writer's end")
    }
}
