import Foundation
import RecordsApp

/// The account page's "Tokens for programs": the user's tokens, the form
/// that makes one, and revoking one after a confirmation.
///
/// | route | what |
/// | --- | --- |
/// | `POST /account/tokens` | make a token: answers the account page with its secret, shown once |
/// | `GET /account/tokens` | leads to the account page |
/// | `GET /account/tokens/:id/revoke` | asks before revoking |
/// | `POST /account/tokens/:id/revoke` | revokes one of one's tokens |
///
/// The secret is in the body of the answer to the POST alone: never in a
/// redirect's URL, a cookie or a log line, and the answer is not cached
/// (`Cache-Control: no-store`, as every answer of the site).
enum AccountTokenPages {
    static func routes(_ pages: AccountPageHandlers) -> [Route] {
        // Making a token asks for the password, behind the log-in throttle:
        // a session alone (a stolen cookie) cannot make a credential that
        // outlives it.
        pages.throttled(screen: pages.tokenAttempt) { request, message in
            Layout.errorPage(HTTPError(status: 429, message: message), request: request)
        }.routes([
            Route.post(
                "/account/tokens",
                invalidForm: { request, problem in
                    try await pages.account(
                        request, tokenForm: TokenForm(values: request.form.fields, error: problem.description),
                        status: problem.status)
                },
                handler: { request in try await pages.createToken(request) })
        ]) + [
            // The address the page with a new secret shows: the live script's
            // fetch of that page, or the address opened again, gets the
            // account page (without the secret).
            Route.get("/account/tokens") { _ in Response.redirect(to: "/account") },
            Route.get("/account/tokens/:id/revoke") { request in try await pages.confirmTokenRevocation(request) },
            Route.post("/account/tokens/:id/revoke") { request in try await pages.revokeToken(request) },
        ]
    }

    /// The expiries the form offers, by the value it sends: nil days for
    /// never.
    static let expiries: [(value: String, label: String, days: Int?)] = [
        ("never", "Never", nil), ("30", "In 30 days", 30), ("90", "In 90 days", 90), ("365", "In 365 days", 365),
    ]
    /// What the form shows first: the narrower access, a bounded life.
    static let defaultScope = APITokenScope.read
    static let defaultExpiry = "90"
}

/// The state of the token form on the account page.
struct TokenForm: Sendable {
    /// The values to show again after a mistake.
    var values: [String: String] = [:]
    /// What was wrong, for the form's top.
    var error: String?
    /// A token just made, and its secret, to show once.
    var created: (secret: String, token: APIToken)?
}

extension AccountPageHandlers {
    /// The section of the account page.
    func tokensSection(_ request: Request, tokens: [APIToken], form: TokenForm) -> HTML {
        let now = context.configuration.now()
        let rows = tokens.map { token -> HTML in
            let action: HTML
            if token.revokedAt != nil {
                action = "Revoked"
            } else if !token.isActive(at: now) {
                action = "Expired"
            } else {
                action = """
                    <a class="button secondary" href="\(HTML.path(["account", "tokens", String(token.id), "revoke"]))">Revoke</a>
                    """
            }
            return """
                <tr id="token-\(token.id)"><td><bdi>\(token.name)</bdi></td><td>\(token.scope.label)</td>\
                <td>\(Self.time(token.createdAt))</td><td>\(token.lastUsedAt.map(Self.time) ?? "Never")</td>\
                <td>\(token.expiresAt.map(Self.time) ?? "Never")</td><td><code>\(token.hint)…</code></td>\
                <td>\(action)</td></tr>
                """
        }
        let table: HTML =
            tokens.isEmpty
            ? "<p id=\"no-tokens\">You have no tokens.</p>"
            : """
            <table id="tokens"><thead><tr><th>Name</th><th>Access</th><th>Made</th><th>Last used</th><th>Expires</th>\
            <th>Starts with</th><th><span class="visually-hidden">Revoke</span></th></tr></thead>
            <tbody>\(rows)</tbody></table>
            """
        let created: HTML? = form.created.map { created in
            """
            <div class="notice" id="new-token" role="status">
            <p>Your token <bdi>\(created.token.name)</bdi> is made. Copy its secret now: it will not be shown again.</p>
            <div class="field"><label for="new-token-secret">Secret</label>
            <input id="new-token-secret" type="text" readonly value="\(created.secret)" autocomplete="off" spellcheck="false"></div>
            </div>
            """
        }
        let scope = form.values["scope"] ?? AccountTokenPages.defaultScope.rawValue
        let scopes = APITokenScope.allCases.map { item -> HTML in
            let selected: HTML = item.rawValue == scope ? " selected" : ""
            return "<option value=\"\(item.rawValue)\"\(selected)>\(item.label)</option>"
        }
        let expiry = form.values["expiresIn"] ?? AccountTokenPages.defaultExpiry
        let expiries = AccountTokenPages.expiries.map { item -> HTML in
            let selected: HTML = item.value == expiry ? " selected" : ""
            return "<option value=\"\(item.value)\"\(selected)>\(item.label)</option>"
        }
        return """
            <h2 id="tokens-heading">Tokens for programs</h2>
            <p class="hint">A program (a script, another app) sends a token instead of your password. \
            Changing your password revokes every token.</p>
            \(created)
            \(table)
            <h3>Make a token</h3>
            \(Field.errorSummary(form.error))
            <form method="post" action="/account/tokens" class="card" id="token-form">
            \(Layout.csrfField(request))
            \(Field.input("name", label: "Name", value: form.created == nil ? form.values["name"] : nil, required: true, autocomplete: "off", hint: "What the program is, 1 to \(APITokenStore.maxNameLength) characters.", attributes: "maxlength=\"\(APITokenStore.maxNameLength)\""))
            <div class="field"><label for="field-scope">Access</label>
            <select id="field-scope" name="scope">\(scopes)</select></div>
            <div class="field"><label for="field-expiresIn">Expires</label>
            <select id="field-expiresIn" name="expiresIn">\(expiries)</select></div>
            \(Field.input("currentPassword", label: "Your password", type: "password", required: true, autocomplete: "current-password", hint: "A token acts for you, so making one asks for your password."))
            <div class="actions"><button type="submit" id="token-submit">Make token</button></div>
            </form>
            """
    }

    /// A token made, for the throttle: an attempt for the session's
    /// account, since its password is checked; a form with mistakes is
    /// refused before any password is looked at.
    func tokenAttempt(_ request: Request) async throws -> LoginThrottling.Attempt {
        guard let session = request.session else { throw HTTPError.notFound }
        let form = request.form
        let problem: String?
        if APITokenScope(rawValue: form.text("scope")) == nil {
            problem = "Choose the token's access."
        } else if !AccountTokenPages.expiries.contains(where: { $0.value == form.text("expiresIn") }) {
            problem = "Choose when the token expires."
        } else if form.text("currentPassword").isEmpty {
            problem = "Enter your password to make a token."
        } else {
            do {
                _ = try APITokenStore.validatedName(form.text("name"))
                problem = nil
            } catch let error as ValidationError {
                problem = Problem.sentence(error.description)
            }
        }
        if let problem {
            return .refused(
                try await account(request, tokenForm: TokenForm(values: form.fields, error: problem), status: 422))
        }
        return .account(session.email)
    }

    /// Makes a token, once the password is checked (``tokenAttempt(_:)``
    /// counts the check), and answers the account page with its secret.
    func createToken(_ request: Request) async throws -> Response {
        guard let session = request.session else { throw HTTPError.notFound }
        let form = request.form
        let values = form.fields
        guard let scope = APITokenScope(rawValue: form.text("scope")),
            let expiry = AccountTokenPages.expiries.first(where: { $0.value == form.text("expiresIn") })
        else { throw HTTPError.badRequest("Choose the token's access and when it expires.") }
        let expiresAt = expiry.days.map { context.configuration.now().addingTimeInterval(TimeInterval($0) * 86_400) }
        let users = self.users
        let password = form.text("currentPassword")
        do {
            _ = try await accounts.passwordGate.run {
                try await users.authenticate(email: session.email, password: password)
            }
        } catch AuthenticationError.invalidCredentials {
            // Left counted as a failed log-in by the throttle.
            return try await account(
                request, tokenForm: TokenForm(values: values, error: "Your password is wrong."), status: 422)
        }
        request.settleLoginAttempt(.succeeded)
        do {
            let created = try await accounts.tokens.create(
                userID: session.userID, name: form.text("name"), scope: scope, expiresAt: expiresAt)
            return try await account(request, tokenForm: TokenForm(created: created))
        } catch let error as ValidationError {
            return try await account(
                request, tokenForm: TokenForm(values: values, error: Problem.sentence(error.description)), status: 422)
        }
    }

    /// The page that asks before a token is revoked.
    func confirmTokenRevocation(_ request: Request) async throws -> Response {
        let token = try await ownToken(request)
        return Confirmation(
            title: "Revoke the token \(Layout.isolated(token.name))?",
            heading: "Revoke the token <bdi>\(token.name)</bdi>?",
            details: "<p>Programs that use it are refused from then on. This cannot be undone.</p>",
            action: HTML.path(["account", "tokens", String(token.id), "revoke"]), formID: "revoke-token-form",
            button: ("Revoke", "confirm-revoke")
        ).page(request)
    }

    /// Revokes one of the user's tokens; another user's is not found.
    func revokeToken(_ request: Request) async throws -> Response {
        guard let session = request.session else { throw HTTPError.notFound }
        do {
            try await accounts.tokens.revoke(id: try request.id(), userID: session.userID)
        } catch is RecordNotFoundError {
            throw HTTPError.notFound
        }
        return Layout.redirect(to: "/account", flash: "Token revoked.", request: request)
    }

    /// The signed-in user's token the path names; not found when it is
    /// another user's, or none.
    private func ownToken(_ request: Request) async throws -> APIToken {
        guard let session = request.session else { throw HTTPError.notFound }
        let id = try request.id()
        guard let token = try await accounts.tokens.list(userID: session.userID).first(where: { $0.id == id }) else {
            throw HTTPError.notFound
        }
        return token
    }
}
