import Foundation
import SQLiteStore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `records remote`, `records sync` and `records conflicts`, end to end
/// against a real `records serve`.
@Suite("records remote, sync and conflicts")
struct SyncCLITests {
    /// A server's sandbox with Ada registered and her read-write token in
    /// the file `sync.token`.
    private func server() async throws -> (Sandbox, ServeProcess, tokenFile: String) {
        let sandbox = try Sandbox()
        let registered = try await sandbox.register()
        try #require(registered.status == 0, "\(registered)")
        let created = try await sandbox.createToken(["--json"])
        let secret = try #require((try created.json() as? [String: Any])?["secret"] as? String)
        let tokenFile = sandbox.path("sync.token")
        try Data((secret + "\n").utf8).write(to: URL(fileURLWithPath: tokenFile))
        let server = try await ServeProcess(sandbox: sandbox, ["--listen", "127.0.0.1:0"])
        return (sandbox, server, tokenFile)
    }

    @Test("remote set keeps the token in a file of mode 0600 and never prints it; remote show leaves it out")
    func remoteSetAndShow() async throws {
        let sandbox = try Sandbox()
        let secret = "rst_" + String(repeating: "k", count: 43)
        let set = try await sandbox.run(input: secret + "\n", ["remote", "set", "http://127.0.0.1:9/"])
        #expect(set.status == 0, "\(set)")
        #expect(!set.stdout.contains(secret) && !set.stderr.contains(secret))
        var info = stat()
        #expect(stat(sandbox.database + ".remote", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let show = try await sandbox.run("remote", "show")
        #expect(show.status == 0, "\(show)")
        #expect(show.stdout.contains("http://127.0.0.1:9/"))
        #expect(!show.stdout.contains(secret))
        let json = try await sandbox.run("--json", "remote", "show")
        #expect((try json.json() as? [String: Any])?["tokenSet"] as? Bool == true)
    }

    @Test("remote set refuses an address that is not http(s) and an empty token, keeping what was set")
    func remoteSetRefusesBadInput() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.run(input: "rst_a\n", ["remote", "set", "http://one.example"]).status == 0)
        let ftp = try await sandbox.run(input: "rst_b\n", ["remote", "set", "ftp://two.example"])
        #expect(ftp.status != 0)
        #expect(ftp.stderr.contains("http or https"))
        let empty = try await sandbox.run(input: "\n", ["remote", "set", "http://two.example"])
        #expect(empty.status != 0)
        #expect(try await sandbox.run("remote", "show").stdout.contains("http://one.example"))
        let none = try Sandbox()
        let unset = try await none.run("remote", "show")
        #expect(unset.status == 1)
        #expect(unset.stderr.contains("records remote set"))
    }

    @Test("sync sends and receives through records serve, and prints what it did")
    func syncThroughTheServer() async throws {
        let (serverSandbox, server, tokenFile) = try await server()
        let laptop = try Sandbox()
        let phone = try Sandbox()
        #expect(try await laptop.run("people", "add", "--first", "Ada", "--last", "Byron", "--age", "36").status == 0)
        #expect(try await laptop.run("remote", "set", server.url, "--token-file", tokenFile).status == 0)
        let sent = try await laptop.run("sync")
        #expect(sent.status == 0, "\(sent)")
        #expect(sent.stdout.contains("Synced with"))
        #expect(sent.stdout.contains("conflicts 0"))
        let received = try await phone.run("--json", "sync", "--server", server.url, "--token-file", tokenFile)
        #expect(received.status == 0, "\(received)")
        let counts = try #require(try received.json() as? [String: Int])
        #expect(counts["sent"] ?? 0 > 0, "the sample's records, the same on both, are sent too")
        #expect(counts["received"] ?? 0 >= 3)
        for sandbox in [phone, serverSandbox] {
            let people = try await sandbox.run("--json", "people", "list")
            let names = (try people.json() as? [[String: Any]] ?? []).compactMap { $0["lastName"] as? String }
            #expect(names.filter { $0 == "Byron" }.count == 1)
            #expect(names.filter { $0 == "Lovelace" }.count == 1, "the sample's Ada is one record everywhere")
        }
        _ = await server.stop()
    }

    @Test("a same-field edit on two devices is listed by records conflicts on the server")
    func conflicts() async throws {
        let (serverSandbox, server, tokenFile) = try await server()
        let laptop = try Sandbox()
        let phone = try Sandbox()
        for device in [laptop, phone, laptop] {
            #expect(try await device.run("remote", "set", server.url, "--token-file", tokenFile).status == 0)
            #expect(try await device.run("sync").status == 0)
        }
        // The sample's Alan Turing (ID 2 in the sample, on both), edited
        // offline on both once each has seen the other's first sync.
        #expect(try await laptop.run("people", "edit", "2", "--age", "42").status == 0)
        #expect(try await phone.run("people", "edit", "2", "--age", "43").status == 0)
        #expect(try await laptop.run("sync").status == 0)
        let second = try await phone.run("sync")
        #expect(second.stdout.contains("conflicts 1"), "\(second)")
        let listed = try await serverSandbox.run("--json", "conflicts")
        let entries = try #require(try listed.json() as? [[String: Any]])
        #expect(entries.count == 1)
        #expect(entries.first?["app"] as? String == "people")
        #expect(entries.first?["column"] as? String == "age")
        #expect(entries.first?["lost"] as? String == "42")
        #expect(entries.first?["won"] as? String == "43")
        #expect(entries.first?["id"] as? Int == 2)
        let text = try await serverSandbox.run("conflicts")
        #expect(text.stdout.contains("COLUMN"))
        let none = try await laptop.run("conflicts")
        #expect(none.stdout.contains("No conflicts"))
        // From a device, the server's log, with the record's ID on the device.
        let remote = try await laptop.run("--json", "conflicts", "--remote")
        let fromServer = try #require(try remote.json() as? [[String: Any]], "\(remote)")
        #expect(fromServer.count == 1)
        #expect(fromServer.first?["lost"] as? String == "42")
        #expect(fromServer.first?["won"] as? String == "43")
        #expect(fromServer.first?["id"] as? Int == 2)
        _ = await server.stop()
    }

    @Test("sync without a remote, with an unreachable server, or with a wrong token fails clearly, changing nothing")
    func syncFailures() async throws {
        let device = try Sandbox()
        let unset = try await device.run("sync")
        #expect(unset.status == 1)
        #expect(unset.stderr.contains("no remote is set"))
        let unreachable = try await device.run(input: "rst_x\n", ["sync", "--server", "http://127.0.0.1:9"])
        #expect(unreachable.status == 1)
        #expect(unreachable.stderr.contains("cannot reach the server"), "\(unreachable)")

        let (_, server, _) = try await server()
        let wrong = try await device.run(
            input: "rst_" + String(repeating: "z", count: 43) + "\n", ["sync", "--server", server.url])
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("refused the token"), "\(wrong)")
        #expect(!wrong.stderr.contains("rst_zzz"))
        _ = await server.stop()
    }

    /// How many people of `database` have the last name `last`, read
    /// behind the app's back (nil while the file cannot be read).
    private func count(_ database: String, last: String) -> Int? {
        guard let db = try? Database(path: database) else { return nil }
        defer { db.close() }
        return try? db.fetchOne(Int.self, "SELECT count(*) FROM peopleInfo WHERE lastname = \(last)")
    }

    @Test("sync --watch brings another device's change, pushes one made here, and stops cleanly on SIGTERM")
    func watch() async throws {
        let (serverSandbox, server, tokenFile) = try await server()
        let laptop = try Sandbox()
        let phone = try Sandbox()
        for device in [laptop, phone] {
            #expect(try await device.run("remote", "set", server.url, "--token-file", tokenFile).status == 0)
        }
        let process = Process()
        process.executableURL = try recordsBinary()
        process.arguments = ["--database", phone.database, "sync", "--watch"]
        process.environment = ["HOME": phone.path("home"), "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"]
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let watcher = try ChildProcess(starting: process)

        #expect(try await laptop.run("people", "add", "--first", "Wanda", "--last", "Watcher").status == 0)
        #expect(try await laptop.run("sync").status == 0)
        #expect(await eventually { count(phone.database, last: "Watcher") == 1 }, "pulled on the server's event")
        #expect(try await phone.run("people", "add", "--first", "Pia", "--last", "Pusher").status == 0)
        #expect(await eventually { count(serverSandbox.database, last: "Pusher") == 1 }, "pushed after the commit")

        watcher.send(SIGTERM)
        #expect(await watcher.exited(within: livenessTimeout))
        #expect(await watcher.exited() == 0)
        let handle = stdout.fileHandleForReading
        let output = String(decoding: await onOwnThread { handle.readDataToEndOfFile() }, as: UTF8.self)
        #expect(output.contains("Watching"))
        #expect(output.contains("Stopped watching."))
        _ = await server.stop()
    }
}
