import Foundation
import Synchronization
import TestSupport
import Testing

@testable import HTTPServer

/// The transport under hostile or careless clients, through real
/// connections on a loopback port: one that trickles its request headers
/// or its body, one that announces a body far past the limit, and a path
/// that would forge a log line.
@Suite struct TransportTests {
    /// Routes that count how often their handlers ran.
    final class Runs: Sendable {
        let count = Mutex(0)
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
        options.connectionsPerClient = 10_000
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
            return try socket.read(until: HTTPError.notFound.message)
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
}

/// An application of a few routes served on a free loopback port, with
/// its log kept.
final class LocalServer: Sendable {
    struct App: HTTPApplication {
        let router: Router
        let lines: Lines
        func log(_ message: String) { lines.append(message) }
    }

    final class Lines: Sendable {
        private let stored = Mutex<[String]>([])
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

    /// Stops the server on a thread of its own, returning at once: stopping
    /// waits for requests in flight, whose work needs Swift's concurrency
    /// threads, one of which the caller may hold.
    func stopInBackground() {
        let thread = Thread { self.server.stop() }
        thread.name = "test-server-stop"
        thread.start()
    }
}

/// Waits (polling) until `condition` holds, up to `timeout`; returns
/// whether it did. (A copy of RecordsWebTests' until TestSupport has one.)
func eventually(timeout: Duration = .seconds(10), _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}
