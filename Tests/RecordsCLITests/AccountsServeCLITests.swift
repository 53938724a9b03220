import Foundation
import TestSupport
import Testing

/// The HTTP status of a GET, through curl.
private func statusOf(_ url: String) async throws -> String {
    try await ChildProcess.run(
        URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "-o", "/dev/null", "-w", "%{http_code}", url]
    ).output
}

@Suite("records serve: who may register")
struct AccountsServeCLITests {
    @Test("--registration takes first-user, open or closed; anything else is a usage error")
    func badPolicy() async throws {
        let sandbox = try Sandbox()
        for value in ["maybe", "", "first"] {
            let run = try await sandbox.run("serve", "--registration", value)
            #expect(run.status == 2, "\(value): \(run)")
            #expect(run.stderr.contains("--registration takes first-user, open or closed"), "\(value)")
        }
        let help = try await sandbox.run("serve", "--help")
        #expect(help.stdout.contains("--registration"))
    }

    @Test("--synchronous takes full or normal; anything else is a usage error, and normal serves")
    func synchronousMode() async throws {
        let sandbox = try Sandbox()
        for value in ["off", "extra", "", "fast"] {
            let run = try await sandbox.run("serve", "--synchronous", value)
            #expect(run.status == 2, "\(value): \(run)")
            #expect(run.stderr.contains("--synchronous takes full or normal, not '\(value)'"), "\(value): \(run)")
        }
        let help = try await sandbox.run("serve", "--help")
        #expect(help.stdout.contains("--synchronous"))
        let server = try await ServeProcess(sandbox: sandbox, ["--listen", "127.0.0.1:0", "--synchronous", "NORMAL"])
        #expect(try await statusOf(server.url + "register") == "200")
        #expect(await server.stop().status == 0)
    }

    @Test("By default the registration page is open on a database without accounts; closed shuts it")
    func policies() async throws {
        let sandbox = try Sandbox()
        let open = try await ServeProcess(sandbox: sandbox, ["--listen", "127.0.0.1:0"])
        #expect(try await statusOf(open.url + "register") == "200")
        #expect(await open.stop().status == 0)
        let closed = try await ServeProcess(sandbox: sandbox, ["--listen", "127.0.0.1:0", "--registration", "CLOSED"])
        #expect(try await statusOf(closed.url + "register") == "403")
        #expect(try await statusOf(closed.url + "login") == "200")
        #expect(await closed.stop().status == 0)
    }
}
