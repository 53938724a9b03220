import Foundation
import RecordsApp
import Testing

@testable import RecordsWeb

/// `POST /api/v1/users`: registration from a program, by the server's
/// policy, with the registration page's checks, messages and throttle.
@Suite struct APIRegistrationTests {
    /// A registration body: the fields of ``registrationFields`` as JSON.
    static func body(email: String = "grace@example.com", overrides: [String: String] = [:]) -> String {
        let members = registrationFields(email: email, first: "Grace", overrides: overrides).map { name, value in
            "\"\(name)\":\"\(value)\""
        }
        return "{" + members.joined(separator: ",") + "}"
    }

    static func openSite(configure: @escaping (inout WebConfiguration) -> Void = { _ in }) async throws -> APISite {
        try await APISite { configuration in
            configuration.registration = .open
            configure(&configuration)
        }
    }

    static func register(
        _ site: APISite, _ json: String = body(), headers: [String: String] = [:], clientAddress: String = "127.0.0.1"
    ) async -> APIAnswer {
        await site.send(
            "POST", "/api/v1/users", json: json, token: .none, headers: headers, clientAddress: clientAddress)
    }

    static func user(_ site: APISite, email: String) async throws -> User? {
        try await UsersStore(database: site.database).user(email: email)
    }

    @Test func openRegistrationAnswers201WithTheProfileWithoutAToken() async throws {
        let site = try await Self.openSite()
        let answer = await Self.register(site)
        #expect(answer.status == 201)
        #expect(answer.json["email"] as? String == "grace@example.com")
        #expect(answer.json["firstName"] as? String == "Grace")
        let stored = try #require(try await Self.user(site, email: "grace@example.com"))
        #expect(answer.json["id"] as? Int == Int(stored.id))
        #expect(answer.header("ETag") == "\"\(stored.version)\"")
    }

    @Test func theCreatedProfileIsNamedByLocation() async throws {
        let site = try await Self.openSite()
        let answer = await Self.register(site)
        #expect(answer.status == 201)
        #expect(answer.header("Location") == "/api/v1/me")
    }

    @Test func theAnswerHoldsNoPasswordNorItsHash() async throws {
        let site = try await Self.openSite()
        let answer = await Self.register(site)
        #expect(answer.status == 201)
        #expect(
            Set(answer.json.keys)
                == [
                    "id", "firstName", "lastName", "email", "mobile", "state", "city", "pincode", "address", "gender",
                    "dateOfBirth", "imageName", "version",
                ])
        #expect(!answer.text.contains("correct horse"))
        #expect(!answer.text.lowercased().contains("hash"))
    }

    @Test func closedRegistrationAnswers403AndCreatesNothing() async throws {
        let site = try await APISite { $0.registration = .closed }
        let answer = await Self.register(site)
        #expect(answer.status == 403)
        #expect(answer.isProblem)
        #expect(answer.json["code"] as? String == "registration-closed")
        #expect(try await Self.user(site, email: "grace@example.com") == nil)
    }

    @Test func firstUserRegistrationIsClosedOnceAnAccountExists() async throws {
        // The site has Ada's account already.
        let site = try await APISite { $0.registration = .firstUser }
        let answer = await Self.register(site)
        #expect(answer.status == 403)
        #expect(try await Self.user(site, email: "grace@example.com") == nil)
    }

    @Test func closedRegistrationChecksNothingItIsSent() async throws {
        let site = try await APISite { $0.registration = .closed }
        let answer = await Self.register(site, "{\"firstName\": 12}")
        #expect(answer.status == 403)
        #expect(answer.errors.isEmpty)
    }

    @Test func theNamesEmailAndPasswordAreEnoughAndTheRestIsOptional() async throws {
        let site = try await Self.openSite()
        let minimal = """
            {"firstName":"Grace","lastName":"Hopper","email":"grace@example.com",
             "password":"correct horse","passwordConfirmation":"correct horse"}
            """
        let answer = await Self.register(site, minimal)
        #expect(answer.status == 201)
        let stored = try #require(try await Self.user(site, email: "grace@example.com"))
        #expect(stored.mobile == "" && stored.pincode == "" && stored.dateOfBirth == "")
        let missing = await Self.register(
            site, "{\"firstName\":\"Alan\",\"password\":\"correct horse\",\"passwordConfirmation\":\"correct horse\"}")
        #expect(missing.status == 422)
        #expect(missing.errors == ["lastName": "Last name is required.", "email": "Email is required."])
    }

    @Test func invalidFieldsAreEachNamedWithThePagesMessages() async throws {
        let site = try await Self.openSite()
        let answer = await Self.register(
            site,
            Self.body(
                email: "not an address",
                overrides: ["firstName": " ", "passwordConfirmation": "another horse", "pincode": "12"]))
        #expect(answer.status == 422)
        #expect(answer.json["code"] as? String == "validation")
        #expect(Set(answer.errors.keys) == ["firstName", "email", "passwordConfirmation", "pincode"])
        #expect(answer.errors["firstName"] == "First name is required.")
        #expect(answer.errors["pincode"] == "Postal code must be 3 to 10 digits.")
        #expect(answer.errors["passwordConfirmation"] == "Password again does not match the password.")
        #expect(try await Self.user(site, email: "not an address") == nil)
    }

    @Test func missingMembersAreNamed() async throws {
        let site = try await Self.openSite()
        let answer = await Self.register(site, "{\"firstName\":\"Grace\"}")
        #expect(answer.status == 422)
        #expect(answer.errors["password"] == "Password is required.")
        #expect(answer.errors["email"] == "Email is required.")
        #expect(answer.errors["firstName"] == nil)
    }

    @Test func anUnknownMemberIsRefusedAndNamed() async throws {
        let site = try await Self.openSite()
        let json = Self.body().dropLast() + ",\"isAdmin\":\"yes\"}"
        let answer = await Self.register(site, String(json))
        #expect(answer.status == 422)
        #expect(answer.errors.keys.contains("isAdmin"))
        #expect(try await Self.user(site, email: "grace@example.com") == nil)
    }

    @Test func malformedJSONIsAProblemAndCreatesNothing() async throws {
        let site = try await Self.openSite()
        let answer = await Self.register(site, "{\"email\": ")
        #expect(answer.status == 400)
        #expect(answer.isProblem)
    }

    @Test func aTakenEmailIsRefusedAsThePageRefusesIt() async throws {
        let site = try await Self.openSite()
        let answer = await Self.register(site, Self.body(email: "ada@example.com"))
        #expect(answer.status == 422)
        #expect(answer.errors == ["email": "Email is already registered."])
    }

    @Test func aTakenEmailCostsAPasswordHashAsAFreeOneDoes() async throws {
        let hasher = CountingWebHasher()
        let site = try await Self.openSite { $0.passwordHasher = hasher }
        _ = await Self.register(site, Self.body(email: "ada@example.com"))
        #expect(hasher.hashCount == 1)
        _ = await Self.register(site, Self.body(email: "grace@example.com"))
        #expect(hasher.hashCount == 2)
    }

    @Test func aMistakeIsRefusedBeforeAnyPasswordIsHashed() async throws {
        let hasher = CountingWebHasher()
        let site = try await Self.openSite { $0.passwordHasher = hasher }
        _ = await Self.register(site, Self.body(overrides: ["mobile": "abc"]))
        #expect(hasher.hashCount == 0)
    }

    @Test func repeatedAttemptsForOneEmailAreThrottled() async throws {
        let site = try await Self.openSite { configuration in
            configuration.loginThrottle = LoginThrottle.Policy(
                account: .init(freeFailures: 2, firstLock: .seconds(30), longestLock: .seconds(60)),
                client: .init(freeFailures: 100, firstLock: .seconds(30), longestLock: .seconds(60)),
                forgetAfter: .seconds(3600), maximumEntries: 100)
        }
        for address in ["10.0.0.1", "10.0.0.2"] {
            #expect(
                await Self.register(site, Self.body(email: "ada@example.com"), clientAddress: address).status == 422)
        }
        let locked = await Self.register(site, Self.body(email: "ada@example.com"), clientAddress: "10.0.0.3")
        #expect(locked.status == 429)
        #expect(locked.isProblem)
        #expect(Int(locked.header("Retry-After") ?? "") ?? 0 > 0)
    }

    @Test func repeatedAttemptsFromOneAddressAreThrottled() async throws {
        let site = try await Self.openSite { configuration in
            configuration.loginThrottle = LoginThrottle.Policy(
                account: .init(freeFailures: 100, firstLock: .seconds(30), longestLock: .seconds(60)),
                client: .init(freeFailures: 2, firstLock: .seconds(30), longestLock: .seconds(60)),
                forgetAfter: .seconds(3600), maximumEntries: 100)
        }
        for _ in 0..<2 {
            #expect(
                await Self.register(site, Self.body(email: "ada@example.com"), clientAddress: "10.0.0.9").status == 422)
        }
        let locked = await Self.register(site, clientAddress: "10.0.0.9")
        #expect(locked.status == 429)
        #expect(try await Self.user(site, email: "grace@example.com") == nil)
        #expect(await Self.register(site, clientAddress: "10.0.0.10").status == 201)
    }

    @Test func mistakesDoNotCountTowardsTheThrottle() async throws {
        let site = try await Self.openSite { configuration in
            configuration.loginThrottle = LoginThrottle.Policy(
                account: .init(freeFailures: 1, firstLock: .seconds(30), longestLock: .seconds(60)),
                client: .init(freeFailures: 1, firstLock: .seconds(30), longestLock: .seconds(60)),
                forgetAfter: .seconds(3600), maximumEntries: 100)
        }
        for _ in 0..<3 {
            #expect(await Self.register(site, Self.body(overrides: ["pincode": "x"])).status == 422)
        }
        #expect(await Self.register(site).status == 201)
    }

    @Test func theSameIdempotencyKeyAndBodyAnswerTheFirstRegistrationAgain() async throws {
        let site = try await Self.openSite()
        let first = await Self.register(site, headers: ["idempotency-key": "signup-1"])
        let again = await Self.register(site, headers: ["idempotency-key": "signup-1"])
        #expect(first.status == 201)
        #expect(again.status == 201)
        #expect(again.header("Idempotent-Replayed") == "true")
        #expect(again.json["id"] as? Int == first.json["id"] as? Int)
    }

    @Test func theIdempotencyKeyWithOtherMembersIsRefused() async throws {
        let site = try await Self.openSite()
        _ = await Self.register(site, headers: ["idempotency-key": "signup-2"])
        let other = await Self.register(
            site, Self.body(email: "hopper@example.com"), headers: ["idempotency-key": "signup-2"])
        #expect(other.status == 422)
        #expect(other.json["code"] as? String == "idempotency-key-reused")
        #expect(try await Self.user(site, email: "hopper@example.com") == nil)
    }
}
