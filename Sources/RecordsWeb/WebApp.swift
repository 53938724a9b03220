import Foundation
@_exported import HTTPServer
import PasswordHashing
import RecordsApp

/// How the web app behaves, beyond where it listens.
public struct WebConfiguration: Sendable {
    /// Whether cookies get `Secure` (set when serving HTTPS).
    public var secureCookies = false
    /// The clock, for sessions' expiry (tests move it).
    public var now: @Sendable () -> Date = { Date() }
    /// Where request lines and errors go (never secrets).
    public var log: @Sendable (String) -> Void = { _ in }
    /// The largest coffee picture accepted, in bytes (the Coffee app's
    /// 64 MiB by default; tests lower it).
    public var pictureSizeLimit = CoffeeRules.defaultPictureSizeLimit
    /// How long a live page's event stream stays silent before it sends a
    /// comment line, which finds clients that went away (their connection's
    /// thread is then freed). Keep it below ``ServerOptions/idleTimeout``.
    public var liveHeartbeat: Duration = .seconds(15)
    /// How soon a live page's browser reconnects after losing its event
    /// stream (the server restarted).
    public var liveRetry: Duration = .seconds(2)
    /// How often the sessions of open event streams are checked: a
    /// stream ends within about this long after its session does
    /// (log-out, revocation, a password change, expiry).
    public var liveSessionCheck: Duration = .seconds(1)
    /// Who may register (`records serve --registration`).
    public var registration: RegistrationPolicy = .default
    /// How long sessions last.
    public var sessionPolicy: SessionPolicy = .standard
    /// When failed log-ins lock an account or a client address.
    public var loginThrottle: LoginThrottle.Policy = .standard
    /// Hashes and checks passwords: scrypt at OWASP's minimum cost; tests
    /// pass cheaper parameters.
    public var passwordHasher: any PasswordHashingService = PasswordHasher()

    /// The defaults.
    public init() {}
}

/// What every page's handler may use: the stores and the settings.
public struct WebContext: Sendable {
    /// The database.
    public let database: AppDatabase
    /// The People app's store.
    public let people: PeopleStore
    /// The Contacts app's store.
    public let contacts: ContactsStore
    /// The Coffee app's store.
    public let coffee: CoffeeStore
    /// The Users app's store.
    public let users: UsersStore
    /// The settings.
    public let configuration: WebConfiguration
    /// Sessions, the log-in throttle and the registration policy.
    public let accounts: Accounts

    /// The stores over `database`.
    public init(database: AppDatabase, configuration: WebConfiguration) {
        self.database = database
        self.configuration = configuration
        people = PeopleStore(database: database)
        contacts = ContactsStore(database: database)
        coffee = CoffeeStore(database: database, pictureSizeLimit: max(configuration.pictureSizeLimit, 0))
        let now = configuration.now
        users = UsersStore(
            database: database, hasher: configuration.passwordHasher, today: { CalendarDate.today(now: now()) })
        accounts = Accounts(database: database, configuration: configuration)
    }
}

/// The Records apps as a web site: the four apps' screens over their
/// stores, behind the Users app's accounts.
///
/// It implements the site's rules around every route: who is asking (the
/// session cookie through ``authenticator``, the CSRF token), that a
/// signed-in route has a session, that every POST carries the page's CSRF
/// token, the error pages (404, 405, 403, 500 with nothing internal), and
/// the headers every answer carries (Content-Security-Policy without
/// inline script, `nosniff`, `frame-ancestors 'none'`, a Referrer-Policy).
public final class WebApp: HTTPApplication {
    /// The stores and settings the pages use.
    public let context: WebContext
    /// The settings.
    public var configuration: WebConfiguration { context.configuration }
    /// Finds the session a cookie names; nil serves no one as signed in.
    public let authenticator: (any SessionAuthenticator)?
    /// The routes.
    public let router: Router
    /// The live pages' event streams (`/events`).
    public let live: LiveUpdates

    /// The session cookie's name.
    public static let sessionCookie = "records_session"
    /// The cookie holding a visitor's CSRF token before they sign in.
    public static let csrfCookie = "records_csrf"
    /// The cookie carrying a one-time status message to the next page.
    public static let flashCookie = "records_flash"

    /// The site over `database`.
    ///
    /// - Parameters:
    ///   - authenticator: Finds sessions; by default the accounts'
    ///     session store (``AccountsAuthenticator``).
    ///   - extraRoutes: More routes, tried after the site's own.
    public init(
        database: AppDatabase, configuration: WebConfiguration = WebConfiguration(),
        authenticator: (any SessionAuthenticator)? = nil,
        extraRoutes: @Sendable (WebContext) -> [Route] = { _ in [] }
    ) {
        let context = WebContext(database: database, configuration: configuration)
        self.context = context
        self.authenticator =
            authenticator ?? AccountsAuthenticator(accounts: context.accounts, log: configuration.log)
        live = LiveUpdates(
            database: database, heartbeat: configuration.liveHeartbeat, retry: configuration.liveRetry,
            sessions: self.authenticator, sessionCheck: configuration.liveSessionCheck)
        router = Router(SiteRoutes.all(context) + live.routes() + extraRoutes(context))
    }

    // MARK: - HTTPApplication

    public func identify(_ request: Request) async -> Request {
        var request = request
        if let token = request.cookies[Self.sessionCookie], !token.isEmpty, let authenticator {
            request.session = await authenticator.session(forToken: token, request: request)
        }
        if let session = request.session {
            request.csrfToken = session.csrfToken
        } else if let token = request.cookies[Self.csrfCookie], Self.isWellFormedToken(token) {
            request.csrfToken = token
        } else {
            request.csrfToken = Self.randomToken()
        }
        return request
    }

    public func answer(unmatched match: Router.Match, request: Request) async -> Response {
        switch match {
        case .methodNotAllowed(let allowed):
            return errorPage(
                HTTPError(status: 405, message: "This address does not take that kind of request."), request: request
            )
            .with(header: "Allow", allowed.joined(separator: ", "))
        default:
            return errorPage(.notFound, request: request)
        }
    }

    public func admit(_ request: Request, to route: Route) async -> Response? {
        guard route.access == .signedIn, request.session == nil else { return nil }
        let next = request.method == "GET" ? request.pathWithQuery : "/"
        return .redirect(to: next == "/" ? "/login" : HTML.path(["login"], query: [("next", next)]))
    }

    public func respond(to request: Request, route: Route, formProblem: FormProblem?) async -> Response {
        do {
            // A refused form changes nothing: it is shown again (its CSRF
            // field may not have been read at all).
            if let formProblem {
                if let invalidForm = route.invalidForm { return try await invalidForm(request, formProblem) }
                return errorPage(
                    HTTPError(status: formProblem.status, message: formProblem.description), request: request)
            }
            if route.method == "POST" {
                guard !request.uploadWithheld, Self.carriesCSRFToken(request.form, for: request) else {
                    return errorPage(
                        HTTPError(
                            status: 403,
                            message:
                                "This form has expired or did not come from this site. Go back, reload the page and try again."
                        ), request: request)
                }
            }
            return try await route.handler(request)
        } catch let error as HTTPError {
            return errorPage(error, request: request)
        } catch let error as RecordNotFoundError {
            // A live page whose record was deleted shows this text in place.
            return errorPage(
                HTTPError(status: 404, message: "This \(error.kind) (ID \(error.id)) was deleted, or never existed."),
                request: request)
        } catch {
            log("error: \(request.logDescription): \(error)")
            return errorPage(
                HTTPError(status: 500, message: "Something went wrong on our side. Try again in a moment."),
                request: request)
        }
    }

    /// A file is received only from a form whose fields before it carry
    /// the page's CSRF token.
    public func acceptsFile(_ request: Request) -> Bool { Self.carriesCSRFToken(request.form, for: request) }

    /// Whether `form` carries `request`'s CSRF token (a token is never
    /// empty).
    static func carriesCSRFToken(_ form: Form, for request: Request) -> Bool {
        constantTimeEquals(form.text("csrf"), request.csrfToken) && !request.csrfToken.isEmpty
    }

    public func finish(_ response: Response, for request: Request) -> Response {
        var response = response
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
        // A page may hold a form: a visitor not signed in gets the token
        // its forms carry as a cookie too.
        let isPage = response.header("Content-Type")?.hasPrefix("text/html") ?? false
        if isPage, request.session == nil, request.cookies[Self.csrfCookie] != request.csrfToken {
            response = response.setting(
                Cookie(
                    name: Self.csrfCookie, value: request.csrfToken,
                    secure: request.isSecure || configuration.secureCookies))
        }
        return response
    }

    public func log(_ message: String) { configuration.log(message) }

    /// Ends the live pages' event streams, so that the server's stop does
    /// not wait for them.
    public func serverWillStop() { live.stop() }

    // MARK: - Pages

    /// The error page for `error`, in the site's layout.
    public func errorPage(_ error: HTTPError, request: Request) -> Response {
        Layout.errorPage(error, request: request)
    }
}

extension Layout {
    /// The error page for `error`, in the site's layout.
    public static func errorPage(_ error: HTTPError, request: Request) -> Response {
        let title =
            switch error.status {
            case 404: "Page not found"
            case 403: "Not allowed"
            case 405: "Not allowed here"
            case 413: "Too large"
            case 429: "Too many attempts"
            case 400..<500: "Cannot do that"
            default: "Something went wrong"
            }
        return Layout.page(
            request, title: title, status: error.status,
            content: """
                <h1>\(title)</h1>
                <p class="notice">\(error.message)</p>
                <p><a href="/">Back to the start page</a></p>
                """)
    }
}

extension WebApp {
    // MARK: - Tokens

    /// 256 random bits, base64url without padding (43 characters).
    public static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in bytes.indices { bytes[index] = generator.next() }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Whether `token` looks like one ``randomToken()`` made.
    static func isWellFormedToken(_ token: String) -> Bool {
        token.utf8.count == 43
            && token.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F
            }
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
