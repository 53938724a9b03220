import Foundation
import RecordsApp
import TestSupport
import Testing

@testable import RecordsWeb

/// A live page's event stream lasts as long as the session it was opened
/// with: log-out, revocation from another browser, a password change in
/// another browser and expiry each end it, and it announces nothing after.
@Suite(.tags(.concurrency)) struct LiveSessionTests {
    /// The last chunk of a chunked body: the stream's end (no event or
    /// comment holds it).
    static let end = "0\r\n\r\n"

    /// How long a test waits for a stream to end: only a guard against a
    /// hang. The check that ends it runs on the cooperative threads, which
    /// a loaded full suite can keep busy for a minute.
    static let patience = livenessTimeout

    /// An accounts server whose streams' sessions are checked every
    /// `check` (and after each change of the sessions).
    static func server(clock: TestClock = TestClock(), check: Duration = .milliseconds(50)) throws
        -> TestServer
    {
        try accountsServer(
            clock: clock,
            configure: {
                $0.liveHeartbeat = .milliseconds(200)
                $0.liveSessionCheck = check
            })
    }

    /// Opens `/events?topics=people` with `client`'s session cookie on a
    /// raw connection, and reads up to the stream's first line.
    static func openStream(_ server: TestServer, as client: WebClient) async throws -> RawSocket {
        let token = try #require(client.sessionToken)
        let port = server.server.port
        return try await onOwnThread {
            let socket = try RawSocket(port: port)
            try socket.send(
                "GET /events?topics=people HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                    + "Cookie: \(WebApp.sessionCookie)=\(token)\r\n\r\n")
            try socket.read(until: ": open")
            socket.discardReceived()
            return socket
        }
    }

    static func addPerson(_ server: TestServer) async throws {
        _ = try await PeopleStore(database: server.database).add(
            PersonDraft(firstName: "Grace", lastName: "Hopper", age: 85))
    }

    /// The ID of the one other session an account page lists (the row
    /// whose link ends it, not "Log out").
    static func otherSessionID(on page: WebResponse) throws -> String {
        let ids = page.body.matches(of: /sessions\/(\d+)\/revoke" id="end-session-\d+">End</).map { String($0.1) }
        #expect(ids.count == 1)
        return try #require(ids.first)
    }

    @Test func loggingOutEndsTheStreamOpenedWithThatSession() async throws {
        let server = try Self.server()
        defer { server.stopInBackground() }
        let browser = server.client()
        try await browser.register()
        let socket = try await Self.openStream(server, as: browser)
        _ = try await browser.get("/account")
        #expect(try await browser.post("/logout", []).status == 303)
        // A change after the log-out is not announced to it.
        try await Self.addPerson(server)
        let text = try await onOwnThread { try socket.read(until: Self.end, timeout: Self.patience) }
        #expect(!text.contains("event:"))
        #expect(await eventually { server.app.live.streamCount == 0 })
        socket.close()
    }

    @Test func loggingOutEndsTheStreamWithoutWaitingForTheRegularCheck() async throws {
        let server = try Self.server(check: .seconds(3600))
        defer { server.stopInBackground() }
        let browser = server.client()
        try await browser.register()
        let socket = try await Self.openStream(server, as: browser)
        _ = try await browser.get("/account")
        #expect(try await browser.post("/logout", []).status == 303)
        let text = try await onOwnThread { try socket.read(until: Self.end, timeout: Self.patience) }
        #expect(!text.contains("event:"))
        socket.close()
    }

    @Test func revokingASessionFromAnotherBrowserEndsItsStreamOnly() async throws {
        let server = try Self.server()
        defer { server.stopInBackground() }
        let laptop = server.client()
        try await laptop.register()
        let thief = server.client()
        try await thief.logIn()
        let stolen = try await Self.openStream(server, as: thief)
        let own = try await Self.openStream(server, as: laptop)
        let id = try Self.otherSessionID(on: try await laptop.get("/account"))
        #expect(try await laptop.post("/account/sessions/\(id)/revoke", []).status == 303)
        try await Self.addPerson(server)
        let ended = try await onOwnThread { try stolen.read(until: Self.end, timeout: Self.patience) }
        #expect(!ended.contains("event:"))
        // The session that revoked it keeps its stream, and hears the change.
        _ = try await onOwnThread { try own.read(until: "event: change\ndata: people\n\n") }
        #expect(!own.text.contains(Self.end))
        stolen.close()
        own.close()
    }

    @Test func changingThePasswordInAnotherBrowserEndsTheOtherSessionsStream() async throws {
        let server = try Self.server()
        defer { server.stopInBackground() }
        let laptop = server.client()
        try await laptop.register()
        let phone = server.client()
        try await phone.logIn()
        let socket = try await Self.openStream(server, as: phone)
        _ = try await laptop.get("/account/password")
        let changed = try await laptop.post(
            "/account/password",
            [
                ("currentPassword", "correct horse"), ("password", "battery staple"),
                ("passwordConfirmation", "battery staple"),
            ])
        #expect(changed.status == 303)
        try await Self.addPerson(server)
        let text = try await onOwnThread { try socket.read(until: Self.end, timeout: Self.patience) }
        #expect(!text.contains("event:"))
        socket.close()
    }

    @Test func anExpiredSessionsStreamEnds() async throws {
        let clock = TestClock()
        let server = try Self.server(clock: clock)
        defer { server.stopInBackground() }
        let browser = server.client()
        try await browser.register()
        let socket = try await Self.openStream(server, as: browser)
        clock.advance(seconds: 8 * 86_400)
        let text = try await onOwnThread { try socket.read(until: Self.end, timeout: Self.patience) }
        #expect(!text.contains("event:"))
        socket.close()
    }

    @Test func theSessionChecksStopWithTheLastStream() async throws {
        let server = try Self.server()
        defer { server.stopInBackground() }
        let browser = server.client()
        try await browser.register()
        let socket = try await Self.openStream(server, as: browser)
        #expect(server.app.live.isWatching)
        socket.close()
        #expect(await eventually { !server.app.live.isWatching && server.app.live.streamCount == 0 })
    }
}
