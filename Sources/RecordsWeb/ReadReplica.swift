import Foundation
import HTTPServer

/// A server that serves a read replica (`records serve --read-replica`):
/// where changes are made instead.
public struct ReadReplicaSettings: Sendable {
    /// The primary server's address, shown to whoever tries to change
    /// something here; nil when it was not given.
    public var primary: String?
    /// The replica, as shown on the status page.
    public var replica: String

    /// Settings for a replica of `replica`, whose changes are made at
    /// `primary`.
    public init(replica: String, primary: String?) {
        self.replica = replica
        self.primary = primary
    }

    /// What a refused change says.
    var refusal: String {
        "This server is a read-only copy of the database: signing in, registering and every change "
            + "are made on the primary server" + (primary.map { " (\($0))" } ?? "") + "."
    }
}

/// Refuses every request that could change something (any method but
/// GET, HEAD and OPTIONS) with 503 on a read replica, before its route
/// runs: the database cannot take the write, and the client learns where
/// to send it rather than a 500.
///
/// On the API the refusal is a problem document with the code
/// `read-only-replica`. It has no `Retry-After`: trying again here never
/// succeeds.
struct ReadOnlyReplicaGate: Middleware {
    let settings: ReadReplicaSettings
    /// Whether to answer with the API's problem documents, else the site's
    /// error pages.
    let api: Bool

    func respond(to request: Request, next: Responder) async throws -> Response {
        guard request.mayChangeState else { return try await next(request) }
        if api { throw Problem(status: 503, code: "read-only-replica", detail: settings.refusal) }
        throw HTTPError(status: 503, message: settings.refusal)
    }
}

extension Request {
    /// Whether the request's method may change something: any but GET,
    /// HEAD and OPTIONS (methods are case-sensitive).
    var mayChangeState: Bool { !["GET", "HEAD", "OPTIONS"].contains(method) }
}
