import Foundation

/// What an ``HTTPServer`` serves: the routes, and the steps around them
/// that are the site's business rather than HTTP's (who is asking, who may
/// use a route, error pages, headers on every answer). The Records apps'
/// `WebApp` (in RecordsWeb) is one.
///
/// The server calls these on the connection's own thread, waiting for the
/// `async` ones; a connection never runs two requests at once.
public protocol HTTPApplication: Sendable {
    /// The routes.
    var router: Router { get }

    /// The request with what the application needs to know about it in
    /// its ``Request/context`` (who is asking), once its headers are in.
    func identify(_ request: Request) async -> Request

    /// The answer when no route matched: 404, or 405 with the methods the
    /// path allows.
    func answer(unmatched match: Router.Match, request: Request) async -> Response

    /// An answer given before the body is read (a visitor not signed in
    /// sent to the log-in page), or nil to go on.
    func admit(_ request: Request, to route: Route) async -> Response?

    /// The route's answer once the body is in. `formProblem` is set when
    /// the server refused the form; the handler must then not run.
    func respond(to request: Request, route: Route, formProblem: FormProblem?) async -> Response

    /// Whether an upload route may receive the file that starts now.
    /// `request` holds the headers, ``identify(_:)``'s context and the
    /// fields that came before the file. A file refused here is discarded
    /// unread into the sink, and the route's answer sees
    /// ``Request/uploadWithheld``.
    func acceptsFile(_ request: Request) -> Bool

    /// The response as it is sent: the site adds the headers every answer
    /// carries.
    func finish(_ response: Response, for request: Request) -> Response

    /// A line for the server's log (never a secret).
    func log(_ message: String)

    /// The server has stopped accepting requests and waits for the ones in
    /// flight: long-lived responses should end now.
    func serverWillStop()
}

extension HTTPApplication {
    /// Every file is received.
    public func acceptsFile(_ request: Request) -> Bool { true }

    public func serverWillStop() {}
}
