import Foundation
import RecordsApp
import TestSupport
import Testing

@testable import RecordsWeb

#if canImport(Glibc)
    import Glibc
#endif

/// Set only in the child process of ``CoffeeMemoryTests``: the directory it
/// serves from and talks to the parent through.
private let serverDirectory = ProcessInfo.processInfo.environment["RECORDS_TEST_PICTURE_SERVER"]

/// The server's own peak memory while a large picture goes in and out.
///
/// The server runs in a process of its own so that nothing else (the
/// client, other tests running in parallel) counts: this test binary,
/// started again to run only ``servePictures()``, which serves the web app
/// on a loopback port with a fixed session until told to stop. Its peak is
/// read as the Coffee command tests read `records`': `VmHWM` from Linux's
/// `/proc/PID/status`, which only grows. The child resets it once it is
/// serving (`5` to `/proc/self/clear_refs`), so the peak measured is that
/// of the transfers, from the resident size at that moment.
@Suite struct CoffeeMemoryTests {
    static let pictureSize = 30 << 20

    @Test(
        "The server's peak memory while a 30 MiB picture is uploaded and downloaded stays far below its size",
        .enabled(if: serverDirectory == nil && FileManager.default.isReadableFile(atPath: "/proc/self/status")))
    func largePictureServerMemory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("records-memory-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let database = try AppDatabase(url: directory.appendingPathComponent("records.sqlite"), start: .empty)
            try await CoffeeStore(database: database).add(CoffeeDraft(name: "Mocha", price: 3))
            database.close()
        }
        let server = try ChildProcess.startingTestProbe(
            filter: "CoffeeMemoryTests/servePictures",
            environment: ["RECORDS_TEST_PICTURE_SERVER": directory.path])
        // Ended if the test fails before telling it to stop (and reaped by
        // ChildProcess's own thread; not waited for here).
        defer { if server.isRunning { server.send(SIGTERM) } }
        let ready = directory.appendingPathComponent("ready")
        #expect(
            await eventually(timeout: .seconds(120)) {
                FileManager.default.fileExists(atPath: ready.path) || !server.isRunning
            }, "the child never answered")
        let port = try #require(UInt16(String(decoding: try Data(contentsOf: ready), as: UTF8.self)))
        let pid = server.processIdentifier
        let start = try #require(ProcessStatus.bytes("VmRSS", of: pid))

        let client = WebClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!)
        client.setCookie(WebApp.sessionCookie, "ada-token")
        _ = try await client.get("/coffee/1")
        let picture = WebPictures.large(count: Self.pictureSize)
        let uploaded = try await client.postMultipart(
            "/coffee/1/picture", fields: [], file: ("picture", "big.png", "image/png", picture))
        #expect(uploaded.status == 303)
        let afterUpload = try #require(ProcessStatus.bytes("VmHWM", of: pid))
        // curl writes the picture to a file as it arrives (URLSession on
        // Linux gathers a large body slowly).
        let copy = directory.appendingPathComponent("copy.png")
        let curl = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/curl"),
            [
                "--silent", "--show-error", "--fail", "--cookie", "\(WebApp.sessionCookie)=ada-token", "--output",
                copy.path,
                "http://127.0.0.1:\(port)/coffee/1/picture",
            ])
        #expect(curl.status == 0, "\(curl.errors)")
        #expect(try Data(contentsOf: copy) == picture)
        let afterDownload = try #require(ProcessStatus.bytes("VmHWM", of: pid))

        // The measure sees a picture held whole: the child fills a buffer
        // of its size on request.
        try Data().write(to: directory.appendingPathComponent("hold"))
        #expect(
            await eventually(timeout: .seconds(120)) {
                FileManager.default.fileExists(atPath: directory.appendingPathComponent("held").path)
            }, "the child never answered")
        let holding = try #require(ProcessStatus.bytes("VmHWM", of: pid))
        try Data().write(to: directory.appendingPathComponent("stop"))
        #expect(await server.exited() == 0)

        let mebibytes = { (bytes: Int) in String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
        print(
            "records web server, 30 MiB picture, peak RSS (VmHWM) from \(mebibytes(start)) serving: "
                + "upload \(mebibytes(afterUpload)), download \(mebibytes(afterDownload)); "
                + "holding the picture \(mebibytes(holding))")
        #expect(holding - start >= Self.pictureSize * 9 / 10, "the measure must see a picture held whole")
        #expect(afterUpload - start < Self.pictureSize / 4, "upload: \(mebibytes(afterUpload - start)) more")
        #expect(afterDownload - start < Self.pictureSize / 4, "download: \(mebibytes(afterDownload - start)) more")
    }

    /// The child's part: serves the apps over the directory's database with
    /// the fixed session `ada-token`, until the parent asks it to stop.
    @Test(
        "Child process: the web app served until the parent says stop",
        .enabled(if: serverDirectory != nil, "run by CoffeeMemoryTests"))
    func servePictures() async throws {
        let directory = URL(fileURLWithPath: try #require(serverDirectory))
        let server = try TestServer(
            databaseURL: directory.appendingPathComponent("records.sqlite"), authenticator: FixedSessions.ada)
        // The peak from here on is the transfers'.
        try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
        try Data(String(server.server.port).utf8).write(to: directory.appendingPathComponent("ready"))
        var held: UnsafeMutableRawBufferPointer?
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("stop").path) {
            if held == nil, FileManager.default.fileExists(atPath: directory.appendingPathComponent("hold").path) {
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.pictureSize, alignment: 4096)
                buffer.initializeMemory(as: UInt8.self, repeating: 1)
                held = buffer
                try Data().write(to: directory.appendingPathComponent("held"))
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        held?.deallocate()
        await server.stopAndWait(keepFiles: true)
    }
}
