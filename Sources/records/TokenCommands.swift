import Foundation
import RecordsApp

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The longest expiry `--expires-in` takes, in days (ten years).
private let maxExpiryDays = 3650

private let emailOption = Command.Option(
    name: "email", valueName: "EMAIL", help: "The user's email address, in any case", isRequired: true)

/// `records token ...`: the tokens a user makes for programs, which send
/// them instead of the user's password.
let tokenCommands = CommandFamily(
    app: .users,
    summary: "tokens for programs: make, list and revoke a user's tokens for the JSON API",
    commands: [
        Command(
            name: "create", summary: "Make a token for a program; its secret is shown only once",
            options: [
                emailOption,
                Command.Option(
                    name: "name", valueName: "NAME",
                    help: "What the token is for (1-\(APITokenStore.maxNameLength) characters)", isRequired: true),
                Command.Option.flag("read-only", "Let the token read records but change none"),
                Command.Option(
                    name: "expires-in", valueName: "DAYS",
                    help: "Let the token stop working after DAYS days (1-\(maxExpiryDays)); it never does by default"
                ),
                Command.Option.flag("password-stdin", "Read the user's password from the first line of standard input"),
                .json,
            ],
            discussion: """
                Making a token is a log-in: the user's password is asked for on the terminal, or read with \
                --password-stdin. The secret (rst_ and 43 more characters) is printed once and never kept, only \
                its SHA-256: when standard output is not a terminal it is the whole of standard output, one \
                line, and the note goes to standard error, so scripts can read it. A user has at most \
                \(APITokenStore.maxActiveTokens) working tokens. Changing the user's password revokes all of them.
                """,
            examples: [
                "records token create --email ada@example.com --name \"backup script\" --read-only --expires-in 90",
                "printf '%s\\n' \"$PW\" | records token create --email ada@example.com --name sync --password-stdin "
                    + "> sync.token",
            ],
            run: { invocation in
                let email = invocation.required("email")
                let name = try APITokenStore.validatedName(invocation.required("name"))
                let days = try expiryDays(invocation)
                let scope: APITokenScope = invocation.arguments.flag("read-only") ? .read : .readWrite
                let password = try PasswordInput.read(
                    ["password"], fromStandardInput: invocation.arguments.flag("password-stdin"),
                    path: invocation.path)[0]
                let database = try invocation.database()
                let user = try await UsersStore(database: database).authenticate(email: email, password: password)
                let now = Date()
                let expiresAt = days.map { now.addingTimeInterval(TimeInterval($0) * 86_400) }
                let (secret, token) = try await APITokenStore(database: database, now: { now }).create(
                    userID: user.id, name: name, scope: scope, expiresAt: expiresAt)
                try invocation.afterChange("token \(token.id) was made", lost: "its secret, shown only once") {
                    if invocation.wantsJSON {
                        try Console.json(CreatedToken(secret: secret, token: TokenSummary(token, at: now)))
                    } else if isatty(STDOUT_FILENO) == 1 {
                        try Console.out(
                            """
                            Made \(describe(token)) for \(Terminal.clean(user.email)). Its secret, shown only this once:

                                \(secret)

                            Keep it where the program reads it. \(revokeHint(token, email: user.email))
                            """)
                    } else {
                        try Console.out(secret)
                        Console.error(
                            "records: made \(describe(token)); its secret, on standard output, is shown only this "
                                + "once. \(revokeHint(token, email: user.email))")
                    }
                }
            }),
        Command(
            name: "list", summary: "List a user's tokens, never their secrets",
            options: [emailOption, .json],
            discussion: """
                Lists the user's working tokens, and those revoked or expired in the last 30 days, the newest \
                first. HINT is a secret's first characters, to tell which token a program holds; times are UTC.
                """,
            examples: ["records token list --email ada@example.com"],
            run: { invocation in
                let database = try invocation.database()
                let user = try await tokenOwner(invocation, database: database)
                let now = Date()
                let tokens = try await APITokenStore(database: database).list(userID: user.id)
                let list = StreamingList<TokenSummary>(
                    [
                        .init(title: "ID", alignment: .right), .init(title: "NAME"), .init(title: "ACCESS"),
                        .init(title: "CREATED"), .init(title: "LAST USED"), .init(title: "EXPIRES"),
                        .init(title: "HINT"), .init(title: "STATUS"),
                    ], json: invocation.wantsJSON
                ) { token in
                    [
                        String(token.id), token.name, token.access, token.created, token.lastUsed ?? "never",
                        token.expires ?? "never", token.hint + "…", token.status,
                    ]
                }
                try list.print(
                    tokens.map { TokenSummary($0, at: now) },
                    empty: "\(user.email) has no tokens. Make one: records token create --help", noun: "tokens")
            }),
        Command(
            name: "revoke", summary: "Revoke tokens of a user, by ID",
            positionals: [Command.Positional(name: "ID", help: "The tokens' IDs, as listed", takesRest: true)],
            options: [emailOption],
            discussion: """
                A revoked token opens nothing from then on. Revoking one again changes nothing. When an ID is \
                not one of the user's tokens, nothing is revoked.
                """,
            examples: [
                "records token revoke --email ada@example.com 1", "records token revoke --email ada@example.com 1 2",
            ],
            run: { invocation in
                let ids = try (invocation.arguments.positionals.first ?? "").split(separator: " ").map {
                    try ParsedArguments.recordID(String($0), path: invocation.path)
                }
                let database = try invocation.database()
                let user = try await tokenOwner(invocation, database: database)
                let store = APITokenStore(database: database)
                let owned = try await store.list(userID: user.id)
                // All checked first, so that a mistyped ID revokes none.
                for id in ids where !owned.contains(where: { $0.id == id }) {
                    throw RecordNotFoundError(kind: "token", id: id)
                }
                var done: [String] = []
                for id in ids {
                    try await store.revoke(id: id, userID: user.id)
                    if let token = owned.first(where: { $0.id == id }) { done.append("Revoked \(describe(token)).") }
                }
                try invocation.afterChange("the tokens were revoked") {
                    try Console.out(done.joined(separator: "\n"))
                }
            }),
    ],
    familyName: "token")

/// `--expires-in DAYS`, or nil when not given.
@MainActor
private func expiryDays(_ invocation: Invocation) throws -> Int? {
    guard let text = invocation.arguments.value("expires-in") else { return nil }
    guard let days = Int(text), (1...maxExpiryDays).contains(days) else {
        throw UsageError(
            message: "option '--expires-in' needs a whole number of days from 1 to \(maxExpiryDays), "
                + "not '\(text)'",
            helpPath: invocation.path)
    }
    return days
}

/// The user `--email` names.
@MainActor
private func tokenOwner(_ invocation: Invocation, database: AppDatabase) async throws -> User {
    let email = invocation.required("email")
    guard let user = try await UsersStore(database: database).user(email: email) else {
        throw CommandFailure(message: "no user has the email address \(Terminal.clean(email))")
    }
    return user
}

/// `token 3 "backup" (read only, expires 2027-03-02T10:00:00Z)`
private func describe(_ token: APIToken) -> String {
    let expiry = token.expiresAt.map { "expires \(timestamp($0))" } ?? "never expires"
    return "token \(token.id) \"\(Terminal.clean(token.name))\" (\(token.scope.label.lowercased()), \(expiry))"
}

private func revokeHint(_ token: APIToken, email: String) -> String {
    "To stop it: records token revoke --email \(Terminal.clean(email)) \(token.id)"
}

/// Times as UTC, to the second: `2026-12-02T11:30:00Z`.
private func timestamp(_ date: Date) -> String { date.formatted(.iso8601) }

/// A token as `list` prints it and `--json` gives it; never its secret.
private struct TokenSummary: Encodable, Sendable {
    let id: Int64
    let name: String
    /// `read` or `read-write`.
    let scope: String
    /// "Read only" or "Read and write".
    let access: String
    let created: String
    let lastUsed: String?
    let expires: String?
    let revoked: String?
    let hint: String
    /// `active`, `expired` or `revoked`.
    let status: String

    init(_ token: APIToken, at now: Date) {
        id = token.id
        name = token.name
        scope = token.scope.rawValue
        access = token.scope.label
        created = timestamp(token.createdAt)
        lastUsed = token.lastUsedAt.map(timestamp)
        expires = token.expiresAt.map(timestamp)
        revoked = token.revokedAt.map(timestamp)
        hint = token.hint
        status = token.revokedAt != nil ? "revoked" : token.isActive(at: now) ? "active" : "expired"
    }
}

/// What `create --json` prints: the secret, once, and the token.
private struct CreatedToken: Encodable, Sendable {
    let secret: String
    let token: TokenSummary
}
