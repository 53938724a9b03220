import Foundation
import HTTPServer
import RecordsApp

/// The headers every answer carries: a Content-Security-Policy without
/// inline script, `nosniff`, no framing, a Referrer-Policy, and no caching
/// unless the answer says otherwise.
struct SecurityHeaders: Middleware {
    func respond(to request: Request, next: Responder) async throws -> Response {
        var response = try await next(request)
        func add(_ name: String, _ value: String) {
            if response.header(name) == nil { response.headers.append((name, value)) }
        }
        add(
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
                + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
        add("X-Content-Type-Options", "nosniff")
        add("X-Frame-Options", "DENY")
        add("Referrer-Policy", "same-origin")
        add("Cache-Control", "no-store")
        return response
    }
}

/// Who is asking: the session the session cookie names, and the token the
/// page's forms carry (the session's, or a visitor's from the
/// `records_csrf` cookie, which a page sets when it is missing).
struct SessionMiddleware: Middleware {
    let authenticator: (any SessionAuthenticator)?
    let secureCookies: Bool

    func respond(to request: Request, next: Responder) async throws -> Response {
        var request = request
        if let token = request.cookies[WebApp.sessionCookie], !token.isEmpty, let authenticator {
            request.session = await authenticator.session(forToken: token, request: request)
        }
        if let session = request.session {
            request.csrfToken = session.csrfToken
        } else if let token = request.cookies[WebApp.csrfCookie], WebApp.isWellFormedToken(token) {
            request.csrfToken = token
        } else {
            request.csrfToken = WebApp.randomToken()
        }
        var response = try await next(request)
        // A page may hold a form: a visitor not signed in gets the token
        // its forms carry as a cookie too.
        let isPage = response.header("Content-Type")?.hasPrefix("text/html") ?? false
        if isPage, request.session == nil, request.cookies[WebApp.csrfCookie] != request.csrfToken {
            response = response.setting(
                Cookie(name: WebApp.csrfCookie, value: request.csrfToken, secure: request.isSecure || secureCookies))
        }
        return response
    }
}

/// Errors as the site's error pages: an ``HTTPError``'s status and
/// message, a deleted record's 404, and a 500 that shows nothing internal
/// (the error is logged).
struct ErrorPages: Middleware {
    let log: @Sendable (String) -> Void

    func respond(to request: Request, next: Responder) async throws -> Response {
        do {
            return try await next(request)
        } catch let error as HTTPError {
            var response = Layout.errorPage(error, request: request)
            for (name, value) in error.headers.sorted(by: { $0.key < $1.key }) {
                response = response.with(header: name, value)
            }
            return response
        } catch let error as RecordNotFoundError {
            // A live page whose record was deleted shows this text in place.
            return Layout.errorPage(
                HTTPError(status: 404, message: "This \(error.kind) (ID \(error.id)) was deleted, or never existed."),
                request: request)
        } catch let error as ClientDisconnected {
            throw error
        } catch {
            log("error: \(request.logDescription): \(error)")
            return Layout.errorPage(
                HTTPError(status: 500, message: "Something went wrong on our side. Try again in a moment."),
                request: request)
        }
    }
}

/// The one place the CSRF token is checked: a POST is answered only when
/// its form carries the page's token, and an upload's file is received
/// only when the fields before it do. A form the server refused (too
/// large, malformed) is shown again unchecked: it changes nothing, and its
/// token may not have been read.
struct CSRFProtection: Middleware {
    func respond(to request: Request, next: Responder) async throws -> Response {
        guard request.route?.method == "POST" else { return try await next(request) }
        let received = try await request.receivingBody(acceptingFile: { Self.carriesToken($0) })
        if received.formProblem == nil {
            guard !received.uploadWithheld, Self.carriesToken(received) else {
                throw HTTPError(
                    status: 403,
                    message:
                        "This form has expired or did not come from this site. Go back, reload the page and try again.")
            }
        }
        return try await next(received)
    }

    /// Whether the form (so far) carries the request's token (a token is
    /// never empty).
    static func carriesToken(_ request: Request) -> Bool {
        constantTimeEquals(request.form.text("csrf"), request.csrfToken) && !request.csrfToken.isEmpty
    }
}

/// A route for signed-in users only: a visitor is sent to the log-in page,
/// and back here (for a GET) once signed in. The site puts every route
/// whose ``Route/access`` is ``Route/Access/signedIn`` in a group with it.
struct SignInRequired: Middleware {
    func respond(to request: Request, next: Responder) async throws -> Response {
        guard request.session == nil else { return try await next(request) }
        let path = request.method == "GET" ? request.pathWithQuery : "/"
        return .redirect(to: path == "/" ? "/login" : HTML.path(["login"], query: [("next", path)]))
    }
}

/// A write (any request but GET, HEAD and OPTIONS) is acknowledged only
/// when it is safe, on the pages and the API alike:
///
/// - while the database file is the one the server opened: once it was
///   deleted or replaced (``DatabaseFileWatch``), the open connections
///   write to a file nobody can find, so every write answers 503, checked
///   before the handler runs and again after it (a write that went to the
///   vanished file is never answered with a success);
/// - with `records serve --durable` (``WebConfiguration/durability``), only
///   once the replica holds it: a write the handler answered with a
///   success or a redirect waits for the group commit's sync, and answers
///   503 when that fails or times out. The write is then committed on this
///   server, and the answer says so.
///
/// Reads are let through: they are served from the file as it was opened.
struct WriteAcknowledgement: Middleware {
    let context: WebContext
    /// Whether to answer with the API's problem documents, else the site's
    /// error pages.
    let api: Bool

    func respond(to request: Request, next: Responder) async throws -> Response {
        guard request.mayChangeState else { return try await next(request) }
        try refuseIfFileLost()
        let response = try await next(request)
        try refuseIfFileLost()
        guard let durability = context.configuration.durability, (200..<400).contains(response.status) else {
            return response
        }
        do {
            try await durability.waitUntilReplicated()
        } catch {
            context.configuration.log("error: \(request.logDescription): not acknowledged, not replicated: \(error)")
            throw refusal(
                code: "not-replicated",
                message: api
                    ? "The write was saved on this server but is not yet in the replica, so it is not durable yet. "
                        + "Do not repeat it blindly: read it back, or send it again with the same Idempotency-Key."
                    : "Your change was saved on this server but is not yet copied to its replica, so it is not safe "
                        + "yet. Check that it is there before making it again.")
        }
        return response
    }

    private func refuseIfFileLost() throws {
        guard let loss = context.databaseFile?.check() else { return }
        throw refusal(
            code: "database-file-lost",
            message: "Nothing can be saved: the server's database file \(loss.what) while the server ran, so changes "
                + "would be lost. Reading still works; whoever runs the server must put the database back and "
                + "restart it.")
    }

    /// A 503 with `message`, as the API's problem or the site's error page.
    private func refusal(code: String, message: String) -> any Error {
        let retry = ["Retry-After": "5"]
        guard api else { return HTTPError(status: 503, message: message, headers: retry) }
        return Problem(status: 503, code: code, detail: message, headers: retry.map { ($0.key, $0.value) })
    }
}

/// Compares two secrets in time that depends only on their lengths.
func constantTimeEquals(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    guard x.count == y.count else { return false }
    var difference: UInt8 = 0
    for index in x.indices { difference |= x[index] ^ y[index] }
    return difference == 0
}
