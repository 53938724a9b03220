import Foundation
import TestSupport
import Testing

@testable import HTTPServer

/// Raw bodies (``Route/Body/bytes(limit:)``, ``Route/Body/stream(limit:sink:)``)
/// and the PUT, PATCH and DELETE methods through real connections on a
/// loopback port: a body kept whole or streamed to a sink, refused unread
/// when announced too large, cut off when a chunked one passes its limit,
/// and withheld by the application before it starts.
@Suite(.tags(.concurrency)) struct RawBodyTransportTests {
    typealias Runs = TransportTests.Runs

    /// What the streaming route's sinks were made from.
    final class Starts: Sendable {
        private let stored = Locked<[(fileName: String, contentType: String?)]>([])
        func append(_ start: UploadStart) { stored.withLock { $0.append((start.fileName, start.contentType)) } }
        var all: [(fileName: String, contentType: String?)] { stored.withLock { $0 } }
    }

    static let bytesLimit = 1000
    static let streamLimit = 1 << 20

    /// `PUT /json` keeps its body (at most 1,000 bytes) and answers with its
    /// length and the form's field count; `PUT /picture` streams its body
    /// (at most 1 MiB) to a recording sink taking at most `sinkLimit`.
    /// A route middleware shows a refused body as "refused" and its status,
    /// and withholds the stream when the request has `X-Withhold`.
    static func routes(_ runs: Runs, _ sinks: RecordingSinks, _ starts: Starts, sinkLimit: Int = streamLimit)
        -> [Route]
    {
        let group = RouteGroup(middleware: [
            MiddlewareFunction { request, next in
                // A refusal from the headers alone (as a missing token's).
                if request.headers["x-deny"] != nil {
                    var page = TransportTests.page("denied")
                    page.status = 401
                    return page
                }
                let received = try await request.receivingBody(acceptingFile: { $0.headers["x-withhold"] == nil })
                if let problem = received.formProblem {
                    var page = TransportTests.page("refused \(problem.status)")
                    page.status = problem.status
                    return page
                }
                return try await next(received)
            }
        ])
        return group.routes([
            Route.put("/json", access: .anyone, body: .bytes(limit: bytesLimit)) { request in
                runs.ran()
                return TransportTests.page(
                    "json \(request.body.count) fields \(request.form.fields.count) "
                        + String(decoding: request.body, as: UTF8.self))
            },
            Route.put(
                "/picture", access: .anyone,
                body: .stream(limit: streamLimit) { start in
                    starts.append(start)
                    return sinks.make(limit: sinkLimit)
                }
            ) { request in
                runs.ran()
                if request.uploadWithheld { return TransportTests.page("withheld") }
                if request.uploadError != nil { return TransportTests.page("sink refused") }
                guard let sink = request.upload as? RecordingSink else { return TransportTests.page("no picture") }
                return TransportTests.page("stored \(sink.lock.withLock { sink.bytes.count })")
            },
            Route.patch("/json", access: .anyone) { request in
                runs.ran()
                return TransportTests.page("patched \(request.body.count)")
            },
            Route.delete("/json", access: .anyone) { _ in
                runs.ran()
                return TransportTests.page("deleted")
            },
        ])
    }

    /// Sends `head` and `body` on a connection of its own and reads the
    /// answer to the end of its page.
    static func exchange(_ server: LocalServer, _ head: String, _ body: [UInt8] = []) async throws -> String {
        let port = server.server.port
        return try await onOwnThread { () throws -> String in
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            try socket.send(Array(head.utf8) + body)
            return try socket.read(until: "</html>")
        }
    }

    static func head(_ method: String, _ path: String, _ headers: String) -> String {
        "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)\r\n"
    }

    @Test func aRawBodyOfAnyContentTypeReachesTheRouteWhole() async throws {
        let runs = Runs()
        let server = try LocalServer(routes: Self.routes(runs, RecordingSinks(), Starts()))
        defer { server.stopInBackground() }
        let json = Array(#"{"name":"Ada","age":36}"#.utf8)
        let answer = try await Self.exchange(
            server, Self.head("PUT", "/json", "Content-Type: application/json\r\nContent-Length: \(json.count)\r\n"),
            json)
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
        #expect(answer.contains(#"json 23 fields 0 {"name":"Ada","age":36}"#), "\(answer)")
        #expect(runs.value == 1)
    }

    @Test func aFormEncodedRawBodyIsNotDecodedAsAForm() async throws {
        let server = try LocalServer(routes: Self.routes(Runs(), RecordingSinks(), Starts()))
        defer { server.stopInBackground() }
        let body = Array("a=1&b=%41".utf8)
        let answer = try await Self.exchange(
            server,
            Self.head(
                "PUT", "/json", "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.count)\r\n"),
            body)
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
        #expect(answer.contains("json 9 fields 0 a=1&b=%41"), "\(answer)")
    }

    @Test func aChunkedRawBodyWithinTheLimitReachesTheRouteWhole() async throws {
        let server = try LocalServer(routes: Self.routes(Runs(), RecordingSinks(), Starts()))
        defer { server.stopInBackground() }
        let body = Array("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n".utf8)
        let answer = try await Self.exchange(
            server, Self.head("PUT", "/json", "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"), body)
        #expect(answer.contains("json 11 fields 0 hello world"), "\(answer)")
    }

    @Test func patchAndDeleteArriveOverTheWire() async throws {
        let runs = Runs()
        let server = try LocalServer(routes: Self.routes(runs, RecordingSinks(), Starts()))
        defer { server.stopInBackground() }
        let patched = try await Self.exchange(
            server, Self.head("PATCH", "/json", "Content-Type: application/json\r\nContent-Length: 2\r\n"),
            Array("{}".utf8))
        #expect(patched.hasPrefix("HTTP/1.1 200"))
        #expect(patched.contains("patched 2"))
        let deleted = try await Self.exchange(server, Self.head("DELETE", "/json", ""))
        #expect(deleted.hasPrefix("HTTP/1.1 200"))
        #expect(deleted.contains("deleted"))
        let refused = try await Self.exchange(server, Self.head("POST", "/json", "Content-Length: 0\r\n"))
        // (The test application's error pages drop the Allow header: see
        // MethodsAndRawBodiesTests for it.)
        #expect(refused.hasPrefix("HTTP/1.1 405"))
        #expect(runs.value == 2)
    }

    @Test(arguments: ["/json", "/picture"])
    func aRawBodyAnnouncedPastTheLimitIs413WithoutContinueAndUnread(path: String) async throws {
        let runs = Runs()
        let sinks = RecordingSinks()
        let server = try LocalServer(routes: Self.routes(runs, sinks, Starts()))
        defer { server.stopInBackground() }
        let port = server.server.port
        let (answer, closed) = try await onOwnThread { () throws -> (String, Bool) in
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            try socket.send(
                Self.head(
                    "PUT", path,
                    "Content-Type: application/octet-stream\r\nContent-Length: 104857600\r\nExpect: 100-continue\r\n"))
            let answer = try socket.read(until: "</html>")
            return (answer, try socket.readToEnd())
        }
        #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer)")
        #expect(!answer.contains("100 Continue"))
        #expect(answer.contains("refused 413"), "the route's middleware saw the refusal as a form problem")
        #expect(closed, "the server closed the connection after its answer")
        #expect(runs.value == 0)
        #expect(sinks.all.isEmpty)
        #expect(server.log.contains { $0.hasPrefix("PUT \(path) 413") })
    }

    @Test(arguments: ["/json", "/picture"])
    func aChunkedRawBodyIs413AsSoonAsItPassesTheLimit(path: String) async throws {
        let runs = Runs()
        let sinks = RecordingSinks()
        let server = try LocalServer(routes: Self.routes(runs, sinks, Starts()))
        defer { server.stopInBackground() }
        let port = server.server.port
        let limit = path == "/json" ? Self.bytesLimit : Self.streamLimit
        let (answer, closed) = try await onOwnThread { () throws -> (String, Bool) in
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            try socket.send(
                Self.head("PUT", path, "Content-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n"))
            // 512-byte chunks to just past the limit, and then no more (no
            // last chunk): the answer must not wait for the end.
            let chunk = Array("200\r\n".utf8) + [UInt8](repeating: 0x6E, count: 512) + Array("\r\n".utf8)
            for _ in 0...(limit / 512) {
                do { try socket.send(chunk) } catch { break }
            }
            let answer = try socket.read(until: "</html>")
            return (answer, try socket.readToEnd())
        }
        #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer.prefix(200))")
        #expect(answer.contains("refused 413"))
        #expect(closed, "the server closed the connection after its answer")
        #expect(runs.value == 0)
        #expect(await eventually { server.server.requestsInFlight == 0 })
        #expect(sinks.all.allSatisfy { sink in sink.lock.withLock { sink.cancelled && !sink.finished } })
        #expect(sinks.all.allSatisfy { sink in sink.lock.withLock { sink.bytes.count <= limit } })
        #expect(server.log.contains { $0.hasPrefix("PUT \(path) 413") })
        #expect(!server.log.contains { $0.contains("internal error") })
    }

    @Test func aStreamedBodyReachesTheSinkInChunksByteExact() async throws {
        let sinks = RecordingSinks()
        let starts = Starts()
        let server = try LocalServer(routes: Self.routes(Runs(), sinks, starts))
        defer { server.stopInBackground() }
        let picture = PatternBytes.data(count: 900 * 1024, seed: 3)
        let answer = try await Self.exchange(
            server, Self.head("PUT", "/picture", "Content-Type: image/png\r\nContent-Length: \(picture.count)\r\n"),
            Array(picture))
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
        #expect(answer.contains("stored \(picture.count)"))
        let sink = try #require(sinks.all.first)
        #expect(sinks.all.count == 1)
        #expect(sink.lock.withLock { sink.bytes } == Array(picture))
        #expect(sink.lock.withLock { sink.finished })
        #expect(sink.lock.withLock { sink.largestChunk } <= 64 * 1024, "never the whole body at once")
        #expect(starts.all.map(\.fileName) == [""])
        #expect(starts.all.map(\.contentType) == ["image/png"])
        #expect(await eventually { sink.lock.withLock { sink.cancelled } }, "released once the request is over")
    }

    @Test func aStreamedBodyTheSinkRefusesReachesTheRouteAsAnUploadError() async throws {
        let sinks = RecordingSinks()
        let server = try LocalServer(routes: Self.routes(Runs(), sinks, Starts(), sinkLimit: 10_000))
        defer { server.stopInBackground() }
        let body = [UInt8](repeating: 0x41, count: 50_000)
        let answer = try await Self.exchange(
            server, Self.head("PUT", "/picture", "Content-Type: image/png\r\nContent-Length: \(body.count)\r\n"), body)
        #expect(answer.hasPrefix("HTTP/1.1 200"))
        #expect(answer.contains("sink refused"))
        let sink = try #require(sinks.all.first)
        #expect(sink.lock.withLock { sink.cancelled && !sink.finished })
        #expect(sink.lock.withLock { sink.bytes.count } <= 10_000)
    }

    @Test func aStreamTheApplicationWithholdsReachesNoSink() async throws {
        let sinks = RecordingSinks()
        let server = try LocalServer(routes: Self.routes(Runs(), sinks, Starts()))
        defer { server.stopInBackground() }
        let body = [UInt8](repeating: 0x41, count: 50_000)
        let answer = try await Self.exchange(
            server,
            Self.head(
                "PUT", "/picture", "X-Withhold: yes\r\nContent-Type: image/png\r\nContent-Length: \(body.count)\r\n"),
            body)
        #expect(answer.contains("withheld"), "\(answer.prefix(300))")
        #expect(sinks.all.isEmpty)
    }

    @Test func aStreamRefusedFromItsHeadersIsAnsweredWithoutContinueAndReachesNoSink() async throws {
        let runs = Runs()
        let sinks = RecordingSinks()
        let server = try LocalServer(routes: Self.routes(runs, sinks, Starts()))
        defer { server.stopInBackground() }
        let port = server.server.port
        let answer = try await onOwnThread { () throws -> String in
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            try socket.send(
                Self.head(
                    "PUT", "/picture",
                    "X-Deny: yes\r\nContent-Type: image/png\r\nContent-Length: 524288\r\nExpect: 100-continue\r\n"))
            return try socket.read(until: "</html>")
        }
        #expect(answer.hasPrefix("HTTP/1.1 401"), "\(answer.prefix(200))")
        #expect(!answer.contains("100 Continue"))
        #expect(runs.value == 0)
        #expect(sinks.all.isEmpty)
    }

    /// A request without a body is answered without its task waiting for
    /// one (``BodyGate/bodiless``); one with a body the route discards, or
    /// keeps, still has it read. Whichever comes, the connection stays open
    /// for the next, on the event loop and with a thread for each
    /// connection.
    @Test(arguments: [0, 2])
    func requestsWithAndWithoutBodiesTakeTurnsOnOneConnection(eventLoopThreads: Int) async throws {
        let runs = Runs()
        let server = try LocalServer(
            options: { $0.eventLoopThreads = eventLoopThreads },
            routes: Self.routes(runs, RecordingSinks(), Starts()))
        defer { server.stopInBackground() }
        let port = server.server.port
        let answers = try await onOwnThread { () throws -> [String] in
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            let requests: [(head: String, body: String)] = [
                (Self.head("DELETE", "/json", ""), ""),
                // A body the route discards: read, then the next request.
                (Self.head("DELETE", "/json", "Content-Length: 5\r\n"), "12345"),
                (Self.head("PUT", "/json", "Content-Type: application/json\r\nContent-Length: 0\r\n"), ""),
                (Self.head("PUT", "/json", "Content-Type: application/json\r\nContent-Length: 2\r\n"), "{}"),
                (Self.head("PUT", "/json", "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"), "0\r\n\r\n"),
                (Self.head("DELETE", "/json", ""), ""),
            ]
            var answers: [String] = []
            for request in requests {
                socket.discardReceived()
                try socket.send(request.head + request.body)
                answers.append(try socket.read(until: "</html>"))
            }
            return answers
        }
        #expect(answers.count == 6)
        for answer in answers { #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)") }
        #expect(answers[0].contains("deleted") && answers[1].contains("deleted") && answers[5].contains("deleted"))
        #expect(answers[2].contains("json 0 fields 0"), "\(answers[2])")
        #expect(answers[3].contains("json 2 fields 0 {}"), "\(answers[3])")
        #expect(answers[4].contains("json 0 fields 0"), "\(answers[4])")
        #expect(runs.value == 6)
    }

    @Test(
        arguments: [
            (["content-length": "0"], true), ([:], true), (["content-length": "5"], false),
            (["transfer-encoding": "chunked"], false),
            (["content-length": "0", "transfer-encoding": "chunked"], false),
            (["content-length": "00"], false),
        ] as [([String: String], Bool)])
    func whichRequestsAreAnsweredWithoutWaitingForABody(headers: [String: String], bodiless: Bool) {
        #expect(BodyGate.isBodiless(headers, route: .none) == bodiless)
        #expect(BodyGate.isBodiless(headers, route: .bytes(limit: 10)) == bodiless)
        // A form or an upload is read even when empty, for its problems.
        #expect(!BodyGate.isBodiless(headers, route: .form()))
        #expect(!BodyGate.isBodiless(headers, route: .stream(limit: 10) { _ in throw HTTPError.notFound }))
    }

    @Test func anEmptyStreamedBodyMakesNoSink() async throws {
        let sinks = RecordingSinks()
        let server = try LocalServer(routes: Self.routes(Runs(), sinks, Starts()))
        defer { server.stopInBackground() }
        let answer = try await Self.exchange(
            server, Self.head("PUT", "/picture", "Content-Type: image/png\r\nContent-Length: 0\r\n"))
        #expect(answer.contains("no picture"))
        #expect(sinks.all.isEmpty)
    }
}
