import Foundation
import RecordsApp
import TestSupport
import Testing

@testable import RecordsWeb

#if canImport(Glibc)
    import Glibc
#endif

/// Set only in the child process of ``CoffeeThumbnailMemoryTests``: the
/// directory it serves from and talks to the parent through.
private let thumbnailServerDirectory = ProcessInfo.processInfo.environment["RECORDS_TEST_THUMBNAIL_SERVER"]

/// The server's own peak memory while it makes the thumbnail of a 30 MiB
/// picture, measured as ``CoffeeMemoryTests`` measures uploads: in a child
/// process (this test binary again, running only ``serveThumbnails()``),
/// from `VmHWM` in `/proc/PID/status`, reset once the child serves.
@Suite struct CoffeeThumbnailMemoryTests {
    static let pictureSize = 30 << 20

    @Test(
        "The server's peak memory while it makes a 30 MiB picture's thumbnail stays within 20 MiB more",
        .enabled(
            if: thumbnailServerDirectory == nil && FileManager.default.isReadableFile(atPath: "/proc/self/status")))
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
        let server = try ChildProcess.startingTestProbe(
            filter: "CoffeeThumbnailMemoryTests/serveThumbnails",
            environment: ["RECORDS_TEST_THUMBNAIL_SERVER": directory.path])
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
        let clock = ContinuousClock()
        // Each picture from the resident size before it: the PNG first,
        // then, after the child reset its peak, the JPEG.
        var measures: [(start: Int, peak: Int, time: Duration)] = []
        for id in [1, 2] {
            var before = start
            if id == 2 {
                try Data().write(to: directory.appendingPathComponent("reset"))
                #expect(
                    await eventually(timeout: .seconds(120)) {
                        FileManager.default.fileExists(atPath: directory.appendingPathComponent("was-reset").path)
                    }, "the child never answered")
                before = try #require(ProcessStatus.bytes("VmRSS", of: pid))
            }
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
        let (png1, jpeg2) = (measures[0], measures[1])
        print(
            "records web server, thumbnail of a \(mebibytes(png.count)) PNG (3,300 x 3,300): peak RSS (VmHWM) "
                + "\(mebibytes(png1.peak)) from \(mebibytes(png1.start)) serving, in \(png1.time); "
                + "of a \(mebibytes(jpeg.count)) JPEG (2,950 x 2,950): \(mebibytes(jpeg2.peak)) from "
                + "\(mebibytes(jpeg2.start)), in \(jpeg2.time)")
        for measure in measures {
            #expect(measure.peak - measure.start < 20 << 20, "\(mebibytes(measure.peak - measure.start)) more")
        }
    }

    /// The child's part: serves the apps over the directory's database with
    /// the fixed session `ada-token`, until the parent asks it to stop.
    @Test(
        "Child process: the web app served until the parent says stop (thumbnails)",
        .enabled(if: thumbnailServerDirectory != nil, "run by CoffeeThumbnailMemoryTests"))
    func serveThumbnails() async throws {
        let directory = URL(fileURLWithPath: try #require(thumbnailServerDirectory))
        let server = try TestServer(
            databaseURL: directory.appendingPathComponent("records.sqlite"), authenticator: FixedSessions.ada)
        try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
        try Data(String(server.server.port).utf8).write(to: directory.appendingPathComponent("ready"))
        var reset = false
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("stop").path) {
            // Asked once: the peak from here on.
            if !reset, FileManager.default.fileExists(atPath: directory.appendingPathComponent("reset").path) {
                try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
                try Data().write(to: directory.appendingPathComponent("was-reset"))
                reset = true
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        await server.stopAndWait(keepFiles: true)
    }
}
