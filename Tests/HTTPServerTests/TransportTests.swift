import Foundation
import TestSupport
import Testing

@testable import HTTPServer

/// The transport under hostile or careless clients, through real
/// connections on a loopback port: one that trickles its request, one that
/// sends a body far past the limit, a thousand that stay connected doing
/// nothing, one that hangs up in the middle of an upload, and a path that
/// would forge a log line.
@Suite struct TransportTests {
    /// Routes that count how often their handlers ran.
    final class Runs: Sendable {
        let count = Locked(0)
        func ran() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    static func page(_ text: String) -> Response {
        Response(
            status: 200, headers: [("Content-Type", "text/html; charset=utf-8")],
            body: .bytes(Array("<!doctype html><html><p>\(text)</p></html>".utf8)))
    }

    static func countingRoutes(_ runs: Runs) -> [Route] {
        [
            Route.get("/count", access: .anyone) { _ in
                runs.ran()
                return page("counted")
            },
            Route.post("/note", access: .anyone) { request in
                runs.ran()
                return page("\(request.form.text("note").count)")
            },
            Route.get("/slow", access: .anyone) { _ in
                try await Task.sleep(for: .milliseconds(3000))
                return page("slow but served")
            },
        ]
    }

    /// A form POST whose body is `length` bytes.
    static func notePost(length: Int) -> (head: String, body: [UInt8]) {
        let prefix = "csrf=token&note="
        let body = Array((prefix + String(repeating: "n", count: length - prefix.utf8.count)).utf8)
        let head =
            "POST /note HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.count)\r\n\r\n"
        return (head, body)
    }

    static func postHead(_ path: String, _ headers: String) -> String {
        "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + "Content-Type: multipart/form-data; boundary=records-big\r\n\(headers)\r\n"
    }

    /// The route sees the client's address as text, IPv4 and IPv6, on both
    /// transports (the throttles and the sessions list key on it).
    @Test(arguments: [0, 2])
    func theRouteSeesTheClientsAddress(eventLoopThreads: Int) async throws {
        let routes: [Route] = [.get("/who", access: .anyone) { request in Self.page(request.clientAddress) }]
        let server = try LocalServer(options: { $0.eventLoopThreads = eventLoopThreads }, routes: routes)
        defer { server.stopInBackground() }
        let port = server.server.port
        for source in ["127.0.0.1", "127.0.0.23", "127.250.3.100"] {
            let page = try await onOwnThread { () throws -> String in
                let socket = try RawSocket(port: port, from: source)
                defer { socket.close() }
                try socket.send("GET /who HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                return try socket.read(until: "</html>")
            }
            #expect(page.contains("<p>\(source)</p>"), "\(page)")
        }
        let ipv6 = try LocalServer(
            options: {
                $0.host = "::1"
                $0.eventLoopThreads = eventLoopThreads
            }, routes: routes)
        defer { ipv6.stopInBackground() }
        let port6 = ipv6.server.port
        let answer = try await onOwnThread { () throws -> String in
            let descriptor = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw POSIXError(.EBADF) }
            defer { close(descriptor) }
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port6.bigEndian
            address.sin6_addr = in6addr_loopback
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
            guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
            let request = Array("GET /who HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n".utf8)
            guard send(descriptor, request, request.count, 0) == request.count else { throw POSIXError(.EPIPE) }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(descriptor, &buffer, buffer.count, 0)
                if count <= 0 { break }
                received += buffer[..<count]
            }
            return String(decoding: received, as: UTF8.self)
        }
        #expect(answer.contains("<p>::1</p>"), "\(answer)")
    }

    @Test func aClientTricklingItsRequestHeadersIsDropped() async throws {
        let runs = Runs()
        // The idle timeout alone would never fire: a byte comes every 100 ms.
        let server = try LocalServer(
            options: {
                $0.headerTimeout = .seconds(1)
                $0.idleTimeout = 30
            }, routes: Self.countingRoutes(runs))
        defer { server.stopInBackground() }
        let port = server.server.port
        let padding = String(repeating: "a", count: 200)
        let request = Array("GET /count HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: \(padding)\r\n\r\n".utf8)
        let (dropped, sent) = try await onOwnThread { () throws -> (Bool, Int) in
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            for (index, byte) in request.enumerated() {
                do { try socket.send([byte]) } catch { return (true, index) }
                if try socket.readToEnd(timeout: .milliseconds(100)) { return (true, index + 1) }
            }
            return (false, request.count)
        }
        #expect(dropped, "the server closed the connection")
        #expect(sent < request.count, "before the request was complete")
        #expect(server.server.slowConnectionsDropped == 1)
        #expect(runs.value == 0)
        #expect(server.server.requestsInFlight == 0, "no route ran, so no database connection was taken")
        // The watchdog logs just after it shuts the connection down.
        #expect(await eventually { server.log.contains { $0.contains("did not arrive in time") } })
        // Others are served as usual.
        #expect(try await server.status(of: "/count") == 200)
    }

    @Test func aClientTricklingItsBodyIsDropped() async throws {
        let runs = Runs()
        let server = try LocalServer(
            // 100 bytes a second over 5-second periods: 500 bytes per period,
            // far below what the client sends even on a loaded machine.
            options: {
                $0.headerTimeout = .seconds(5)
                $0.minimumBodyRate = 100
            }, routes: Self.countingRoutes(runs))
        defer { server.stopInBackground() }
        let port = server.server.port
        let (head, body) = Self.notePost(length: 400)
        let (dropped, sent) = try await onOwnThread { () throws -> (Bool, Int) in
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            try socket.send(head)
            // Ten bytes a second, a tenth of the rate asked for.
            for (index, byte) in body.enumerated() {
                do { try socket.send([byte]) } catch { return (true, index) }
                if try socket.readToEnd(timeout: .milliseconds(100)) { return (true, index + 1) }
            }
            return (false, body.count)
        }
        #expect(dropped, "the server closed the connection")
        #expect(sent < body.count, "before the body was complete")
        #expect(server.server.slowConnectionsDropped == 1)
        #expect(runs.value == 0)
        // The client sees the connection shut down before libmicrohttpd's
        // thread reports the request over.
        #expect(await eventually { server.server.requestsInFlight == 0 })
    }

    @Test func anExpectContinueForABodyPastTheLimitGets413NotContinue() async throws {
        let runs = Runs()
        let server = try LocalServer(routes: Self.countingRoutes(runs))
        defer { server.stopInBackground() }
        let port = server.server.port
        let head = try await onOwnThread { () throws -> String in
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            try socket.send(Self.postHead("/note", "Content-Length: 104857600\r\nExpect: 100-continue\r\n"))
            return try socket.read(until: "\r\n\r\n")
        }
        #expect(head.hasPrefix("HTTP/1.1 413"), "\(head)")
        #expect(!head.contains("100 Continue"))
        #expect(runs.value == 0)
    }

    @Test func theConnectionsPerClientLeaveAQuarterOfTheServersForOthers() {
        var options = ServerOptions()
        #expect(options.effectiveConnectionsPerClient == 128)
        options.connectionsPerClient = 100_000
        #expect(options.effectiveConnectionsPerClient == options.connectionLimit - options.connectionLimit / 4)
        options.connectionLimit = 2048
        #expect(options.effectiveConnectionsPerClient == 1_536)
        options.connectionLimit = 40
        #expect(options.effectiveConnectionsPerClient == 30)
        options.connectionsPerClient = 0
        #expect(options.effectiveConnectionsPerClient == 1)
    }

    @Test func aLineBreakInThePathCannotForgeALogLine() async throws {
        let runs = Runs()
        let server = try LocalServer(routes: Self.countingRoutes(runs))
        defer { server.stopInBackground() }
        let port = server.server.port
        let answer = try await onOwnThread { () throws -> String in
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            try socket.send("GET /x%0APOST%20/login%20303%0D%1B[2J HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            return try socket.read(until: "</html>")
        }
        #expect(answer.hasPrefix("HTTP/1.1 404"))
        let lines = server.log.filter { $0.hasPrefix("GET ") || $0.hasPrefix("POST ") }
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        #expect(!line.unicodeScalars.contains { $0.properties.generalCategory == .control }, "\(line.debugDescription)")
        #expect(line.hasPrefix("GET /x%0APOST%20/login%20303%0D%1B[2J 404 "), "\(line.debugDescription)")
        // It ends with the time the answer took.
        #expect(line.wholeMatch(of: /GET \S+ 404 \d+\.\dms/) != nil, "\(line.debugDescription)")
    }

    @Test func aHeaderWithALineBreakIsNotSentAndCannotAddAnother() async throws {
        let route = Route.get("/headers", access: .anyone) { _ in
            Response(
                status: 200,
                headers: [
                    ("Content-Type", "text/html; charset=utf-8"), ("X-Split", "a\r\nSet-Cookie: forged=1"),
                    ("X-Bare", "b\nX-Forged: 1"), ("X-Separator", "c\u{2028}d"), ("X-Tab", "e\tf"),
                    ("X-Name", "Ren\u{E9}e"), ("X-Line\r\nX-Forged-Name", "g"),
                ],
                body: .bytes(Array("<!doctype html><html><p>ok</p></html>".utf8)))
        }
        let server = try LocalServer(routes: [route])
        defer { server.stopInBackground() }
        let port = server.server.port
        let answer = try await onOwnThread { () throws -> String in
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            try socket.send("GET /headers HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            return try socket.read(until: "</html>")
        }
        let head = String(answer[..<(answer.range(of: "\r\n\r\n")?.lowerBound ?? answer.endIndex)])
        #expect(head.hasPrefix("HTTP/1.1 200"))
        // The headers that would split the answer are left out, whole.
        for name in ["Set-Cookie", "X-Split", "X-Bare", "X-Forged", "X-Separator", "X-Line"] {
            #expect(!head.lowercased().contains(name.lowercased()), "\(name) in \(head.debugDescription)")
        }
        // The others are sent as given: a tab and a letter past ASCII are not line breaks.
        #expect(head.contains("X-Tab: e\tf"))
        #expect(head.contains("X-Name: Ren\u{E9}e"))
    }

    @Test(
        arguments: [
            ("42", UInt64(42)), (" 42 ", 42), ("0", 0), ("18446744073709551616", .max), ("4x", nil), ("", nil),
            ("-1", nil),
        ] as [(String, UInt64?)])
    func theAnnouncedLengthOfABody(text: String, length: UInt64?) {
        #expect(Callbacks.declaredLength(["content-length": text]) == length)
        #expect(Callbacks.declaredLength(["content-length": text, "transfer-encoding": "chunked"]) == nil)
    }

    @Test(arguments: [
        "/", "", "/people", "/people/7", "//people//7//", "people/7", "/a/b/c/d/e/f/g/h", "/caf\u{E9}/\u{1F600}/x",
        "/%2F/a%20b", "/e\u{301}/n",
    ])
    func aPathsSegmentsAreItsPartsBetweenSlashesWithoutEmptyOnes(path: String) {
        let segments = Router.segments(ofPath: path)
        #expect(segments == path.split(separator: "/", omittingEmptySubsequences: true))
        #expect(!segments.contains { $0.isEmpty || $0.contains("/") })
    }

    @Test(arguments: ["Content-Type", "content-type", "X-API-KEY", "Host", "x-\u{C4}b-Header", "", "A1-b2_C3"])
    func aHeadersNameIsLowercasedAsStringLowercasedWould(name: String) {
        let lowered = name.withCString { Callbacks.lowercasedName($0) }
        #expect(lowered == name.lowercased())
    }

    /// A connection is renumbered for its event loop thread even when what
    /// else the process holds open takes every number of that remainder
    /// just above it (the full test run once put 14 of 16 connections on
    /// one thread that way): the free numbers just above it are all of the
    /// other remainder.
    @Test func aConnectionIsRenumberedForItsThreadPastNumbersTakenOfItsRemainder() throws {
        let opened = open("/dev/null", O_RDONLY | O_CLOEXEC)
        try #require(opened >= 0)
        defer { close(opened) }
        // High numbers, which the rest of the process does not reach.
        let connection = fcntl(opened, F_DUPFD_CLOEXEC, 3000)
        try #require(connection >= 3000)
        let wanted = 1 - Int(connection) % 2
        var held: [Int32] = []
        defer { for descriptor in held { close(descriptor) } }
        for number in (connection + 1)...(connection + 24) where Int(number) % 2 == wanted {
            let copy = fcntl(opened, F_DUPFD_CLOEXEC, number)
            try #require(copy == number)
            held.append(copy)
        }
        let placed = Acceptor.renumber(connection, toThread: wanted, of: 2)
        #expect(placed != connection)
        #expect(Int(placed) % 2 == wanted)
        #expect(placed > connection + 24)
        // The original is closed, the copy open; the numbers tried on the
        // way are free again.
        #expect(fcntl(connection, F_GETFD) == -1)
        #expect(fcntl(placed, F_GETFD) >= 0)
        #expect(fcntl(connection + 2, F_GETFD) == -1)
        if placed != connection { close(placed) }
    }

    /// The process's resident memory, in KiB (Linux).
    static func residentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    static func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    }

    // MARK: - Slow client

    @Test func aBodyArrivingSteadilyAboveTheRateIsServed() async throws {
        let runs = Runs()
        let server = try LocalServer(
            // 100 bytes a second over 5-second periods: 500 bytes per period,
            // far below what the client sends even on a loaded machine.
            options: {
                $0.headerTimeout = .seconds(5)
                $0.minimumBodyRate = 100
            }, routes: Self.countingRoutes(runs))
        defer { server.stopInBackground() }
        let port = server.server.port
        let (head, body) = Self.notePost(length: 4000)
        let answer = try await onOwnThread { () throws -> String in
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            try socket.send(head)
            // 2,000 bytes a second for two seconds: slow, but well above the rate.
            for start in stride(from: 0, to: body.count, by: 400) {
                try socket.send(Array(body[start..<min(start + 400, body.count)]))
                Thread.sleep(forTimeInterval: 0.2)
            }
            return try socket.read(until: "</html>")
        }
        #expect(answer.hasPrefix("HTTP/1.1 200"))
        #expect(runs.value == 1)
        #expect(server.server.slowConnectionsDropped == 0)
    }

    @Test func aSlowAnswerToPromptHeadersIsNotDropped() async throws {
        let server = try LocalServer(
            // Margins wide enough for a loaded machine: headers sent at once
            // are in long before 1.5 s; the answer takes twice that.
            options: { $0.headerTimeout = .milliseconds(1500) }, routes: Self.countingRoutes(Runs()))
        defer { server.stopInBackground() }
        let response = try await server.get("/slow")
        #expect(response.status == 200)
        #expect(response.body.contains("slow but served"))
        #expect(server.server.slowConnectionsDropped == 0)
    }

    @Test func aKeptAliveConnectionServesItsNextPromptRequest() async throws {
        let runs = Runs()
        let server = try LocalServer(
            options: { $0.headerTimeout = .milliseconds(500) }, routes: Self.countingRoutes(runs))
        defer { server.stopInBackground() }
        let port = server.server.port
        try await onOwnThread {
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            for _ in 0..<2 {
                try socket.send("GET /count HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                try socket.read(until: "</html>")
                socket.discardReceived()
                // Longer than the header timeout, shorter than the idle one.
                Thread.sleep(forTimeInterval: 1.2)
            }
        }
        #expect(runs.value == 2)
        #expect(server.server.slowConnectionsDropped == 0)
    }

    // MARK: - Oversized bodies

    /// ``countingRoutes(_:)`` and an upload route taking at most 1 MiB.
    static func bodyRoutes(_ runs: Runs, _ sinks: StreamingTests.Sinks) -> [Route] {
        countingRoutes(runs) + [
            Route(
                "POST", "/upload", access: .anyone,
                body: .upload(field: "file", limit: 1 << 20) { _ in sinks.make(limit: 1 << 20) }
            ) { _ in
                runs.ran()
                return Self.page("stored")
            }
        ]
    }

    @Test(arguments: ["/note", "/upload"])
    func aBodyAnnouncedPastTheLimitIsAnswered413BeforeItIsRead(path: String) async throws {
        let runs = Runs()
        let sinks = StreamingTests.Sinks()
        let server = try LocalServer(routes: Self.bodyRoutes(runs, sinks))
        defer { server.stopInBackground() }
        let port = server.server.port
        let (answer, closed) = try await onOwnThread { () throws -> (String, Bool) in
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            try socket.send(Self.postHead(path, "Content-Length: 104857600\r\n"))
            // The start of the 100 MB: the server must answer without waiting for the rest.
            try socket.send([UInt8](repeating: 0x6E, count: 16 * 1024))
            let answer = try socket.read(until: "</html>")
            return (answer, try socket.readToEnd())
        }
        #expect(answer.hasPrefix("HTTP/1.1 413"))
        #expect(closed, "the server closed the connection after its answer")
        #expect(runs.value == 0)
        #expect(sinks.all.isEmpty)
        #expect(server.log.contains { $0.hasPrefix("POST \(path) 413") })
    }

    /// A client that sends its whole too-large body before it reads (as
    /// browsers and URLSession do) still gets the 413: the server closes by
    /// lingering, so the client's sending is not met by a reset that
    /// discards the answer.
    @Test(arguments: ["/note", "/upload"])
    func aClientSendingTheWholeRefusedBodyStillReadsThe413(path: String) async throws {
        let runs = Runs()
        let sinks = StreamingTests.Sinks()
        let server = try LocalServer(routes: Self.bodyRoutes(runs, sinks))
        defer { server.stopInBackground() }
        let port = server.server.port
        // More than the loopback socket buffers hold, so the send completes
        // only if the server goes on reading after its answer.
        let size = 24 << 20
        let (answer, closed) = try await onOwnThread { () throws -> (String, Bool) in
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            try socket.send(Self.postHead(path, "Content-Length: \(size)\r\n"))
            let chunk = [UInt8](repeating: 0x6E, count: 1 << 20)
            for _ in 0..<(size >> 20) { try socket.send(chunk) }
            let answer = try socket.read(until: "</html>")
            return (answer, try socket.readToEnd())
        }
        #expect(answer.hasPrefix("HTTP/1.1 413"))
        #expect(closed)
        #expect(runs.value == 0)
        #expect(sinks.all.isEmpty)
        #expect(await eventually { server.server.lingeringConnections == 0 }, "the lingering ends with the client")
    }

    /// A client that goes on sending after the 413 cannot hold the server:
    /// the lingering ends after its time and the connection is closed.
    @Test func aClientThatNeverStopsSendingIsCutWhenTheLingeringEnds() async throws {
        let runs = Runs()
        let server = try LocalServer(routes: Self.countingRoutes(runs))
        defer { server.stopInBackground() }
        let port = server.server.port
        let (answer, cut) = try await onOwnThread { () throws -> (String, Bool) in
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            try socket.send(Self.postHead("/note", "Content-Length: 104857600\r\n"))
            try socket.send([UInt8](repeating: 0x6E, count: 16 * 1024))
            let answer = try socket.read(until: "</html>")
            // A trickle, far longer than the lingering lasts, however long
            // the loaded machine takes to end it.
            let deadline = ContinuousClock.now.advanced(by: livenessTimeout)
            while ContinuousClock.now < deadline {
                do { try socket.send([UInt8](repeating: 0x6E, count: 1024)) } catch { return (answer, true) }
                usleep(50_000)
            }
            return (answer, false)
        }
        #expect(answer.hasPrefix("HTTP/1.1 413"))
        #expect(cut, "the server closed the connection while the client was still sending")
        #expect(await eventually { server.server.lingeringConnections == 0 })
        #expect(runs.value == 0)
    }

    @Test(arguments: ["/note", "/upload"])
    func aChunkedBodyIsAnswered413AsSoonAsItPassesTheLimit(path: String) async throws {
        let runs = Runs()
        let sinks = StreamingTests.Sinks()
        let server = try LocalServer(routes: Self.bodyRoutes(runs, sinks))
        defer { server.stopInBackground() }
        let port = server.server.port
        let limit = path == "/note" ? Route.defaultFormLimit : (1 << 20) + Route.defaultFormLimit
        let (answer, closed) = try await onOwnThread { () throws -> (String, Bool) in
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            try socket.send(Self.postHead(path, "Transfer-Encoding: chunked\r\n"))
            // 8 KiB chunks to just past the limit, and then no more (no
            // last chunk): the answer must not wait for the end.
            let chunk = Array("2000\r\n".utf8) + [UInt8](repeating: 0x6E, count: 8192) + Array("\r\n".utf8)
            for _ in 0...(limit / 8192) {
                do { try socket.send(chunk) } catch { break }
            }
            let answer = try socket.read(until: "</html>")
            return (answer, try socket.readToEnd())
        }
        #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer.prefix(200))")
        #expect(closed, "the server closed the connection after its answer")
        #expect(runs.value == 0)
        #expect(await eventually { server.server.requestsInFlight == 0 })
        #expect(sinks.all.allSatisfy { sink in sink.lock.withLock { sink.cancelled && !sink.finished } })
        #expect(server.log.contains { $0.hasPrefix("POST \(path) 413") })
        #expect(!server.log.contains { $0.contains("internal error") })
    }

    // MARK: - Many idle connections

    /// Opens 2,000 sockets and measures the whole process's memory, so it
    /// runs alone: `.ci/run` runs it in a pass of its own with
    /// `RECORDS_WEB_CONNECTION_TEST=1` (beside the rest of the suite the
    /// other tests' memory and load would be measured too).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["RECORDS_WEB_CONNECTION_TEST"] == "1"))
    func aThousandIdleKeptAliveConnectionsLeaveTheServerResponsive() async throws {
        let limit = HTTPServer.raiseOpenFileLimit()
        try #require(limit > 2_200, "each connection takes two descriptors in this process")
        let runs = Runs()
        let server = try LocalServer(routes: Self.countingRoutes(runs))
        defer { server.stopInBackground() }
        let port = server.server.port
        let before = (memory: Self.residentKiB(), threads: Self.threadCount())
        let sockets = try await onOwnThread { () throws -> [RawSocket] in
            var sockets: [RawSocket] = []
            // From eight loopback addresses, 125 each: one client address
            // may hold at most 128 (ServerOptions.connectionsPerClient).
            for index in 0..<1_000 {
                let socket = try RawSocket(port: port, from: "127.0.0.\(2 + index % 8)")
                try socket.send("GET /count HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n")
                try socket.read(until: "</html>")
                sockets.append(socket)
            }
            return sockets
        }
        defer { for socket in sockets { socket.close() } }
        #expect(runs.value == 1_000)
        #expect(server.server.openConnections >= 1_000)
        let after = (memory: Self.residentKiB(), threads: Self.threadCount())
        let response = try await server.get("/count")
        #expect(response.status == 200)
        print(
            "1,000 idle connections: resident memory \(before.memory / 1024) MiB -> \(after.memory / 1024) MiB, "
                + "threads \(before.threads) -> \(after.threads)")
        // A thread's stack is reserved, not resident: each idle connection
        // costs tens of KiB, not its 512 KiB stack.
        #expect(after.memory - before.memory < 256 * 1024)
        for socket in sockets { socket.close() }
        #expect(await eventually { server.server.openConnections <= 1 })
    }

    @Test func aClientHoldingManyIdleConnectionsCannotLockOutAnother() async throws {
        let runs = Runs()
        let server = try LocalServer(
            options: {
                $0.connectionLimit = 40
                $0.connectionsPerClient = 10
                // The held connections stay until the test closes them,
                // however slowly a loaded machine runs it.
                $0.headerTimeout = .seconds(600)
                $0.idleTimeout = 600
            }, routes: Self.countingRoutes(runs))
        defer { server.stopInBackground() }
        let port = server.server.port
        // One client opens as many connections as the server takes in all,
        // and sends nothing on them.
        let held = try await onOwnThread { try (0..<40).map { _ in try RawSocket(port: port, from: "127.0.0.1") } }
        defer { for socket in held { socket.close() } }
        // Each is either open at the server or was closed by it.
        #expect(
            await eventually { held.filter { $0.hasEnded() }.count + server.server.openConnections == 40 })
        #expect(server.server.openConnections == 10)
        // Another client is served.
        let answer = try await onOwnThread { () throws -> String in
            let socket = try RawSocket(port: port, from: "127.0.0.2")
            defer { socket.close() }
            try socket.send("GET /count HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            return try socket.read(until: "</html>")
        }
        #expect(answer.hasPrefix("HTTP/1.1 200"))
        #expect(runs.value == 1)
    }

    // MARK: - Upload cut short

    @Test func aClientHangingUpMidUploadCancelsTheSinkAndRunsNoHandler() async throws {
        let sinks = StreamingTests.Sinks()
        let runs = Runs()
        let server = try LocalServer(routes: [
            Route(
                "POST", "/upload", access: .anyone,
                body: .upload(field: "file", limit: 8 << 20) { _ in sinks.make(limit: 8 << 20) }
            ) { _ in
                runs.ran()
                return Self.page("stored")
            }
        ])
        defer { server.stopInBackground() }
        let port = server.server.port
        let token = "token"
        let boundary = "----records-cut-short"
        let head =
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n\(token)\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n"
        let announced = head.utf8.count + (4 << 20) + "\r\n--\(boundary)--\r\n".utf8.count
        let socket = try await onOwnThread { () throws -> RawSocket in
            let socket = try RawSocket(port: port)
            try socket.send(
                "POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: records_csrf=\(token)\r\n"
                    + "Content-Type: multipart/form-data; boundary=\(boundary)\r\nContent-Length: \(announced)\r\n\r\n"
                    + head)
            // Half of the file.
            try socket.send([UInt8](repeating: 0x5A, count: 2 << 20))
            return socket
        }
        let spooling = await eventually {
            sinks.all.first.map { sink in sink.lock.withLock { !sink.bytes.isEmpty } } ?? false
        }
        #expect(spooling)
        socket.close()
        #expect(await eventually { server.server.requestsInFlight == 0 })
        let sink = try #require(sinks.all.first)
        #expect(sink.lock.withLock { sink.cancelled })
        #expect(!sink.lock.withLock { sink.finished })
        #expect(sink.lock.withLock { sink.bytes.count } < 4 << 20)
        #expect(runs.value == 0)
        // Let go, whichever noticed first: libmicrohttpd seeing the
        // hang-up, or (when its epoll missed the end that came with the
        // last bytes, as under the whole suite's load) the watchdog's body
        // rate check. Either way the connection is gone.
        #expect(await eventually { server.server.openConnections == 0 })
    }
}

/// An application of a few routes served on a free loopback port, with
/// its log kept.
final class LocalServer: Sendable {
    struct App: HTTPApplication {
        let router: Router
        let lines: Lines
        func log(_ message: String) { lines.append(message) }

        /// Errors as small HTML pages (the transport tests read answers to
        /// their end, `</html>`).
        var middleware: [any Middleware] {
            [
                MiddlewareFunction { request, next in
                    do {
                        return try await next(request)
                    } catch let error as HTTPError {
                        var page = TransportTests.page(error.message)
                        page.status = error.status
                        return page
                    }
                }
            ]
        }
    }

    final class Lines: Sendable {
        private let stored = Locked<[String]>([])
        func append(_ line: String) { stored.withLock { $0.append(line) } }
        var all: [String] { stored.withLock { $0 } }
    }

    let server: HTTPServer
    private let lines = Lines()

    /// What the server logged.
    var log: [String] { lines.all }

    init(options: (inout ServerOptions) -> Void = { _ in }, routes: [Route]) throws {
        var serverOptions = ServerOptions()
        serverOptions.port = 0
        serverOptions.shutdownGrace = .seconds(5)
        options(&serverOptions)
        server = try HTTPServer(application: App(router: Router(routes), lines: lines), options: serverOptions)
    }

    /// The status of a GET of `path` on a connection of its own.
    func status(of path: String) async throws -> Int {
        let port = server.port
        let head = try await onOwnThread { () throws -> String in
            let socket = try RawSocket(port: port)
            defer { socket.close() }
            try socket.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            return try socket.read(until: "\r\n\r\n")
        }
        return Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// A GET of `path`.
    func get(_ path: String) async throws -> StreamingTests.Answer {
        try await StreamingTests.send(self, "GET", path)
    }

    /// Stops the server on a thread of its own, returning at once: stopping
    /// waits for requests in flight, whose work needs Swift's concurrency
    /// threads, one of which the caller may hold.
    func stopInBackground() {
        let thread = Thread { self.server.stop() }
        thread.name = "test-server-stop"
        thread.start()
    }
}
