import Foundation

/// What answers a request: a route's handler, or the rest of a chain of
/// middleware around it.
public typealias Responder = @Sendable (Request) async throws -> Response

/// A step around the answer to a request: it may change the request
/// before passing it on with `next`, answer on its own without calling
/// `next` (a redirect to the log-in page), or change the response `next`
/// gives (headers every answer carries).
///
/// The application's middleware (``HTTPApplication/middleware``) runs for
/// every request, a route's (``Route/middleware``, from a ``RouteGroup``)
/// inside it, once the route is known. Middleware runs as soon as the
/// request's headers are in; the body is read when something asks for it
/// (``Request/receivingBody(acceptingFile:)``), at the latest before the
/// route's handler. An answer given before the body is read is sent
/// without reading it.
public protocol Middleware: Sendable {
    /// The answer to `request`, usually `next`'s.
    func respond(to request: Request, next: Responder) async throws -> Response
}

/// Middleware from a closure.
public struct MiddlewareFunction: Middleware {
    private let body: @Sendable (Request, Responder) async throws -> Response

    /// Middleware that runs `body`.
    public init(_ body: @escaping @Sendable (Request, Responder) async throws -> Response) { self.body = body }

    public func respond(to request: Request, next: Responder) async throws -> Response {
        try await body(request, next)
    }
}

/// Middleware that runs one of two stacks around the rest of the chain,
/// chosen by a predicate on the request: a site whose `/api/` paths need
/// other steps (tokens, JSON errors) than its pages (sessions, CSRF, error
/// pages) puts each set in a branch of the application's middleware.
///
/// The predicate sees the request as it reaches the branch, so a path the
/// router does not know (its 404 or 405 is thrown from inside `next`)
/// goes through the branch the path picks, as any other.
///
/// ```swift
/// MiddlewareBranch(
///     when: { $0.path.hasPrefix("/api/") }, then: [APIErrors(), TokenCheck()],
///     otherwise: [ErrorPages(), Sessions()])
/// ```
public struct MiddlewareBranch: Middleware {
    private let predicate: @Sendable (Request) -> Bool
    private let then: [any Middleware]
    private let otherwise: [any Middleware]

    /// Runs `then` (the first outermost) for a request `when` holds for,
    /// else `otherwise`.
    public init(
        when predicate: @escaping @Sendable (Request) -> Bool, then: [any Middleware], otherwise: [any Middleware]
    ) {
        self.predicate = predicate
        self.then = then
        self.otherwise = otherwise
    }

    public func respond(to request: Request, next: Responder) async throws -> Response {
        let stack = predicate(request) ? then : otherwise
        // The chain is built and run within this call: `next` does not
        // outlive it.
        return try await withoutActuallyEscaping(next) { next in try await stack.wrapping(next)(request) }
    }
}

extension Array where Element == any Middleware {
    /// `responder` wrapped in these, the first outermost.
    func wrapping(_ responder: @escaping Responder) -> Responder {
        reversed().reduce(responder) { next, middleware in
            { request in try await middleware.respond(to: request, next: next) }
        }
    }
}

/// The client went away before the request's body was in: nothing is sent.
public struct ClientDisconnected: Error, Sendable {
    /// Creates the error.
    public init() {}
}
