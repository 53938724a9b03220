import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A `records serve` process: started, read until it prints its address,
/// and stopped with a signal. Its reads and waits hold no cooperative
/// thread.
final class ServeProcess: Sendable {
    let child: ChildProcess
    let url: String
    private let stderr: FileHandle

    /// Starts `records --database DB serve ARGUMENTS` and waits for its
    /// "Serving … at URL" line.
    init(sandbox: Sandbox, _ arguments: [String]) async throws {
        let process = Process()
        process.executableURL = try recordsBinary()
        process.arguments = ["--database", sandbox.database, "serve"] + arguments
        process.environment = ["HOME": sandbox.path("home"), "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"]
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        child = try ChildProcess(starting: process)
        let errorHandle = stderr.fileHandleForReading
        self.stderr = errorHandle
        let handle = stdout.fileHandleForReading
        let seen = await onOwnThread {
            var seen = Data()
            while !seen.contains(UInt8(ascii: "\n")) {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                seen.append(chunk)
            }
            return seen
        }
        let line = String(decoding: seen, as: UTF8.self)
        guard let match = line.firstMatch(of: /(https?:\/\/[^ ]+\/)/) else {
            child.send(SIGTERM)
            let status = await child.exited()
            let errors = await onOwnThread { errorHandle.readDataToEndOfFile() }
            throw ServeFailure(output: line + String(decoding: errors, as: UTF8.self), status: status)
        }
        url = String(match.1)
    }

    struct ServeFailure: Error, CustomStringConvertible {
        let output: String
        let status: Int32
        var description: String { "records serve exited \(status): \(output)" }
    }

    /// Sends `signal` and waits for the exit: the status and standard error.
    ///
    /// A server still running ``livenessTimeout`` after the signal is a
    /// failure (it is then killed, so the suite goes on).
    func stop(_ signal: Int32 = SIGTERM) async -> (status: Int32, stderr: String) {
        child.send(signal)
        if !(await child.exited(within: livenessTimeout)) {
            Issue.record("records serve was still running \(livenessTimeout) after signal \(signal)")
            child.send(SIGKILL)
        }
        let status = await child.exited()
        let errors = await onOwnThread { [stderr] in stderr.readDataToEndOfFile() }
        return (status, String(decoding: errors, as: UTF8.self))
    }

    /// A server left running (its test failed before `stop`) is ended;
    /// Foundation reaps it.
    deinit {
        if child.isRunning { child.send(SIGTERM) }
    }
}

/// Runs a program (curl, openssl) and returns its exit status and output
/// (standard output and error together).
private func runTool(_ path: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
    let run = try await ChildProcess.run(URL(fileURLWithPath: path), arguments, mergingStandardError: true)
    return (run.status, run.output)
}

/// A throwaway self-signed certificate and its key, made with openssl in
/// the sandbox: the paths of the two files.
private func makeCertificate(_ sandbox: Sandbox, name: String = "cert") async throws -> (
    certificate: String, key: String
) {
    let certificate = sandbox.path("\(name).pem")
    let key = sandbox.path("\(name)-key.pem")
    let made = try await runTool(
        "/usr/bin/openssl",
        [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-days", "1",
            "-keyout", key, "-out", certificate,
        ])
    try #require(made.status == 0, "\(made.output)")
    return (certificate, key)
}

@Suite("records serve: starts, serves, stops cleanly")
struct ServeCLITests {
    @Test("It prints its address, serves pages, and on SIGTERM or SIGINT exits 0 with the database closed")
    func servesAndStops() async throws {
        for signal in [SIGTERM, SIGINT] {
            let sandbox = try Sandbox()
            let server = try await ServeProcess(sandbox: sandbox, ["--listen", "127.0.0.1:0"])
            #expect(server.url.hasPrefix("http://127.0.0.1:"))
            let fetched = try await runTool(
                "/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", server.url + "login"])
            #expect(fetched.output == "200" || fetched.output == "404")
            let icon = try await runTool(
                "/usr/bin/curl", ["-s", "-w", "\n%{http_code}", server.url + "static/icon.svg"])
            #expect(icon.output.hasSuffix("\n200"))
            let stopped = await server.stop(signal)
            #expect(stopped.status == 0, "\(stopped.stderr)")
            #expect(stopped.stderr.contains("stopping"))
            // The database was closed: SQLite removed its WAL files.
            #expect(!FileManager.default.fileExists(atPath: sandbox.database + "-wal"))
            #expect(!FileManager.default.fileExists(atPath: sandbox.database + "-shm"))
            // Requests are logged without their query or cookies.
            #expect(stopped.stderr.contains("GET /static/icon.svg 200"))
        }
    }

    @Test("Each log line starts with the time in UTC, and a line break in a path cannot forge one")
    func logLines() async throws {
        let sandbox = try Sandbox()
        let server = try await ServeProcess(sandbox: sandbox, ["--listen", "127.0.0.1:0"])
        let fetched = try await runTool(
            "/usr/bin/curl",
            ["-s", "--path-as-is", "-o", "/dev/null", "-w", "%{http_code}", server.url + "x%0APOST%20/login%20303"])
        #expect(fetched.output == "404")
        let stopped = await server.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let lines = stopped.stderr.split(separator: "\n")
        #expect(lines.count >= 2)
        for line in lines {
            #expect(
                line.firstMatch(of: #/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z records serve: /#) != nil, "\(line)")
        }
        #expect(lines.contains { $0.contains(" records serve: GET /x%0APOST%20/login%20303 404 ") }, "\(lines)")
        #expect(!lines.contains { $0.contains("POST /login") && !$0.contains("GET /x") }, "\(lines)")
    }

    @Test("A wrong --listen or a lone TLS option is a usage error")
    func usageErrors() async throws {
        let sandbox = try Sandbox()
        for arguments in [
            ["--listen", "8080"], ["--listen", "127.0.0.1:99999"], ["--listen", "127.0.0.1:http"],
            ["--tls-cert", "cert.pem"], ["--tls-key", "key.pem"],
            ["--max-connections-per-client", "0"], ["--max-connections-per-client", "12289"],
            ["--max-connections-per-client", "many"], ["--event-loop-threads", "-1"],
            ["--event-loop-threads", "65"], ["--event-loop-threads", "two"],
        ] {
            let run = try await sandbox.run(["serve"] + arguments)
            #expect(run.status == 2, "\(arguments): \(run)")
        }
        let badHost = try await sandbox.run("serve", "--listen", "example.com:8080")
        #expect(badHost.status == 1)
        #expect(badHost.stderr.contains("not an IP address"))
        let missing = try await sandbox.run(
            "serve", "--tls-cert", sandbox.path("nope.pem"), "--tls-key", sandbox.path("nope.key"))
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("cannot read the TLS certificate"))
    }

    @Test(
        "A log nobody reads holds up no request: the server answers on and ends cleanly",
        arguments: ["0", "2"])
    func unreadLog(eventLoopThreads: String) async throws {
        let sandbox = try Sandbox()
        // ServeProcess reads the server's standard error only once it has
        // ended: a pipe of 64 KiB, full after about a thousand lines.
        let server = try await ServeProcess(
            sandbox: sandbox, ["--listen", "127.0.0.1:0", "--event-loop-threads", eventLoopThreads])
        let count = 3000
        let fetched = try await runTool(
            "/usr/bin/curl",
            [
                "-s", "--fail-early", "--max-time", "60", "-w", "\nstatus %{http_code}\n",
                server.url + "static/icon.svg?[1-\(count)]",
            ])
        #expect(fetched.status == 0)
        #expect(fetched.output.components(separatedBy: "\nstatus 200\n").count - 1 == count)
        let stopped = await server.stop()
        #expect(stopped.status == 0, "\(stopped.stderr.suffix(500))")
        // The log holds the lines the pipe took, each whole.
        let lines = stopped.stderr.split(separator: "\n")
        #expect(lines.count > 100)
        #expect(
            lines.allSatisfy { $0.contains(" records serve: ") }, "\(lines.filter { !$0.contains(" records serve: ") })"
        )
    }

    @Test("A port already in use is a clear error")
    func portInUse() async throws {
        let sandbox = try Sandbox()
        let first = try await ServeProcess(sandbox: sandbox, ["--listen", "127.0.0.1:0"])
        let port = try #require(first.url.split(separator: ":").last?.dropLast())
        let second = try await sandbox.run("serve", "--listen", "127.0.0.1:\(port)")
        #expect(second.status == 1)
        #expect(second.stderr.contains("cannot listen on 127.0.0.1:\(port)"))
        #expect(await first.stop().status == 0)
    }

    @Test("Listening beyond loopback without TLS prints a warning")
    func warnsWithoutTLS() async throws {
        let sandbox = try Sandbox()
        let server = try await ServeProcess(sandbox: sandbox, ["--listen", "0.0.0.0:0"])
        let stopped = await server.stop()
        #expect(stopped.status == 0)
        #expect(stopped.stderr.contains("without TLS"))
    }

    @Test("A certificate and key given the wrong way round are named as swapped, with no stale system error")
    func swappedCertificateAndKey() async throws {
        let sandbox = try Sandbox()
        let (certificate, key) = try await makeCertificate(sandbox)
        let run = try await sandbox.run("serve", "--listen", "127.0.0.1:0", "--tls-cert", key, "--tls-key", certificate)
        #expect(run.status == 1)
        #expect(run.stderr.contains("the TLS certificate \(key) is a private key"), "\(run.stderr)")
        #expect(run.stderr.contains("swapped"), "\(run.stderr)")
        #expect(!run.stderr.contains("No such file"), "\(run.stderr)")
    }

    @Test("A file that is not a certificate, or not a key, is named")
    func notACertificateOrNotAKey() async throws {
        let sandbox = try Sandbox()
        let (certificate, key) = try await makeCertificate(sandbox)
        let text = sandbox.path("notes.txt")
        try "not PEM at all\n".write(toFile: text, atomically: true, encoding: .utf8)
        let noCertificate = try await sandbox.run(
            "serve", "--listen", "127.0.0.1:0", "--tls-cert", text, "--tls-key", key)
        #expect(noCertificate.status == 1)
        #expect(noCertificate.stderr.contains("the TLS certificate \(text) is not a certificate"), "\(noCertificate)")
        let noKey = try await sandbox.run(
            "serve", "--listen", "127.0.0.1:0", "--tls-cert", certificate, "--tls-key", text)
        #expect(noKey.status == 1)
        #expect(noKey.stderr.contains("the TLS key \(text) is not a private key"), "\(noKey)")
    }

    @Test("A key that is not the certificate's is refused as not matching")
    func mismatchedKey() async throws {
        let sandbox = try Sandbox()
        let (certificate, _) = try await makeCertificate(sandbox)
        let (_, otherKey) = try await makeCertificate(sandbox, name: "other")
        let run = try await sandbox.run(
            "serve", "--listen", "127.0.0.1:0", "--tls-cert", certificate, "--tls-key", otherKey)
        #expect(run.status == 1)
        #expect(
            run.stderr.contains("the TLS key \(otherKey) does not belong to the TLS certificate \(certificate)"),
            "\(run.stderr)")
        #expect(!run.stderr.contains("cannot listen"), "\(run.stderr)")
    }

    @Test(
        "With --tls-cert and --tls-key it serves HTTPS, and its cookies are Secure",
        arguments: ["0", "2"])
    func servesHTTPS(eventLoopThreads: String) async throws {
        let sandbox = try Sandbox()
        let certificate = sandbox.path("cert.pem")
        let key = sandbox.path("key.pem")
        let made = try await runTool(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-days", "1",
                "-keyout", key, "-out", certificate,
            ])
        try #require(made.status == 0, "\(made.output)")
        let server = try await ServeProcess(
            sandbox: sandbox,
            [
                "--listen", "127.0.0.1:0", "--tls-cert", certificate, "--tls-key", key, "--event-loop-threads",
                eventLoopThreads,
            ])
        #expect(server.url.hasPrefix("https://127.0.0.1:"))
        let page = try await runTool(
            "/usr/bin/curl", ["-sk", "-D", "-", "-o", "/dev/null", server.url + "no-such-page"])
        #expect(page.output.contains("HTTP/1.1 404"))
        let cookie = page.output.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") }
        #expect(cookie?.contains("Secure") == true, "\(page.output)")
        #expect(cookie?.contains("HttpOnly") == true)
        let plain = try await runTool(
            "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "-w", "%{http_code}",
                "http://127.0.0.1:" + (server.url.split(separator: ":").last.map(String.init) ?? ""),
            ])
        #expect(plain.output != "200")
        let stopped = await server.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(!stopped.stderr.contains("without TLS"))
    }
}
