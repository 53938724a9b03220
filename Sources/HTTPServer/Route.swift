import Foundation

/// One page or action of the web app: a method and a path pattern, who may
/// use it, what body it takes, and the handler.
public struct Route: Sendable {
    /// Who may use a route: a label the application's middleware acts on
    /// (the server itself does not check it).
    public enum Access: Sendable, Equatable {
        /// Anyone: log-in, registration, static files.
        case anyone
        /// Only a signed-in user; others are sent to the log-in page.
        case signedIn
    }

    /// The body a route takes.
    public enum Body: Sendable {
        /// None (GET, HEAD and DELETE): a body sent is discarded.
        case none
        /// A form (URL-encoded or multipart without files) of at most
        /// `limit` bytes.
        case form(limit: Int = Route.defaultFormLimit)
        /// A multipart form with one file in the field `field`, of at most
        /// `limit` bytes in all; the file goes to the sink `sink` makes, the
        /// other fields (at most ``Route/defaultFormLimit`` bytes) to
        /// ``Request/form``. The fields the application checks before it
        /// accepts the file (a CSRF token, through
        /// ``Request/receivingBody(acceptingFile:)``) must come before it.
        case upload(
            field: String, limit: Int, sink: @Sendable (UploadStart) throws -> any UploadSink)
        /// The raw body, of any content type (JSON), of at most `limit`
        /// bytes, in ``Request/body``: the server does not decode it.
        case bytes(limit: Int)
        /// The raw body, of any content type, of at most `limit` bytes,
        /// streamed chunk by chunk to the sink `sink` makes (with an empty
        /// file name and the request's `Content-Type`), never whole in
        /// memory: ``Request/upload`` and ``Request/uploadError`` as for
        /// ``upload(field:limit:sink:)``. The `acceptingFile` check of
        /// ``Request/receivingBody(acceptingFile:)`` runs before the first
        /// byte reaches a sink; an empty body makes none.
        case stream(limit: Int, sink: @Sendable (UploadStart) throws -> any UploadSink)

        /// The most bytes a request's body may have: a body past it is
        /// refused with 413, unread. ``Route/defaultFormLimit`` for a route
        /// that takes no body; an upload's limit plus its other fields'.
        var sizeLimit: Int {
            switch self {
            case .none: Route.defaultFormLimit
            case .form(let limit): limit
            case .upload(_, let limit, _): limit + Route.defaultFormLimit
            case .bytes(let limit): limit
            case .stream(let limit, _): limit
            }
        }

        /// Whether the body is taken as it comes, not decoded as a form.
        var isRaw: Bool {
            switch self {
            case .bytes, .stream: true
            case .none, .form, .upload: false
            }
        }
    }

    /// The most a form's fields may hold: 64 KiB.
    public static let defaultFormLimit = 64 * 1024

    /// The handler of a route.
    public typealias Handler = @Sendable (Request) async throws -> Response

    /// The method: `GET` (which also answers `HEAD`), `POST`, `PUT`,
    /// `PATCH` or `DELETE`.
    public var method: String
    /// The path pattern: segments, where `:name` matches any one segment
    /// (`/people/:id/edit`).
    public var pattern: String
    /// Who may use it.
    public var access: Access
    /// The body it takes.
    public var body: Body
    /// Answers the request.
    public var handler: Handler
    /// Answers a POST whose form the server refused (too large, a repeated
    /// field, not UTF-8, malformed; for a raw body, too large) before
    /// ``handler`` ran: typically the
    /// form page again with the problem and a 400 or 413. Without it, the
    /// server answers with an error page. Middleware that checks the form
    /// (a CSRF token) lets it run unchecked, as a refused body may not have
    /// been read far enough to hold the token, so it must only show a page,
    /// never change anything.
    public var invalidForm: (@Sendable (Request, FormProblem) async throws -> Response)?

    /// Middleware around this route's handler, inside the application's
    /// (see ``RouteGroup``), the first outermost.
    public var middleware: [any Middleware] = []

    /// Whether a request for this route starts on the thread of the event
    /// loop that read it (``ServerOptions/eventLoopThreads``), rather than
    /// on one of the server's request threads: its middleware and handler
    /// run there, and when they wait (for the body, or for something
    /// another thread does, such as a write) the connection waits too, and
    /// is woken to go on there once the wait is over. A request answered
    /// without waiting then costs no thread switch, and one that waits for
    /// a write only the switch to the writer and back. False by default.
    ///
    /// Only for routes that never block and compute little, such as a
    /// JSON read or write of one record: while a request runs on the event
    /// loop's thread, the other connections of that thread wait. Not for a
    /// password hash, an image, or a large page. Ignored with a thread for
    /// each connection.
    public var startsOnEventLoop = false

    var segments: [Segment]

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    /// Creates a route. Without `body`, a POST takes a form, a PUT or
    /// PATCH its raw body (``Body/bytes(limit:)``, at most
    /// ``defaultFormLimit`` bytes), and other methods none.
    public init(
        _ method: String, _ pattern: String, access: Access = .signedIn, body: Body? = nil,
        invalidForm: (@Sendable (Request, FormProblem) async throws -> Response)? = nil,
        handler: @escaping Handler
    ) {
        self.method = method
        self.pattern = pattern
        self.access = access
        self.body =
            body
            ?? {
                switch method {
                case "POST": .form()
                case "PUT", "PATCH": .bytes(limit: Route.defaultFormLimit)
                default: .none
                }
            }()
        self.handler = handler
        self.invalidForm = invalidForm
        segments = Route.segments(of: pattern)
    }

    static func segments(of pattern: String) -> [Segment] {
        pattern.split(separator: "/", omittingEmptySubsequences: true).map {
            $0.hasPrefix(":") ? .parameter(String($0.dropFirst())) : .literal(String($0))
        }
    }

    /// A GET route (it answers HEAD too).
    public static func get(_ pattern: String, access: Access = .signedIn, handler: @escaping Handler) -> Route {
        Route("GET", pattern, access: access, handler: handler)
    }

    /// A POST route, taking a form unless `body` says otherwise (a JSON
    /// body: ``Body/bytes(limit:)``).
    public static func post(
        _ pattern: String, access: Access = .signedIn, body: Body = .form(),
        invalidForm: (@Sendable (Request, FormProblem) async throws -> Response)? = nil,
        handler: @escaping Handler
    ) -> Route {
        Route("POST", pattern, access: access, body: body, invalidForm: invalidForm, handler: handler)
    }

    /// A PUT route, taking its raw body unless `body` says otherwise.
    public static func put(
        _ pattern: String, access: Access = .signedIn, body: Body = .bytes(limit: Route.defaultFormLimit),
        handler: @escaping Handler
    ) -> Route {
        Route("PUT", pattern, access: access, body: body, handler: handler)
    }

    /// A PATCH route, taking its raw body unless `body` says otherwise.
    public static func patch(
        _ pattern: String, access: Access = .signedIn, body: Body = .bytes(limit: Route.defaultFormLimit),
        handler: @escaping Handler
    ) -> Route {
        Route("PATCH", pattern, access: access, body: body, handler: handler)
    }

    /// A DELETE route: it takes no body (one sent is discarded).
    public static func delete(_ pattern: String, access: Access = .signedIn, handler: @escaping Handler) -> Route {
        Route("DELETE", pattern, access: access, handler: handler)
    }

    /// Whether `path` matches the pattern (its literal segments; a
    /// parameter matches any segment).
    func matches(_ pathSegments: [Substring]) -> Bool {
        guard pathSegments.count == segments.count else { return false }
        for (segment, part) in zip(segments, pathSegments) {
            if case .literal(let literal) = segment, literal != part { return false }
        }
        return true
    }

    /// The parameters of a path that ``matches(_:)`` the pattern.
    func parameters(_ pathSegments: [Substring]) -> [String: String] {
        var parameters: [String: String] = [:]
        for (segment, part) in zip(segments, pathSegments) {
            if case .parameter(let name) = segment { parameters[name] = String(part) }
        }
        return parameters
    }
}

/// Routes that share a path prefix and middleware: the group's prefix is
/// put before each route's pattern, and its middleware around each
/// route's own.
///
/// ```swift
/// let admin = RouteGroup("/admin", middleware: [SignInRequired()])
/// let routes = admin.routes([.get("/users") { ... }])  // GET /admin/users
/// ```
public struct RouteGroup: Sendable {
    /// The path prefix (`/admin`), or empty.
    public var prefix: String
    /// The middleware, the first outermost.
    public var middleware: [any Middleware]

    /// A group.
    public init(_ prefix: String = "", middleware: [any Middleware] = []) {
        self.prefix = prefix
        self.middleware = middleware
    }

    /// `routes` in this group.
    public func routes(_ routes: [Route]) -> [Route] {
        routes.map { route in
            var route = route
            if !prefix.isEmpty {
                route.pattern =
                    "/" + (prefix.split(separator: "/") + route.pattern.split(separator: "/")).joined(separator: "/")
                route.segments = Route.segments(of: route.pattern)
            }
            route.middleware = middleware + route.middleware
            return route
        }
    }
}

/// Finds the route for a method and path.
public struct Router: Sendable {
    /// The routes, in the order they are tried.
    public let routes: [Route]
    /// The routes a path may match, by its number of segments and its
    /// first segment (routes whose first segment is a parameter, or that
    /// have none, under nil): indexes into ``routes``, in order. A request
    /// then tries the few routes of its shape, not every route.
    private let candidates: [Int: [String?: [Int]]]

    /// A router over these routes.
    public init(_ routes: [Route]) {
        self.routes = routes
        var candidates: [Int: [String?: [Int]]] = [:]
        for (index, route) in routes.enumerated() {
            var first: String?
            if case .literal(let literal) = route.segments.first { first = literal }
            candidates[route.segments.count, default: [:]][first, default: []].append(index)
        }
        // A path whose first segment is a literal may also match the routes
        // starting with a parameter: merged here once, in order, not for
        // every request.
        for (count, shape) in candidates {
            guard let anyFirst = shape[nil] else { continue }
            for (first, indexes) in shape where first != nil {
                candidates[count]?[first] = (indexes + anyFirst).sorted()
            }
        }
        self.candidates = candidates
    }

    /// The indexes of the routes that may match `parts`, in order.
    private func candidates(for parts: [Substring]) -> [Int] {
        guard let shape = candidates[parts.count] else { return [] }
        if let first = parts.first, let literal = shape[String(first)] { return literal }
        return shape[nil] ?? []
    }

    /// The path's segments, empty ones left out (`/a//b/` is `a`, `b`),
    /// found byte by byte: this runs for every request.
    static func segments(ofPath path: String) -> [Substring] {
        var parts: [Substring] = []
        parts.reserveCapacity(6)
        let bytes = path.utf8
        var start = bytes.startIndex
        var index = start
        // `/` is one byte of UTF-8 and never part of another character's,
        // so each index found is a character boundary.
        while index != bytes.endIndex {
            if bytes[index] == UInt8(ascii: "/") {
                if index != start { parts.append(path[start..<index]) }
                start = bytes.index(after: index)
            }
            index = bytes.index(after: index)
        }
        if start != bytes.endIndex { parts.append(path[start...]) }
        return parts
    }

    /// What a lookup found.
    public enum Match: Sendable {
        /// A route and its parameters.
        case route(Route, parameters: [String: String])
        /// The path exists but not for this method (405), with the methods
        /// it allows.
        case methodNotAllowed(allowed: [String])
        /// No route has this path (404).
        case notFound
    }

    /// The route for `method` and `path`. `HEAD` uses the `GET` route.
    public func match(method: String, path: String) -> Match {
        let parts = Self.segments(ofPath: path)
        let wanted = method == "HEAD" ? "GET" : method
        var allowed: [String] = []
        // Routes are values of many fields: only the one found is copied.
        for index in candidates(for: parts) where routes[index].matches(parts) {
            if routes[index].method == wanted {
                return .route(routes[index], parameters: routes[index].parameters(parts))
            }
            if !allowed.contains(routes[index].method) { allowed.append(routes[index].method) }
        }
        if allowed.isEmpty { return .notFound }
        if allowed.contains("GET"), !allowed.contains("HEAD") { allowed.append("HEAD") }
        return .methodNotAllowed(allowed: allowed)
    }
}
