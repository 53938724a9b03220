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

/// Compares two secrets in time that depends only on their lengths.
func constantTimeEquals(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    guard x.count == y.count else { return false }
    var difference: UInt8 = 0
    for index in x.indices { difference |= x[index] ^ y[index] }
    return difference == 0
}
