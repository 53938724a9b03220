import Foundation
import HTTPServer
import TestSupport
import Testing

/// On the event loop (`eventLoopThreads` above 0), a connection that waits (for a slow
/// answer, or for a stream's next event) is parked and holds no thread;
/// it is woken when what it waits for comes, and the server still stops
/// cleanly with connections parked. The thread-per-connection mode
/// (`eventLoopThreads = 0`) still serves the same routes.
@Suite(.tags(.concurrency)) struct EventLoopTests {
    /// Streams that wait for a broadcast: each sends `data: N` for every
    /// broadcast N after it opened, and a comment when it opens.
    final class Broadcast: Sendable {
        final class Stream: WaitingResponseStream, @unchecked Sendable {
            // Guarded by `lock`.
            private let lock = NSLock()
            private var opened = false
            private var seen: Int
            private var wake: (@Sendable () -> Void)?
            private weak var hub: Broadcast?
            let closed = Locked(false)

            init(hub: Broadcast, seen: Int) {
                self.hub = hub
                self.seen = seen
            }

            func poke() {
                let waiting = lock.withLock {
                    defer { wake = nil }
                    return wake
                }
                waiting?()
            }

            func readReady(into buffer: UnsafeMutableRawBufferPointer, wake: @escaping @Sendable () -> Void) throws
                -> StreamReadiness
            {
                let text: String? = lock.withLock {
                    // Read under the stream's lock: a broadcast after it
                    // finds the wake stored below.
                    let latest = hub?.latest ?? 0
                    if !opened {
                        opened = true
                        return ": open\n\n"
                    }
                    if latest > seen {
                        seen = latest
                        return "data: \(latest)\n\n"
                    }
                    self.wake = wake
                    return nil
                }
                guard let text else { return .wait(until: nil) }
                let bytes = Array(text.utf8)
                buffer.copyBytes(from: bytes)
                return .bytes(bytes.count)
            }

            func close() { closed.withLock { $0 = true } }
        }

        private let state = Locked((latest: 0, streams: [Stream]()))

        var latest: Int { state.withLock { $0.latest } }
        var streams: [Stream] { state.withLock { $0.streams } }

        func open() -> Stream {
            state.withLock { state in
                let stream = Stream(hub: self, seen: state.latest)
                state.streams.append(stream)
                return stream
            }
        }

        func publish() {
            let streams = state.withLock { state in
                state.latest += 1
                return state.streams
            }
            for stream in streams { stream.poke() }
        }
    }

    static func routes(_ hub: Broadcast) -> [Route] {
        [
            Route.get("/events", access: .anyone) { _ in
                Response(
                    status: 200, headers: [("Content-Type", "text/event-stream")],
                    body: .stream(length: nil, hub.open()))
            }
        ]
    }

    static func openStream(port: UInt16, from address: String) throws -> RawSocket {
        let socket = try RawSocket(port: port, from: address)
        try socket.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        try socket.read(until: ": open")
        return socket
    }

    @Test func manyWaitingStreamsHoldNoThreadAndAllGetABroadcast() async throws {
        let limit = HTTPServer.raiseOpenFileLimit()
        try #require(limit > 1_200, "each stream takes two descriptors in this process")
        let hub = Broadcast()
        let server = try LocalServer(options: { $0.eventLoopThreads = 2 }, routes: Self.routes(hub))
        defer { server.stopInBackground() }
        let port = server.server.port
        let threadsBefore = TransportTests.threadCount()
        let count = 500
        let sockets = try await onOwnThread { () throws -> [RawSocket] in
            // From several loopback addresses: one may hold at most 128.
            try (0..<count).map { try Self.openStream(port: port, from: "127.0.0.\(2 + $0 % 5)") }
        }
        defer { for socket in sockets { socket.close() } }
        #expect(await eventually { server.server.parkedConnections == count })
        #expect(server.server.openConnections >= count)
        let threadsAfter = TransportTests.threadCount()
        // A thread a stream would add 500. The count is the whole
        // process's, so it means something only when no other test runs
        // beside this one: `.ci/run`'s one-at-a-time pass (beside the rest
        // of the suite, other tests' servers added 824).
        if ProcessInfo.processInfo.environment["RECORDS_TESTS_ONE_AT_A_TIME"] == "1" {
            #expect(threadsAfter - threadsBefore < count / 5, "threads \(threadsBefore) -> \(threadsAfter)")
        }
        hub.publish()
        let delivered = try await onOwnThread { () throws -> Int in
            var delivered = 0
            for socket in sockets where try socket.read(until: "data: 1\n\n").contains("data: 1\n\n") {
                delivered += 1
            }
            return delivered
        }
        #expect(delivered == count)
        // Each is parked again, waiting for the next.
        #expect(await eventually { server.server.parkedConnections == count })
        for socket in sockets { socket.close() }
    }

    @Test func aSlowAnswerParksItsConnectionUntilItComes() async throws {
        let release = Locked(false)
        let started = Locked(false)
        let server = try LocalServer(
            options: { $0.eventLoopThreads = 2 },
            routes: [
                Route.get("/slow", access: .anyone) { _ in
                    started.withLock { $0 = true }
                    while !release.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
                    return StreamingTests.text("done")
                }
            ])
        defer { server.stopInBackground() }
        let inFlight = Task { try await StreamingTests.send(server, "GET", "/slow") }
        #expect(await eventually { started.withLock { $0 } && server.server.parkedConnections == 1 })
        release.withLock { $0 = true }
        let response = try await inFlight.value
        #expect(response.status == 200)
        #expect(response.body == "done")
        #expect(server.server.parkedConnections == 0)
    }

    @Test func theServerStopsWithStreamsParked() async throws {
        let hub = Broadcast()
        // The streams never end by themselves: the grace runs out.
        let server = try LocalServer(
            options: {
                $0.eventLoopThreads = 2
                $0.shutdownGrace = .milliseconds(50)
            }, routes: Self.routes(hub))
        let port = server.server.port
        let sockets = try await onOwnThread {
            try (0..<3).map { _ in try Self.openStream(port: port, from: "127.0.0.1") }
        }
        defer { for socket in sockets { socket.close() } }
        #expect(await eventually { server.server.parkedConnections == 3 })
        await server.server.stop()
        #expect(hub.streams.count == 3)
        #expect(hub.streams.allSatisfy { $0.closed.withLock { $0 } })
        let ended = try await onOwnThread { try sockets.allSatisfy { try $0.readToEnd() } }
        #expect(ended)
    }

    @Test func aThreadForEachConnectionStillServesStreamsAndAnswers() async throws {
        let hub = Broadcast()
        var routes = Self.routes(hub)
        routes.append(Route.get("/hello", access: .anyone) { _ in StreamingTests.text("hello") })
        // This stream sends no heartbeat, and libmicrohttpd closes a
        // connection with a thread of its own when its stream brought
        // nothing for the idle timeout (the apps' streams beat well within
        // it): under the whole suite's load, the steps below have taken
        // longer than the default 30 s.
        let server = try LocalServer(
            options: {
                $0.eventLoopThreads = 0
                $0.idleTimeout = 3600
            }, routes: routes)
        defer { server.stopInBackground() }
        let port = server.server.port
        let socket = try await onOwnThread { try Self.openStream(port: port, from: "127.0.0.1") }
        defer { socket.close() }
        #expect(server.server.parkedConnections == 0)
        let hello = try await server.get("/hello")
        #expect(hello.body == "hello")
        hub.publish()
        let text = try await onOwnThread { try socket.read(until: "data: 1\n\n") }
        #expect(text.contains("data: 1\n\n"))
    }

    /// The name of the thread running now: libmicrohttpd names its
    /// event-loop threads "MHD-worker".
    static func threadName() -> String {
        if let name = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) {
            return name.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return Thread.current.name ?? ""
    }

    @Test func aRouteThatStartsOnTheEventLoopRunsThereUntilItWaits() async throws {
        let seen = Locked<[String: [String]]>([:])
        @Sendable func note(_ key: String) { seen.withLock { $0[key, default: []].append(Self.threadName()) } }
        var quick = Route.get("/quick", access: .anyone) { _ in
            note("quick")
            return StreamingTests.text("quick")
        }
        quick.startsOnEventLoop = true
        var echo = Route.post("/echo", access: .anyone, body: .bytes(limit: 1024)) { request in
            note("echo")
            return StreamingTests.text(String(decoding: request.body, as: UTF8.self))
        }
        echo.startsOnEventLoop = true
        var waits = Route.get("/waits", access: .anyone) { _ in
            note("before")
            try await Task.sleep(for: .milliseconds(20))
            note("after")
            return StreamingTests.text("waited")
        }
        waits.startsOnEventLoop = true
        let plain = Route.get("/plain", access: .anyone) { _ in
            note("plain")
            return StreamingTests.text("plain")
        }
        let server = try LocalServer(options: { $0.eventLoopThreads = 2 }, routes: [quick, echo, waits, plain])
        defer { server.stopInBackground() }
        for _ in 0..<3 {
            #expect(try await server.get("/quick").body == "quick")
            let echoed = try await StreamingTests.send(
                server, "POST", "/echo", body: Data("hello".utf8), type: "text/plain")
            #expect(echoed.status == 200)
            #expect(echoed.body == "hello")
            #expect(try await server.get("/waits").body == "waited")
            #expect(try await server.get("/plain").body == "plain")
        }
        let names = seen.withLock { $0 }
        // Answered without waiting: on the event loop's thread, also once
        // the body is in.
        #expect(names["quick"] == Array(repeating: "MHD-worker", count: 3))
        #expect(names["echo"] == Array(repeating: "MHD-worker", count: 3))
        // Before its wait and after it: the connection, woken when the wait
        // is over, runs the rest on its event loop thread.
        #expect(names["before"] == Array(repeating: "MHD-worker", count: 3))
        #expect(names["after"] == Array(repeating: "MHD-worker", count: 3))
        // A route that does not ask for it never runs on the event loop.
        #expect(names["plain"]?.count == 3)
        #expect(names["plain"]?.contains("MHD-worker") == false)
        #expect(server.server.parkedConnections == 0)
    }

    @Test func workARouteOnTheEventLoopLeavesForLaterStillRuns() async throws {
        let finished = Locked<[String]>([])
        // Work the handler starts and does not wait for: it goes on after
        // the answer is sent, when the connection no longer waits for it.
        var leaves = Route.get("/leaves", access: .anyone) { _ in
            Task {
                try? await Task.sleep(for: .milliseconds(50))
                finished.withLock { $0.append("later") }
            }
            return StreamingTests.text("answered")
        }
        leaves.startsOnEventLoop = true
        // A client that hangs up while the handler waits: the rest of the
        // handler still runs.
        let slowStarted = Locked(false)
        var slow = Route.get("/slow", access: .anyone) { _ in
            slowStarted.withLock { $0 = true }
            try? await Task.sleep(for: .milliseconds(300))
            finished.withLock { $0.append("slow") }
            return StreamingTests.text("slow")
        }
        slow.startsOnEventLoop = true
        let server = try LocalServer(options: { $0.eventLoopThreads = 2 }, routes: [leaves, slow])
        defer { server.stopInBackground() }
        #expect(try await server.get("/leaves").body == "answered")
        let port = server.server.port
        try await onOwnThread {
            let socket = try RawSocket(port: port)
            try socket.send("GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            // Hangs up once the handler waits (a bound, not a measure).
            let started = ContinuousClock.now + .seconds(60)
            while !slowStarted.withLock({ $0 }), ContinuousClock.now < started { Thread.sleep(forTimeInterval: 0.01) }
            socket.close()
        }
        #expect(slowStarted.withLock { $0 })
        let deadline = ContinuousClock.now + .seconds(60)
        while finished.withLock({ $0.count }) < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(finished.withLock { $0.sorted() } == ["later", "slow"])
        // And the server still answers.
        #expect(try await server.get("/leaves").body == "answered")
        #expect(server.server.parkedConnections == 0)
    }

    @Test func stoppingTheServerWhileARouteOnTheEventLoopWaitsEndsIt() async throws {
        let finished = Locked(false)
        let started = Locked(false)
        var slow = Route.get("/slow", access: .anyone) { _ in
            started.withLock { $0 = true }
            try? await Task.sleep(for: .milliseconds(300))
            finished.withLock { $0 = true }
            return StreamingTests.text("slow")
        }
        slow.startsOnEventLoop = true
        let server = try LocalServer(options: { $0.eventLoopThreads = 2 }, routes: [slow])
        let port = server.server.port
        // The client is a thread of its own from the start: a task would
        // first wait for one of the suite's two cooperative threads, which a
        // loaded suite has kept busy for longer than the bound below.
        let connected = Locked<Bool?>(nil)
        let answered = DispatchSemaphore(value: 0)
        let client = Thread {
            defer { answered.signal() }
            guard let socket = try? RawSocket(port: port) else {
                connected.withLock { $0 = false }
                return
            }
            defer { socket.close() }
            connected.withLock { $0 = (try? socket.send("GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")) != nil }
            _ = try? socket.read(until: "slow")
        }
        client.start()
        // Stops once the handler waits (a bound, not a measure).
        let begun = ContinuousClock.now + .seconds(60)
        while !started.withLock({ $0 }), ContinuousClock.now < begun { try await Task.sleep(for: .milliseconds(10)) }
        #expect(started.withLock { $0 })
        await onOwnThread { server.server.stop() }
        // Stopping ends the waiting request, and the task's rest still
        // runs: nothing was left waiting for the event loop that stopped.
        let deadline = ContinuousClock.now + .seconds(60)
        while !finished.withLock({ $0 }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(finished.withLock { $0 })
        await onOwnThread { answered.wait() }
        #expect(connected.withLock { $0 } == true)
    }

    @Test func connectionsAreDealtOutOverTheEventLoopThreadsInTurn() async throws {
        // Each answer names the event loop thread that ran it.
        var who = Route.get("/who", access: .anyone) { _ in
            StreamingTests.text("thread \(pthread_self());")
        }
        who.startsOnEventLoop = true
        let server = try LocalServer(options: { $0.eventLoopThreads = 2 }, routes: [who])
        defer { server.stopInBackground() }
        let port = server.server.port
        let threads = try await onOwnThread { () throws -> [String] in
            // Each connection is opened and answered before the next opens:
            // this process's own client sockets then take every other
            // number, and the server's all have the same remainder.
            var sockets: [RawSocket] = []
            defer { for socket in sockets { socket.close() } }
            var threads: [String] = []
            func ask(_ socket: RawSocket) throws {
                socket.discardReceived()
                try socket.send("GET /who HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                let text = try socket.read(until: ";")
                threads.append(String(try #require(text.firstMatch(of: /thread ([^;]+);/)).1))
            }
            for _ in 0..<16 {
                let socket = try RawSocket(port: port)
                sockets.append(socket)
                try ask(socket)
            }
            // Then each asks again on its kept-alive connection.
            for socket in sockets { try ask(socket) }
            return threads
        }
        // A connection stays on its thread.
        #expect(Array(threads.prefix(16)) == Array(threads.suffix(16)))
        // The two threads share them (before the server listened itself,
        // all 16 could land on one while the other idled; and with the
        // client in this process, every accepted socket's number had the
        // same remainder, which alone once decided the thread).
        let perThread = Dictionary(grouping: threads.prefix(16), by: { $0 }).mapValues(\.count)
        #expect(perThread.count == 2, "\(threads)")
        #expect(perThread.values.allSatisfy { $0 >= 6 }, "\(perThread)")
    }

    @Test func aConnectionAttemptWhileTheServerStopsIsRefused() async throws {
        let release = Locked(false)
        let started = Locked(false)
        let slow = Route.get("/slow", access: .anyone) { _ in
            started.withLock { $0 = true }
            while !release.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
            return StreamingTests.text("slow")
        }
        // The grace outlasts the test however slow the machine: the
        // request ends when the test releases it, not when the grace does.
        let server = try LocalServer(
            options: {
                $0.eventLoopThreads = 2
                $0.shutdownGrace = .seconds(3600)
            }, routes: [slow])
        let port = server.server.port
        let inFlight = Task { try await StreamingTests.send(server, "GET", "/slow") }
        #expect(await eventually { started.withLock { $0 } })
        // Stopping waits for the request in flight; meanwhile no connection
        // is taken.
        let stopping = Task { await server.server.stop() }
        #expect(await eventually { server.server.isStopping })
        let refused = await onOwnThread { () -> Bool in
            // The socket is shut down a moment after stopping begins.
            let deadline = ContinuousClock.now + livenessTimeout
            while ContinuousClock.now < deadline {
                guard let socket = try? RawSocket(port: port) else { return true }
                socket.close()
                usleep(5_000)
            }
            return false
        }
        #expect(refused)
        release.withLock { $0 = true }
        // The request in flight still gets its answer.
        let response = try await inFlight.value
        #expect(response.status == 200)
        #expect(response.body == "slow")
        await stopping.value
    }

    @Test func aRouteThatStartsOnTheEventLoopStillRefusesABodyTooLarge() async throws {
        let ran = Locked(0)
        var echo = Route.post("/echo", access: .anyone, body: .bytes(limit: 1024)) { request in
            ran.withLock { $0 += 1 }
            return StreamingTests.text(String(decoding: request.body, as: UTF8.self))
        }
        echo.startsOnEventLoop = true
        let server = try LocalServer(options: { $0.eventLoopThreads = 2 }, routes: [echo])
        defer { server.stopInBackground() }
        let refused = try await StreamingTests.send(
            server, "POST", "/echo", body: Data(repeating: 0x61, count: 4096), type: "text/plain")
        #expect(refused.status == 413)
        #expect(ran.withLock { $0 } == 0)
        // The event loop goes on serving the route.
        let echoed = try await StreamingTests.send(server, "POST", "/echo", body: Data("fine".utf8), type: "text/plain")
        #expect(echoed.status == 200)
        #expect(echoed.body == "fine")
        #expect(server.server.parkedConnections == 0)
    }

    @Test func withAThreadForEachConnectionTheFlagChangesNothing() async throws {
        var quick = Route.get("/quick", access: .anyone) { _ in StreamingTests.text(Self.threadName()) }
        quick.startsOnEventLoop = true
        let server = try LocalServer(options: { $0.eventLoopThreads = 0 }, routes: [quick])
        defer { server.stopInBackground() }
        let answer = try await server.get("/quick")
        #expect(answer.status == 200)
        #expect(answer.body != "MHD-worker")
    }
}
