import Foundation
import HTTPServer
import RecordsApp
import TestSupport

@testable import RecordsWeb

extension APISite {
    /// A site over a database file of its own in `directory`, its file
    /// checked by the timer every `check` (long by default: a test that
    /// wants the timer says so).
    static func onFile(
        in directory: TemporaryDirectory, check: Duration = .seconds(3600),
        configure: @escaping (inout WebConfiguration) -> Void = { _ in }
    ) async throws -> APISite {
        try await APISite(databaseURL: directory.fileURL("records.sqlite")) { configuration in
            configuration.databaseFileCheck = check
            configure(&configuration)
        }
    }

    /// A signed-in browser's request: its session cookie, and for a POST
    /// the session's CSRF token beside `form`.
    func signedIn(_ method: String, _ path: String, form: [String: String] = [:]) async throws -> APIAnswer {
        let (token, _) = try await app.context.accounts.sessions.create(
            userID: user.id, userAgent: "test", clientAddress: "127.0.0.1")
        var request = Request(method: method, path: path, cookies: [WebApp.sessionCookie: token.value])
        if method == "POST" {
            var fields = form
            fields["csrf"] = try Accounts.csrfToken(for: token)
            request.form = Form(fields)
        }
        return APIAnswer(await app.respond(to: request))
    }

    /// The people's last names, read from the database the site opened.
    func lastNames() async throws -> [String] {
        try await PeopleStore(database: database).page(number: 1, size: 100).items.map(\.lastName)
    }

    /// The `database` member of `GET /api/v1/status`.
    func databaseStatus() async throws -> [String: Any] {
        let answer = await send("GET", "/api/v1/status", token: reader)
        return answer.json["database"] as? [String: Any] ?? [:]
    }
}
