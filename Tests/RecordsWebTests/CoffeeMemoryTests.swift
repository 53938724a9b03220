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

/// The server's own peak memory while a large picture goes in and out, and
/// while a large picture's thumbnail is made.
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
        let (server, port) = try await Self.startServer(directory)
        // Ended if the test fails before telling it to stop (and reaped by
        // ChildProcess's own thread; not waited for here).
        defer { if server.isRunning { server.send(SIGTERM) } }
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
        try await Self.ask(directory, "hold", answer: "held")
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

    @Test(
        "The server's peak memory while it makes a 30 MiB picture's thumbnail stays within 20 MiB more",
        .enabled(if: serverDirectory == nil && FileManager.default.isReadableFile(atPath: "/proc/self/status")))
    func largePictureThumbnailMemory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("records-thumbs-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Noise compresses hardly at all: 3,300 x 3,300 pixels make a PNG
        // of about 31 MiB, and a JPEG at quality 100 of 2,950 x 2,950 about
        // as much (noise takes about 3.9 bytes a pixel there).
        let png = try TestImages.make(width: 3_300, height: 3_300, format: "png")
        let jpeg = try TestImages.make(width: 2_950, height: 2_950, format: "jpg", options: "[Q=100]")
        #expect(png.count >= Self.pictureSize && jpeg.count >= Self.pictureSize, "\(png.count), \(jpeg.count)")
        do {
            let database = try AppDatabase(url: directory.appendingPathComponent("records.sqlite"), start: .empty)
            let store = CoffeeStore(database: database)
            for picture in [png, jpeg] {
                let coffee = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
                try await store.setPicture(id: coffee.id, from: .data(picture))
            }
            database.close()
        }
        let (server, port) = try await Self.startServer(directory)
        defer { if server.isRunning { server.send(SIGTERM) } }
        let pid = server.processIdentifier
        let client = WebClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!)
        client.setCookie(WebApp.sessionCookie, "ada-token")
        let clock = ContinuousClock()
        // Each picture from the resident size before it: the PNG first,
        // then, after the child reset its peak, the JPEG.
        var measures: [(start: Int, peak: Int, time: Duration)] = []
        for id in [1, 2] {
            if id == 2 { try await Self.ask(directory, "reset", answer: "was-reset") }
            let before = try #require(ProcessStatus.bytes("VmRSS", of: pid))
            let began = clock.now
            let response = try await client.get("/coffee/\(id)/thumbnail")
            let time = clock.now - began
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "image/jpeg")
            let size = try TestImages.decodedSize(response.data)
            #expect(size.map { [$0.width, $0.height] } == [96, 96])
            measures.append((before, try #require(ProcessStatus.bytes("VmHWM", of: pid)), time))
        }
        try Data().write(to: directory.appendingPathComponent("stop"))
        #expect(await server.exited() == 0)

        let mebibytes = { (bytes: Int) in String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
        let (first, second) = (measures[0], measures[1])
        print(
            "records web server, thumbnail of a \(mebibytes(png.count)) PNG (3,300 x 3,300): peak RSS (VmHWM) "
                + "\(mebibytes(first.peak)) from \(mebibytes(first.start)) serving, in \(first.time); "
                + "of a \(mebibytes(jpeg.count)) JPEG (2,950 x 2,950): \(mebibytes(second.peak)) from "
                + "\(mebibytes(second.start)), in \(second.time)")
        for measure in measures {
            #expect(measure.peak - measure.start < 20 << 20, "\(mebibytes(measure.peak - measure.start)) more")
        }
    }

    /// Starts ``servePictures()`` in a child process over the directory's
    /// database; the child and the port it serves on.
    static func startServer(_ directory: URL) async throws -> (ChildProcess, UInt16) {
        let server = try ChildProcess.startingTestProbe(
            filter: "CoffeeMemoryTests/servePictures",
            environment: ["RECORDS_TEST_PICTURE_SERVER": directory.path])
        let ready = directory.appendingPathComponent("ready")
        let port = { (try? Data(contentsOf: ready)).flatMap { UInt16(String(decoding: $0, as: UTF8.self)) } }
        #expect(
            await eventually(timeout: .seconds(120)) { port() != nil || !server.isRunning },
            "the child never answered")
        guard let port = port() else {
            if server.isRunning { server.send(SIGTERM) }
            throw CocoaError(.fileReadCorruptFile)
        }
        return (server, port)
    }

    /// Asks the child for `request` (a file of that name) and waits for its
    /// `answer`.
    static func ask(_ directory: URL, _ request: String, answer: String) async throws {
        try Data().write(to: directory.appendingPathComponent(request))
        #expect(
            await eventually(timeout: .seconds(120)) {
                FileManager.default.fileExists(atPath: directory.appendingPathComponent(answer).path)
            }, "the child never answered")
    }

    /// The child's part: serves the apps over the directory's database with
    /// the fixed session `ada-token`, until the parent asks it to stop;
    /// on request, it holds a picture's worth of memory (`hold`) or resets
    /// its peak (`reset`).
    @Test(
        "Child process: the web app served until the parent says stop",
        .enabled(if: serverDirectory != nil, "run by CoffeeMemoryTests"))
    func servePictures() async throws {
        let directory = URL(fileURLWithPath: try #require(serverDirectory))
        let server = try TestServer(
            databaseURL: directory.appendingPathComponent("records.sqlite"), authenticator: FixedSessions.ada)
        // The peak from here on is the transfers'.
        try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
        try Data(String(server.server.port).utf8).write(to: directory.appendingPathComponent("ready"), options: .atomic)
        var held: UnsafeMutableRawBufferPointer?
        var reset = false
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("stop").path) {
            if !reset, FileManager.default.fileExists(atPath: directory.appendingPathComponent("reset").path) {
                try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
                try Data().write(to: directory.appendingPathComponent("was-reset"))
                reset = true
            }
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
