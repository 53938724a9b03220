import Foundation
import TestSupport
import Testing

/// Runs curl and returns its output (the body, then the status on the
/// last line).
private func curl(_ arguments: [String]) async throws -> (body: String, status: Int) {
    let run = try await ChildProcess.run(
        URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "-w", "\n%{http_code}"] + arguments)
    let lines = run.output.split(separator: "\n", omittingEmptySubsequences: false)
    return (lines.dropLast().joined(separator: "\n"), Int(lines.last ?? "") ?? 0)
}

/// Whether `url` answers with `text` in its body within the liveness
/// timeout (the replica follows the primary about a second behind).
private func answers(_ url: String, with text: String, headers: [String]) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: livenessTimeout)
    while ContinuousClock.now < deadline {
        if let answer = try? await curl(headers + [url]), answer.body.contains(text) { return true }
        try? await Task.sleep(for: .milliseconds(100))
    }
    return false
}

@Suite("records serve --read-replica", .serialized)
struct ReadReplicaCLITests {
    @Test("A read replica serves the primary's records to its tokens, follows new commits, and refuses changes")
    func followsThePrimary() async throws {
        let sandbox = try Sandbox()
        try #require(try await sandbox.register().status == 0)
        let created = try await sandbox.createToken()
        try #require(created.status == 0, "\(created)")
        let bearer = "Authorization: Bearer " + created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(try await sandbox.run("people", "add", "--first", "Hedy", "--last", "Lamarr").status == 0)
        let replica = sandbox.path("replica")
        let primary = try await ServeProcess(sandbox: sandbox, ["--listen", "127.0.0.1:0", "--replicate", replica])
        // Litestream's first copy.
        let firstCopy = await eventually {
            let files = FileManager.default.enumerator(atPath: replica + "/ltx")?.allObjects as? [String] ?? []
            return files.contains { $0.hasSuffix(".ltx") }
        }
        try #require(firstCopy)
        // The replica's own --database names a file it never makes.
        let unused = try Sandbox()
        let copy = try await ServeProcess(
            sandbox: unused, ["--listen", "127.0.0.1:0", "--read-replica", replica, "--primary", primary.url])

        // What the primary held when it started, with its token.
        let people = copy.url + "api/v1/people?q=Lamarr"
        #expect(await answers(people, with: "Lamarr", headers: ["-H", bearer]))

        // A create on the primary shows on the replica.
        let added = try await curl([
            "-H", bearer, "-H", "Content-Type: application/json", "-d", #"{"firstName":"Emmy","lastName":"Noether"}"#,
            primary.url + "api/v1/people",
        ])
        #expect(added.status == 201, "\(added)")
        let search = copy.url + "api/v1/people?q=noether"
        #expect(await answers(search, with: "Noether", headers: ["-H", bearer]))
        let listed = try await curl(["-H", bearer, copy.url + "api/v1/people"])
        #expect(listed.status == 200 && listed.body.contains("Noether"), "\(listed)")

        // A change sent to the replica: 503, naming the primary, and nothing
        // reaches the primary.
        let refused = try await curl([
            "-H", bearer, "-H", "Content-Type: application/json", "-d", #"{"firstName":"Lise","lastName":"Meitner"}"#,
            copy.url + "api/v1/people",
        ])
        #expect(refused.status == 503, "\(refused)")
        #expect(refused.body.contains("read-only copy") && refused.body.contains(primary.url), "\(refused)")
        let signIn = try await curl(["-d", "email=ada%40example.com&password=x", copy.url + "login"])
        #expect(signIn.status == 503, "\(signIn)")
        #expect(signIn.body.contains("read-only copy"), "\(signIn.body)")
        #expect(try await sandbox.run("people", "list").stdout.contains("Meitner") == false)
        // A page needs a session: the replica sends a visitor to sign in.
        let page = try await curl(["-o", "/dev/null", copy.url + "people"])
        #expect(page.status == 303)

        let copyStopped = await copy.stop()
        #expect(copyStopped.status == 0, "\(copyStopped.stderr)")
        #expect(copyStopped.stderr.contains("serving a read-only copy of the database replicated to \(replica)"))
        #expect(copyStopped.stderr.contains("POST /api/v1/people 503"))
        #expect(!FileManager.default.fileExists(atPath: unused.database))
        #expect(await primary.stop().status == 0)
    }

    @Test("Bad --read-replica input is a clear error at start, and no server runs")
    func badInput() async throws {
        let sandbox = try Sandbox()
        let missing = sandbox.path("no-replica-here")
        let cases: [(arguments: [String], status: Int32, message: String)] = [
            (["--read-replica", missing], 1, "the replica \(missing) does not exist"),
            (["--read-replica", missing, "--replicate", missing], 2, "does not go with --replicate"),
            (["--read-replica", missing, "--synchronous", "normal"], 2, "does not go with --synchronous"),
            (["--read-replica", missing, "--restore-if-missing"], 2, "--restore-if-missing goes with --replicate"),
            (["--primary", "http://primary.example/"], 2, "--primary goes with --read-replica"),
            (["--litestream-vfs", "/nowhere.so"], 2, "--litestream-vfs goes with --read-replica"),
            (["--read-replica", missing, "--primary", "ftp://x"], 2, "--primary takes the primary server's http://"),
            (["--read-replica", sandbox.root.path, "--litestream-vfs", missing], 1, "is not a file"),
            (["--read-replica", sandbox.root.path], 1, "holds no copy of a database yet"),
            (["--read-replica", "gopher://x"], 2, "replicas to gopher:// are not supported"),
        ]
        for (arguments, status, message) in cases {
            let run = try await sandbox.run(["serve", "--listen", "127.0.0.1:0"] + arguments)
            #expect(run.status == status, "\(arguments): \(run)")
            #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
            #expect(!run.stdout.contains("Serving"), "\(arguments): \(run)")
        }
    }
}
