import Foundation
import RecordsApp
import RecordsWeb
import TestSupport
import Testing

extension WebClient {
    /// Makes a token through the account page's form (its CSRF token first); the answer.
    func makeToken(
        name: String = "backup script", scope: String = "read", expiresIn: String = "90",
        password: String = "correct horse"
    ) async throws -> WebResponse {
        _ = try await get("/account")
        return try await post(
            "/account/tokens",
            [("name", name), ("scope", scope), ("expiresIn", expiresIn), ("currentPassword", password)])
    }
}

extension WebResponse {
    /// The secret shown in the read-only field, if any.
    var shownSecret: String? {
        body.firstMatch(of: /id="new-token-secret" type="text" readonly value="(rst_[A-Za-z0-9_-]{43})"/)
            .map { String($0.1) }
    }

    /// The IDs of the token rows of the account page.
    var tokenRowIDs: [String] { body.matches(of: /<tr id="token-(\d+)">/).map { String($0.1) } }
}

@Suite("Accounts: tokens for programs on the account page")
struct AccountsTokenWebTests {
    @Test func theAccountPageOffersTheTokenForm() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        let page = try await client.get("/account")
        #expect(page.body.contains("Tokens for programs"))
        #expect(page.body.contains("id=\"no-tokens\""))
        for name in ["name", "scope", "expiresIn"] { #expect(page.body.contains("<label for=\"field-\(name)\">")) }
        for option in ["Read only", "Read and write", "Never", "In 30 days", "In 90 days", "In 365 days"] {
            #expect(page.body.contains(">\(option)</option>"), "\(option)")
        }
    }

    @Test func makingATokenAnswersThePageWithTheSecretOnce() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        let answer = try await client.makeToken(name: "backup script", scope: "read-write", expiresIn: "30")
        #expect(answer.status == 200)
        #expect(answer.location == nil)
        #expect(answer.header("cache-control") == "no-store")
        #expect(answer.setCookies.allSatisfy { !$0.contains("rst_") })
        let secret = try #require(answer.shownSecret)
        #expect(answer.body.contains("it will not be shown again"))
        let (token, user) = try #require(try await server.app.context.accounts.tokens.authenticate(secret: secret))
        #expect(user.email == "ada@example.com")
        #expect(token.scope == .readWrite)
        #expect(token.expiresAt == server.app.context.configuration.now().addingTimeInterval(30 * 86_400))
        // Listed from then on, never with its secret.
        let page = try await client.get("/account")
        #expect(page.tokenRowIDs == [String(token.id)])
        #expect(page.body.contains("<bdi>backup script</bdi>") && page.body.contains("Read and write"))
        #expect(page.body.contains("<code>\(secret.prefix(6))…</code>"))
        #expect(!page.body.contains(secret.dropFirst(6)))
        // The address of the answer leads to the account page, without the secret.
        let again = try await client.get("/account/tokens")
        #expect(again.status == 303)
        #expect(again.location == "/account")
    }

    @Test(arguments: [
        ("", "read", "90", "Name is required."), ("n", "admin", "90", "Choose the token's access."),
        ("n", "read", "7", "Choose when the token expires."),
        (String(repeating: "x", count: 101), "read", "never", "Name must be at most 100 characters (it has 101)."),
    ])
    func aBadTokenFormIsRefusedAndMakesNothing(
        _ name: String, _ scope: String, _ expiresIn: String, _ message: String
    ) async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        let answer = try await client.makeToken(name: name, scope: scope, expiresIn: expiresIn)
        #expect(answer.status == 422)
        #expect(answer.body.contains(HTML.escape(message)), "\(answer.body)")
        #expect(answer.shownSecret == nil)
        #expect(try await client.get("/account").tokenRowIDs.isEmpty)
    }

    @Test func aTokenIsRevokedAfterAConfirmation() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        let secret = try #require(try await client.makeToken().shownSecret)
        let id = try #require(try await client.get("/account").tokenRowIDs.first)
        let confirm = try await client.get("/account/tokens/\(id)/revoke")
        #expect(confirm.status == 200)
        #expect(confirm.body.contains("Revoke the token <bdi>backup script</bdi>?"))
        #expect(confirm.body.contains("action=\"/account/tokens/\(id)/revoke\""))
        let revoked = try await client.post("/account/tokens/\(id)/revoke", [])
        #expect(revoked.status == 303)
        #expect(revoked.location == "/account")
        #expect(try await server.app.context.accounts.tokens.authenticate(secret: secret) == nil)
        let page = try await client.get("/account")
        #expect(page.body.contains("Token revoked."))
        #expect(page.body.contains("<td>Revoked</td>"))
        #expect(!page.body.contains("/account/tokens/\(id)/revoke"))
        // Again: no error.
        #expect(try await client.post("/account/tokens/\(id)/revoke", []).status == 303)
    }

    @Test func tokenFormsRefuseAMissingOrWrongCSRFToken() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let visitor = server.client()
        _ = try await visitor.get("/login")
        let client = server.client()
        try await client.register()
        let secret = try #require(try await client.makeToken().shownSecret)
        let id = try #require(try await client.get("/account").tokenRowIDs.first)
        let fields = [
            ("name", "forged"), ("scope", "read-write"), ("expiresIn", "never"), ("currentPassword", "correct horse"),
        ]
        #expect(try await client.post("/account/tokens", fields, addCSRF: false).status == 403)
        #expect(try await client.post("/account/tokens", [("csrf", visitor.csrf ?? "")] + fields).status == 403)
        #expect(try await client.post("/account/tokens/\(id)/revoke", [], addCSRF: false).status == 403)
        #expect(
            try await client.post("/account/tokens/\(id)/revoke", [("csrf", visitor.csrf ?? "")]).status == 403)
        #expect(try await client.get("/account").tokenRowIDs == [id])
        #expect(try await server.app.context.accounts.tokens.authenticate(secret: secret) != nil)
    }

    @Test func anotherUsersTokenCannotBeSeenOrRevoked() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let ada = server.client()
        try await ada.register()
        let bob = server.client()
        try await bob.register(registrationFields(email: "bob@example.com", first: "Bob"))
        let bobSecret = try #require(try await bob.makeToken(name: "bob script").shownSecret)
        let bobID = try #require(try await bob.get("/account").tokenRowIDs.first)
        let adaPage = try await ada.get("/account")
        #expect(adaPage.tokenRowIDs.isEmpty)
        #expect(!adaPage.body.contains("bob script"))
        #expect(try await ada.get("/account/tokens/\(bobID)/revoke").status == 404)
        #expect(try await ada.post("/account/tokens/\(bobID)/revoke", []).status == 404)
        #expect(try await ada.post("/account/tokens/999/revoke", []).status == 404)
        #expect(try await ada.post("/account/tokens/abc/revoke", []).status == 404)
        #expect(try await server.app.context.accounts.tokens.authenticate(secret: bobSecret) != nil)
    }

    @Test func makingATokenNeedsThePassword() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        let missing = try await client.makeToken(password: "")
        #expect(missing.status == 422)
        #expect(missing.shownSecret == nil)
        #expect(missing.body.contains("Enter your password to make a token."))
        let wrong = try await client.makeToken(password: "not my password")
        #expect(wrong.status == 422)
        #expect(wrong.shownSecret == nil)
        #expect(wrong.body.contains("Your password is wrong."))
        #expect(try await client.get("/account").tokenRowIDs.isEmpty)
    }

    @Test func wrongPasswordsForATokenAreThrottledLikeLogIns() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        var statuses: [Int] = []
        for _ in 0..<12 { statuses.append(try await client.makeToken(password: "guess").status) }
        #expect(statuses.contains(429))
        // Locked: even the right password makes nothing now.
        let right = try await client.makeToken()
        #expect(right.status == 429)
        #expect(right.shownSecret == nil)
    }

    @Test func aSignedOutVisitorIsSentToLogIn() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let visitor = server.client()
        _ = try await visitor.get("/login")
        let fields = [("name", "n"), ("scope", "read"), ("expiresIn", "never")]
        let answer = try await visitor.post("/account/tokens", fields)
        #expect(answer.status == 303)
        #expect(answer.location == "/login")
        #expect(try await visitor.get("/account/tokens/1/revoke").location?.hasPrefix("/login") == true)
    }

    @Test func aHostileTokenNameComesBackEscaped() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        let name = "<script>alert(1)</script>"
        let made = try await client.makeToken(name: name)
        #expect(made.status == 200)
        let id = try #require(try await client.get("/account").tokenRowIDs.first)
        for page in [made, try await client.get("/account"), try await client.get("/account/tokens/\(id)/revoke")] {
            #expect(page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(!page.body.contains("<script>alert(1)"))
        }
    }

    @Test func aPasswordChangeRevokesTheTokens() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        let secret = try #require(try await client.makeToken().shownSecret)
        _ = try await client.get("/account/password")
        let changed = try await client.post(
            "/account/password",
            [
                ("currentPassword", "correct horse"), ("password", "battery staple"),
                ("passwordConfirmation", "battery staple"),
            ])
        #expect(changed.status == 303)
        #expect(try await server.app.context.accounts.tokens.authenticate(secret: secret) == nil)
        #expect(try await client.get("/account").body.contains("<td>Revoked</td>"))
    }

    @Test func theSecretNeverReachesTheLog() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        let secret = try #require(try await client.makeToken().shownSecret)
        let id = try #require(try await client.get("/account").tokenRowIDs.first)
        _ = try await client.post("/account/tokens/\(id)/revoke", [])
        let log = server.log.joined(separator: "\n")
        #expect(log.contains("POST /account/tokens"))
        #expect(!log.contains(secret))
        #expect(!log.contains(secret.dropFirst(4)))
    }
}
