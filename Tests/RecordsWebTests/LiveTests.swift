import Foundation
import RecordsApp
import TestSupport
import Testing

@testable import RecordsWeb

/// Live screens: `/events` announces each committed change of the followed
/// apps' tables, whoever committed it, and ends cleanly; the layout loads
/// the live script only on pages with a live region.
@Suite(.tags(.concurrency)) struct LiveTests {
    static let ada = "records_session=ada-token"

    /// A server whose streams send a heartbeat every 100 ms, so that a
    /// client that went away is noticed quickly.
    static func server(storage: TestServer.Storage = .memory) throws -> TestServer {
        try TestServer(
            storage: storage, authenticator: FixedSessions.ada,
            configure: { $0.liveHeartbeat = .milliseconds(100) })
    }

    /// Opens `/events?topics=…` on a raw connection and reads up to the
    /// stream's first line.
    static func openStream(_ server: TestServer, topics: String, cookie: String = ada) async throws -> RawSocket {
        let port = server.server.port
        return try await onOwnThread {
            let socket = try RawSocket(port: port)
            try socket.send(
                "GET /events?topics=\(topics) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                    + "Cookie: \(cookie)\r\n\r\n")
            try socket.read(until: ": open")
            return socket
        }
    }

    static func addPerson(_ database: AppDatabase, _ name: String = "Grace") async throws {
        _ = try await PeopleStore(database: database).add(PersonDraft(firstName: name, lastName: "Hopper", age: 85))
    }

    @Test func theStreamStartsWithItsHeadersAndARetryLine() async throws {
        let server = try Self.server()
        defer { server.stopInBackground() }
        let socket = try await Self.openStream(server, topics: "people")
        let head = socket.text
        #expect(head.hasPrefix("HTTP/1.1 200"))
        #expect(head.lowercased().contains("content-type: text/event-stream"))
        #expect(head.contains("retry: 2000\n"))
        socket.close()
    }

    @Test func aWriteThroughAStoreSendsAnEvent() async throws {
        let server = try Self.server()
        defer { server.stopInBackground() }
        let socket = try await Self.openStream(server, topics: "people")
        try await Self.addPerson(server.database)
        let text = try await onOwnThread {
            try socket.read(until: "event: change\ndata: people\n\n")
        }
        #expect(text.contains("data: people"))
        socket.close()
    }

    @Test func aWriteFromAnotherConnectionSendsAnEvent() async throws {
        let server = try Self.server(storage: .file)
        defer { server.stopInBackground() }
        let socket = try await Self.openStream(server, topics: "people")
        // Another connection to the same file, as the `records` command in
        // another process would be.
        let other = try AppDatabase(url: try #require(server.databaseURL), start: .empty)
        defer { other.close() }
        try await Self.addPerson(other)
        let text = try await onOwnThread {
            try socket.read(until: "event: change\ndata: people\n\n")
        }
        #expect(text.contains("data: people"))
        socket.close()
    }

    @Test func aChangeOfAnotherAppSendsNothing() async throws {
        let server = try Self.server()
        defer { server.stopInBackground() }
        let socket = try await Self.openStream(server, topics: "coffee")
        try await Self.addPerson(server.database)
        // Heartbeats come every 100 ms; after a few of them, still no event.
        try await onOwnThread {
            for _ in 0..<3 {
                socket.discardReceived()
                try socket.read(until: ": keep-alive\n\n")
            }
        }
        #expect(!socket.text.contains("event:"))
        socket.close()
    }

    @Test func changesToSeveralTopicsAreNamedInTheEvents() async throws {
        let server = try Self.server()
        defer { server.stopInBackground() }
        let socket = try await Self.openStream(server, topics: "people,contacts")
        try await Self.addPerson(server.database)
        _ = try await ContactsStore(database: server.database).add(
            ContactDraft(name: "Ada", address: "12 Rue", contact: "555"))
        let text = try await onOwnThread { () throws -> String in
            try socket.read(until: "contacts")
            return try socket.read(until: "people")
        }
        #expect(text.contains("event: change\n"))
        socket.close()
    }

    @Test func theStreamEndsWhenTheServerStops() async throws {
        let server = try TestServer(authenticator: FixedSessions.ada)  // the default 15 s heartbeat
        defer { server.stopInBackground() }
        let socket = try await Self.openStream(server, topics: "people")
        #expect(server.app.live.streamCount == 1)
        await server.server.stop()
        let ended = try await onOwnThread { try socket.readToEnd() }
        #expect(ended)
        #expect(socket.text.contains("0\r\n\r\n"), "the chunked body ends properly")
        #expect(server.app.live.streamCount == 0)
        #expect(server.app.live.observationCount == 0)
    }

    @Test func aClientThatGoesAwayReleasesItsStreamAndTheObservation() async throws {
        let server = try Self.server()
        defer { server.stopInBackground() }
        let socket = try await Self.openStream(server, topics: "people")
        let live = server.app.live
        #expect(live.streamCount == 1)
        #expect(live.observationCount == 1)
        socket.close()
        // The next heartbeat fails to reach the client.
        #expect(await eventually { live.streamCount == 0 && live.observationCount == 0 })
        #expect(await eventually { server.server.requestsInFlight == 0 })
    }

    @Test func streamsOfOneTopicShareOneObservation() async throws {
        let server = try Self.server()
        defer { server.stopInBackground() }
        let first = try await Self.openStream(server, topics: "people")
        let second = try await Self.openStream(server, topics: "people,coffee")
        let live = server.app.live
        #expect(live.streamCount == 2)
        #expect(live.observationCount == 2, "people and coffee, once each")
        try await Self.addPerson(server.database)
        try await onOwnThread {
            try first.read(until: "data: people")
            try second.read(until: "data: people")
        }
        second.close()
        #expect(await eventually { live.streamCount == 1 && live.observationCount == 1 })
        first.close()
        #expect(await eventually { live.streamCount == 0 && live.observationCount == 0 })
    }

    @Test func aVisitorNotSignedInIsRefused() async throws {
        let server = try Self.server()
        defer { server.stopInBackground() }
        let response = try await server.client().get("/events?topics=people")
        #expect(response.status == 401)
        #expect(response.header("content-type")?.hasPrefix("text/event-stream") != true)
        #expect(server.app.live.streamCount == 0)
        #expect(server.app.live.observationCount == 0)
    }

    @Test func anUnknownSessionIsRefused() async throws {
        let server = try Self.server()
        defer { server.stopInBackground() }
        let client = server.client()
        client.setCookie(WebApp.sessionCookie, "forged-token")
        let response = try await client.get("/events?topics=people")
        #expect(response.status == 401)
        #expect(server.app.live.streamCount == 0)
    }

    @Test(arguments: ["", ",", "people,nobody", "<script>", "PEOPLE"])
    func badTopicsAreRefused(_ topics: String) async throws {
        let server = try Self.server()
        defer { server.stopInBackground() }
        let client = server.client()
        client.setCookie(WebApp.sessionCookie, "ada-token")
        let query = topics.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let response = try await client.get("/events?topics=\(query)")
        #expect(response.status == 400)
        #expect(!response.body.contains("<script>"))
        #expect(await eventually { server.app.live.streamCount == 0 })
    }

    @Test func aHeadRequestOpensNoStream() async throws {
        let server = try Self.server()
        defer { server.stopInBackground() }
        let client = server.client()
        client.setCookie(WebApp.sessionCookie, "ada-token")
        let response = try await client.head("/events?topics=people")
        #expect(response.status == 200)
        #expect(response.header("content-type")?.hasPrefix("text/event-stream") == true)
        #expect(server.app.live.streamCount == 0)
    }

    @Test func aStreamOpenedWhileTheServerStopsEndsAtOnce() async throws {
        let server = try Self.server()
        defer { server.stopInBackground() }
        server.app.live.stop()
        let socket = try await Self.openStream(server, topics: "people")
        let ended = try await onOwnThread { try socket.read(until: "0\r\n\r\n") }
        #expect(!ended.contains("event:"))
        #expect(server.app.live.streamCount == 0)
        #expect(server.app.live.observationCount == 0)
    }
}

/// The live script and the markup contract.
@Suite struct LiveLayoutTests {
    static func page(_ content: HTML) -> String {
        let request = Request(method: "GET", path: "/")
        guard case .bytes(let bytes) = Layout.page(request, title: "T", content: content).body else { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func aPageWithALiveRegionLoadsTheLiveScript() {
        let page = Self.page("<ul id=\"people-list\" data-live-topics=\"people\"><li>x</li></ul>")
        #expect(page.contains("<script src=\"\(StaticFiles.liveScriptPath)\" defer></script>"))
    }

    @Test func aPageWithoutALiveRegionLoadsNoScript() {
        #expect(!Self.page("<ul id=\"people-list\"><li>x</li></ul>").contains("<script"))
    }

    @Test func textThatSpellsTheAttributeDoesNotLoadTheScript() {
        let hostile = " data-live-topics=\"people\" <script>alert(1)</script>"
        let page = Self.page("<p>\(hostile)</p>")
        #expect(!page.contains("<script"))
        #expect(page.contains("data-live-topics=&quot;people&quot;"))
    }

    @Test func theScriptIsServedToAnyoneAsJavaScript() async throws {
        let server = try TestServer()
        defer { server.stopInBackground() }
        let response = try await server.client().get(StaticFiles.liveScriptPath)
        #expect(response.status == 200)
        #expect(response.header("content-type") == "text/javascript; charset=utf-8")
        #expect(response.body == LiveScript.text)
        #expect(response.body.contains("new EventSource('/events?topics='"))
        #expect(response.header("content-security-policy")?.contains("script-src 'self'") == true)
    }

    @Test func aMissingRecordsPageSaysItWasDeleted() async throws {
        let server = try TestServer(
            authenticator: FixedSessions.ada,
            routes: { _ in
                [Route.get("/gone/:id") { request in throw RecordNotFoundError(kind: "person", id: try request.id()) }]
            })
        defer { server.stopInBackground() }
        let client = server.client()
        client.setCookie(WebApp.sessionCookie, "ada-token")
        let response = try await client.get("/gone/7")
        #expect(response.status == 404)
        #expect(response.body.contains("<p class=\"notice\">This person (ID 7) was deleted, or never existed.</p>"))
    }
}
