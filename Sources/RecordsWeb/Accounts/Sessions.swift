import Foundation
import HTTPServer

/// The signed-in user of a request, as the accounts' authenticator found
/// it.
public struct WebSession: Sendable, Equatable {
    /// The user's ID in the Users app.
    public var userID: Int64
    /// The user's name, for the page header.
    public var displayName: String
    /// The user's email address.
    public var email: String
    /// The token forms must carry on this session (derived from the
    /// session's secret; never the session token itself).
    public var csrfToken: String
    /// The session's ID (not its token), for revoking it.
    public var sessionID: Int64

    /// Creates a session value.
    public init(userID: Int64, displayName: String, email: String, csrfToken: String, sessionID: Int64) {
        self.userID = userID
        self.displayName = displayName
        self.email = email
        self.csrfToken = csrfToken
        self.sessionID = sessionID
    }
}

/// Finds the session a request's session cookie names. The accounts code
/// provides it; the server calls it for every request that carries the
/// cookie.
public protocol SessionAuthenticator: Sendable {
    /// The session for `token`, or nil when the token is unknown, revoked
    /// or expired.
    func session(forToken token: String, request: Request) async -> WebSession?

    /// Which of `sessionIDs` are still valid now (not ended, not
    /// expired), without counting as a use of them; nil when that cannot
    /// be told (the database failed). A live page's event stream ends
    /// when the session it was opened with is not among them.
    func openSessions(among sessionIDs: Set<Int64>) async -> Set<Int64>?

    /// Calls `onChange` after each change of the sessions (some may have
    /// ended) until the function returned is called, which stops it; nil
    /// when there is nothing to observe. The live pages' event streams
    /// then check their sessions at once, not only at the next regular
    /// check.
    func observeSessionChanges(_ onChange: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)?
}

extension SessionAuthenticator {
    /// Nothing to observe: streams check their sessions at the regular
    /// checks only.
    public func observeSessionChanges(_ onChange: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)? {
        nil
    }
}

extension Request {
    /// The signed-in session, if the request carried a valid session
    /// cookie (set by the web app when the request's headers are in).
    public var session: WebSession? {
        get { context[SessionKey.self] }
        set { context[SessionKey.self] = newValue }
    }

    /// The token a form on the page must send back in its `csrf` field:
    /// the session's, or for a visitor who is not signed in, the one in the
    /// `records_csrf` cookie (which the web app sets when missing).
    public var csrfToken: String {
        get { context[CSRFTokenKey.self] }
        set { context[CSRFTokenKey.self] = newValue }
    }

    private enum SessionKey: RequestContextKey {
        static let defaultValue: WebSession? = nil
    }

    private enum CSRFTokenKey: RequestContextKey {
        static let defaultValue = ""
    }
}
