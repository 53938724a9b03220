import Foundation
import RecordsApp
import TestSupport
import Testing

@testable import RecordsWeb

/// The log-in throttle as middleware (``LoginThrottling``): what it counts
/// when a route behind it says nothing about how its attempt ended.
@Suite("Accounts: the log-in throttle as middleware")
struct AccountsThrottleMiddlewareTests {
    /// `POST /probe` behind the throttle, counted for the email typed,
    /// whose handler answers 200 and never settles its attempt.
    static func unsettledProbe(_ context: WebContext) -> [Route] {
        let throttling = LoginThrottling(
            throttle: context.accounts.throttle, screen: { .account($0.form.text("email")) },
            lockedPage: { _, message in .html(HTML(text: message), status: 429) })
        return RouteGroup(middleware: [throttling]).routes([
            Route.post("/probe", access: .anyone) { _ in Response(status: 200) }
        ])
    }

    @Test func anAttemptItsHandlerDoesNotSettleStaysCountedAsAFailure() async throws {
        let clock = TestClock()
        let server = try TestServer(
            configure: { configuration in
                configuration.passwordHasher = cheapHasher
                configuration.now = clock.closure
            }, routes: Self.unsettledProbe)
        defer { server.stop() }
        try await server.client().register()
        let client = server.client()
        _ = try await client.get("/login")
        for _ in 0..<5 { #expect(try await client.post("/probe", [("email", "ada@example.com")]).status == 200) }
        // Five unsettled attempts are five failures: the account is locked,
        // for the probe (whose handler no longer runs) and for logging in.
        let probe = try await client.post("/probe", [("email", "ada@example.com")])
        #expect(probe.status == 429)
        #expect(probe.header("retry-after") == "30")
        #expect(probe.body.contains("Try again in 30 seconds."))
        #expect(try await client.logIn().status == 429)
    }

    // The requests that are no attempt are decided before counting, so a
    // lock does not change their answer.

    @Test func aProfileSavedWithoutThePasswordIsNoAttemptEvenWhileLocked() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let owner = server.client()
        try await owner.register()
        for _ in 0..<6 { _ = try await server.client().logIn(password: "wrong horse") }
        #expect(try await server.client().logIn().status == 429)
        _ = try await owner.get("/account/edit")
        let saved = try await owner.postEdit(
            "/account/edit", AccountsProfilePasswordTests.profileFields(["city": "Cambridge"]))
        #expect(saved.status == 303)
        #expect(try await owner.get("/account").body.contains("<dd>Cambridge</dd>"))
    }

    @Test func aRegistrationWithMistakesIsAnsweredWithItsMistakesEvenWhileLocked() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        for _ in 0..<6 { _ = try await client.logIn(password: "wrong horse") }
        #expect(try await client.register().status == 429)
        let answer = try await client.register(registrationFields(overrides: ["pincode": "x"]))
        #expect(answer.status == 422)
        #expect(answer.header("retry-after") == nil)
    }
}
