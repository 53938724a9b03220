import Foundation
@_exported import HTTPServer
import PasswordHashing
import RecordsApp
import Replication

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
    /// How the database's replication stands (`records serve --replicate`),
    /// shown on `/status` and in `GET /api/v1/status`; nil when the server
    /// does not replicate.
    public var replicationStatus: (@Sendable () -> ReplicationStatus)? = nil
    /// Set when the server serves a read replica (`records serve
    /// --read-replica`): every request that could change something
    /// answers 503 and names the primary.
    public var readReplica: ReadReplicaSettings? = nil
    /// With `records serve --durable`: what a write waits on, after its
    /// handler and before its answer, until the replica holds it. A write
    /// it fails for answers 503 (saved here, not yet replicated). nil
    /// acknowledges a write once it is committed locally.
    public var durability: DurabilityWaiter? = nil
    /// How often the database file is checked to be still the one opened
    /// (besides before every write's answer): a file deleted or replaced
    /// is noticed, logged and shown on the status within about this long,
    /// even when nothing is written.
    public var databaseFileCheck: Duration = .seconds(2)
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

/// What every page's handler may use: the database and the settings.
/// Each app's folder gives its store (`context.people`), over these.
public struct WebContext: Sendable {
    /// The database.
    public let database: AppDatabase
    /// The settings.
    public let configuration: WebConfiguration
    /// Sessions, the log-in throttle and the registration policy.
    public let accounts: Accounts
    /// The coffee pictures' thumbnails, made once per picture version.
    let thumbnails: CoffeeThumbnails
    /// Whether the database file is still the one opened (nil in memory):
    /// once it is not, writes are refused (``WriteAcknowledgement``).
    public let databaseFile: DatabaseFileWatch?

    /// The context over `database`.
    public init(database: AppDatabase, configuration: WebConfiguration) {
        self.database = database
        self.configuration = configuration
        accounts = Accounts(database: database, configuration: configuration)
        thumbnails = CoffeeThumbnails(log: configuration.log)
        let log = configuration.log
        databaseFile = DatabaseFileWatch(database: database) { loss in
            log(
                "error: \(loss): every write is refused from now on (503), reads go on from the file as it "
                    + "was opened; stop the server, put the database back (records restore, or a backup) and start "
                    + "it again")
        }
    }
}

/// The Records apps as a web site: the four apps' screens over their
/// stores, behind the Users app's accounts.
///
/// Its middleware implements the site's rules around every route: who is
/// asking (the session cookie through ``authenticator``, the CSRF token),
/// that a signed-in route has a session, that every POST carries the
/// page's CSRF token, the error pages (404, 405, 403, 500 with nothing
/// internal), and the headers every answer carries
/// (Content-Security-Policy without inline script, `nosniff`,
/// `frame-ancestors 'none'`, a Referrer-Policy).
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
    /// The API's tokens, as recently checked (see ``APITokenCache``).
    let apiTokens: APITokenCache
    /// Failed token attempts per client address.
    let tokenThrottle: LoginThrottle
    /// The API's event streams (`/api/v1/events`).
    let apiEvents: APIEvents
    /// The middleware around every request (see ``middleware``).
    private let siteMiddleware: [any Middleware]

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
        // The static files are read and hashed now, before the first
        // request, not while one waits.
        _ = StaticFiles.files
        let context = WebContext(database: database, configuration: configuration)
        self.context = context
        self.authenticator =
            authenticator ?? AccountsAuthenticator(accounts: context.accounts, log: configuration.log)
        live = LiveUpdates(
            database: database, heartbeat: configuration.liveHeartbeat, retry: configuration.liveRetry,
            sessions: self.authenticator, sessionCheck: configuration.liveSessionCheck)
        // Every route checks the CSRF token of its POSTs; the signed-in
        // ones first send visitors to the log-in page, before a body is read.
        let checked = RouteGroup(middleware: [CSRFProtection()])
        let signedIn = RouteGroup(middleware: [SignInRequired()])
        apiTokens = APITokenCache(tokens: context.accounts.tokens, database: database, now: configuration.now)
        tokenThrottle = LoginThrottle(policy: BearerAuthentication.policy, now: configuration.now)
        apiEvents = APIEvents(
            context: context, heartbeat: configuration.liveHeartbeat, tokenCheck: configuration.liveSessionCheck)
        // The API's routes take no cookie and so no CSRF token: a token in
        // a header is what a program shows (``BearerAuthentication``).
        router = Router(
            checked.routes(SiteRoutes.all(context) + live.routes() + extraRoutes(context)).flatMap { route in
                route.access == .signedIn ? signedIn.routes([route]) : [route]
            } + APIRoutes.routes(context, events: apiEvents))
        siteMiddleware = Self.makeMiddleware(
            context: context, authenticator: self.authenticator, apiTokens: apiTokens, tokenThrottle: tokenThrottle)
        context.databaseFile?.startChecking(every: configuration.databaseFileCheck)
    }

    // MARK: - HTTPApplication

    /// The site's middleware around every request, outermost first: the
    /// security headers, who is asking (the session, the CSRF token and
    /// its cookie), the error pages, and the acknowledgement of writes
    /// (``WriteAcknowledgement``: none while the database file is lost,
    /// and with `--durable` none before the replica holds the write; on
    /// the API, the same inside its token check and problem documents).
    /// Each route has the CSRF check of
    /// its POSTs inside (``CSRFProtection``), and a signed-in route the
    /// sign-in check outside that (``SignInRequired``), through
    /// ``RouteGroup``s.
    public var middleware: [any Middleware] { siteMiddleware }

    /// ``middleware``, made once.
    private static func makeMiddleware(
        context: WebContext, authenticator: (any SessionAuthenticator)?, apiTokens: APITokenCache,
        tokenThrottle: LoginThrottle
    ) -> [any Middleware] {
        let configuration = context.configuration
        func replicaGate(api: Bool) -> [any Middleware] {
            configuration.readReplica.map { [ReadOnlyReplicaGate(settings: $0, api: api)] } ?? []
        }
        return [
            MiddlewareBranch(
                when: { $0.path == APIOperation.prefix || $0.path.hasPrefix(APIOperation.prefix + "/") },
                then: [
                    APIHeaders(), APIProblems(log: configuration.log),
                    BearerAuthentication(tokens: apiTokens, throttle: tokenThrottle, log: configuration.log),
                    WriteAcknowledgement(context: context, api: true),
                ] + replicaGate(api: true),
                otherwise: [
                    SecurityHeaders(),
                    SessionMiddleware(authenticator: authenticator, secureCookies: configuration.secureCookies),
                    ErrorPages(log: configuration.log),
                    WriteAcknowledgement(context: context, api: false),
                ] + replicaGate(api: false))
        ]
    }

    public func log(_ message: String) { configuration.log(message) }

    /// Ends the live pages' event streams, so that the server's stop does
    /// not wait for them.
    public func serverWillStop() {
        live.stop()
        apiEvents.stop()
    }

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
            case 503: "Cannot save now"
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
