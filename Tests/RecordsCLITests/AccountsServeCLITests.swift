import Foundation
import Testing

/// The HTTP status of a GET, through curl.
private func statusOf(_ url: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["-s", "-o", "/dev/null", "-w", "%{http_code}", url]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}

@Suite("records serve: who may register")
struct AccountsServeCLITests {
    @Test("--registration takes first-user, open or closed; anything else is a usage error")
    func badPolicy() throws {
        let sandbox = try Sandbox()
        for value in ["maybe", "", "first"] {
            let run = try sandbox.run("serve", "--registration", value)
            #expect(run.status == 2, "\(value): \(run)")
            #expect(run.stderr.contains("--registration takes first-user, open or closed"), "\(value)")
        }
        let help = try sandbox.run("serve", "--help")
        #expect(help.stdout.contains("--registration"))
    }

    @Test("By default the registration page is open on a database without accounts; closed shuts it")
    func policies() throws {
        let sandbox = try Sandbox()
        let open = try ServeProcess(sandbox: sandbox, ["--listen", "127.0.0.1:0"])
        #expect(try statusOf(open.url + "register") == "200")
        #expect(open.stop().status == 0)
        let closed = try ServeProcess(sandbox: sandbox, ["--listen", "127.0.0.1:0", "--registration", "CLOSED"])
        #expect(try statusOf(closed.url + "register") == "403")
        #expect(try statusOf(closed.url + "login") == "200")
        #expect(closed.stop().status == 0)
    }
}
