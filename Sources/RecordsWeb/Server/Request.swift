import Foundation

/// One HTTP request, as the server hands it to a route: the method, path,
/// query, headers and cookies as libmicrohttpd parsed them, the form fields
/// of a POST, the uploaded file of an upload route, and who is signed in.
public struct Request: Sendable {
    /// The method, upper case (`GET`, `HEAD`, `POST`).
    public var method: String
    /// The path, without the query (percent-decoded by the server).
    public var path: String
    /// The query's parameters (first value of each name).
    public var query: [String: String]
    /// The headers, by lower-case name.
    public var headers: [String: String]
    /// The cookies, by name.
    public var cookies: [String: String]
    /// The values of the route pattern's `:name` segments.
    public var parameters: [String: String] = [:]
    /// A POST's fields (empty otherwise).
    public var form: Form = Form()
    /// An upload route's file, spooled by the route's sink; nil when the
    /// form had no file or the file was empty.
    public var upload: (any UploadSink)?
    /// Why the upload was refused while it was received (too large, wrong
    /// type), if it was; the rest of the body was discarded.
    public var uploadError: (any Error)?
    /// The signed-in session, if the request carried a valid session
    /// cookie.
    public var session: WebSession?
    /// The token a form on the page must send back in its `csrf` field:
    /// the session's, or for a visitor who is not signed in, the one in the
    /// `records_csrf` cookie (which the server sets when missing).
    public var csrfToken: String
    /// The client's IP address.
    public var clientAddress: String
    /// Whether the request came over TLS.
    public var isSecure: Bool
    /// The time the server received the request.
    public var receivedAt: Date

    /// Creates a request (the server does this; tests of a single handler
    /// may too).
    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
        cookies: [String: String] = [:], csrfToken: String = "", clientAddress: String = "127.0.0.1",
        isSecure: Bool = false, receivedAt: Date = Date()
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.cookies = cookies
        self.csrfToken = csrfToken
        self.clientAddress = clientAddress
        self.isSecure = isSecure
        self.receivedAt = receivedAt
    }

    /// The path with its query, as the browser asked for it (for a `next`
    /// link back here after logging in).
    public var pathWithQuery: String {
        guard !query.isEmpty else { return path }
        return HTML.path(
            path.split(separator: "/", omittingEmptySubsequences: true).map(String.init),
            query: query.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// A route parameter as a record ID.
    ///
    /// - Throws: ``HTTPError/notFound`` when it is missing or not a
    ///   positive integer: `/people/abc` is a page that does not exist.
    public func id(_ name: String = "id") throws -> Int64 {
        guard let text = parameters[name], let id = Int64(text), id > 0, String(id) == text else {
            throw HTTPError.notFound
        }
        return id
    }

    /// Whether the request's method is `HEAD` (the server sends no body).
    public var isHead: Bool { method == "HEAD" }

    /// The method and path for a log line. The path is percent-decoded, so
    /// it may hold any character: control characters (a line break would
    /// start a forged log line), spaces (which separate the line's fields),
    /// `%` itself and bidirectional overrides are percent-encoded again.
    public var logDescription: String { "\(Self.forLog(method)) \(Self.forLog(path))" }

    static func forLog(_ text: String) -> String {
        func plain(_ scalar: Unicode.Scalar) -> Bool {
            scalar.properties.generalCategory != .control && scalar != " " && scalar != "%"
                && !(0x202A...0x202E).contains(scalar.value) && !(0x2066...0x2069).contains(scalar.value)
        }
        guard !text.unicodeScalars.allSatisfy(plain) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if plain(scalar) {
                result.unicodeScalars.append(scalar)
            } else {
                for byte in String(scalar).utf8 {
                    result += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
                }
            }
        }
        return result
    }
}

/// The signed-in user of a request, as the accounts' authenticator found
/// it.
public struct WebSession: Sendable, Equatable {
    /// The user's ID in the Users app.
    public var userID: Int64
    /// The user's name, for the page header.
    public var displayName: String
    /// The user's email address.
    public var email: String
    /// The token forms must carry on this session (derived from the
    /// session's secret; never the session token itself).
    public var csrfToken: String
    /// The session's ID (not its token), for revoking it.
    public var sessionID: Int64

    /// Creates a session value.
    public init(userID: Int64, displayName: String, email: String, csrfToken: String, sessionID: Int64) {
        self.userID = userID
        self.displayName = displayName
        self.email = email
        self.csrfToken = csrfToken
        self.sessionID = sessionID
    }
}

/// Finds the session a request's session cookie names. The accounts code
/// provides it; the server calls it for every request that carries the
/// cookie.
public protocol SessionAuthenticator: Sendable {
    /// The session for `token`, or nil when the token is unknown, revoked
    /// or expired.
    func session(forToken token: String, request: Request) async -> WebSession?

    /// Which of `sessionIDs` are still valid now (not ended, not
    /// expired), without counting as a use of them; nil when that cannot
    /// be told (the database failed). A live page's event stream ends
    /// when the session it was opened with is not among them.
    func openSessions(among sessionIDs: Set<Int64>) async -> Set<Int64>?

    /// Calls `onChange` after each change of the sessions (some may have
    /// ended) until the function returned is called, which stops it; nil
    /// when there is nothing to observe. The live pages' event streams
    /// then check their sessions at once, not only at the next regular
    /// check.
    func observeSessionChanges(_ onChange: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)?
}

extension SessionAuthenticator {
    /// Nothing to observe: streams check their sessions at the regular
    /// checks only.
    public func observeSessionChanges(_ onChange: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)? {
        nil
    }
}
