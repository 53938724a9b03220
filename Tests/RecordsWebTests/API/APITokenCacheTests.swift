import Foundation
import RecordsApp
import TestSupport
import Testing

@testable import RecordsWeb

/// The tokens the API checked lately, kept in memory (``APITokenCache``):
/// repeated requests skip the database, and whatever ends a token in this
/// process ends it for the very next request.
@Suite struct APITokenCacheTests {
    static func writerID(_ site: APISite) async throws -> Int64 {
        try #require(try await site.tokens.list(userID: site.user.id).first { $0.name == "writer" }).id
    }

    @Test func aRevokedTokenIsRefusedOnTheVeryNextRequest() async throws {
        let site = try await APISite()
        // Twice: the first use writes the last use, the second is kept.
        #expect(await site.send("GET", "/api/v1/people").status == 200)
        #expect(await site.send("GET", "/api/v1/people").status == 200)
        try await site.tokens.revoke(id: try await Self.writerID(site), userID: site.user.id)
        #expect(await site.send("GET", "/api/v1/people").status == 401)
    }

    @Test func aPasswordChangeEndsTheTokensAtOnce() async throws {
        let site = try await APISite()
        for _ in 0..<2 {
            #expect(await site.send("GET", "/api/v1/people").status == 200)
            #expect(await site.send("GET", "/api/v1/people", token: .some(site.reader)).status == 200)
        }
        try await UsersStore(database: site.database, hasher: cheapHasher).changePassword(
            id: site.user.id, current: "correct horse", new: "battery staple", confirmation: "battery staple")
        #expect(await site.send("GET", "/api/v1/people").status == 401)
        #expect(await site.send("GET", "/api/v1/people", token: .some(site.reader)).status == 401)
    }

    @Test func aDeletedUsersTokenIsRefusedAtOnce() async throws {
        let site = try await APISite()
        // A list, not the profile: the profile reads its user again anyway.
        #expect(await site.send("GET", "/api/v1/people").status == 200)
        #expect(await site.send("GET", "/api/v1/people").status == 200)
        _ = try await UsersStore(database: site.database, hasher: cheapHasher).delete(
            id: site.user.id, password: "correct horse")
        #expect(await site.send("GET", "/api/v1/people").status == 401)
    }

    @Test func anExpiredTokenIsRefusedThoughItWasCheckedMomentsAgo() async throws {
        let site = try await APISite()
        let expiring = try await site.tokens.create(
            userID: site.user.id, name: "short", scope: .read, expiresAt: site.clock.now.addingTimeInterval(5)
        ).secret
        // Twice: the first use writes the last use, the second is kept.
        #expect(await site.send("GET", "/api/v1/me", token: .some(expiring)).status == 200)
        #expect(await site.send("GET", "/api/v1/me", token: .some(expiring)).status == 200)
        // Well within the time an entry is trusted.
        site.clock.advance(seconds: 6)
        #expect(await site.send("GET", "/api/v1/me", token: .some(expiring)).status == 401)
    }

    @Test func aTokenRevokedByAnotherProcessIsRefusedWithinTheTimeToLive() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.fileURL("records.sqlite")
        let site = try await APISite(databaseURL: url)
        // The first use writes the token's last use, which drops it from
        // the cache; the second is kept.
        #expect(await site.send("GET", "/api/v1/me").status == 200)
        #expect(await site.send("GET", "/api/v1/me").status == 200)
        // As `records token revoke` does: its own connections to the file.
        let other = try AppDatabase(url: url, start: .empty)
        try await APITokenStore(database: other).revoke(id: try await Self.writerID(site), userID: site.user.id)
        // Not told of the other connections' commits: trusted from memory...
        #expect(await site.send("GET", "/api/v1/me").status == 200)
        // ...for no longer than the documented bound.
        site.clock.advance(by: APITokenCache.defaultTimeToLive + .seconds(1))
        #expect(await site.send("GET", "/api/v1/me").status == 401)
    }

    @Test func aWrongSecretIsRefusedEveryTime() async throws {
        let site = try await APISite()
        let wrong = "rst_" + String(repeating: "A", count: 43)
        #expect(await site.send("GET", "/api/v1/me", token: .some(wrong)).status == 401)
        #expect(await site.send("GET", "/api/v1/me", token: .some(wrong)).status == 401)
    }

    @Test func aTokensLastUseIsStillWritten() async throws {
        let site = try await APISite()
        let id = try await Self.writerID(site)
        #expect(await site.send("GET", "/api/v1/me").status == 200)
        let first = try #require(try await site.tokens.list(userID: site.user.id).first { $0.id == id }?.lastUsedAt)
        site.clock.advance(by: APITokenStore.touchInterval + APITokenCache.defaultTimeToLive + .seconds(1))
        #expect(await site.send("GET", "/api/v1/me").status == 200)
        let later = try #require(try await site.tokens.list(userID: site.user.id).first { $0.id == id }?.lastUsedAt)
        #expect(later > first)
    }

    @Test func theCacheKeepsNoMoreThanItsCapacity() async throws {
        let site = try await APISite()
        let cache = APITokenCache(tokens: site.tokens, database: site.database, capacity: 2, now: site.clock.closure)
        var secrets: [String] = []
        for index in 0..<3 {
            secrets.append(
                try await site.tokens.create(userID: site.user.id, name: "t\(index)", scope: .read, expiresAt: nil)
                    .secret)
        }
        // Twice each: a token's first use writes its last use, which drops it.
        for secret in secrets + secrets { #expect(try await cache.authenticate(secret: secret) != nil) }
        #expect(cache.count == 2)
        // The one let go is read again, and still opens.
        #expect(try await cache.authenticate(secret: secrets[0]) != nil)
    }
}
