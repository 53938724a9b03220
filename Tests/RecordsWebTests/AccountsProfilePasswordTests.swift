import Foundation
import RecordsApp
import RecordsWeb
import Testing

/// What a stolen session cookie cannot do: change the fields that identify
/// the account (the email and the mobile number) without the password.
@Suite("Accounts: the profile's identifying fields need the password")
struct AccountsProfilePasswordTests {
    /// The profile form's fields (as registered), with `overrides`.
    static func profileFields(_ overrides: [String: String] = [:]) -> [(String, String)] {
        registrationFields(overrides: overrides).filter { !$0.0.hasPrefix("password") }
    }

    /// The owner registers; the attacker holds only a copy of the owner's
    /// session cookie, and has the edit form's CSRF token from it.
    static func ownerAndAttacker(_ server: TestServer) async throws -> (owner: WebClient, attacker: WebClient) {
        let owner = server.client()
        try await owner.register()
        let attacker = server.client()
        let stolen = try #require(owner.sessionToken)
        attacker.setCookie(WebApp.sessionCookie, stolen)
        #expect(try await attacker.get("/account/edit").status == 200)
        return (owner, attacker)
    }

    @Test func aStolenCookieCannotChangeTheEmailWithoutThePassword() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let (owner, attacker) = try await Self.ownerAndAttacker(server)
        let refused = try await attacker.postEdit("/account/edit", Self.profileFields(["email": "mallory@example.com"]))
        #expect(refused.status == 422)
        #expect(
            refused.body.contains(
                "<p class=\"error\" id=\"field-currentPassword-error\">"
                    + "Enter your current password to change your email or mobile number.</p>"))
        #expect(try await owner.get("/account").body.contains("<dd>ada@example.com</dd>"))
        #expect(try await server.client().logIn(email: "mallory@example.com").status == 422)
        #expect(try await server.client().logIn().status == 303)
    }

    @Test func aStolenCookieCannotChangeTheMobileNumberWithoutThePassword() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let (owner, attacker) = try await Self.ownerAndAttacker(server)
        let refused = try await attacker.postEdit("/account/edit", Self.profileFields(["mobile": "5550001111"]))
        #expect(refused.status == 422)
        #expect(refused.body.contains("id=\"field-currentPassword-error\""))
        #expect(try await owner.get("/account").body.contains("<dd>9876543210</dd>"))
    }

    @Test func aWrongPasswordChangesNothingAndCountsAsAFailedLogIn() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let (owner, attacker) = try await Self.ownerAndAttacker(server)
        let change = Self.profileFields(["email": "mallory@example.com"])
        for _ in 0..<5 {
            let wrong = try await attacker.postEdit("/account/edit", change + [("currentPassword", "guess-pw")])
            #expect(wrong.status == 422)
            #expect(
                wrong.body.contains(
                    "<p class=\"error\" id=\"field-currentPassword-error\">The current password is wrong.</p>"))
            #expect(!wrong.body.contains("guess-pw"))
        }
        // Locked, as after five failed log-ins: even the right password is not checked now.
        let locked = try await attacker.postEdit("/account/edit", change + [("currentPassword", "correct horse")])
        #expect(locked.status == 429)
        #expect(locked.header("retry-after") == "30")
        #expect(try await server.client().logIn().status == 429)
        #expect(try await owner.get("/account").body.contains("<dd>ada@example.com</dd>"))
    }

    @Test func theRightPasswordChangesTheEmail() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let owner = server.client()
        try await owner.register()
        _ = try await owner.get("/account/edit")
        let saved = try await owner.postEdit(
            "/account/edit",
            Self.profileFields(["email": "ada@lovelace.example", "mobile": "5550001111"])
                + [("currentPassword", "correct horse")])
        #expect(saved.status == 303)
        let page = try await owner.get("/account")
        #expect(page.body.contains("<dd>ada@lovelace.example</dd>") && page.body.contains("<dd>5550001111</dd>"))
        #expect(try await server.client().logIn(email: "ada@lovelace.example").status == 303)
    }

    @Test func otherFieldsChangeWithoutThePassword() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let (owner, attacker) = try await Self.ownerAndAttacker(server)
        let saved = try await attacker.postEdit("/account/edit", Self.profileFields(["city": "Cambridge"]))
        #expect(saved.status == 303)
        #expect(try await owner.get("/account").body.contains("<dd>Cambridge</dd>"))
    }
}
