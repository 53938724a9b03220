import Foundation
import HTTPServer
import RecordsApp

/// The log-in throttle (``LoginThrottle``) as middleware: the one place
/// that decides when a request counts as a password guess, for the routes
/// that check a password (log in, register, the profile with its
/// password, changing the password).
///
/// Each route says, through ``screen``, what its request is before
/// anything is counted:
///
/// - ``Attempt/account(_:)``: a password check for this account (the
///   email typed, or the session's). It is counted *before* the route's
///   handler runs, so that parallel guesses get no more tries than serial
///   ones; while the account or the client's address is locked the
///   handler does not run, and the route's own form page
///   (``lockedPage``) answers with the "too many attempts" message, status
///   429 and a `Retry-After`.
/// - ``Attempt/notAnAttempt``: nothing to guess with (a profile saved
///   without the password): the handler runs, uncounted.
/// - ``Attempt/refused(_:)``: refused before any check (a field left
///   empty, a form with mistakes, registration closed): this answer is
///   given, uncounted, and the handler does not run. Such refusals are
///   decided here, before counting, rather than by the handler cancelling
///   a count afterwards: a count taken and given back would still lock
///   out (or let through) parallel guesses while it was held.
///
/// The handler of a counted attempt settles it with
/// ``Request/settleLoginAttempt(_:)``: ``Outcome/succeeded`` clears the
/// account's failures, ``Outcome/notAnAttempt`` takes the count back (the
/// check was refused before a password was looked at). An attempt the
/// handler does not settle, or whose handler throws, stays counted as a
/// failure: a route put behind this middleware without settling can only
/// be throttled too much, never too little.
///
/// A form the server refused (too large, malformed) is passed on
/// uncounted: the route's `invalidForm` page answers it, checking nothing.
struct LoginThrottling: Middleware {
    /// What a request is, before anything is counted.
    enum Attempt: Sendable {
        /// A password check for this account: counted.
        case account(String)
        /// No password to check: the handler runs, uncounted.
        case notAnAttempt
        /// Refused before any check: this answer, uncounted.
        case refused(Response)
    }

    /// How a counted attempt ended, as its handler reports it.
    enum Outcome: Sendable, Equatable {
        /// The password was right: the account's failures are cleared.
        case succeeded
        /// A failure (the default): it stays counted.
        case failed
        /// Refused before any password was checked: the count is taken back.
        case notAnAttempt
    }

    /// The throttle counted against.
    let throttle: LoginThrottle
    /// What the request is (its form has been read).
    let screen: @Sendable (Request) async throws -> Attempt
    /// The route's form page again, with the request's values and this
    /// message, status 429 (the `Retry-After` is added here).
    let lockedPage: @Sendable (Request, _ message: String) -> Response

    func respond(to request: Request, next: Responder) async throws -> Response {
        var request = try await request.receivingBody()
        guard request.formProblem == nil else { return try await next(request) }
        let email: String
        switch try await screen(request) {
        case .account(let account): email = account
        case .notAnAttempt: return try await next(request)
        case .refused(let response): return response
        }
        let client = request.clientAddress
        if case .locked(let wait) = throttle.beginAttempt(email: email, client: client) {
            return lockedPage(request, Self.lockedMessage(wait))
                .with(header: "Retry-After", String(wait.components.seconds))
        }
        let report = Report()
        request.context[Report.self] = report
        // A handler that throws leaves the attempt counted.
        let response = try await next(request)
        switch report.outcome {
        case .failed: break
        case .succeeded: throttle.attemptSucceeded(email: email, client: client)
        case .notAnAttempt: throttle.cancelAttempt(email: email, client: client)
        }
        return response
    }

    /// The "too many attempts" message for a lock of `wait`.
    static func lockedMessage(_ wait: Duration) -> String {
        let seconds = wait.components.seconds
        let delay = seconds < 60 ? "\(seconds) seconds" : "\((seconds + 59) / 60) minutes"
        return "Too many failed attempts for this account or from this address. Try again in \(delay)."
    }

    /// Where a counted attempt's handler reports its outcome.
    final class Report: RequestContextKey, Sendable {
        static let defaultValue: Report? = nil
        private let state = Locked(Outcome.failed)

        var outcome: Outcome {
            get { state.withLock { $0 } }
            set { state.withLock { $0 = newValue } }
        }
    }
}

extension Request {
    /// Reports how the log-in attempt ``LoginThrottling`` counted for this
    /// request ended; nothing when none was counted.
    func settleLoginAttempt(_ outcome: LoginThrottling.Outcome) {
        if let report = context[LoginThrottling.Report.self] { report.outcome = outcome }
    }
}
