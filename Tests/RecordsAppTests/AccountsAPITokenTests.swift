import Foundation
import PasswordHashing
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

/// A database with one registered user, a token store on it with the test clock, and the user.
private func tokenFixture() async throws -> (
    database: AppDatabase, tokens: APITokenStore, clock: TestClock, user: User
) {
    let database = try emptyDatabase()
    let clock = TestClock()
    let user = try await usersStore(database).register(validForm())
    return (database, APITokenStore(database: database, now: clock.closure), clock, user)
}

/// The rows of `api_tokens`, read behind the store's back.
private func tokenRows(_ database: AppDatabase) throws -> [Row] {
    try database.read { db in try db.fetchAll("SELECT * FROM api_tokens ORDER BY id") }
}

@Suite("Accounts: tokens for programs")
struct AccountsAPITokenTests {
    // MARK: - Making and checking

    @Test("A secret is rst_ and 43 characters of base64url, and two are never alike")
    func secretShape() async throws {
        let (_, tokens, _, user) = try await tokenFixture()
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var secrets: Set<String> = []
        for index in 0..<20 {
            let (secret, token) = try await tokens.create(
                userID: user.id, name: "script \(index)", scope: .read, expiresAt: nil)
            #expect(secret.hasPrefix("rst_"))
            #expect(secret.count == 47)
            #expect(secret.dropFirst(4).allSatisfy { alphabet.contains($0) })
            #expect(token.hint == String(secret.prefix(6)))
            secrets.insert(secret)
        }
        #expect(secrets.count == 20)
    }

    @Test("A created token opens with its secret and gives its user and scope")
    func createAndAuthenticate() async throws {
        let (_, tokens, clock, user) = try await tokenFixture()
        let expiry = clock.now.addingTimeInterval(86_400)
        let (secret, token) = try await tokens.create(
            userID: user.id, name: "  backup script  ", scope: .readWrite, expiresAt: expiry)
        #expect(token.name == "backup script")
        #expect(token.scope == .readWrite)
        #expect(token.createdAt == clock.now)
        #expect(token.expiresAt == expiry)
        #expect(token.lastUsedAt == nil && token.revokedAt == nil)
        let (found, owner) = try #require(try await tokens.authenticate(secret: secret))
        #expect(owner == user)
        #expect(found.id == token.id)
        #expect(found.lastUsedAt == clock.now)
    }

    @Test("Only the secret's SHA-256 is stored, never the secret")
    func onlyDigestStored() async throws {
        let (database, tokens, _, user) = try await tokenFixture()
        let (secret, _) = try await tokens.create(userID: user.id, name: "n", scope: .read, expiresAt: nil)
        let row = try #require(try tokenRows(database).first)
        let stored: Data = try row["secret_hash"]
        #expect(Array(stored) == (try SHA256.digest(Array(secret.utf8))))
        for value in row.values {
            if case .text(let text) = value { #expect(!text.contains(secret.dropFirst(6))) }
            if case .blob(let bytes) = value { #expect(bytes != Data(secret.utf8)) }
        }
    }

    @Test(
        "Text that is not a secret opens nothing",
        arguments: [
            "", "rst_", "rst_short", "RST_" + String(repeating: "A", count: 43),
            "rst_" + String(repeating: "A", count: 42), "rst_" + String(repeating: "A", count: 44),
            "rst_" + String(repeating: "A", count: 42) + "B", "xyz_" + String(repeating: "A", count: 43),
            String(repeating: "A", count: 43),
        ])
    func malformedSecret(_ text: String) async throws {
        let (_, tokens, _, user) = try await tokenFixture()
        _ = try await tokens.create(userID: user.id, name: "n", scope: .read, expiresAt: nil)
        #expect(try await tokens.authenticate(secret: text) == nil)
    }

    @Test("A well-formed secret never issued opens nothing")
    func unknownSecret() async throws {
        let (_, tokens, _, user) = try await tokenFixture()
        _ = try await tokens.create(userID: user.id, name: "n", scope: .read, expiresAt: nil)
        #expect(try await tokens.authenticate(secret: "rst_" + SessionToken.generate().value) == nil)
    }

    @Test("An expired token opens nothing, and counts no more as active")
    func expired() async throws {
        let (_, tokens, clock, user) = try await tokenFixture()
        let (secret, token) = try await tokens.create(
            userID: user.id, name: "n", scope: .read, expiresAt: clock.now.addingTimeInterval(60))
        #expect(try await tokens.isActive(id: token.id))
        clock.advance(seconds: 60)
        #expect(try await tokens.authenticate(secret: secret) == nil)
        #expect(try await tokens.isActive(id: token.id) == false)
    }

    @Test("A token's last use is written at most once a minute")
    func lastUseTouchedOncePerMinute() async throws {
        let (_, tokens, clock, user) = try await tokenFixture()
        let (secret, _) = try await tokens.create(userID: user.id, name: "n", scope: .read, expiresAt: nil)
        let first = clock.now
        _ = try await tokens.authenticate(secret: secret)
        clock.advance(seconds: 59)
        #expect(try await tokens.authenticate(secret: secret)?.token.lastUsedAt == first)
        clock.advance(seconds: 1)
        #expect(try await tokens.authenticate(secret: secret)?.token.lastUsedAt == clock.now)
        #expect(try await tokens.list(userID: user.id).first?.lastUsedAt == clock.now)
    }

    // MARK: - Refusals

    @Test(
        "A bad name is refused, and nothing is written",
        arguments: ["", "   ", String(repeating: "x", count: 101), "two\nlines"])
    func badName(_ name: String) async throws {
        let (database, tokens, _, user) = try await tokenFixture()
        await #expect(throws: ValidationError.self) {
            _ = try await tokens.create(userID: user.id, name: name, scope: .read, expiresAt: nil)
        }
        #expect(try tokenRows(database).isEmpty)
    }

    @Test("A name of 100 characters is kept")
    func longestName() async throws {
        let (_, tokens, _, user) = try await tokenFixture()
        let name = String(repeating: "é", count: 100)
        #expect(try await tokens.create(userID: user.id, name: name, scope: .read, expiresAt: nil).token.name == name)
    }

    @Test("An expiry now or in the past is refused")
    func pastExpiry() async throws {
        let (database, tokens, clock, user) = try await tokenFixture()
        for expiry in [clock.now, clock.now.addingTimeInterval(-1)] {
            let error = await #expect(throws: ValidationError.self) {
                _ = try await tokens.create(userID: user.id, name: "n", scope: .read, expiresAt: expiry)
            }
            #expect(error?.message(for: "expiry") == "expiry must be in the future")
        }
        #expect(try tokenRows(database).isEmpty)
    }

    @Test("A token for a user who does not exist is refused")
    func unknownUser() async throws {
        let (_, tokens, _, user) = try await tokenFixture()
        await #expect(throws: RecordNotFoundError(kind: "user", id: user.id + 1)) {
            _ = try await tokens.create(userID: user.id + 1, name: "n", scope: .read, expiresAt: nil)
        }
    }

    @Test("A user has at most 50 working tokens; a revoked one makes room")
    func activeLimit() async throws {
        let (_, tokens, _, user) = try await tokenFixture()
        var last: APIToken?
        for index in 0..<APITokenStore.maxActiveTokens {
            last = try await tokens.create(userID: user.id, name: "t\(index)", scope: .read, expiresAt: nil).token
        }
        await #expect(throws: ValidationError.self) {
            _ = try await tokens.create(userID: user.id, name: "one too many", scope: .read, expiresAt: nil)
        }
        try await tokens.revoke(id: try #require(last).id, userID: user.id)
        _ = try await tokens.create(userID: user.id, name: "in its place", scope: .read, expiresAt: nil)
    }

    @Test("The table refuses a scope other than read and read-write")
    func tableRefusesOtherScope() async throws {
        let (database, _, _, user) = try await tokenFixture()
        #expect(throws: SQLiteError.self) {
            try database.write { db in
                try db.execute(
                    """
                    INSERT INTO api_tokens (user_id, name, secret_hash, hint, scope, created_at)
                    VALUES (\(user.id), 'n', \(Data(count: 32)), 'rst_AA', 'admin', 0)
                    """)
            }
        }
    }

    // MARK: - Listing, renaming, revoking

    @Test("A user's list holds their tokens, the newest first, and no one else's")
    func list() async throws {
        let (database, tokens, clock, user) = try await tokenFixture()
        let other = try await usersStore(database).register(validForm(email: "bob@example.com"))
        let first = try await tokens.create(userID: user.id, name: "first", scope: .read, expiresAt: nil).token
        clock.advance(seconds: 1)
        let second = try await tokens.create(userID: user.id, name: "second", scope: .readWrite, expiresAt: nil).token
        _ = try await tokens.create(userID: other.id, name: "bob's", scope: .read, expiresAt: nil)
        #expect(try await tokens.list(userID: user.id) == [second, first])
    }

    @Test("A revoked token opens nothing and stays listed as revoked")
    func revoke() async throws {
        let (_, tokens, clock, user) = try await tokenFixture()
        let (secret, token) = try await tokens.create(userID: user.id, name: "n", scope: .read, expiresAt: nil)
        try await tokens.revoke(id: token.id, userID: user.id)
        #expect(try await tokens.authenticate(secret: secret) == nil)
        #expect(try await tokens.isActive(id: token.id) == false)
        let listed = try #require(try await tokens.list(userID: user.id).first)
        #expect(listed.revokedAt == clock.now)
        #expect(!listed.isActive(at: clock.now))
    }

    @Test("Revoking a token twice succeeds and keeps the first time")
    func revokeTwice() async throws {
        let (_, tokens, clock, user) = try await tokenFixture()
        let token = try await tokens.create(userID: user.id, name: "n", scope: .read, expiresAt: nil).token
        try await tokens.revoke(id: token.id, userID: user.id)
        let revokedAt = clock.now
        clock.advance(seconds: 10)
        try await tokens.revoke(id: token.id, userID: user.id)
        #expect(try await tokens.list(userID: user.id).first?.revokedAt == revokedAt)
    }

    @Test("Another user's token cannot be revoked, and is told apart from none")
    func revokeOthers() async throws {
        let (database, tokens, _, user) = try await tokenFixture()
        let other = try await usersStore(database).register(validForm(email: "bob@example.com"))
        let (secret, token) = try await tokens.create(userID: other.id, name: "bob's", scope: .read, expiresAt: nil)
        await #expect(throws: RecordNotFoundError(kind: "token", id: token.id)) {
            try await tokens.revoke(id: token.id, userID: user.id)
        }
        await #expect(throws: RecordNotFoundError(kind: "token", id: token.id + 1)) {
            try await tokens.revoke(id: token.id + 1, userID: user.id)
        }
        #expect(try await tokens.authenticate(secret: secret) != nil)
    }

    @Test("A token is renamed by its owner only")
    func rename() async throws {
        let (database, tokens, _, user) = try await tokenFixture()
        let other = try await usersStore(database).register(validForm(email: "bob@example.com"))
        let token = try await tokens.create(userID: user.id, name: "old", scope: .read, expiresAt: nil).token
        #expect(try await tokens.rename(id: token.id, userID: user.id, name: " new ").name == "new")
        await #expect(throws: RecordNotFoundError(kind: "token", id: token.id)) {
            try await tokens.rename(id: token.id, userID: other.id, name: "mine")
        }
        await #expect(throws: ValidationError.self) {
            try await tokens.rename(id: token.id, userID: user.id, name: "")
        }
        #expect(try await tokens.list(userID: user.id).first?.name == "new")
    }

    @Test("Tokens that stopped 30 days ago are deleted when a token is made")
    func purge() async throws {
        let (_, tokens, clock, user) = try await tokenFixture()
        let revoked = try await tokens.create(userID: user.id, name: "revoked", scope: .read, expiresAt: nil).token
        try await tokens.revoke(id: revoked.id, userID: user.id)
        clock.advance(seconds: 29 * 86_400)
        let kept = try await tokens.create(userID: user.id, name: "kept", scope: .read, expiresAt: nil).token
        #expect(try await tokens.list(userID: user.id).map(\.id) == [kept.id, revoked.id])
        clock.advance(seconds: 86_400)
        let newest = try await tokens.create(userID: user.id, name: "newest", scope: .read, expiresAt: nil).token
        #expect(try await tokens.list(userID: user.id).map(\.id) == [newest.id, kept.id])
    }

    // MARK: - The user's account

    @Test("Deleting a user deletes their tokens")
    func deletingUserDeletesTokens() async throws {
        let (database, tokens, _, user) = try await tokenFixture()
        let (secret, _) = try await tokens.create(userID: user.id, name: "n", scope: .read, expiresAt: nil)
        try await usersStore(database).delete(id: user.id, password: "correct horse")
        #expect(try tokenRows(database).isEmpty)
        #expect(try await tokens.authenticate(secret: secret) == nil)
    }

    @Test("Changing a user's password revokes every token of theirs, and no one else's")
    func passwordChangeRevokes() async throws {
        let (database, tokens, _, user) = try await tokenFixture()
        let other = try await usersStore(database).register(validForm(email: "bob@example.com"))
        let (mine, _) = try await tokens.create(userID: user.id, name: "n", scope: .read, expiresAt: nil)
        let (bobs, _) = try await tokens.create(userID: other.id, name: "n", scope: .read, expiresAt: nil)
        try await usersStore(database).changePassword(
            id: user.id, current: "correct horse", new: "battery staple", confirmation: "battery staple",
            keepingSession: nil)
        #expect(try await tokens.authenticate(secret: mine) == nil)
        #expect(try await tokens.authenticate(secret: bobs) != nil)
    }

    @Test("A wrong current password revokes no token")
    func wrongPasswordRevokesNothing() async throws {
        let (database, tokens, _, user) = try await tokenFixture()
        let (secret, _) = try await tokens.create(userID: user.id, name: "n", scope: .read, expiresAt: nil)
        await #expect(throws: AuthenticationError.wrongCurrentPassword) {
            try await usersStore(database).changePassword(
                id: user.id, current: "wrong", new: "battery staple", confirmation: "battery staple")
        }
        #expect(try await tokens.authenticate(secret: secret) != nil)
    }
}
