import Foundation
import PasswordHashing
import RecordsApp
import RecordsWeb
import TestSupport

/// The fields of a valid registration, in form order.
func registrationFields(
    email: String = "ada@example.com", password: String = "correct horse", first: String = "Ada",
    overrides: [String: String] = [:]
) -> [(String, String)] {
    let fields: [(String, String)] = [
        ("firstName", first), ("lastName", "Lovelace"), ("email", email), ("password", password),
        ("passwordConfirmation", password), ("mobile", "9876543210"), ("state", "Surrey"), ("city", "London"),
        ("pincode", "110001"), ("address", "12 St James's Sq"), ("gender", "female"),
        ("dateOfBirth", "1990-12-10"), ("imageName", "ada.png"),
    ]
    return fields.map { ($0.0, overrides[$0.0] ?? $0.1) }
}

/// A server for the accounts tests: cheap hashing, a clock the test moves,
/// open registration unless told otherwise.
func accountsServer(
    storage: TestServer.Storage = .memory, databaseURL: URL? = nil, clock: TestClock = TestClock(),
    registration: RegistrationPolicy = .open, configure: @escaping (inout WebConfiguration) -> Void = { _ in }
) throws -> TestServer {
    try TestServer(
        storage: storage, databaseURL: databaseURL,
        configure: { configuration in
            configuration.passwordHasher = cheapHasher
            configuration.now = clock.closure
            configuration.registration = registration
            configure(&configuration)
        })
}

extension WebClient {
    /// Registers through the page (its CSRF token first); the answer.
    @discardableResult
    func register(_ fields: [(String, String)] = registrationFields()) async throws -> WebResponse {
        _ = try await get("/register")
        return try await post("/register", fields)
    }

    /// Logs in through the page; the answer.
    @discardableResult
    func logIn(email: String = "ada@example.com", password: String = "correct horse", next: String? = nil)
        async throws -> WebResponse
    {
        _ = try await get(next.map { "/login?next=" + WebClient.formEncode($0) } ?? "/login")
        var fields = [("email", email), ("password", password)]
        if let next { fields.append(("next", next)) }
        return try await post("/login", fields)
    }

    /// The session cookie the client holds.
    var sessionToken: String? { cookies[WebApp.sessionCookie] }
}

/// A hasher that counts its hashes, then makes them with the cheap
/// parameters.
final class CountingWebHasher: PasswordHashingService, @unchecked Sendable {
    private let lock = NSLock()
    private var hashes = 0

    var hashCount: Int { lock.withLock { hashes } }
    func reset() { lock.withLock { hashes = 0 } }

    func hash(_ password: String) throws -> String {
        lock.withLock { hashes += 1 }
        return try cheapHasher.hash(password)
    }

    func hash(passwordBytes: [UInt8]) throws -> String {
        lock.withLock { hashes += 1 }
        return try cheapHasher.hash(passwordBytes: passwordBytes)
    }

    func verify(_ password: String, against storedHash: String) throws -> Bool {
        try cheapHasher.verify(password, against: storedHash)
    }

    func needsRehash(_ storedHash: String) throws -> Bool { try cheapHasher.needsRehash(storedHash) }

    func performDummyVerification(_ password: String) { cheapHasher.performDummyVerification(password) }
}
