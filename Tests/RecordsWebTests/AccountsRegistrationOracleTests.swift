import Foundation
import RecordsApp
import RecordsWeb
import Testing

/// Registration under `--registration open` tells no one which emails
/// have accounts any faster than logging in does.
@Suite("Accounts: registration is no email oracle")
struct AccountsRegistrationOracleTests {
    @Test func registeringATakenEmailIsThrottledPerEmail() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        try await server.client().register()
        let prober = server.client()
        for _ in 0..<5 {
            let taken = try await prober.register()
            #expect(taken.status == 422)
            #expect(taken.body.contains("Email is already registered."))
        }
        let locked = try await prober.register()
        #expect(locked.status == 429)
        #expect(locked.header("retry-after") == "30")
        #expect(!locked.body.contains("already registered"))
        // The address is not locked yet: another email registers.
        #expect(try await prober.register(registrationFields(email: "bob@example.com")).status == 303)
    }

    @Test func registeringIsThrottledPerClientAddress() async throws {
        let policy = LoginThrottle.Policy(
            account: .init(freeFailures: 5, firstLock: .seconds(30), longestLock: .seconds(900)),
            client: .init(freeFailures: 3, firstLock: .seconds(30), longestLock: .seconds(900)),
            forgetAfter: .seconds(3600), maximumEntries: 100)
        let server = try accountsServer(configure: { $0.loginThrottle = policy })
        defer { server.stop() }
        let emails = ["ada@example.com", "bob@example.com", "cy@example.com"]
        // Registrations that succeed are not counted.
        for email in emails {
            #expect(try await server.client().register(registrationFields(email: email)).status == 303)
        }
        let prober = server.client()
        for email in emails { #expect(try await prober.register(registrationFields(email: email)).status == 422) }
        // Locked from this address, whatever the email, free or not.
        let locked = try await prober.register(registrationFields(email: "dee@example.com"))
        #expect(locked.status == 429)
        #expect(try await server.app.context.users.count() == 3)
    }

    @Test func aTakenEmailCostsTheSamePasswordHashingAsAFreeOne() async throws {
        let hasher = CountingWebHasher()
        let server = try accountsServer(configure: { $0.passwordHasher = hasher })
        defer { server.stop() }
        try await server.client().register()
        hasher.reset()
        let taken = try await server.client().register()
        #expect(taken.status == 422)
        let forTaken = hasher.hashCount
        hasher.reset()
        #expect(try await server.client().register(registrationFields(email: "bob@example.com")).status == 303)
        #expect(forTaken == hasher.hashCount)
        #expect(forTaken == 1)
    }

    @Test func aFormWithMistakesIsNotCounted() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        for _ in 0..<8 {
            #expect(try await client.register(registrationFields(overrides: ["pincode": "x"])).status == 422)
        }
        #expect(try await client.register().status == 303)
    }
}
