import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `records serve` with a 30 MiB picture: its own peak memory, read as
/// the Coffee command tests read `records`' (`VmHWM` of `/proc/PID/status`).
@Suite("records serve: a large picture in and out with memory far below its size")
struct CoffeeServeMemoryCLITests {
    /// Runs curl; its standard output.
    func curl(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let run = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/curl"), ["--silent", "--show-error"] + arguments)
        return (run.status, run.output)
    }

    @Test(
        "A 30 MiB picture uploaded and downloaded through records serve: its peak grows far less than the picture",
        .enabled(if: ChildMemory.isAvailable && FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func largePictureThroughServe() async throws {
        let sandbox = try Sandbox()
        let added = try await sandbox.run("coffee", "add", "--name", "Mocha", "--price", "3.20")
        let id = try #require(added.stdout.firstMatch(of: /\(ID (\d+)\)/)).1
        #expect(try await sandbox.register(password: "correct horse").status == 0)
        let size = 30 << 20
        let picture = sandbox.path("picture.png")
        var bytes = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let block = PatternBytes.data(count: 1_000_003, seed: 9)
        while bytes.count < size { bytes.append(block.prefix(size - bytes.count)) }
        try bytes.write(to: URL(fileURLWithPath: picture))

        let server = try await ServeProcess(sandbox: sandbox, ["--listen", "127.0.0.1:0"])
        let jar = ["--cookie", sandbox.path("jar"), "--cookie-jar", sandbox.path("jar")]
        func token(_ page: String) async throws -> String {
            let body = try await curl(jar + [server.url + page]).output
            return try #require(body.firstMatch(of: /name="csrf" value="([^"]*)"/)).1.description
        }
        let login = try await curl(
            jar + [
                "--output", "/dev/null", "--write-out", "%{http_code}", "--data-urlencode",
                "csrf=\(try await token("login"))", "--data-urlencode", "email=ada@example.com", "--data-urlencode",
                "password=correct horse", server.url + "login",
            ])
        #expect(login.output == "303")
        let csrf = try await token("coffee/\(id)")

        // Logging in ran scrypt; the peak from here on is the picture's.
        let pid = server.child.processIdentifier
        try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/\(pid)/clear_refs"))
        let start = try #require(ProcessStatus.bytes("VmRSS", of: pid))
        let upload = try await curl(
            jar + [
                "--output", "/dev/null", "--write-out", "%{http_code}", "--form", "csrf=\(csrf)", "--form",
                "picture=@\(picture);type=image/png", server.url + "coffee/\(id)/picture",
            ])
        #expect(upload.output == "303")
        let afterUpload = try #require(ProcessStatus.bytes("VmHWM", of: pid))
        let copy = sandbox.path("copy.png")
        let download = try await curl(
            jar + ["--output", copy, "--write-out", "%{http_code}", server.url + "coffee/\(id)/picture"])
        #expect(download.output == "200")
        let afterDownload = try #require(ProcessStatus.bytes("VmHWM", of: pid))
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == bytes)

        let mebibytes = { (bytes: Int) in String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
        print(
            "records serve, 30 MiB picture, peak RSS (VmHWM) from \(mebibytes(start)) signed in: "
                + "upload \(mebibytes(afterUpload)), download \(mebibytes(afterDownload))")
        #expect(afterUpload - start < size / 4, "upload: \(mebibytes(afterUpload - start)) more")
        #expect(afterDownload - start < size / 4, "download: \(mebibytes(afterDownload - start)) more")
        // (A test that fails before this leaves the server to ServeProcess's
        // deinit, which ends it.)
        _ = await server.stop()
    }
}
