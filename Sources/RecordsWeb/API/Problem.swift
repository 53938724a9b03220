import Foundation
import RecordsApp

/// An API error as a problem document (RFC 9457,
/// `application/problem+json`):
///
/// ```json
/// {"type":"about:blank","title":"Unprocessable Content","status":422,
///  "code":"validation","detail":"First name is required.",
///  "errors":{"firstName":"First name is required."}}
/// ```
///
/// `code` names the problem for programs (`validation`, `version-mismatch`,
/// `not-found`, ...); `detail` is a sentence for people, the same text the
/// `records` command prints; `errors` maps each JSON member at fault to
/// its message. A version mismatch adds `current`, the record as it is now.
struct Problem: Error, Sendable {
    var status: Int
    var code: String
    var detail: String
    /// Each member at fault and its message.
    var errors: [(member: String, message: String)] = []
    /// More members of the document (the current record of a 412).
    var extra: [(name: String, value: JSONValue)] = []
    /// Headers of the answer (`Retry-After`, `WWW-Authenticate`, `ETag`).
    var headers: [(name: String, value: String)] = []

    init(
        status: Int, code: String, detail: String, errors: [(member: String, message: String)] = [],
        headers: [(name: String, value: String)] = []
    ) {
        self.status = status
        self.code = code
        self.detail = detail
        self.errors = errors
        self.headers = headers
    }

    /// The reason phrase of `status`, the document's `title`.
    static func title(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 409: "Conflict"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 422: "Unprocessable Content"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 503: "Service Unavailable"
        case 507: "Insufficient Storage"
        default: status >= 500 ? "Internal Server Error" : "Error"
        }
    }

    /// The answer.
    var response: Response {
        var document = JSONObject([
            ("type", .string("about:blank")), ("title", .string(Self.title(status))),
            ("status", .integer(Int64(status))),
            ("code", .string(code)), ("detail", .string(detail)),
        ])
        if !errors.isEmpty {
            document.append("errors", .object(JSONObject(errors.map { ($0.member, JSONValue.string($0.message)) })))
        }
        for (name, value) in extra { document.append(name, value) }
        return Response(
            status: status, headers: [("Content-Type", "application/problem+json")] + headers,
            body: .bytes(JSONWriter.encode(.object(document))))
    }

    // MARK: - Common problems

    static func notFound(_ detail: String = "There is nothing at this address.") -> Problem {
        Problem(status: 404, code: "not-found", detail: detail)
    }

    /// A request without a valid token: the same answer for a missing,
    /// malformed, unknown, expired or revoked one, so it tells nothing of
    /// which.
    static let unauthorized = Problem(
        status: 401, code: "unauthorized",
        detail: "This needs a valid API token: send it as \"Authorization: Bearer <token>\".",
        headers: [("WWW-Authenticate", "Bearer realm=\"records\"")])

    static let readOnlyToken = Problem(
        status: 403, code: "read-only-token",
        detail: "This token may only read; create a read-write token to change records.")

    /// A validation error, each problem under the JSON member `members`
    /// maps its field to (the member itself when it maps none).
    static func validation(_ error: ValidationError, members: [String: String]) -> Problem {
        Problem(
            status: 422, code: "validation", detail: Self.sentence(error.description),
            errors: error.problems.map { (members[$0.field] ?? $0.field, Self.sentence($0.message)) })
    }

    /// `text` as a sentence: a capital first letter and a full stop.
    static func sentence(_ text: String) -> String {
        guard let first = text.first else { return text }
        let capitalized = first.uppercased() + text.dropFirst()
        return capitalized.hasSuffix(".") ? capitalized : capitalized + "."
    }
}
