import Foundation
import HTTPServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Uploads arrive at the route's sink chunk by chunk; streamed responses
/// leave chunk by chunk; the server stops cleanly. Through real
/// connections on a loopback port, with no app around the server.
@Suite(.tags(.concurrency)) struct StreamingTests {
    typealias RecordingSink = TestSupport.RecordingSink
    typealias Sinks = RecordingSinks

    static func text(_ text: String, status: Int = 200) -> Response {
        Response(status: status, headers: [("Content-Type", "text/plain")], body: .bytes(Array(text.utf8)))
    }

    static func uploadRoutes(_ sinks: Sinks, limit: Int) -> [Route] {
        [
            Route(
                "POST", "/upload", access: .anyone,
                body: .upload(field: "file", limit: limit) { _ in sinks.make(limit: limit) }
            ) { request in
                if request.uploadError != nil { return text("too large", status: 413) }
                guard let sink = request.upload as? RecordingSink else { return text("no file", status: 400) }
                return text("size=\(sink.bytes.count) note=\(request.form.text("note"))")
            },
            Route.post("/echo", access: .anyone) { request in text(request.form.text("name")) },
        ]
    }

    static func payload(_ count: Int) -> Data { PatternBytes.data(count: count, seed: 7) }

    /// An answer: status, headers by lower-case name, body.
    struct Answer {
        let status: Int
        let headers: [String: String]
        let data: Data
        var body: String { String(decoding: data, as: UTF8.self) }
    }

    static func send(_ server: LocalServer, _ method: String, _ path: String, body: Data? = nil, type: String? = nil)
        async throws -> Answer
    {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.server.port)\(path)")!)
        request.httpMethod = method
        request.httpBody = body
        if let type { request.setValue(type, forHTTPHeaderField: "Content-Type") }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = TimeInterval(livenessTimeout.components.seconds)
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
        }
        return Answer(status: http.statusCode, headers: headers, data: data)
    }

    static func postMultipart(
        _ server: LocalServer, _ path: String, fields: [(String, String)],
        file: (field: String, name: String, type: String, data: Data)
    ) async throws -> Answer {
        let boundary = "----server-test-\(UUID().uuidString)"
        var body = Data()
        for (name, value) in fields {
            body.append(
                Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8))
        }
        body.append(
            Data(
                ("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(file.field)\"; filename=\"\(file.name)\"\r\n"
                    + "Content-Type: \(file.type)\r\n\r\n").utf8))
        body.append(file.data)
        body.append(Data("\r\n--\(boundary)--\r\n".utf8))
        return try await send(server, "POST", path, body: body, type: "multipart/form-data; boundary=\(boundary)")
    }

    @Test func uploadsReachTheSinkInChunksByteExact() async throws {
        let sinks = Sinks()
        let server = try LocalServer(routes: Self.uploadRoutes(sinks, limit: 8 << 20))
        defer { server.stopInBackground() }
        let file = Self.payload(3 << 20)
        let response = try await Self.postMultipart(
            server, "/upload", fields: [("note", "<b>hi</b>")],
            file: ("file", "a.bin", "application/octet-stream", file))
        #expect(response.status == 200)
        #expect(response.body == "size=\(file.count) note=<b>hi</b>")
        let sink = try #require(sinks.all.first)
        #expect(sink.bytes == Array(file))
        #expect(sink.finished)
        #expect(sink.largestChunk <= 64 * 1024)
        #expect(sink.cancelled, "the server releases the sink once the request is over")
    }

    @Test func anUploadPastItsLimitIsRefusedAndReleased() async throws {
        let sinks = Sinks()
        let server = try LocalServer(routes: Self.uploadRoutes(sinks, limit: 256 * 1024))
        defer { server.stopInBackground() }
        // Announced length within the slack, so the sink sees the bytes.
        let response = try await Self.postMultipart(
            server, "/upload", fields: [], file: ("file", "a.bin", "application/octet-stream", Self.payload(300 * 1024))
        )
        #expect(response.status == 413)
        let sink = try #require(sinks.all.first)
        #expect(sink.cancelled)
        #expect(!sink.finished)
        #expect(sink.bytes.count <= 256 * 1024)
    }

    @Test func aBodyAnnouncedFarPastTheLimitIsNotRead() async throws {
        let sinks = Sinks()
        let server = try LocalServer(routes: Self.uploadRoutes(sinks, limit: 64 * 1024))
        defer { server.stopInBackground() }
        let response = try await Self.postMultipart(
            server, "/upload", fields: [], file: ("file", "a.bin", "application/octet-stream", Self.payload(1 << 20)))
        #expect(response.status == 413)
        #expect(sinks.all.isEmpty)
    }

    @Test func aFileWhereNoneIsExpectedIsRefused() async throws {
        let server = try LocalServer(routes: Self.uploadRoutes(Sinks(), limit: 1 << 20))
        defer { server.stopInBackground() }
        let response = try await Self.postMultipart(
            server, "/echo", fields: [("name", "x")], file: ("other", "a.txt", "text/plain", Data("hello".utf8)))
        #expect(response.status == 400)
    }

    /// A body produced in many small chunks.
    final class CountingStream: ResponseStream, @unchecked Sendable {
        let total: Int
        var sent = 0
        let closed = Locked(false)
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
        let server = try LocalServer(routes: [
            Route.get("/stream", access: .anyone) { _ in
                Response(
                    status: 200, headers: [("Content-Type", "application/octet-stream")],
                    body: .stream(length: 1_000_003, stream))
            }
        ])
        let response = try await Self.send(server, "GET", "/stream")
        #expect(response.status == 200)
        #expect(response.headers["content-length"] == "1000003")
        #expect(response.data.count == 1_000_003)
        #expect(response.data.enumerated().allSatisfy { $0.element == UInt8(truncatingIfNeeded: $0.offset) })
        // libmicrohttpd frees the response once the connection is done.
        await server.server.stop()
        #expect(stream.closed.withLock { $0 })
    }

    /// With a thread per connection libmicrohttpd stops listening; on the
    /// event loop, where it cannot safely, the accept policy closes each
    /// new connection unread. Either way a client gets no answer.
    @Test(arguments: [0, 2])
    func stopLetsARequestInFlightFinishAndRefusesNewOnes(eventLoopThreads: Int) async throws {
        let release = Locked(false)
        let started = Locked(false)
        // A grace longer than any test run: the test, not a timer, decides
        // when the request finishes (under a loaded full suite this test's
        // own steps can take seconds).
        let server = try LocalServer(
            options: {
                $0.shutdownGrace = .seconds(600)
                $0.eventLoopThreads = eventLoopThreads
            },
            routes: [
                Route.get("/slow", access: .anyone) { _ in
                    started.withLock { $0 = true }
                    while !release.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
                    return Self.text("done")
                }
            ])
        let inFlight = Task { try await Self.send(server, "GET", "/slow") }
        while !started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        let stopping = Task { await server.server.stop() }
        while !server.server.isStopping { try await Task.sleep(for: .milliseconds(5)) }
        #expect(server.server.requestsInFlight == 1)
        // While the server waits for it, a new request is not served.
        await #expect(throws: (any Error).self) { try await Self.send(server, "GET", "/slow") }
        #expect(server.server.requestsInFlight == 1)
        release.withLock { $0 = true }
        let response = try await inFlight.value
        #expect(response.status == 200)
        #expect(response.body.contains("done"))
        await stopping.value
        await #expect(throws: (any Error).self) { try await Self.send(server, "GET", "/slow") }
    }
}
