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
}
