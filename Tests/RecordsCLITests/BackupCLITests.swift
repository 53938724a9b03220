import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// Every row of the People app's table, for comparing a copy with its
/// source.
private func people(in path: String) throws -> [[SQLiteValue]] {
    let db = try Database(path: path)
    defer { db.close() }
    return try db.fetchAll("SELECT * FROM peopleInfo ORDER BY peopleInfoID").map(\.values)
}

private func fileBytes(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
}

@Suite("records backup")
struct BackupCLITests {
    @Test("backup FILE writes a copy that holds the same rows and passes the integrity check")
    func backupWritesCheckedCopy() async throws {
        let sandbox = try Sandbox()
        try await sandbox.run("people", "add", "--first", "Grace", "--last", "O'Hopper", "--age", "85")
        let copy = sandbox.path("copy.sqlite")

        let run = try await sandbox.run("backup", copy)

        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasPrefix("Backed up \(sandbox.database) to \(copy): "))
        #expect(run.stdout.contains("integrity check ok"))
        #expect(run.stderr.isEmpty, "no progress when standard error is not a terminal")
        let db = try Database(path: copy)
        #expect(try db.fetchAll(String.self, "PRAGMA integrity_check") == ["ok"])
        db.close()
        #expect(try people(in: copy) == people(in: sandbox.database))
        #expect(try people(in: copy).contains { $0.contains(.text("O'Hopper")) })
    }

    @Test("An existing FILE is refused with status 1, named, and left as it was")
    func existingFileIsRefused() async throws {
        let sandbox = try Sandbox()
        let copy = sandbox.path("copy.sqlite")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: copy))

        let run = try await sandbox.run("backup", copy)

        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.contains("records: error: cannot back up to \(copy): a file is already there"))
        #expect(run.stderr.contains("--force"))
        #expect(run.stdout.isEmpty)
        #expect(try fileBytes(copy) == Data("keep me".utf8))
    }

    @Test("--force replaces an existing FILE with the copy")
    func forceReplaces() async throws {
        let sandbox = try Sandbox()
        try await sandbox.run("people", "list")
        let copy = sandbox.path("copy.sqlite")
        try Data("old".utf8).write(to: URL(fileURLWithPath: copy))

        let run = try await sandbox.run("backup", "--force", copy)

        #expect(run.status == 0, "\(run)")
        #expect(try people(in: copy) == people(in: sandbox.database))
    }

    @Test("A FILE in a missing directory fails with status 1, naming the directory, and writes nothing")
    func missingDirectory() async throws {
        let sandbox = try Sandbox()
        let copy = sandbox.path("missing/copy.sqlite")

        let run = try await sandbox.run("backup", copy)

        #expect(run.status == 1, "\(run)")
        #expect(
            run.stderr.contains("cannot back up to \(copy): the directory \(sandbox.path("missing")) does not exist"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("missing")))
    }

    @Test("A missing, empty or '-' FILE, or an extra argument, is a usage error with status 2")
    func usageErrors() async throws {
        let sandbox = try Sandbox()
        for (arguments, message) in [
            (["backup"], "missing FILE"),
            (["backup", ""], "FILE must not be empty"),
            (["backup", "-"], "a backup cannot be written to standard output"),
            (["backup", "a.sqlite", "b.sqlite"], "unexpected argument 'b.sqlite'"),
            (["backup", "--replace", "a.sqlite"], "unknown option '--replace'"),
        ] {
            let run = try await sandbox.runRaw(["--database", sandbox.database] + arguments)
            #expect(run.status == 2, "\(arguments): \(run)")
            #expect(run.stderr.contains(message), "\(arguments): \(run)")
            #expect(run.stderr.contains("Run 'records backup --help' for usage."))
        }
        #expect(!FileManager.default.fileExists(atPath: sandbox.database), "usage errors never open the database")
    }

    @Test("backup --help and help backup describe the command; records --help lists it")
    func help() async throws {
        let sandbox = try Sandbox()
        for arguments in [["backup", "--help"], ["help", "backup"]] {
            let run = try await sandbox.runRaw(arguments)
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout.contains("Usage: records [global options] backup FILE [--force]"))
            #expect(run.stdout.contains("--force"))
        }
        let main = try await sandbox.runRaw(["--help"])
        #expect(main.stdout.contains("backup "))
    }
}

/// The names in `directory`, sorted.
private func entries(_ directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
}

@Suite("records backup: interrupted")
struct InterruptedBackupCLITests {
    /// A sandbox whose database holds 64 MiB more than the apps' rows, so
    /// that a backup takes many steps, and a directory to back up into
    /// that holds one other file.
    private func sandboxWithLargeDatabase() async throws -> (Sandbox, output: String) {
        let sandbox = try Sandbox()
        try #require(try await sandbox.run("people", "list").status == 0)
        let db = try Database(path: sandbox.database)
        try db.execute(
            """
            CREATE TABLE padding (b BLOB);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 64)
            INSERT INTO padding SELECT zeroblob(1048576) FROM n;
            """)
        db.close()
        let output = sandbox.path("out")
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: false)
        try Data("kept".utf8).write(to: URL(fileURLWithPath: output + "/other.txt"))
        return (sandbox, output)
    }

    @Test(
        "A backup interrupted by SIGINT, SIGTERM or SIGHUP leaves only what the directory held",
        arguments: [SIGINT, SIGTERM, SIGHUP])
    func interruptedBackup(signal: Int32) async throws {
        let (sandbox, output) = try await sandboxWithLargeDatabase()
        let copy = output + "/copy.sqlite"
        var interrupted = 0
        for _ in 0..<3 where interrupted == 0 {
            let started = Locked<ChildProcess?>(nil)
            let seen = Locked<[String]>([])
            _ = try await sandbox.runRaw(["--database", sandbox.database, "backup", copy]) { running in
                started.withLock { $0 = running }
                // Signalled once SQLite has the copy's journal open.
                let deadline = ContinuousClock.now.advanced(by: livenessTimeout)
                while ContinuousClock.now < deadline && running.isRunning {
                    let during = entries(output)
                    seen.withLock { $0 = during }
                    if during.contains(where: { $0.hasSuffix(".tmp-journal") }) {
                        running.send(signal)
                        break
                    }
                    usleep(200)
                }
            }
            let process = started.withLock { $0 }
            let during = seen.withLock { $0 }
            if process?.terminationReason == .uncaughtSignal {
                interrupted += 1
                #expect(process?.terminationStatus == signal)
                #expect(entries(output) == ["other.txt"], "while copying: \(during)")
            } else {
                // Finished first: the whole copy, nothing else.
                #expect(entries(output) == ["copy.sqlite", "other.txt"])
                try? FileManager.default.removeItem(atPath: copy)
            }
        }
        #expect(interrupted > 0, "no run was interrupted during its copy")
    }
}
