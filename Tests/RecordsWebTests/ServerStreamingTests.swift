import Foundation
import RecordsApp
import Synchronization
import TestSupport
import Testing

@testable import RecordsWeb

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Uploads arrive at the route's sink chunk by chunk; streamed responses
/// leave chunk by chunk; the server stops cleanly.
@Suite(.tags(.concurrency)) struct ServerStreamingTests {
    /// A sink that keeps a digest-free copy of small files and counts
    /// chunks, refusing past `limit` bytes.
    final class RecordingSink: UploadSink, @unchecked Sendable {
        let lock = NSLock()
        var bytes: [UInt8] = []
        var largestChunk = 0
        var finished = false
        var cancelled = false
        let limit: Int
        init(limit: Int) { self.limit = limit }
        struct TooLarge: Error {}
        func write(_ chunk: UnsafeRawBufferPointer) throws {
            try lock.withLock {
                largestChunk = max(largestChunk, chunk.count)
                if bytes.count + chunk.count > limit { throw TooLarge() }
                bytes.append(contentsOf: chunk)
            }
        }
        func finish() throws { lock.withLock { finished = true } }
        func cancel() { lock.withLock { cancelled = true } }
    }

    final class Sinks: Sendable {
        let made = Mutex<[RecordingSink]>([])
        func make(limit: Int) -> RecordingSink {
            let sink = RecordingSink(limit: limit)
            made.withLock { $0.append(sink) }
            return sink
        }
        var all: [RecordingSink] { made.withLock { $0 } }
    }

    static func uploadRoutes(_ sinks: Sinks, limit: Int) -> @Sendable (WebContext) -> [Route] {
        { _ in
            [
                Route.get("/upload", access: .anyone) { request in
                    Layout.page(request, title: "Upload", content: "<form>\(Layout.csrfField(request))</form>")
                },
                Route(
                    "POST", "/upload", access: .anyone,
                    body: .upload(field: "file", limit: limit) { _ in sinks.make(limit: limit) }
                ) { request in
                    if request.uploadError != nil {
                        return Layout.page(request, title: "Upload", status: 413, content: "<p>too large</p>")
                    }
                    guard let sink = request.upload as? RecordingSink else {
                        return Layout.page(request, title: "Upload", status: 400, content: "<p>no file</p>")
                    }
                    return Layout.page(
                        request, title: "Upload",
                        content: "<p id=\"size\">\(sink.bytes.count)</p><p id=\"note\">\(request.form.text("note"))</p>"
                    )
                },
            ]
        }
    }

    static func payload(_ count: Int) -> Data {
        PatternBytes.data(count: count, seed: 7)
    }

    @Test func uploadsReachTheSinkInChunksByteExact() async throws {
        let sinks = Sinks()
        let server = try TestServer(routes: Self.uploadRoutes(sinks, limit: 8 << 20))
        defer { server.stop() }
        let client = server.client()
        _ = try await client.get("/upload")
        let file = Self.payload(3 << 20)
        let response = try await client.postMultipart(
            "/upload", fields: [("note", "<b>hi</b>")], file: ("file", "a.bin", "application/octet-stream", file))
        #expect(response.status == 200)
        #expect(response.body.contains("<p id=\"size\">\(file.count)</p>"))
        #expect(response.body.contains("<p id=\"note\">&lt;b&gt;hi&lt;/b&gt;</p>"))
        let sink = try #require(sinks.all.first)
        #expect(sink.bytes == Array(file))
        #expect(sink.finished)
        #expect(sink.largestChunk <= 64 * 1024)
        #expect(sink.cancelled, "the server releases the sink once the request is over")
    }

    @Test func anUploadPastItsLimitIsRefusedAndReleased() async throws {
        let sinks = Sinks()
        let server = try TestServer(routes: Self.uploadRoutes(sinks, limit: 256 * 1024))
        defer { server.stop() }
        let client = server.client()
        _ = try await client.get("/upload")
        // Announced length within the slack, so the sink sees the bytes.
        let response = try await client.postMultipart(
            "/upload", fields: [], file: ("file", "a.bin", "application/octet-stream", Self.payload(300 * 1024)))
        #expect(response.status == 413)
        let sink = try #require(sinks.all.first)
        #expect(sink.cancelled)
        #expect(!sink.finished)
        #expect(sink.bytes.count <= 256 * 1024)
    }

    @Test func aBodyAnnouncedFarPastTheLimitIsNotRead() async throws {
        let sinks = Sinks()
        let server = try TestServer(routes: Self.uploadRoutes(sinks, limit: 64 * 1024))
        defer { server.stop() }
        let client = server.client()
        _ = try await client.get("/upload")
        let response = try await client.postMultipart(
            "/upload", fields: [], file: ("file", "a.bin", "application/octet-stream", Self.payload(1 << 20)))
        #expect(response.status == 413)
        #expect(sinks.all.isEmpty)
    }

    @Test func aFileBeforeTheCSRFFieldIsNeverSpooled() async throws {
        let sinks = Sinks()
        let server = try TestServer(routes: Self.uploadRoutes(sinks, limit: 1 << 20))
        defer { server.stop() }
        let client = server.client()
        _ = try await client.get("/upload")
        let forged = try await client.postMultipart(
            "/upload", fields: [], file: ("file", "a.bin", "application/octet-stream", Self.payload(1000)),
            addCSRF: false)
        #expect(forged.status == 403)
        #expect(sinks.all.isEmpty)
    }

    @Test func aFileWhereNoneIsExpectedIsRefused() async throws {
        let server = try TestServer(routes: ServerTests.echoRoutes(ServerTests.Counter()))
        defer { server.stop() }
        let client = server.client()
        _ = try await client.get("/echo")
        let response = try await client.postMultipart(
            "/echo", fields: [("name", "x")], file: ("other", "a.txt", "text/plain", Data("hello".utf8)))
        #expect(response.status == 400)
    }

    /// A body produced in many small chunks.
    final class CountingStream: ResponseStream, @unchecked Sendable {
        let total: Int
        var sent = 0
        let closed = Mutex(false)
        init(total: Int) { self.total = total }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            let count = min(1000, buffer.count, total - sent)
            for index in 0..<count { buffer[index] = UInt8(truncatingIfNeeded: sent + index) }
            sent += count
            return count
        }
        func close() { closed.withLock { $0 = true } }
    }

    @Test func streamedResponsesArriveWhole() async throws {
        let stream = CountingStream(total: 1_000_003)
        let server = try TestServer(routes: { _ in
            [
                Route.get("/stream", access: .anyone) { _ in
                    Response(
                        status: 200, headers: [("Content-Type", "application/octet-stream")],
                        body: .stream(length: 1_000_003, stream))
                }
            ]
        })
        defer { server.stop() }
        let response = try await server.client().get("/stream")
        #expect(response.status == 200)
        #expect(response.header("content-length") == "1000003")
        #expect(response.data.count == 1_000_003)
        #expect(response.data.enumerated().allSatisfy { $0.element == UInt8(truncatingIfNeeded: $0.offset) })
        // libmicrohttpd frees the response once the connection is done.
        await server.server.stop()
        #expect(stream.closed.withLock { $0 })
    }

    @Test func stopLetsARequestInFlightFinishAndRefusesNewOnes() async throws {
        let release = Mutex(false)
        let started = Mutex(false)
        // A grace longer than any test run: the test, not a timer, decides
        // when the request finishes (under a loaded full suite this test's
        // own steps can take seconds).
        let server = try TestServer(
            options: { $0.shutdownGrace = .seconds(600) },
            routes: { _ in
                [
                    Route.get("/slow", access: .anyone) { request in
                        started.withLock { $0 = true }
                        while !release.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
                        return Layout.page(request, title: "Slow", content: "<p>done</p>")
                    }
                ]
            })
        let client = server.client()
        let inFlight = Task { try await client.get("/slow") }
        try #require(await eventually { started.withLock { $0 } }, "the request started")
        let stopping = Task { await server.server.stop() }
        try #require(await eventually { server.server.isStopping }, "the stop began")
        #expect(server.server.requestsInFlight == 1)
        release.withLock { $0 = true }
        let response = try await inFlight.value
        #expect(response.status == 200)
        #expect(response.body.contains("done"))
        await stopping.value
        await #expect(throws: (any Error).self) { try await server.client().get("/slow") }
        server.stop()
    }
}
