import Foundation

/// What an ``HTTPServer`` serves: the routes, and the middleware around
/// them that is the site's business rather than HTTP's (who is asking, who
/// may use a route, error pages, headers on every answer). The Records
/// apps' `WebApp` (in RecordsWeb) is one.
///
/// The server answers each request with ``respond(to:)``, on a task of its
/// own while the connection's thread waits; a connection never runs two
/// requests at once. Tests call ``respond(to:)`` directly, with no socket.
public protocol HTTPApplication: Sendable {
    /// The routes.
    var router: Router { get }

    /// The middleware around every request, the first outermost, matched
    /// or not: an unknown path reaches the innermost as a thrown
    /// ``HTTPError`` (404, or 405 with an `Allow` header).
    var middleware: [any Middleware] { get }

    /// A line for the server's log (never a secret).
    func log(_ message: String)

    /// The server has stopped accepting requests and waits for the ones in
    /// flight: long-lived responses should end now.
    func serverWillStop()
}

extension HTTPApplication {
    public var middleware: [any Middleware] { [] }

    public func serverWillStop() {}

    /// The answer to `request`, through the middleware, the route's
    /// middleware and its handler: what the server sends, without a
    /// socket. The request's ``Request/form`` is its body (a request the
    /// server made reads its body when asked). An error no middleware
    /// turned into a response becomes a plain one: an ``HTTPError``'s
    /// status and message, or 500 (logged).
    public func respond(to request: Request) async -> Response {
        var request = request
        let inner: Responder
        let match = request.matched ?? router.match(method: request.method, path: request.path)
        request.matched = nil
        switch match {
        case .route(let route, let parameters):
            request.parameters = parameters
            request.route = route
            inner = route.middleware.wrapping { request in try await route.answer(request) }
        case .methodNotAllowed(let allowed):
            inner = { _ in
                throw HTTPError(
                    status: 405, message: "This address does not take that kind of request.",
                    headers: ["Allow": allowed.joined(separator: ", ")])
            }
        case .notFound:
            inner = { _ in throw HTTPError.notFound }
        }
        do {
            return try await middleware.wrapping(inner)(request)
        } catch let error as HTTPError {
            var response = Response(
                status: error.status, headers: [("Content-Type", "text/plain; charset=utf-8")],
                body: .bytes(Array(error.message.utf8)))
            for (name, value) in error.headers.sorted(by: { $0.key < $1.key }) {
                response.headers.append((name, value))
            }
            return response
        } catch is ClientDisconnected {
            return Response(status: 400)
        } catch {
            log("error: \(request.logDescription): \(error)")
            return Response(status: 500)
        }
    }
}

extension Route {
    /// The handler's answer once the body is in. A body the server refused
    /// goes to ``invalidForm``, or becomes an ``HTTPError`` with the
    /// problem's status; the handler does not run.
    func answer(_ request: Request) async throws -> Response {
        let request = try await request.receivingBody()
        if let problem = request.formProblem {
            if let invalidForm { return try await invalidForm(request, problem) }
            // A raw body is no form the user filled in: its message says
            // what the client can change.
            let message =
                body.isRaw && problem.kind == .tooLarge
                ? "The request's body is larger than this address accepts (at most \(body.sizeLimit) bytes)."
                : problem.description
            throw HTTPError(status: problem.status, message: message)
        }
        return try await handler(request)
    }
}
