import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real `records serve` with its real Litestream: with `--durable`, a
/// create's success answer means the replica holds it; a database file
/// deleted under the server stops writes.
@Suite("records serve --durable, and a database file lost under the server", .serialized)
struct DurableServeCLITests {
    /// Ada registered, and a read-write API token of hers.
    private func sandboxWithToken() async throws -> (Sandbox, String) {
        let sandbox = try Sandbox()
        let registered = try await sandbox.register()
        try #require(registered.status == 0, "\(registered)")
        let created = try await sandbox.createToken(["--json"])
        try #require(created.status == 0, "\(created)")
        let secret = try #require((try created.json() as? [String: Any])?["secret"] as? String)
        return (sandbox, secret)
    }

    /// One `POST /api/v1/people` a person, all at once (curl's parallel
    /// transfers): the status of each.
    private func createPeople(_ lastNames: [String], server: ServeProcess, token: String) async throws -> [String] {
        var arguments = ["--silent", "--parallel", "--parallel-immediate", "--parallel-max", "16"]
        for (index, name) in lastNames.enumerated() {
            if index > 0 { arguments.append("--next") }
            arguments += [
                "--header", "Authorization: Bearer \(token)", "--header", "Content-Type: application/json",
                "--data", #"{"firstName":"Test","lastName":"\#(name)"}"#, "--output", "/dev/null",
                "--write-out", "%{http_code}\n", server.url + "api/v1/people",
            ]
        }
        let run = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/curl"), arguments)
        return run.output.split(separator: "\n").map(String.init)
    }

    /// The people a restore of `replica` holds, restored now (no waiting).
    private func peopleInReplica(_ sandbox: Sandbox, _ replica: String) async throws -> String {
        let copy = sandbox.path("copy-\(UUID().uuidString).sqlite")
        let restore = try await sandbox.run("restore", replica, "--to", copy)
        try #require(restore.status == 0, "\(restore)")
        return try await sandbox.runRaw(["--database", copy, "people", "list"]).stdout
    }

    @Test(
        "With --durable, a create answered 201 is in the replica at once, and 16 concurrent creates all are",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func durableCreatesAreReplicatedWhenAnswered() async throws {
        _ = try litestreamBinary()
        let (sandbox, token) = try await sandboxWithToken()
        let replica = sandbox.path("replica")
        let server = try await ServeProcess(
            sandbox: sandbox, ["--listen", "127.0.0.1:0", "--replicate", replica, "--durable"])
        #expect(try await createPeople(["Hopper"], server: server, token: token) == ["201"])
        // No sleep: the answer came after the replica held it.
        #expect(try await peopleInReplica(sandbox, replica).contains("Hopper"))

        let names = (1...16).map { "Concurrent\($0)" }
        let statuses = try await createPeople(names, server: server, token: token)
        #expect(statuses == Array(repeating: "201", count: 16), "\(statuses)")
        let listed = try await peopleInReplica(sandbox, replica)
        let missing = names.filter { !listed.contains($0 + "\n") && !listed.contains($0 + " ") }
        #expect(missing.isEmpty, "acknowledged but not in the replica: \(missing)\n\(listed)")
        let stopped = await server.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(stopped.stderr.contains("durable: a write is acknowledged only once the replica holds it"))
    }

    @Test(
        "With --durable and Litestream killed, a create answers 503, or 201 only once the replica holds it",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func durableWithLitestreamKilled() async throws {
        _ = try litestreamBinary()
        let (sandbox, token) = try await sandboxWithToken()
        let replica = sandbox.path("replica")
        let server = try await ServeProcess(
            sandbox: sandbox, ["--listen", "127.0.0.1:0", "--replicate", replica, "--durable"])
        let first = children(of: server.child.processIdentifier, named: "litestream")
        try #require(first.count == 1, "litestream children: \(first)")
        kill(first[0], SIGKILL)
        let status = try await createPeople(["Jackson"], server: server, token: token)
        // Which one depends on whether the supervisor started Litestream
        // again in time; either way no success comes before the replica.
        #expect(status == ["503"] || status == ["201"], "\(status)")
        if status == ["201"] { #expect(try await peopleInReplica(sandbox, replica).contains("Jackson")) }
        // Once Litestream runs again, writes are acknowledged again.
        var again: [String] = []
        let deadline = ContinuousClock.now.advanced(by: livenessTimeout)
        while ContinuousClock.now < deadline {
            again = try await createPeople(["Vaughan"], server: server, token: token)
            if again == ["201"] { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(again == ["201"])
        #expect(try await peopleInReplica(sandbox, replica).contains("Vaughan"))
        let stopped = await server.stop()
        if status == ["503"] {
            #expect(stopped.stderr.contains("not acknowledged, not replicated"), "\(stopped.stderr)")
        }
    }

    @Test(
        "A database file deleted under records serve: a create answers 503 and the log says why",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func deletedDatabaseFileStopsWrites() async throws {
        let (sandbox, token) = try await sandboxWithToken()
        let server = try await ServeProcess(sandbox: sandbox, ["--listen", "127.0.0.1:0"])
        #expect(try await createPeople(["Hopper"], server: server, token: token) == ["201"])
        try FileManager.default.removeItem(atPath: sandbox.database)
        #expect(try await createPeople(["Lamarr"], server: server, token: token) == ["503"])
        let stopped = await server.stop()
        #expect(stopped.stderr.contains("the database file \(sandbox.database) was deleted"), "\(stopped.stderr)")
        #expect(stopped.stderr.contains("now: missing"), "\(stopped.stderr)")
    }
}
