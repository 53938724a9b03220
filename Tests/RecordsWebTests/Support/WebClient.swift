import Foundation
import RecordsWeb
import TestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One answer of the server, as a test reads it.
struct WebResponse: Sendable {
    let status: Int
    /// Headers by lower-case name (repeated headers joined by ", ").
    let headers: [String: String]
    let data: Data
    /// The `Set-Cookie` headers, one per cookie.
    let setCookies: [String]

    var body: String { String(decoding: data, as: UTF8.self) }
    var location: String? { headers["location"] }
    func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The value of the page's first `name="csrf"` field.
    var csrfToken: String? { body.firstMatch(of: /name="csrf" value="([^"]*)"/).map { String($0.1) } }
}

/// An HTTP client for tests: keeps its own cookies (as a browser would:
/// set, replaced, deleted by `Max-Age=0`), never follows redirects, and
/// fills a form's CSRF field from the last page it got.
final class WebClient: @unchecked Sendable {
    let baseURL: URL
    private let session: URLSession
    private let lock = NSLock()
    private var jar: [String: String] = [:]
    private var lastCSRF: String?

    init(baseURL: URL) {
        self.baseURL = baseURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpShouldSetCookies = false
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.timeoutIntervalForRequest = TimeInterval(livenessTimeout.components.seconds)
        session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }

    /// The cookies the client holds.
    var cookies: [String: String] { lock.withLock { jar } }

    /// Sets or removes a cookie by hand (a stolen or forged one).
    func setCookie(_ name: String, _ value: String?) { lock.withLock { jar[name] = value } }

    /// The CSRF token of the last page that had a form.
    var csrf: String? { lock.withLock { lastCSRF } }

    func get(_ path: String, headers: [String: String] = [:]) async throws -> WebResponse {
        try await send(method: "GET", path: path, headers: headers, body: nil)
    }

    func head(_ path: String, headers: [String: String] = [:]) async throws -> WebResponse {
        try await send(method: "HEAD", path: path, headers: headers, body: nil)
    }

    /// POSTs a URL-encoded form, with `csrf` added from the last page
    /// unless the fields set it.
    func post(_ path: String, _ fields: [(String, String)], addCSRF: Bool = true) async throws -> WebResponse {
        var fields = fields
        if addCSRF, !fields.contains(where: { $0.0 == "csrf" }), let csrf { fields.insert(("csrf", csrf), at: 0) }
        let body = fields.map { Self.formEncode($0.0) + "=" + Self.formEncode($0.1) }.joined(separator: "&")
        return try await send(
            method: "POST", path: path, headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Data(body.utf8))
    }

    /// POSTs an edit form as a browser would: with the `version` the form
    /// (the page at `path`, unless `form` names another) carries when it
    /// is opened just before, which every edit form needs to save.
    func postEdit(_ path: String, _ fields: [(String, String)], form: String? = nil) async throws -> WebResponse {
        let page = try await get(form ?? path)
        let version = page.body.firstMatch(of: /name="version" value="([0-9a-f]+)"/).map { String($0.1) }
        return try await post(path, fields + (version.map { [("version", $0)] } ?? []))
    }

    /// POSTs a raw body.
    func post(_ path: String, body: Data, contentType: String) async throws -> WebResponse {
        try await send(method: "POST", path: path, headers: ["Content-Type": contentType], body: body)
    }

    /// POSTs a multipart form: the fields first (the CSRF one added), then
    /// the file.
    func postMultipart(
        _ path: String, fields: [(String, String)], file: (field: String, name: String, type: String, data: Data)?,
        addCSRF: Bool = true
    ) async throws -> WebResponse {
        var fields = fields
        if addCSRF, !fields.contains(where: { $0.0 == "csrf" }), let csrf { fields.insert(("csrf", csrf), at: 0) }
        let boundary = "----records-test-\(UUID().uuidString)"
        var body = Data()
        for (name, value) in fields {
            body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n".utf8))
            body.append(Data(value.utf8))
            body.append(Data("\r\n".utf8))
        }
        if let file {
            body.append(
                Data(
                    ("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(file.field)\"; filename=\"\(file.name)\"\r\n"
                        + "Content-Type: \(file.type)\r\n\r\n").utf8))
            body.append(file.data)
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        return try await send(
            method: "POST", path: path, headers: ["Content-Type": "multipart/form-data; boundary=\(boundary)"],
            body: body)
    }

    func send(method: String, path: String, headers: [String: String], body: Data?) async throws -> WebResponse {
        var request = URLRequest(url: URL(string: path, relativeTo: baseURL)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let cookieHeader = lock.withLock { jar.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ") }
        if !cookieHeader.isEmpty { request.setValue(cookieHeader, forHTTPHeaderField: "Cookie") }
        request.httpBody = body
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var collected: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            guard let key = key as? String, let value = value as? String else { continue }
            collected[key.lowercased()] = value
        }
        let setCookies = Self.splitSetCookie(collected["set-cookie"])
        let answer = WebResponse(status: http.statusCode, headers: collected, data: data, setCookies: setCookies)
        lock.withLock {
            for cookie in setCookies {
                let pair = cookie.split(separator: ";", maxSplits: 1)[0]
                guard let equals = pair.firstIndex(of: "=") else { continue }
                let name = String(pair[..<equals]).trimmingCharacters(in: .whitespaces)
                let value = String(pair[pair.index(after: equals)...])
                if cookie.contains("Max-Age=0") || value.isEmpty { jar[name] = nil } else { jar[name] = value }
            }
            if let token = answer.csrfToken { lastCSRF = token }
        }
        return answer
    }

    /// Splits a joined `Set-Cookie` value back into cookies (Foundation
    /// joins repeated headers with commas; these cookies hold none).
    static func splitSetCookie(_ value: String?) -> [String] {
        guard let value else { return [] }
        return value.split(separator: /,\s*(?=[A-Za-z0-9_\-]+=)/).map(String.init)
    }

    static func formEncode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        return (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
    }
}

private final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

/// Sessions for tests of the server itself: fixed tokens.
struct FixedSessions: SessionAuthenticator {
    var sessions: [String: WebSession]

    func session(forToken token: String, request: Request) async -> WebSession? { sessions[token] }

    func openSessions(among sessionIDs: Set<Int64>) async -> Set<Int64>? {
        sessionIDs.intersection(sessions.values.map(\.sessionID))
    }

    /// One user, Ada, with the token `ada-token`.
    static let ada = FixedSessions(sessions: [
        "ada-token": WebSession(
            userID: 1, displayName: "Ada Lovelace", email: "ada@example.com", csrfToken: "ada-csrf-token", sessionID: 1)
    ])
}
