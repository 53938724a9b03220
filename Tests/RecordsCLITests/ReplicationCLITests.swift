import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The Litestream that scripts/bootstrap.sh installs, which `records`
/// finds beside its build directory when it is not on PATH.
func litestreamBinary() throws -> String {
    var directory = try recordsBinary().deletingLastPathComponent()
    var looked: [String] = []
    for _ in 0..<3 {
        directory = directory.deletingLastPathComponent()
        let path = directory.appendingPathComponent("venv/bin/litestream").standardizedFileURL.path
        if FileManager.default.isExecutableFile(atPath: path) { return path }
        looked.append(path)
    }
    try #require(Bool(false), "litestream is not in \(looked): run scripts/bootstrap.sh")
    return ""
}

/// The IDs of `parent`'s child processes running `name`.
func children(of parent: Int32, named name: String) -> [Int32] {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
    return entries.compactMap(Int32.init).filter { pid in
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
        else { return false }
        let command = stat[stat.index(after: open)..<close]
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return command == name && fields.count > 1 && Int32(fields[1]) == parent
    }
}

extension RecordsRun {
    /// Fails the test, showing the run, unless it exited 0.
    fileprivate func succeeds() throws {
        try #require(status == 0, "\(self)")
    }
}

@Suite("records serve --replicate and records restore", .serialized)
struct ReplicationCLITests {
    /// Restores `replica` into a new file and lists its people, until
    /// `wanted` is among them (the replica is at most about a second behind).
    private func restoredPeople(_ sandbox: Sandbox, replica: String, containing wanted: String) async throws -> String {
        var listed = ""
        let deadline = ContinuousClock.now.advanced(by: livenessTimeout)
        while ContinuousClock.now < deadline {
            let copy = sandbox.path("probe-\(UUID().uuidString).sqlite")
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + suffix) } }
            let restore = try await sandbox.run("restore", replica, "--to", copy)
            if restore.status == 0 {
                listed = try await sandbox.runRaw(["--database", copy, "people", "list"]).stdout
                if listed.contains(wanted) { return listed }
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        Issue.record("the replica never held \(wanted); last restored list: \(listed)")
        return listed
    }

    @Test("A commit made while serving reaches the replica, and a restore brings it back")
    func replicateAndRestore() async throws {
        let sandbox = try Sandbox()
        _ = try litestreamBinary()
        let replica = sandbox.path("replica")
        try await sandbox.run("people", "add", "--first", "Hedy", "--last", "Lamarr", "--age", "36").succeeds()
        let server = try await ServeProcess(sandbox: sandbox, ["--listen", "127.0.0.1:0", "--replicate", replica])
        try await sandbox.run("people", "add", "--first", "Emmy", "--last", "Noether").succeeds()
        let listed = try await restoredPeople(sandbox, replica: replica, containing: "Noether")
        #expect(listed.contains("Lamarr"))

        // Added just before the server stops: it ships the last commits on
        // its way out and says the replica holds them.
        try await sandbox.run("people", "add", "--first", "Lise", "--last", "Meitner").succeeds()
        let stopped = await server.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(stopped.stderr.contains("replicating \(sandbox.database) to \(replica)"), "\(stopped.stderr)")
        #expect(stopped.stderr.contains("the replica holds every commit"), "\(stopped.stderr)")
        let restored = sandbox.path("restored.sqlite")
        let restore = try await sandbox.run("restore", replica, "--to", restored)
        try restore.succeeds()
        #expect(restore.stdout.contains("integrity check ok"))
        let people = try await sandbox.runRaw(["--database", restored, "people", "list"])
        #expect(people.stdout.contains("Meitner"), "\(people)")

        // An existing file is kept unless --force.
        let before = try Data(contentsOf: URL(fileURLWithPath: restored))
        let again = try await sandbox.run("restore", replica, "--to", restored)
        #expect(again.status != 0)
        #expect(again.stderr.contains("is already there: it is kept (use --force to replace it)"), "\(again)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: restored)) == before)
        try await sandbox.run("restore", replica, "--to", restored, "--force").succeeds()
        // No staging file is left beside it.
        let left = try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path)
        #expect(!left.contains { $0.contains(".restoring-") }, "\(left)")
    }

    @Test("Litestream killed while serving is started again, and the log says why")
    func restartsLitestream() async throws {
        let sandbox = try Sandbox()
        _ = try litestreamBinary()
        let replica = sandbox.path("replica")
        let server = try await ServeProcess(sandbox: sandbox, ["--listen", "127.0.0.1:0", "--replicate", replica])
        let first = children(of: server.child.processIdentifier, named: "litestream")
        try #require(first.count == 1, "litestream children: \(first)")
        kill(first[0], SIGKILL)
        // Committed while no Litestream runs: the next one ships it.
        try await sandbox.run("people", "add", "--first", "Mary", "--last", "Jackson").succeeds()
        let restarted = await eventually {
            let now = children(of: server.child.processIdentifier, named: "litestream")
            return now.count == 1 && now[0] != first[0]
        }
        #expect(restarted)
        _ = try await restoredPeople(sandbox, replica: replica, containing: "Jackson")
        // And replication goes on.
        try await sandbox.run("people", "add", "--first", "Lise", "--last", "Meitner").succeeds()
        _ = try await restoredPeople(sandbox, replica: replica, containing: "Meitner")
        let stopped = await server.stop()
        #expect(stopped.status == 0)
        #expect(stopped.stderr.contains("Litestream was killed by signal 9"), "\(stopped.stderr)")
        #expect(stopped.stderr.contains("starting it again in 1 s"), "\(stopped.stderr)")
        // Stopped with the server: no Litestream is left behind.
        #expect(children(of: server.child.processIdentifier, named: "litestream").isEmpty)
    }

    @Test("--restore-if-missing restores a missing database on start, and starts fresh from an empty replica")
    func restoreIfMissing() async throws {
        let sandbox = try Sandbox()
        _ = try litestreamBinary()
        let replica = sandbox.path("replica")
        // An empty replica: a new database, and the server runs.
        let fresh = try await ServeProcess(
            sandbox: sandbox, ["--listen", "127.0.0.1:0", "--replicate", replica, "--restore-if-missing"])
        let added = try await sandbox.run("people", "add", "--first", "Dorothy", "--last", "Vaughan")
        guard added.status == 0 else {
            // "no such table: peopleInfo" (SQLITE_SCHEMA) here once came
            // from a command run while Litestream, just started, added its
            // tables: the server now waits for Litestream's first copy
            // before it serves. Its log (Litestream's lines among them)
            // shows what happened if this ever fails again.
            let server = await fresh.stop()
            Issue.record("\(added)\nthe server's log:\n\(server.stderr)")
            return
        }
        let first = await fresh.stop()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("the replica holds no copy yet: starting with a new database"), "\(first.stderr)")

        // The disk is lost.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: sandbox.database + suffix) }
        let restored = try await ServeProcess(
            sandbox: sandbox, ["--listen", "127.0.0.1:0", "--replicate", replica, "--restore-if-missing"])
        let people = try await sandbox.run("people", "list")
        #expect(people.stdout.contains("Vaughan"), "\(people)")
        let second = await restored.stop()
        #expect(second.stderr.contains("restored \(sandbox.database) from \(replica)"), "\(second.stderr)")
    }

    @Test("Bad replication arguments are clear errors that change nothing")
    func badInput() async throws {
        let sandbox = try Sandbox()
        let litestream = try litestreamBinary()
        try await sandbox.run("people", "add", "--first", "Ada", "--last", "Lovelace").succeeds()
        let database = try Data(contentsOf: URL(fileURLWithPath: sandbox.database))
        let cases: [([String], String)] = [
            (["restore"], "URL"),
            (["restore", "ftp://host/replica"], "replicas to ftp:// are not supported"),
            (["restore", "s3:///path"], "names no bucket"),
            (["restore", sandbox.path("r"), "--timestamp", "yesterday"], "--timestamp takes an ISO 8601 time"),
            (["restore", sandbox.path("r"), "--litestream", sandbox.path("nothing")], "is not an executable file"),
            (["restore", sandbox.path("r"), "--to", sandbox.path("x.sqlite")], "cannot restore from"),
            (["restore", sandbox.path("r"), "--to", sandbox.path("no/such/dir/x.sqlite")], "does not exist"),
            (["restore", sandbox.path("r")], "is already there: it is kept"),
            (["serve", "--restore-if-missing"], "--restore-if-missing goes with --replicate"),
            (["serve", "--litestream", litestream], "--litestream goes with --replicate"),
            (["serve", "--durable"], "--durable goes with --replicate"),
            (["serve", "--replicate", "gopher://x"], "replicas to gopher:// are not supported"),
            // Litestream would start, and only log that it cannot write.
            (
                ["serve", "--replicate", sandbox.database + "/replica", "--listen", "127.0.0.1:0"],
                "cannot make the replica directory \(sandbox.database)/replica: Not a directory"
            ),
            (
                ["serve", "--replicate", sandbox.database, "--listen", "127.0.0.1:0"],
                "the replica \(sandbox.database) is a file, not a directory"
            ),
            (
                ["serve", "--replicate", sandbox.path("r"), "--litestream", "/bin/false", "--listen", "127.0.0.1:0"],
                "Litestream did not start replicating"
            ),
        ]
        for (arguments, message) in cases {
            let run = try await sandbox.run(arguments)
            #expect(run.status != 0, "\(arguments) succeeded: \(run)")
            #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: sandbox.database)) == database)
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("x.sqlite")))
    }

    @Test("A restore from an empty or corrupt replica is an error that writes nothing")
    func emptyOrCorruptReplica() async throws {
        let sandbox = try Sandbox()
        _ = try litestreamBinary()
        let empty = sandbox.path("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        let fromEmpty = try await sandbox.run("restore", empty, "--to", sandbox.path("a.sqlite"))
        #expect(fromEmpty.status != 0)
        #expect(fromEmpty.stderr.contains("cannot restore from \(empty)"), "\(fromEmpty)")
        #expect(fromEmpty.stderr.contains("no matching backup files"), "\(fromEmpty)")

        let replica = sandbox.path("replica")
        try await sandbox.run("people", "add", "--first", "Rosalind", "--last", "Franklin").succeeds()
        let server = try await ServeProcess(sandbox: sandbox, ["--listen", "127.0.0.1:0", "--replicate", replica])
        _ = try await restoredPeople(sandbox, replica: replica, containing: "Franklin")
        #expect(await server.stop().status == 0)
        // Every copy in the replica damaged past its header, as a failing
        // disk or a partial upload would leave it.
        let files = (FileManager.default.enumerator(atPath: replica)?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".ltx") }
        try #require(!files.isEmpty)
        for file in files {
            let url = URL(fileURLWithPath: replica + "/" + file)
            var bytes = [UInt8](try Data(contentsOf: url))
            for index in stride(from: 200, to: bytes.count, by: 97) { bytes[index] ^= 0x5A }
            try Data(bytes).write(to: url)
        }
        let fromCorrupt = try await sandbox.run("restore", replica, "--to", sandbox.path("b.sqlite"))
        #expect(fromCorrupt.status != 0)
        #expect(fromCorrupt.stderr.contains("cannot restore from \(replica)"), "\(fromCorrupt)")
        // A new disk with a damaged replica: the server does not start on
        // an empty database as if nothing had been lost.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: sandbox.database + suffix) }
        let serve = try await sandbox.run(
            "serve", "--listen", "127.0.0.1:0", "--replicate", replica, "--restore-if-missing")
        #expect(serve.status != 0)
        #expect(serve.stderr.contains("cannot restore from \(replica)"), "\(serve)")
        #expect(!serve.stdout.contains("Serving"), "\(serve)")
        let left = try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path)
        #expect(!left.contains { $0.hasPrefix("a.sqlite") || $0.hasPrefix("b.sqlite") || $0.contains(".restoring-") })
        #expect(!FileManager.default.fileExists(atPath: sandbox.database))
    }

    @Test("A restore to a moment gives the database as it was then; before the first copy, nothing")
    func pointInTime() async throws {
        let sandbox = try Sandbox()
        _ = try litestreamBinary()
        let replica = sandbox.path("replica")
        let server = try await ServeProcess(sandbox: sandbox, ["--listen", "127.0.0.1:0", "--replicate", replica])
        try await sandbox.run("people", "add", "--first", "Annie", "--last", "Easley").succeeds()
        _ = try await restoredPeople(sandbox, replica: replica, containing: "Easley")
        // Litestream dates its files to the second.
        try await Task.sleep(for: .seconds(2))
        let between = Date()
        try await Task.sleep(for: .seconds(2))
        try await sandbox.run("people", "add", "--first", "Hedy", "--last", "Lamarr").succeeds()
        _ = try await restoredPeople(sandbox, replica: replica, containing: "Lamarr")
        _ = await server.stop()

        let then = sandbox.path("then.sqlite")
        let stamp = between.formatted(Date.ISO8601FormatStyle())
        let restore = try await sandbox.run("restore", replica, "--timestamp", stamp, "--to", then)
        try restore.succeeds()
        #expect(restore.stdout.contains("as it was at \(stamp)"), "\(restore)")
        let people = try await sandbox.runRaw(["--database", then, "people", "list"]).stdout
        #expect(people.contains("Easley") && !people.contains("Lamarr"), "\(people)")

        // A moment after the newest copy is the newest copy.
        let later = Date().addingTimeInterval(3600).formatted(Date.ISO8601FormatStyle())
        let latest = sandbox.path("latest.sqlite")
        try await sandbox.run("restore", replica, "--timestamp", later, "--to", latest).succeeds()
        #expect(try await sandbox.runRaw(["--database", latest, "people", "list"]).stdout.contains("Lamarr"))

        // Before the first copy there is nothing to restore.
        let old = try await sandbox.run(
            "restore", replica, "--timestamp", "2001-01-01T00:00:00Z", "--to", sandbox.path("old.sqlite"))
        #expect(old.status != 0)
        #expect(old.stderr.contains("holds no copy from before"), "\(old)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("old.sqlite")))
    }
}
