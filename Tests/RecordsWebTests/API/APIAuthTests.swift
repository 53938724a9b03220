import Foundation
import RecordsApp
import RecordsWeb
import TestSupport
import Testing

/// Who may use the API: bearer tokens only (no cookies), read-only tokens
/// read, and failed tokens are throttled per address.
@Suite struct APIAuthTests {
    @Test func everyInvalidTokenGetsTheSameAnswer() async throws {
        let site = try await APISite()
        let revoked = try await site.tokens.create(userID: site.user.id, name: "old", scope: .readWrite, expiresAt: nil)
        try await site.tokens.revoke(id: revoked.token.id, userID: site.user.id)
        let expiring = try await site.tokens.create(
            userID: site.user.id, name: "soon", scope: .readWrite, expiresAt: site.clock.now.addingTimeInterval(60))
        site.clock.advance(seconds: 61)
        let answers = [
            await site.send("GET", "/api/v1/people", token: nil),
            await site.send("GET", "/api/v1/people", token: "rst_" + String(repeating: "A", count: 43)),
            await site.send("GET", "/api/v1/people", token: "not a token"),
            await site.send("GET", "/api/v1/people", token: revoked.secret),
            await site.send("GET", "/api/v1/people", token: expiring.secret),
        ]
        for answer in answers {
            #expect(answer.status == 401)
            #expect(answer.isProblem)
            #expect(answer.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            #expect(answer.text == answers[0].text)
        }
    }

    @Test func aReadOnlyTokenReadsButDoesNotWrite() async throws {
        let site = try await APISite()
        let read = await site.send("GET", "/api/v1/people", token: site.reader)
        #expect(read.status == 200)
        let write = await site.send(
            "POST", "/api/v1/people", json: #"{"firstName":"Ada","lastName":"L"}"#, token: site.reader)
        #expect(write.status == 403)
        #expect(write.json["code"] as? String == "read-only-token")
        #expect(try await PeopleStore(database: site.database).count() == 0)
    }

    @Test func aSessionCookieIsNotAcceptedOnTheAPI() async throws {
        let site = try await APISite()
        let sessions = site.app.context.accounts.sessions
        let session = try await sessions.create(userID: site.user.id, userAgent: "test", clientAddress: "127.0.0.1")
        var request = Request(
            method: "POST", path: "/api/v1/people", cookies: [WebApp.sessionCookie: session.token.value])
        request.body = Array(#"{"firstName":"Ada","lastName":"L"}"#.utf8)
        let answer = APIAnswer(await site.app.respond(to: request))
        #expect(answer.status == 401)
        #expect(try await PeopleStore(database: site.database).count() == 0)
    }

    @Test func aBearerTokenDoesNotSignInOnThePages() async throws {
        let site = try await APISite()
        let page = await site.send("GET", "/people", token: site.writer)
        #expect((300..<400).contains(page.status))
        #expect(page.header("Location")?.hasPrefix("/login") == true)
    }

    @Test func repeatedBadTokensFromOneAddressAreThrottled() async throws {
        let site = try await APISite()
        for _ in 0..<20 {
            let answer = await site.send("GET", "/api/v1/people", token: "guess", clientAddress: "10.0.0.9")
            #expect(answer.status == 401)
        }
        let locked = await site.send("GET", "/api/v1/people", token: site.writer, clientAddress: "10.0.0.9")
        #expect(locked.status == 429)
        #expect(Int(locked.header("Retry-After") ?? "") ?? 0 > 0)
        let other = await site.send("GET", "/api/v1/people", token: site.writer, clientAddress: "10.0.0.10")
        #expect(other.status == 200)
    }

    @Test func tokensNeverReachTheLog() async throws {
        let site = try await APISite()
        _ = await site.send("GET", "/api/v1/people", token: site.writer)
        _ = await site.send("GET", "/api/v1/people", token: "rst_secretguess")
        _ = await site.send("GET", "/api/v1/nothing", token: site.writer)
        for line in site.log {
            #expect(!line.contains(site.writer))
            #expect(!line.contains("secretguess"))
        }
    }

    @Test func theProfileNeverShowsThePasswordAndItsEmailNeedsThePassword() async throws {
        let site = try await APISite()
        let profile = await site.send("GET", "/api/v1/me", token: site.reader)
        #expect(profile.status == 200)
        #expect(profile.json["email"] as? String == "ada@example.com")
        #expect(!profile.text.contains("scrypt"))
        #expect(!profile.text.lowercased().contains("password"))
        let city = await site.send("PATCH", "/api/v1/me", json: #"{"city":"Cambridge"}"#)
        #expect(city.status == 200)
        #expect(city.json["city"] as? String == "Cambridge")
        let email = await site.send("PATCH", "/api/v1/me", json: #"{"email":"eve@example.com"}"#)
        #expect(email.status == 403)
        let wrong = await site.send(
            "PATCH", "/api/v1/me", json: #"{"email":"eve@example.com","currentPassword":"wrong one"}"#)
        #expect(wrong.status == 403)
        #expect(try await site.app.context.users.user(id: site.user.id)?.email == "ada@example.com")
        let right = await site.send(
            "PATCH", "/api/v1/me", json: #"{"email":"ada.king@example.com","currentPassword":"correct horse"}"#)
        #expect(right.status == 200, "\(right.text)")
        #expect(right.json["email"] as? String == "ada.king@example.com")
        #expect(right.json["currentPassword"] == nil)
    }
}
