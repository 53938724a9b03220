import Foundation
import PasswordHashing
import RecordsApp

/// The web app's accounts: the session store, the log-in throttle and the
/// registration policy, shared by every request of one server.
public struct Accounts: Sendable {
    /// The sessions, in the app database.
    public let sessions: SessionStore
    /// The users' tokens for programs, in the app database.
    public let tokens: APITokenStore
    /// Failed log-ins per account and client address (in memory).
    public let throttle: LoginThrottle
    /// Who may register.
    public let registration: RegistrationPolicy
    /// Limits how many password hashes run at once.
    let passwordGate = PasswordGate()

    /// The accounts of `database`, with `configuration`'s policies and clock.
    public init(database: AppDatabase, configuration: WebConfiguration) {
        sessions = SessionStore(
            database: database, policy: configuration.sessionPolicy, now: configuration.now)
        tokens = APITokenStore(database: database, now: configuration.now)
        throttle = LoginThrottle(policy: configuration.loginThrottle, now: configuration.now)
        registration = configuration.registration
    }

    /// The token a session's forms carry: derived from the session's
    /// secret token (SHA-256 of it after a label of its own, so it is
    /// neither the token nor the digest the database keeps), so it needs
    /// no storage and cannot be made without the cookie.
    static func csrfToken(for token: SessionToken) throws -> String {
        let digest = try SHA256.digest(Array("records csrf\u{0}".utf8) + Array(token.value.utf8))
        return Data(digest).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The session cookie for `token`: kept by the browser for the
    /// session's absolute lifetime (the server ends it sooner when idle),
    /// `HttpOnly; SameSite=Lax; Path=/`, and `Secure` under TLS.
    func cookie(for token: SessionToken, request: Request, configuration: WebConfiguration) -> Cookie {
        Cookie(
            name: WebApp.sessionCookie, value: token.value,
            maxAge: Int(clamping: sessions.policy.absoluteLifetime.components.seconds),
            secure: request.isSecure || configuration.secureCookies)
    }
}

/// Finds the signed-in user of a request from its session cookie, through
/// the accounts' ``SessionStore``. A token that is malformed, unknown,
/// revoked or expired signs no one in; so does a database failure, which
/// is logged (never with the token).
public struct AccountsAuthenticator: SessionAuthenticator {
    let accounts: Accounts
    let log: @Sendable (String) -> Void

    /// An authenticator over `accounts`, logging failures to `log`.
    public init(accounts: Accounts, log: @escaping @Sendable (String) -> Void) {
        self.accounts = accounts
        self.log = log
    }

    public func session(forToken text: String, request: Request) async -> WebSession? {
        guard let token = SessionToken(text) else { return nil }
        do {
            guard let found = try await accounts.sessions.signedIn(token: token) else { return nil }
            let name = found.user.fullName
            return WebSession(
                userID: found.user.id, displayName: name.isEmpty ? found.user.email : name, email: found.user.email,
                csrfToken: try Accounts.csrfToken(for: token), sessionID: found.session.id)
        } catch {
            log("error: finding a session: \(error)")
            return nil
        }
    }

    public func openSessions(among sessionIDs: Set<Int64>) async -> Set<Int64>? {
        do {
            return try await accounts.sessions.openSessionIDs(among: sessionIDs)
        } catch {
            log("error: checking the sessions of live pages: \(error)")
            return nil
        }
    }

    public func observeSessionChanges(_ onChange: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)? {
        // Started here, so that no change after this call is missed. Every
        // signal is a reason to check, the first included: a session that
        // ended before the observation began is found by it. A failed
        // observation leaves the regular checks.
        var changes = accounts.sessions.changes.makeAsyncIterator()
        let task = Task {
            while (try? await changes.next()) != nil { onChange() }
        }
        return { task.cancel() }
    }
}
