import Foundation

/// Slows down password guessing: after a number of failed log-ins an
/// account, or a client address, is locked for a while, longer after each
/// further failure.
///
/// The numbers (``Policy/standard``):
///
/// | counted per | free failures | first lock | each further failure | longest lock |
/// | --- | --- | --- | --- | --- |
/// | account (the email as typed, ignoring case) | 5 | 30 s | doubles it | 15 min |
/// | client address | 20 | 30 s | doubles it | 15 min |
///
/// Failures are forgotten an hour after the last one (``Policy/forgetAfter``).
/// So a guesser gets 5 tries at an account, then about 4 an hour; one
/// client that spreads guesses over many accounts is stopped after 20.
///
/// - The account is the email typed, whether or not it is registered, so
///   a lock says nothing about which emails exist: an unknown email and a
///   wrong password are treated alike, here as in
///   ``UsersStore/authenticate(email:password:)``.
/// - A successful log-in clears its account's failures, not its
///   client's: otherwise a guesser with one account of their own could
///   clear their address's count between guesses at another's.
/// - While locked, a log-in is refused before the password is checked,
///   and the refusal is not counted as a failure.
/// - Anyone can lock someone else's account for at most 15 minutes at a
///   time by failing on purpose; that is the price of the per-account
///   limit, and why the lock is short and not permanent.
///
/// It lives in memory (a restart forgets it) and is safe to use from any
/// thread. At most ``Policy/maximumEntries`` accounts and as many
/// addresses are tracked: past that, forgotten entries are dropped first,
/// then the ones whose last failure is oldest.
///
/// ```swift
/// let throttle = LoginThrottle()
/// if case .locked(let wait) = throttle.beginAttempt(email: email, client: address) { return tooManyAttempts(wait) }
/// let user = try await users.authenticate(email: email, password: password)   // a failure stays counted
/// throttle.attemptSucceeded(email: email, client: address)
/// ```
///
/// (``check(email:client:)``, ``recordFailure(email:client:)`` and
/// ``recordSuccess(email:client:)`` do the same in separate steps, for a
/// caller that checks one attempt at a time.)
public final class LoginThrottle: @unchecked Sendable {
    /// The limits for one kind of key.
    public struct Limit: Sendable, Equatable {
        /// Failures allowed before the first lock.
        public var freeFailures: Int
        /// The first lock's length; each further failure doubles it.
        public var firstLock: Duration
        /// The longest lock.
        public var longestLock: Duration

        /// Creates a limit.
        ///
        /// - Precondition: `freeFailures` is at least 1; the locks are not
        ///   negative and the longest is at least the first.
        public init(freeFailures: Int, firstLock: Duration, longestLock: Duration) {
            precondition(freeFailures >= 1, "at least one failure must be free")
            precondition(firstLock >= .zero && longestLock >= firstLock, "locks must grow from a positive first one")
            self.freeFailures = freeFailures
            self.firstLock = firstLock
            self.longestLock = longestLock
        }

        /// How long to lock after `failures` failures in a row, or nil for
        /// no lock.
        func lock(after failures: Int) -> Duration? {
            guard failures >= freeFailures else { return nil }
            var lock = firstLock
            for _ in 0..<min(failures - freeFailures, 62) {
                lock = lock * 2
                if lock >= longestLock { return longestLock }
            }
            return min(lock, longestLock)
        }
    }

    /// Limits per account and per client address.
    public struct Policy: Sendable, Equatable {
        /// Per account.
        public var account: Limit
        /// Per client address.
        public var client: Limit
        /// How long after its last failure a key starts afresh (once any
        /// lock has ended).
        public var forgetAfter: Duration
        /// The most accounts (and, separately, addresses) tracked.
        public var maximumEntries: Int

        /// The numbers in the table above.
        public static let standard = Policy(
            account: Limit(freeFailures: 5, firstLock: .seconds(30), longestLock: .seconds(15 * 60)),
            client: Limit(freeFailures: 20, firstLock: .seconds(30), longestLock: .seconds(15 * 60)),
            forgetAfter: .seconds(3600), maximumEntries: 10_000)

        /// Creates a policy.
        public init(account: Limit, client: Limit, forgetAfter: Duration, maximumEntries: Int) {
            self.account = account
            self.client = client
            self.forgetAfter = forgetAfter
            self.maximumEntries = max(1, maximumEntries)
        }
    }

    /// Whether a log-in may be tried now.
    public enum Decision: Sendable, Equatable {
        /// Check the password.
        case allowed
        /// Refuse without checking; try again after this long.
        case locked(retryAfter: Duration)
    }

    private struct Entry {
        var failures = 0
        var lastFailure = Date.distantPast
        var lockedUntil = Date.distantPast
        /// The lock before the last failure set this one, for taking it back.
        var previousLock = Date.distantPast
    }

    private struct State {
        var accounts: [String: Entry] = [:]
        var clients: [String: Entry] = [:]
    }

    /// The limits.
    public let policy: Policy
    private let now: @Sendable () -> Date
    private let lock = NSLock()
    // Only read or written with `lock` held: the reason for `@unchecked Sendable`.
    private var state = State()

    /// Creates a throttle.
    ///
    /// - Parameters:
    ///   - policy: The limits; ``Policy/standard`` by default.
    ///   - now: The clock; the system's by default. Tests pass their own.
    public init(policy: Policy = .standard, now: @escaping @Sendable () -> Date = { Date() }) {
        self.policy = policy
        self.now = now
    }

    /// Whether a log-in as `email` from `client` may be tried now: the
    /// longer of the two locks, if either is locked.
    public func check(email: String, client: String?) -> Decision {
        let time = now()
        let account = Self.accountKey(email)
        return withState { state in Self.decision(state, account: account, client: client, at: time) }
    }

    private static func decision(_ state: State, account: String, client: String?, at time: Date) -> Decision {
        let waits = [state.accounts[account]?.lockedUntil, client.flatMap { state.clients[$0]?.lockedUntil }]
            .compactMap { $0 }.filter { $0 > time }
        guard let until = waits.max() else { return .allowed }
        // At most about 30 million years: a lock policy of absurd length cannot overflow.
        let seconds = min(until.timeIntervalSince(time).rounded(.up), 1e15)
        return .locked(retryAfter: .seconds(max(1, Int64(seconds))))
    }

    /// Counts a failed log-in (unknown email or wrong password) against
    /// the account and the client, locking either when it reaches its
    /// limit.
    public func recordFailure(email: String, client: String?) {
        let time = now()
        let account = Self.accountKey(email)
        withState { state in
            fail(&state.accounts, key: account, limit: policy.account, at: time)
            if let client { fail(&state.clients, key: client, limit: policy.client, at: time) }
        }
    }

    /// Clears the account's failures after a successful log-in (the
    /// client's stay counted).
    public func recordSuccess(email: String, client: String?) {
        let account = Self.accountKey(email)
        withState { state in _ = state.accounts.removeValue(forKey: account) }
    }

    /// Checks whether a log-in may be tried now and, if so, counts it as a
    /// failure at once, in one step: requests that arrive together cannot
    /// all pass the check before any failure is counted, so a burst of
    /// parallel guesses gets no more tries than guesses one after another.
    /// A successful attempt is then taken back with
    /// ``attemptSucceeded(email:client:)``; a failed one needs nothing more.
    public func beginAttempt(email: String, client: String?) -> Decision {
        let time = now()
        let account = Self.accountKey(email)
        return withState { state in
            let decision = Self.decision(state, account: account, client: client, at: time)
            guard decision == .allowed else { return decision }
            fail(&state.accounts, key: account, limit: policy.account, at: time)
            if let client { fail(&state.clients, key: client, limit: policy.client, at: time) }
            return .allowed
        }
    }

    /// An attempt begun with ``beginAttempt(email:client:)`` succeeded:
    /// the account's failures are cleared, and the client's count loses
    /// the one failure the attempt added (so that many people logging in
    /// from one address, behind one router, do not lock it).
    public func attemptSucceeded(email: String, client: String?) {
        let time = now()
        let account = Self.accountKey(email)
        withState { state in
            state.accounts.removeValue(forKey: account)
            if let client { takeBack(&state.clients, key: client, limit: policy.client, at: time) }
        }
    }

    /// An attempt begun with ``beginAttempt(email:client:)`` was not made
    /// after all (the form was refused before any password was checked):
    /// the one failure it added is taken back from the account and the
    /// client, and nothing else is cleared.
    public func cancelAttempt(email: String, client: String?) {
        let time = now()
        let account = Self.accountKey(email)
        withState { state in
            takeBack(&state.accounts, key: account, limit: policy.account, at: time)
            if let client { takeBack(&state.clients, key: client, limit: policy.client, at: time) }
        }
    }

    private func takeBack(_ entries: inout [String: Entry], key: String, limit: Limit, at time: Date) {
        guard var entry = entries[key] else { return }
        entry.failures = max(0, entry.failures - 1)
        // The attempt was allowed, so the lock it found had ended; a lock it set goes back to that one.
        if limit.lock(after: entry.failures + 1) != nil {
            entry.lockedUntil = min(entry.lockedUntil, entry.previousLock)
        }
        if limit.lock(after: entry.failures) == nil { entry.lockedUntil = .distantPast }
        entries[key] = entry
    }

    /// How many accounts and client addresses are tracked now.
    public var trackedCount: (accounts: Int, clients: Int) {
        withState { ($0.accounts.count, $0.clients.count) }
    }

    private func fail(_ entries: inout [String: Entry], key: String, limit: Limit, at time: Date) {
        var entry = entries[key] ?? Entry()
        if isForgotten(entry, at: time) { entry = Entry() }
        if entries[key] == nil, entries.count >= policy.maximumEntries { makeRoom(in: &entries, at: time) }
        entry.failures += 1
        entry.lastFailure = time
        if let lock = limit.lock(after: entry.failures) {
            entry.previousLock = entry.lockedUntil
            entry.lockedUntil = time.addingTimeInterval(Session.seconds(lock))
        }
        entries[key] = entry
    }

    private func isForgotten(_ entry: Entry, at time: Date) -> Bool {
        entry.lockedUntil <= time
            && time.timeIntervalSince(entry.lastFailure) >= Session.seconds(policy.forgetAfter)
    }

    /// Drops the forgotten entries, or if there are none the one whose
    /// last failure is oldest.
    private func makeRoom(in entries: inout [String: Entry], at time: Date) {
        entries = entries.filter { !isForgotten($0.value, at: time) }
        if entries.count >= policy.maximumEntries,
            let oldest = entries.min(by: { $0.value.lastFailure < $1.value.lastFailure })?.key
        {
            entries.removeValue(forKey: oldest)
        }
    }

    private func withState<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// Emails are ASCII and compared ignoring case, as the Users table
    /// does; surrounding spaces are not part of them.
    static func accountKey(_ email: String) -> String {
        // Most keys are in their form already (the API's throttle asks with
        // the same one on every request): printable ASCII without capitals
        // at either end and inside, which trimming and lowering keep as is.
        let utf8 = email.utf8
        if let first = utf8.first, let last = utf8.last, (0x21..<0x7F).contains(first), (0x21..<0x7F).contains(last),
            !utf8.contains(where: { $0 >= 0x80 || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) })
        {
            return email
        }
        return email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }
}
