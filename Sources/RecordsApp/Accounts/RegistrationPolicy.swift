/// Who may register an account through the web app (`records serve
/// --registration`). An account opens every app's records, since the
/// People, Contacts and Coffee records are shared by all users, so the
/// default lets in only the first person.
///
/// | policy | who may register |
/// | --- | --- |
/// | `first-user` (default) | anyone while the database has no account; nobody once it has one |
/// | `open` | anyone who reaches the server |
/// | `closed` | nobody: accounts are made with `records users register` |
///
/// Whatever the policy, `records users register` on the server's machine
/// adds accounts.
public enum RegistrationPolicy: String, Sendable, CaseIterable, Equatable, CustomStringConvertible {
    /// Anyone may register.
    case open
    /// Registration is open while there is no account, so the owner of a
    /// new database can make theirs from the browser; then it is closed.
    case firstUser = "first-user"
    /// Nobody may register through the web app.
    case closed

    /// ``firstUser``.
    public static let `default` = RegistrationPolicy.firstUser

    /// The policy named as on the command line (`open`, `first-user`,
    /// `closed`), ignoring case; nil for any other text.
    public init?(argument: String) {
        guard let policy = Self(rawValue: argument.lowercased()) else { return nil }
        self = policy
    }

    /// The name as on the command line.
    public var description: String { rawValue }

    /// What it means, for help text.
    public var summary: String {
        switch self {
        case .open: "anyone may register"
        case .firstUser: "registration is open until the first account exists"
        case .closed: "nobody may register; add accounts with `records users register`"
        }
    }
}

/// Registration through the web app is closed by the server's
/// ``RegistrationPolicy``; nothing was written.
public struct RegistrationClosedError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The policy that closed it.
    public let policy: RegistrationPolicy

    /// Creates the error.
    public init(policy: RegistrationPolicy) {
        self.policy = policy
    }

    public var description: String {
        "registration is closed on this server; ask whoever runs it for an account"
    }
}
