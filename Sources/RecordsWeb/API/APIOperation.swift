import Foundation
import HTTPServer
import RecordsApp
import SQLiteStore

/// One route of the API with what the OpenAPI description says of it:
/// the server's route and the description are made from the same value,
/// so neither can list a route the other lacks.
struct APIOperation: Sendable {
    /// Who may call it.
    enum Access: Sendable {
        /// Anyone, without a token.
        case anyone
        /// A valid token of either scope.
        case read
        /// A valid read-write token.
        case write
    }

    /// What the request carries.
    enum RequestBody: Sendable {
        /// A JSON object with the schema `schema` (a components name).
        case json(schema: String)
        /// The bytes of a file of one of `types`.
        case binary(types: [String])
    }

    /// A query or header parameter.
    struct Parameter: Sendable {
        enum Place: String, Sendable {
            case query, header
        }
        let name: String
        let place: Place
        let summary: String
        /// Its OpenAPI schema.
        let schema: JSONValue
    }

    /// An answer it gives.
    struct Answer: Sendable {
        enum Content: Sendable {
            /// JSON with the schema `schema` (a components name).
            case json(schema: String)
            /// A problem document.
            case problem
            /// Bytes of the given types.
            case binary(types: [String])
            /// Server-Sent Events.
            case eventStream
        }
        let status: Int
        let summary: String
        var content: Content?
    }

    let method: String
    /// The path below `/api/v1`, with `:name` segments: `/people/:id`.
    let path: String
    /// A stable name for programs that generate clients: "listPeople".
    let operationID: String
    let summary: String
    let access: Access
    let tag: String
    var parameters: [Parameter] = []
    var requestBody: RequestBody?
    var answers: [Answer]
    /// The body the server takes.
    var body: Route.Body = .none
    /// Whether the route starts on the event loop's thread and reads the
    /// database there (``Route/startsOnEventLoop``, SQLiteStore's
    /// `CallingThreadReads`): for the quick JSON operations on one app's
    /// records, never for a password, a picture or a stream.
    var isQuick = false
    let handler: Route.Handler

    /// The prefix of every API path.
    static let prefix = "/api/v1"

    /// The server's route: the handler behind the access check, which runs
    /// as the route's middleware, before the body is read: a request
    /// without a valid token, or a write with a read-only one, is refused
    /// from its headers, and a picture it sends is never received.
    var route: Route {
        var route = Route(method, Self.prefix + path, access: .anyone, body: body, handler: handler)
        route.middleware = [AccessCheck(access: access)]
        if isQuick {
            route.startsOnEventLoop = true
            route.middleware.insert(ReadsOnCallingThread(), at: 0)
        }
        return route
    }
}

/// Lets the database reads of the request run on its own thread (see
/// SQLiteStore's `CallingThreadReads`): the event loop's, for a route that
/// starts there, or a request thread, which may block.
struct ReadsOnCallingThread: Middleware {
    func respond(to request: Request, next: Responder) async throws -> Response {
        try await CallingThreadReads.$areAllowed.withValue(true) { try await next(request) }
    }
}

/// Refuses a request its token does not allow (see ``APIOperation/Access``).
struct AccessCheck: Middleware {
    let access: APIOperation.Access

    func respond(to request: Request, next: Responder) async throws -> Response {
        switch access {
        case .anyone: break
        case .read: _ = try request.requireClient()
        case .write: _ = try request.requireWriter()
        }
        return try await next(request)
    }
}

extension APIOperation.Parameter {
    static func query(_ name: String, _ summary: String, schema: JSONValue) -> Self {
        Self(name: name, place: .query, summary: summary, schema: schema)
    }

    static func header(_ name: String, _ summary: String) -> Self {
        Self(name: name, place: .header, summary: summary, schema: .object(JSONObject([("type", .string("string"))])))
    }
}

extension APIOperation.Answer {
    static func problem(_ status: Int, _ summary: String) -> Self {
        Self(status: status, summary: summary, content: .problem)
    }
}
