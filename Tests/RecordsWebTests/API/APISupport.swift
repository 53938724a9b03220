import Foundation
import PasswordHashing
import RecordsApp
import RecordsWeb
import TestSupport

@testable import RecordsWeb

/// The web app over a fresh in-memory database, with a registered user and
/// a token of each scope, for the JSON API's tests, answered in process.
struct APISite: Sendable {
    let app: WebApp
    let database: AppDatabase
    let user: User
    /// A read-write token's secret.
    let writer: String
    /// A read-only token's secret.
    let reader: String
    let tokens: APITokenStore
    let clock: TestClock
    private let lines = LogLines()

    /// What the app logged.
    var log: [String] { lines.all }

    /// - Parameter databaseURL: The database file (made empty when it is
    ///   not there); nil for a database in memory.
    init(databaseURL: URL? = nil, configure: (inout WebConfiguration) -> Void = { _ in }) async throws {
        let clock = TestClock()
        var configuration = WebConfiguration()
        configuration.passwordHasher = cheapHasher
        configuration.now = clock.closure
        configuration.liveSessionCheck = .milliseconds(50)
        let lines = self.lines
        configuration.log = { lines.append($0) }
        configure(&configuration)
        database = try databaseURL.map { try AppDatabase(url: $0, start: .empty) } ?? AppDatabase.inMemory()
        app = WebApp(database: database, configuration: configuration)
        let users = UsersStore(database: database, hasher: cheapHasher)
        user = try await users.register(
            RegistrationForm(
                firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", password: "correct horse",
                passwordConfirmation: "correct horse", mobile: "9876543210", state: "Surrey", city: "London",
                pincode: "110001", address: "12 St James's Sq", gender: "female", dateOfBirth: "1990-12-10",
                imageName: "ada.png"))
        tokens = APITokenStore(database: database, now: clock.closure)
        writer = try await tokens.create(userID: user.id, name: "writer", scope: .readWrite, expiresAt: nil).secret
        reader = try await tokens.create(userID: user.id, name: "reader", scope: .read, expiresAt: nil).secret
        self.clock = clock
    }

    /// The answer to a request: `token` as its bearer token (the writer's
    /// unless told otherwise; nil sends none), `json` as its body.
    func send(
        _ method: String, _ path: String, json: String? = nil, token: String?? = .some(nil),
        headers: [String: String] = [:], clientAddress: String = "127.0.0.1"
    ) async -> APIAnswer {
        let parts = path.split(separator: "?", maxSplits: 1)
        var query: [String: String] = [:]
        for pair in parts.dropFirst().first?.split(separator: "&") ?? [] {
            let item = pair.split(separator: "=", maxSplits: 1).map(String.init)
            query[item[0].removingPercentEncoding ?? item[0]] =
                item.count > 1 ? (item[1].removingPercentEncoding ?? item[1]) : ""
        }
        var allHeaders = headers
        let bearer: String? =
            switch token {
            case .none: nil
            case .some(.none): writer
            case .some(.some(let secret)): secret
            }
        if let bearer { allHeaders["authorization"] = "Bearer \(bearer)" }
        if json != nil { allHeaders["content-type"] = "application/json" }
        var request = Request(
            method: method, path: String(parts[0]), query: query, headers: allHeaders, clientAddress: clientAddress)
        if let json { request.body = Array(json.utf8) }
        return APIAnswer(await app.respond(to: request))
    }

    private final class LogLines: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [String] = []
        func append(_ line: String) { lock.withLock { stored.append(line) } }
        var all: [String] { lock.withLock { stored } }
    }
}

/// An API answer, its body parsed as JSON when it is.
struct APIAnswer: Sendable {
    let response: Response

    init(_ response: Response) { self.response = response }

    var status: Int { response.status }
    func header(_ name: String) -> String? { response.header(name) }

    var text: String {
        guard case .bytes(let bytes) = response.body else { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The body as a JSON object (empty when it is not one).
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// A problem document's `errors` member.
    var errors: [String: String] { json["errors"] as? [String: String] ?? [:] }

    var isProblem: Bool { header("Content-Type") == "application/problem+json" }
}
