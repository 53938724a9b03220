import Foundation
import HTTPServer
import RecordsApp

/// The program a request of the API comes from: the token it sent and
/// the token's user.
struct APIClient: Sendable {
    let token: APIToken
    let user: User

    var mayWrite: Bool { token.scope == .readWrite }
}

extension Request {
    private enum APIClientKey: RequestContextKey {
        static let defaultValue: APIClient? = nil
    }

    /// The program that sent this API request, when its bearer token is
    /// valid (set by ``BearerAuthentication``).
    var apiClient: APIClient? {
        get { context[APIClientKey.self] }
        set { context[APIClientKey.self] = newValue }
    }

    /// The signed-in program, or a 401.
    func requireClient() throws -> APIClient {
        guard let apiClient else { throw Problem.unauthorized }
        return apiClient
    }

    /// The signed-in program allowed to write, or a 401 or 403.
    func requireWriter() throws -> APIClient {
        let client = try requireClient()
        guard client.mayWrite else { throw Problem.readOnlyToken }
        return client
    }
}

/// The headers every API answer carries: no caching unless the answer
/// says otherwise, `nosniff`, and a policy that lets a browser run
/// nothing from it.
struct APIHeaders: Middleware {
    func respond(to request: Request, next: Responder) async throws -> Response {
        var response = try await next(request)
        func add(_ name: String, _ value: String) {
            if response.header(name) == nil { response.headers.append((name, value)) }
        }
        add("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
        add("X-Content-Type-Options", "nosniff")
        add("Cache-Control", "no-store")
        add("Referrer-Policy", "no-referrer")
        return response
    }
}

/// Every error of the API as a problem document: the API's own
/// ``Problem``s, the server's refusals (404, 405, 413, a malformed body),
/// the stores' validation, missing records and version mismatches, and
/// a 500 that shows nothing internal (the error is logged).
struct APIProblems: Middleware {
    let log: @Sendable (String) -> Void

    func respond(to request: Request, next: Responder) async throws -> Response {
        do {
            return try await next(request)
        } catch let problem as Problem {
            return problem.response
        } catch let error as HTTPError {
            let code =
                switch error.status {
                case 404: "not-found"
                case 405: "method-not-allowed"
                case 413: "too-large"
                case 429: "too-many-requests"
                case 503: "unavailable"
                default: "bad-request"
                }
            var problem = Problem(status: error.status, code: code, detail: Problem.sentence(error.message))
            problem.headers = error.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            return problem.response
        } catch let error as RecordNotFoundError {
            return Problem.notFound("There is no \(error.kind) with ID \(error.id).").response
        } catch let error as ClientDisconnected {
            throw error
        } catch {
            log("error: \(request.logDescription): \(error)")
            return Problem(
                status: 500, code: "internal", detail: "Something went wrong on our side. Try again in a moment."
            ).response
        }
    }
}

/// Who is asking: the bearer token of the `Authorization` header, checked
/// against the accounts' tokens through an ``APITokenCache`` (a token
/// checked in the last few seconds is not read again). Cookies are never read on the API, so a
/// page's session cannot act here (and the API needs no CSRF token).
///
/// A request without the header goes on anonymous: the routes that need a
/// token answer 401. A header with a token that is not valid (malformed,
/// unknown, expired, revoked) is answered 401 at once, the same way for
/// each, and counts against the client's address: after
/// ``TokenThrottle`` failures the address is refused with 429 for a while,
/// even with a valid token, so tokens cannot be guessed.
struct BearerAuthentication: Middleware {
    let tokens: APITokenCache
    let throttle: LoginThrottle
    let log: @Sendable (String) -> Void

    /// The throttle's policy: only the client's address counts.
    static let policy = LoginThrottle.Policy(
        account: .init(freeFailures: .max, firstLock: .seconds(1), longestLock: .seconds(1)),
        client: .init(freeFailures: 20, firstLock: .seconds(60), longestLock: .seconds(15 * 60)),
        forgetAfter: .seconds(3600), maximumEntries: 100_000)

    /// The throttle counts failures against the address only; the
    /// account key is the same for every request.
    private static let accountKey = "api-token"

    func respond(to request: Request, next: Responder) async throws -> Response {
        guard let header = request.headers["authorization"] else { return try await next(request) }
        if case .locked(let retryAfter) = throttle.check(email: Self.accountKey, client: request.clientAddress) {
            throw Self.tooManyFailures(retryAfter)
        }
        guard let secret = Self.bearerSecret(header) else {
            throttle.recordFailure(email: Self.accountKey, client: request.clientAddress)
            throw Problem.unauthorized
        }
        let found: (token: APIToken, user: User)?
        do {
            found = try await tokens.authenticate(secret: secret)
        } catch {
            // Never the token itself in the log.
            log("error: \(request.logDescription): checking an API token: \(error)")
            throw Problem(
                status: 503, code: "unavailable", detail: "Tokens cannot be checked right now. Try again in a moment.")
        }
        guard let found else {
            throttle.recordFailure(email: Self.accountKey, client: request.clientAddress)
            throw Problem.unauthorized
        }
        var request = request
        request.apiClient = APIClient(token: found.token, user: found.user)
        return try await next(request)
    }

    /// The token of an `Authorization: Bearer <token>` header, or nil.
    static func bearerSecret(_ header: String) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let secret: String
        if let first = parts[1].utf8.first, let last = parts[1].utf8.last, (0x21..<0x7F).contains(first),
            (0x21..<0x7F).contains(last)
        {
            // Nothing to trim (the usual case, checked without Foundation).
            secret = String(parts[1])
        } else {
            secret = parts[1].trimmingCharacters(in: .whitespaces)
        }
        return secret.isEmpty || secret.utf8.count > 200 ? nil : secret
    }

    static func tooManyFailures(_ retryAfter: Duration) -> Problem {
        let seconds = max(1, Int(retryAfter.components.seconds))
        return Problem(
            status: 429, code: "too-many-failures",
            detail: "Too many requests from this address sent a token that is not valid. Try again in \(seconds) s.",
            headers: [("Retry-After", String(seconds))])
    }
}
