import Foundation
import PasswordHashing
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

@Suite("Accounts: sessions")
struct AccountsSessionTests {
    // MARK: - Tokens

    @Test("A new token is 43 characters of base64url, and two are never alike")
    func tokenShape() {
        let tokens = (0..<200).map { _ in SessionToken.generate().value }
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        for token in tokens {
            #expect(token.count == 43)
            #expect(token.allSatisfy { alphabet.contains($0) })
            #expect(SessionToken(token)?.value == token)
        }
        #expect(Set(tokens).count == tokens.count)
    }

    @Test(
        "Text that is not a token is refused",
        arguments: [
            "", "short", String(repeating: "A", count: 42), String(repeating: "A", count: 44),
            String(repeating: "A", count: 42) + "=", String(repeating: "A", count: 42) + "+",
            String(repeating: "A", count: 42) + "/", String(repeating: "é", count: 43),
            // The last character carries 4 unused bits: "B" sets one, another spelling of the same bytes.
            String(repeating: "A", count: 42) + "B",
        ])
    func tokenParsing(_ text: String) {
        #expect(SessionToken(text) == nil)
    }

    @Test("A token is taken exactly when base64 decodes it to 32 bytes spelt the same way again")
    func tokenParsingAgreesWithBase64() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let body = SessionToken.generate().value.dropLast()
        for last in alphabet + ["=", "+", "/", "."] {
            let text = body + String(last)
            let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "="
            let canonical = Data(base64Encoded: standard).map { data in
                data.count == 32
                    && data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                        .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "") == text
            }
            #expect((SessionToken(text) != nil) == (canonical ?? false), "last character \(last)")
        }
        // 16 of the 64 characters leave the two unused bits clear.
        #expect(alphabet.filter { SessionToken(body + String($0)) != nil }.count == 16)
    }

    @Test("A token never shows itself in a description or a log line")
    func tokenRedacted() {
        let token = SessionToken.generate()
        #expect(!String(describing: token).contains(token.value))
        #expect(!String(reflecting: token).contains(token.value))
        #expect(!"\(token)".contains(token.value))
    }

    // MARK: - Creating and checking

    @Test("A created session opens with its token and gives its user")
    func createAndCheck() async throws {
        let (_, sessions, clock, user) = try await sessionFixture()
        let (token, session) = try await sessions.create(
            userID: user.id, userAgent: "Firefox/140", clientAddress: "127.0.0.1")
        #expect(session.userID == user.id)
        #expect(session.createdAt == clock.now)
        #expect(session.userAgent == "Firefox/140")
        #expect(session.clientAddress == "127.0.0.1")
        let signedIn = try #require(try await sessions.signedIn(token: token))
        #expect(signedIn.user == user)
        #expect(signedIn.session == session)
    }

    @Test("Only the token's SHA-256 is stored, never the token")
    func onlyDigestStored() async throws {
        let (database, sessions, _, user) = try await sessionFixture()
        let (token, _) = try await sessions.create(userID: user.id)
        let row = try #require(try sessionRows(database).first)
        let stored: Data = try row["SESSION_TOKEN_HASH"]
        #expect(Array(stored) == (try SHA256.digest(Array(token.value.utf8))))
        for value in row.values {
            if case .text(let text) = value { #expect(!text.contains(token.value)) }
            if case .blob(let bytes) = value { #expect(bytes != Data(token.value.utf8)) }
        }
    }

    @Test("The table refuses a stored value that is not a 32-byte digest")
    func tableRefusesPlainToken() async throws {
        let (database, _, _, user) = try await sessionFixture()
        for value: SQLiteValue in [
            .text(SessionToken.generate().value), .blob(Data(count: 31)), .blob(Data(count: 33)),
        ] {
            #expect(throws: SQLiteError.self) {
                try database.write { db in
                    try db.execute(
                        "INSERT INTO User_Session (SESSION_TOKEN_HASH, SESSION_UID, SESSION_CREATED, SESSION_LAST_SEEN) "
                            + "VALUES (?, ?, 0, 0)",
                        arguments: [value, user.id])
                }
            }
        }
    }

    @Test("A token that was never issued opens nothing")
    func unknownToken() async throws {
        let (_, sessions, _, user) = try await sessionFixture()
        _ = try await sessions.create(userID: user.id)
        #expect(try await sessions.signedIn(token: SessionToken.generate()) == nil)
    }

    @Test("Each log-in gets its own token and session")
    func distinctSessions() async throws {
        let (_, sessions, _, user) = try await sessionFixture()
        let first = try await sessions.create(userID: user.id)
        let second = try await sessions.create(userID: user.id)
        #expect(first.token != second.token)
        #expect(first.session.id != second.session.id)
        #expect(try await sessions.signedIn(token: first.token)?.session.id == first.session.id)
        #expect(try await sessions.signedIn(token: second.token)?.session.id == second.session.id)
    }

    @Test("A session for a user who does not exist is refused")
    func createForUnknownUser() async throws {
        let (database, sessions, _, _) = try await sessionFixture()
        await #expect(throws: RecordNotFoundError(kind: "user", id: 99)) {
            try await sessions.create(userID: 99)
        }
        #expect(try sessionRows(database).isEmpty)
    }

    @Test("A user agent and address lose control and format characters and are cut to their limits")
    func cleanedClientText() async throws {
        let (_, sessions, _, user) = try await sessionFixture()
        let agent = "Evil\u{1B}[31m\u{202E}Agent\n" + String(repeating: "x", count: 500)
        let (_, session) = try await sessions.create(
            userID: user.id, userAgent: agent, clientAddress: "  \u{200B}\u{0}  ")
        let kept = try #require(session.userAgent)
        #expect(kept.hasPrefix("Evil[31mAgent"))
        #expect(kept.count == SessionStore.maxUserAgentLength)
        #expect(!kept.unicodeScalars.contains { $0.properties.generalCategory == .control })
        #expect(session.clientAddress == nil)
    }

    // MARK: - Expiry

    @Test("A session idle for the timeout has expired and is deleted; one second less is still valid")
    func idleTimeout() async throws {
        let (database, sessions, clock, user) = try await sessionFixture()
        let (token, _) = try await sessions.create(userID: user.id)
        clock.advance(by: SessionStore.defaultIdle - .seconds(1))
        #expect(try await sessions.signedIn(token: token) != nil)
        clock.advance(by: SessionStore.defaultIdle)
        #expect(try await sessions.signedIn(token: token) == nil)
        #expect(try sessionRows(database).isEmpty)
    }

    @Test("Use keeps a session alive past the idle timeout, but not past its absolute lifetime")
    func absoluteLifetime() async throws {
        let (_, sessions, clock, user) = try await sessionFixture()
        let (token, _) = try await sessions.create(userID: user.id)
        // Used every 6 days: never idle for 7, and still valid at day 24.
        for _ in 0..<4 {
            clock.advance(seconds: 6 * 86_400)
            #expect(try await sessions.signedIn(token: token) != nil)
        }
        clock.advance(seconds: 6 * 86_400 - 1)
        #expect(try await sessions.signedIn(token: token) != nil)
        clock.advance(seconds: 1)  // 30 days after log-in
        #expect(try await sessions.signedIn(token: token) == nil)
    }

    @Test("Last use is written at most once per touch interval")
    func touchThrottled() async throws {
        let (database, sessions, clock, user) = try await sessionFixture()
        let (token, created) = try await sessions.create(userID: user.id)
        func storedLastSeen() throws -> Int64 { try sessionRows(database)[0]["SESSION_LAST_SEEN"] }
        let start = try storedLastSeen()
        let changesBefore = try database.read { $0.totalChangesCount }
        clock.advance(seconds: 59)
        let early = try #require(try await sessions.signedIn(token: token))
        #expect(early.session.lastSeenAt == created.lastSeenAt)
        #expect(try storedLastSeen() == start)
        #expect(try database.read { $0.totalChangesCount } == changesBefore)
        clock.advance(seconds: 1)
        let due = try #require(try await sessions.signedIn(token: token))
        #expect(try storedLastSeen() == start + 60)
        #expect(due.session.lastSeenAt == clock.now)
    }

    @Test("The idle timeout counts from the last written use")
    func touchExtendsIdle() async throws {
        let (_, sessions, clock, user) = try await sessionFixture(
            policy: SessionPolicy(
                idleTimeout: .seconds(600), absoluteLifetime: .seconds(86_400), touchInterval: .seconds(60)))
        let (token, _) = try await sessions.create(userID: user.id)
        clock.advance(seconds: 500)
        #expect(try await sessions.signedIn(token: token) != nil)  // written: 500
        clock.advance(seconds: 599)  // 1099: 599 s after the write
        #expect(try await sessions.signedIn(token: token) != nil)
        clock.advance(seconds: 600)
        #expect(try await sessions.signedIn(token: token) == nil)
    }

    @Test("A session's expiry is the earlier of idle and absolute ends")
    func expiresAt() async throws {
        let (_, sessions, clock, user) = try await sessionFixture()
        let (_, session) = try await sessions.create(userID: user.id)
        #expect(session.expiresAt(under: .standard) == clock.now.addingTimeInterval(7 * 86_400))
        let short = SessionPolicy(idleTimeout: .seconds(600), absoluteLifetime: .seconds(300))
        #expect(session.expiresAt(under: short) == clock.now.addingTimeInterval(300))
    }

    @Test("Purging deletes expired sessions only; a log-in purges too")
    func purge() async throws {
        let (database, sessions, clock, user) = try await sessionFixture()
        _ = try await sessions.create(userID: user.id)
        clock.advance(seconds: 3 * 86_400)
        let (fresh, _) = try await sessions.create(userID: user.id)
        clock.advance(seconds: 4 * 86_400)  // the first is 7 days idle, the second 4
        #expect(try await sessions.purgeExpired() == 1)
        #expect(try sessionRows(database).count == 1)
        #expect(try await sessions.signedIn(token: fresh) != nil)
        clock.advance(seconds: 8 * 86_400)
        _ = try await sessions.create(userID: user.id)
        #expect(try sessionRows(database).count == 1)
    }

    @Test("A clock far off, or a stored time far off, expires sessions rather than trapping")
    func extremeTimes() async throws {
        let (database, sessions, clock, user) = try await sessionFixture()
        let (token, _) = try await sessions.create(userID: user.id)
        try database.write { db in
            try db.execute("UPDATE User_Session SET SESSION_LAST_SEEN = ?", arguments: [Int64.min])
        }
        #expect(try await sessions.signedIn(token: token) == nil)
        let (other, _) = try await sessions.create(userID: user.id)
        try database.write { db in
            try db.execute(
                "UPDATE User_Session SET SESSION_LAST_SEEN = ?, SESSION_CREATED = ?", arguments: [Int64.max, Int64.max])
        }
        // Used "in the future": still valid, and never overflowing.
        #expect(try await sessions.signedIn(token: other) != nil)
        clock.advance(by: .seconds(Int64(1) << 62))
        #expect(try await sessions.signedIn(token: other) != nil)
        let past = SessionStore(database: database, now: { Date(timeIntervalSince1970: -1e300) })
        #expect(try await past.signedIn(token: other) != nil)
    }

    // MARK: - Revoking

    @Test("A revoked token opens nothing; revoking it again finds nothing")
    func revokeToken() async throws {
        let (_, sessions, _, user) = try await sessionFixture()
        let (token, _) = try await sessions.create(userID: user.id)
        let (other, _) = try await sessions.create(userID: user.id)
        #expect(try await sessions.revoke(token: token))
        #expect(try await sessions.signedIn(token: token) == nil)
        #expect(try await sessions.signedIn(token: other) != nil)
        #expect(try await !sessions.revoke(token: token))
    }

    @Test("A user revokes their own session by ID, never another user's")
    func revokeByID() async throws {
        let (database, sessions, _, ada) = try await sessionFixture()
        let bob = try await usersStore(database).register(validForm(email: "bob@example.com"))
        let (adaToken, adaSession) = try await sessions.create(userID: ada.id)
        let (bobToken, bobSession) = try await sessions.create(userID: bob.id)
        #expect(try await !sessions.revoke(sessionID: bobSession.id, userID: ada.id))
        #expect(try await sessions.signedIn(token: bobToken) != nil)
        #expect(try await sessions.revoke(sessionID: adaSession.id, userID: ada.id))
        #expect(try await sessions.signedIn(token: adaToken) == nil)
    }

    @Test("Revoking all of a user's sessions can keep one, and leaves other users' alone")
    func revokeAll() async throws {
        let (database, sessions, _, ada) = try await sessionFixture()
        let bob = try await usersStore(database).register(validForm(email: "bob@example.com"))
        let (keptToken, kept) = try await sessions.create(userID: ada.id)
        let (goneToken, _) = try await sessions.create(userID: ada.id)
        let (bobToken, _) = try await sessions.create(userID: bob.id)
        #expect(try await sessions.revokeAll(userID: ada.id, except: kept.id) == 1)
        #expect(try await sessions.signedIn(token: keptToken) != nil)
        #expect(try await sessions.signedIn(token: goneToken) == nil)
        #expect(try await sessions.revokeAll(userID: ada.id) == 1)
        #expect(try await sessions.signedIn(token: keptToken) == nil)
        #expect(try await sessions.signedIn(token: bobToken) != nil)
    }

    @Test("A user's list has their valid sessions, the most recently used first")
    func listSessions() async throws {
        let (database, sessions, clock, ada) = try await sessionFixture()
        let bob = try await usersStore(database).register(validForm(email: "bob@example.com"))
        let (_, old) = try await sessions.create(userID: ada.id, userAgent: "old")
        clock.advance(seconds: 8 * 86_400)  // expires `old` (not yet purged)
        let (firstToken, first) = try await sessions.create(userID: ada.id, userAgent: "first")
        _ = try await sessions.create(userID: bob.id)
        clock.advance(seconds: 120)
        let (_, second) = try await sessions.create(userID: ada.id, userAgent: "second")
        #expect(try await sessions.sessions(userID: ada.id).map(\.id) == [second.id, first.id])
        clock.advance(seconds: 120)
        _ = try await sessions.signedIn(token: firstToken)
        #expect(try await sessions.sessions(userID: ada.id).map(\.id) == [first.id, second.id])
        #expect(!(try await sessions.sessions(userID: ada.id).map(\.id).contains(old.id)))
    }

    @Test("Asking which sessions are open lists the valid ones only, and writes nothing")
    func openSessionIDs() async throws {
        let (database, sessions, clock, user) = try await sessionFixture()
        let (_, old) = try await sessions.create(userID: user.id)
        clock.advance(seconds: 8 * 86_400)  // expires `old` (not yet purged)
        let (revokedToken, revoked) = try await sessions.create(userID: user.id)
        try await sessions.revoke(token: revokedToken)
        let (_, valid) = try await sessions.create(userID: user.id)
        clock.advance(seconds: 3600)
        let changesBefore = try database.read { $0.totalChangesCount }
        let open = try await sessions.openSessionIDs(among: [old.id, revoked.id, valid.id, 999])
        #expect(open == [valid.id])
        #expect(try database.read { $0.totalChangesCount } == changesBefore, "no use written")
        #expect(try await sessions.openSessionIDs(among: []).isEmpty)
    }

    // MARK: - With the Users app

    @Test("Changing the password from a session ends the user's other sessions, in the same change")
    func passwordChangeKeepsCurrent() async throws {
        let (database, sessions, _, user) = try await sessionFixture()
        let (current, session) = try await sessions.create(userID: user.id)
        let (other, _) = try await sessions.create(userID: user.id)
        try await usersStore(database).changePassword(
            id: user.id, current: "correct horse", new: "battery staple", confirmation: "battery staple",
            keepingSession: session.id)
        #expect(try await sessions.signedIn(token: current) != nil)
        #expect(try await sessions.signedIn(token: other) == nil)
    }

    @Test("Changing the password without a session (the command line) ends every session")
    func passwordChangeEndsAll() async throws {
        let (database, sessions, _, user) = try await sessionFixture()
        let (token, _) = try await sessions.create(userID: user.id)
        try await usersStore(database).changePassword(
            id: user.id, current: "correct horse", new: "battery staple", confirmation: "battery staple")
        #expect(try await sessions.signedIn(token: token) == nil)
    }

    @Test("A refused password change ends no session")
    func refusedPasswordChange() async throws {
        let (database, sessions, _, user) = try await sessionFixture()
        let (token, _) = try await sessions.create(userID: user.id)
        await #expect(throws: AuthenticationError.wrongCurrentPassword) {
            try await usersStore(database).changePassword(
                id: user.id, current: "wrong horse", new: "battery staple", confirmation: "battery staple")
        }
        await #expect(throws: ValidationError.self) {
            try await usersStore(database).changePassword(
                id: user.id, current: "correct horse", new: "short", confirmation: "short")
        }
        #expect(try await sessions.signedIn(token: token) != nil)
    }

    @Test("Deleting a user deletes their sessions")
    func deleteCascades() async throws {
        let (database, sessions, _, user) = try await sessionFixture()
        let (token, _) = try await sessions.create(userID: user.id)
        try await usersStore(database).delete(id: user.id, password: "correct horse")
        #expect(try sessionRows(database).isEmpty)
        #expect(try await sessions.signedIn(token: token) == nil)
    }

    @Test("Sessions survive closing and reopening the database file")
    func survivesRestart() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("records.sqlite")
        let first = try AppDatabase(url: url, start: .empty)
        let user = try await usersStore(first).register(validForm())
        let (token, _) = try await SessionStore(database: first).create(userID: user.id)
        first.close()
        let second = try AppDatabase(url: url, start: .empty)
        defer { second.close() }
        let signedIn = try await SessionStore(database: second).signedIn(token: token)
        #expect(signedIn?.user == user)
    }

    @Test("Sessions are the Users app's: a Users table the migration refuses makes them unavailable too")
    func unavailableWithUsers() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("myDb")
        var users = seedUsers
        users.append(SeedUser(first: "Asha", last: "Again", email: "ASHA@example.in", password: "another-1"))
        try makeSeedDatabase(at: url, users: users)
        let database = try AppDatabase(url: url, template: nil)
        defer { database.close() }
        let unavailable = try #require(database.unavailability(of: .users))
        await #expect(throws: unavailable) { try await SessionStore(database: database).create(userID: 1) }
        await #expect(throws: unavailable) {
            try await SessionStore(database: database).signedIn(token: SessionToken.generate())
        }
    }
}

extension SessionStore {
    /// The standard idle timeout, for the tests' arithmetic.
    static var defaultIdle: Duration { SessionPolicy.standard.idleTimeout }
}
