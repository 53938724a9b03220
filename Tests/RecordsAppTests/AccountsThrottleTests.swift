import Foundation
import TestSupport
import Testing

@testable import RecordsApp

@Suite("Accounts: log-in throttle", .tags(.concurrency))
struct AccountsThrottleTests {
    private func throttle(_ policy: LoginThrottle.Policy = .standard) -> (LoginThrottle, TestClock) {
        let clock = TestClock()
        return (LoginThrottle(policy: policy, now: clock.closure), clock)
    }

    private func fail(
        _ throttle: LoginThrottle, _ times: Int, email: String = "ada@example.com", client: String? = "10.0.0.1"
    ) {
        for _ in 0..<times { throttle.recordFailure(email: email, client: client) }
    }

    @Test("Four failures leave the account open; the fifth locks it for 30 seconds")
    func firstLock() {
        let (throttle, clock) = throttle()
        fail(throttle, 4)
        #expect(throttle.check(email: "ada@example.com", client: "10.0.0.1") == .allowed)
        fail(throttle, 1)
        #expect(throttle.check(email: "ada@example.com", client: "10.0.0.1") == .locked(retryAfter: .seconds(30)))
        clock.advance(seconds: 29)
        #expect(throttle.check(email: "ada@example.com", client: "10.0.0.1") == .locked(retryAfter: .seconds(1)))
        clock.advance(seconds: 1)
        #expect(throttle.check(email: "ada@example.com", client: "10.0.0.1") == .allowed)
    }

    @Test(
        "An email's key is the email trimmed and lowered, whether it needed that or not",
        arguments: [
            "ada@example.com", " Ada@Example.COM ", "ada@example.com\n", "\tada@example.com", "ADA", "api-token",
            "zoë@example.com", "Zoë@example.com", "a\u{00A0}", "\u{2003}a", "x", "", " ", "a b", "a\u{7F}",
        ])
    func accountKeyForms(_ email: String) {
        #expect(LoginThrottle.accountKey(email) == email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased())
    }

    @Test("The account is locked from every client, whatever the case and spaces of the email")
    func accountLockEverywhere() {
        let (throttle, _) = throttle()
        fail(throttle, 5, email: " Ada@Example.COM ")
        #expect(throttle.check(email: "ada@example.com", client: "192.168.1.9") != .allowed)
        #expect(throttle.check(email: "ADA@EXAMPLE.COM", client: nil) != .allowed)
        #expect(throttle.check(email: "bob@example.com", client: "192.168.1.9") == .allowed)
    }

    @Test("Each further failure doubles the lock, up to 15 minutes")
    func growingLock() {
        let (throttle, clock) = throttle()
        fail(throttle, 5)
        var expected: [Int64] = [60, 120, 240, 480, 900, 900]
        while !expected.isEmpty {
            guard case .locked(let wait) = throttle.check(email: "ada@example.com", client: nil) else {
                Issue.record("not locked")
                return
            }
            clock.advance(by: wait)
            fail(throttle, 1)
            #expect(
                throttle.check(email: "ada@example.com", client: nil)
                    == .locked(retryAfter: .seconds(expected.removeFirst())))
        }
    }

    @Test("A success clears the account's failures but not the client's")
    func successResetsAccountOnly() {
        let (throttle, _) = throttle()
        fail(throttle, 4, email: "ada@example.com")
        fail(throttle, 15, email: "someone@example.com", client: "10.0.0.1")
        throttle.recordSuccess(email: "ADA@example.com", client: "10.0.0.1")
        fail(throttle, 4, email: "ada@example.com", client: "10.0.0.2")
        #expect(throttle.check(email: "ada@example.com", client: "10.0.0.2") == .allowed)
        // 15 + 4 before the success, one more reaches the client's 20.
        fail(throttle, 1, email: "carol@example.com", client: "10.0.0.1")
        #expect(throttle.check(email: "dave@example.com", client: "10.0.0.1") == .locked(retryAfter: .seconds(30)))
    }

    @Test("Twenty failures from one address, on different accounts, lock that address for every account")
    func clientLock() {
        let (throttle, _) = throttle()
        for index in 0..<19 { fail(throttle, 1, email: "user\(index)@example.com") }
        #expect(throttle.check(email: "new@example.com", client: "10.0.0.1") == .allowed)
        fail(throttle, 1, email: "user19@example.com")
        #expect(throttle.check(email: "new@example.com", client: "10.0.0.1") == .locked(retryAfter: .seconds(30)))
        #expect(throttle.check(email: "new@example.com", client: "10.0.0.2") == .allowed)
        #expect(throttle.check(email: "new@example.com", client: nil) == .allowed)
    }

    @Test("The longer of the account's and the client's locks applies")
    func longerLockWins() {
        let (throttle, clock) = throttle()
        fail(throttle, 20, email: "ada@example.com")  // account: 5 + 15 more failures, capped at 15 min
        clock.advance(seconds: 10)
        #expect(throttle.check(email: "ada@example.com", client: "10.0.0.1") == .locked(retryAfter: .seconds(890)))
        #expect(throttle.check(email: "bob@example.com", client: "10.0.0.1") == .locked(retryAfter: .seconds(20)))
    }

    @Test("Failures are forgotten an hour after the last one")
    func forgotten() {
        let (throttle, clock) = throttle()
        fail(throttle, 4)
        clock.advance(seconds: 3599)
        fail(throttle, 1)
        #expect(throttle.check(email: "ada@example.com", client: nil) != .allowed)
        clock.advance(seconds: 3600)
        fail(throttle, 4)
        #expect(throttle.check(email: "ada@example.com", client: nil) == .allowed)
    }

    @Test("Memory stays bounded: past the limit, forgotten entries and then the oldest are dropped")
    func bounded() {
        let policy = LoginThrottle.Policy(
            account: LoginThrottle.Policy.standard.account, client: LoginThrottle.Policy.standard.client,
            forgetAfter: .seconds(3600), maximumEntries: 3)
        let (throttle, clock) = throttle(policy)
        for index in 0..<10 {
            clock.advance(seconds: 1)
            fail(throttle, 1, email: "user\(index)@example.com", client: "10.0.0.\(index)")
        }
        #expect(throttle.trackedCount.accounts == 3)
        #expect(throttle.trackedCount.clients == 3)
        // The locked account is kept over older, unlocked ones... until it is the oldest.
        fail(throttle, 5, email: "locked@example.com", client: nil)
        #expect(throttle.check(email: "locked@example.com", client: nil) != .allowed)
        #expect(throttle.trackedCount.accounts == 3)
    }

    @Test("Failures recorded from many threads at once are all counted")
    func concurrentFailures() async {
        let policy = LoginThrottle.Policy(
            account: LoginThrottle.Limit(freeFailures: 400, firstLock: .seconds(30), longestLock: .seconds(60)),
            client: LoginThrottle.Limit(freeFailures: 10_000, firstLock: .seconds(30), longestLock: .seconds(60)),
            forgetAfter: .seconds(3600), maximumEntries: 100)
        let (throttle, _) = throttle(policy)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<399 {
                group.addTask { throttle.recordFailure(email: "ada@example.com", client: "10.0.0.1") }
            }
        }
        #expect(throttle.check(email: "ada@example.com", client: nil) == .allowed)
        throttle.recordFailure(email: "ada@example.com", client: nil)
        #expect(throttle.check(email: "ada@example.com", client: nil) == .locked(retryAfter: .seconds(30)))
    }

    @Test("An attempt begun counts as a failure at once: the sixth of six begun together is locked")
    func beginAttemptCountsAtOnce() {
        let (throttle, _) = throttle()
        for _ in 0..<5 { #expect(throttle.beginAttempt(email: "ada@example.com", client: "10.0.0.1") == .allowed) }
        #expect(
            throttle.beginAttempt(email: "ada@example.com", client: "10.0.0.1") == .locked(retryAfter: .seconds(30)))
    }

    @Test("A successful attempt clears the account and gives the client its failure back")
    func succeededAttempt() {
        let (throttle, _) = throttle()
        for _ in 0..<4 { _ = throttle.beginAttempt(email: "ada@example.com", client: "10.0.0.1") }
        _ = throttle.beginAttempt(email: "ada@example.com", client: "10.0.0.1")
        throttle.attemptSucceeded(email: "ada@example.com", client: "10.0.0.1")
        #expect(throttle.check(email: "ada@example.com", client: nil) == .allowed)
        // Many people logging in from one address never lock it.
        for index in 0..<40 {
            #expect(throttle.beginAttempt(email: "user\(index)@example.com", client: "10.0.0.9") == .allowed)
            throttle.attemptSucceeded(email: "user\(index)@example.com", client: "10.0.0.9")
        }
        #expect(throttle.check(email: "new@example.com", client: "10.0.0.9") == .allowed)
    }

    @Test("A cancelled attempt takes back only its own failure, clearing nothing else")
    func cancelledAttempt() {
        let (throttle, _) = throttle()
        for _ in 0..<4 { _ = throttle.beginAttempt(email: "ada@example.com", client: nil) }
        for _ in 0..<10 {
            #expect(throttle.beginAttempt(email: "ada@example.com", client: nil) == .allowed)
            throttle.cancelAttempt(email: "ada@example.com", client: nil)
        }
        #expect(throttle.beginAttempt(email: "ada@example.com", client: nil) == .allowed)
        #expect(throttle.check(email: "ada@example.com", client: nil) == .locked(retryAfter: .seconds(30)))
    }

    @Test("Taking back an attempt past the limit restores the lock that had ended, not a new one")
    func takeBackPastTheLimit() {
        let (throttle, clock) = throttle()
        for index in 0..<20 { throttle.recordFailure(email: "user\(index)@example.com", client: "10.0.0.1") }
        clock.advance(seconds: 30)
        #expect(throttle.beginAttempt(email: "ada@example.com", client: "10.0.0.1") == .allowed)
        #expect(throttle.check(email: "bob@example.com", client: "10.0.0.1") == .locked(retryAfter: .seconds(60)))
        throttle.attemptSucceeded(email: "ada@example.com", client: "10.0.0.1")
        #expect(throttle.check(email: "bob@example.com", client: "10.0.0.1") == .allowed)
    }

    @Test("The lock lengths follow the limit: none, the first, doubled, capped")
    func limitArithmetic() {
        let limit = LoginThrottle.Limit(freeFailures: 3, firstLock: .seconds(10), longestLock: .seconds(50))
        #expect(
            (1...7).map { limit.lock(after: $0) } == [
                nil, nil, .seconds(10), .seconds(20), .seconds(40), .seconds(50), .seconds(50),
            ])
        #expect(limit.lock(after: Int.max) == .seconds(50))
    }
}

@Suite("Accounts: registration policy")
struct AccountsRegistrationTests {
    @Test("Open registration takes anyone")
    func open() async throws {
        let store = usersStore(try emptyDatabase())
        #expect(try await store.acceptsRegistration(under: .open))
        try await store.register(validForm(email: "ada@example.com"), policy: .open)
        try await store.register(validForm(email: "bob@example.com"), policy: .open)
        #expect(try await store.count() == 2)
        #expect(try await store.acceptsRegistration(under: .open))
    }

    @Test("Closed registration refuses before validating or hashing, and writes nothing")
    func closed() async throws {
        let hasher = RecordingHasher()
        let store = usersStore(try emptyDatabase(), hasher: hasher)
        #expect(try await !store.acceptsRegistration(under: .closed))
        await #expect(throws: RegistrationClosedError(policy: .closed)) {
            try await store.register(validForm(), policy: .closed)
        }
        var bad = validForm()
        bad.email = "not an email"
        await #expect(throws: RegistrationClosedError(policy: .closed)) {
            try await store.register(bad, policy: .closed)
        }
        #expect(hasher.calls.isEmpty)
        #expect(try await store.count() == 0)
        // The command line's registration is not the web's: it still works.
        try await store.register(validForm())
        #expect(try await store.count() == 1)
    }

    @Test("First-user registration takes the first account, then no other")
    func firstUser() async throws {
        let hasher = RecordingHasher()
        let store = usersStore(try emptyDatabase(), hasher: hasher)
        #expect(try await store.acceptsRegistration(under: .firstUser))
        try await store.register(validForm(email: "ada@example.com"), policy: .firstUser)
        #expect(try await !store.acceptsRegistration(under: .firstUser))
        hasher.reset()
        await #expect(throws: RegistrationClosedError(policy: .firstUser)) {
            try await store.register(validForm(email: "bob@example.com"), policy: .firstUser)
        }
        #expect(hasher.calls.isEmpty)
        #expect(try await store.count() == 1)
    }

    @Test("Of several first registrations at once, exactly one succeeds")
    func firstUserRace() async throws {
        let store = usersStore(try emptyDatabase())
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<6 {
                group.addTask {
                    (try? await store.register(validForm(email: "user\(index)@example.com"), policy: .firstUser)) != nil
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 1)
        #expect(try await store.count() == 1)
    }

    @Test("An invalid form under an open policy gets the usual field errors")
    func validationStillApplies() async throws {
        let store = usersStore(try emptyDatabase())
        var bad = validForm()
        bad.email = "not an email"
        let error = try await #require(throws: ValidationError.self) {
            try await store.register(bad, policy: .firstUser)
        }
        #expect(error.message(for: "email") != nil)
    }

    @Test(
        "Policies are named as on the command line, ignoring case; other text is refused",
        arguments: [
            ("open", RegistrationPolicy.open), ("CLOSED", .closed), ("first-user", .firstUser),
            ("First-User", .firstUser), ("first", nil), ("", nil), ("opened", nil), (" open", nil),
        ])
    func parsing(_ text: String, _ expected: RegistrationPolicy?) {
        #expect(RegistrationPolicy(argument: text) == expected)
    }

    @Test("The default lets in the first user only")
    func defaultPolicy() {
        #expect(RegistrationPolicy.default == .firstUser)
        #expect(RegistrationClosedError(policy: .closed).description.contains("registration is closed"))
    }
}
