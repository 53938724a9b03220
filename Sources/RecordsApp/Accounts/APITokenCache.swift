import Foundation
import SQLiteStore

/// The tokens programs sent lately, kept in memory for a few seconds so
/// that a program's next requests are let in without reading the
/// database: a busy program sends many requests a second with the same
/// token, and each would otherwise read the token and its user.
///
/// ```swift
/// let cache = APITokenCache(tokens: APITokenStore(database: database), database: database)
/// if let (token, user) = try await cache.authenticate(secret: sent) { serve(user, token.scope) }
/// ```
///
/// - An entry is found by the SHA-256 of the secret, as the database
///   keeps it; the secret itself is never kept.
/// - A token this process revokes, a password change (which revokes the
///   user's tokens), a user deleted or changed: every commit of this
///   database's connections that changes `api_tokens` or the users' table
///   drops the entries it concerns before the write returns, so the very
///   next request reads the database again.
/// - An expired token is refused at once: every hit checks the expiry.
/// - Another process (`records token revoke`, another server on the same
///   file) writes through its own connections, which this process is not
///   told about: its revocation takes effect within ``timeToLive``, when
///   the entry is read again.
/// - It holds at most ``capacity`` entries: past that, the expired ones
///   go, then the oldest.
/// - A token's last use is written as ``APITokenStore/authenticate(secret:)``
///   writes it, on the reads the cache does; so it is at most
///   ``APITokenStore/touchInterval`` plus ``timeToLive`` old. That write
///   is a commit to the token's row like a revocation, so it drops the
///   token too: the request after it reads the database once more.
///
/// Time comes from `now`, so tests move a clock instead of waiting.
public final class APITokenCache: Sendable {
    /// How long an entry is trusted without reading the database: the
    /// longest another process's revocation may take to be noticed.
    public static let defaultTimeToLive: Duration = .seconds(10)
    /// How many tokens are kept by default.
    public static let defaultCapacity = 10_000

    /// How long an entry is trusted.
    public let timeToLive: Duration
    /// How many entries are kept at most.
    public let capacity: Int

    private struct Entry {
        let token: APIToken
        let user: User
        /// When it was read from the database.
        let readAt: Date
    }

    private struct State {
        var entries: [Data: Entry] = [:]
        /// Counts the commits that dropped entries: a read that began
        /// before one must not put back what that commit dropped.
        var generation: UInt64 = 0
        /// Whether the commit observer is in place: nothing is cached
        /// without it. Kept here, not read from ``observation``, so that a
        /// request takes one lock.
        var observed = false
    }

    private let tokens: APITokenStore
    private let now: @Sendable () -> Date
    private let state = LockedState(State())
    /// Keeps the commit observer; nil when the database cannot be
    /// observed, and then nothing is cached.
    private let observation: LockedState<ObservationToken?> = LockedState(nil)

    /// A cache in front of `tokens`, told of the commits of `database`
    /// (the database `tokens` reads).
    ///
    /// - Parameters:
    ///   - timeToLive: How long an entry is trusted without reading the
    ///     database.
    ///   - capacity: How many tokens are kept at most (at least 1).
    ///   - now: The clock; the system's by default. Tests pass their own.
    public init(
        tokens: APITokenStore, database: AppDatabase, timeToLive: Duration = defaultTimeToLive,
        capacity: Int = defaultCapacity, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.tokens = tokens
        self.timeToLive = timeToLive
        self.capacity = max(1, capacity)
        self.now = now
        let tables: Set<String> = [APITokenSchema.tableName, User.tableName]
        // Weak: the database's writer keeps the observer, and must not keep
        // the cache alive after its owner let it go.
        let token = try? database.writer.addTransactionObserver(tables: tables) { [weak self] transaction in
            self?.drop(transaction)
        }
        observation.withLock { $0 = token }
        state.withLock { $0.observed = token != nil }
    }

    deinit { observation.withLock { $0?.cancel() } }

    /// The working token a secret opens, and its user, as
    /// ``APITokenStore/authenticate(secret:)`` answers, from memory when
    /// it was read less than ``timeToLive`` ago.
    ///
    /// - Throws: What ``APITokenStore/authenticate(secret:)`` throws.
    public func authenticate(secret: String) async throws -> (token: APIToken, user: User)? {
        guard APITokenStore.isWellFormed(secret) else { return nil }
        let key = try APITokenStore.digest(secret)
        let time = now()
        let (cached, generation, observed) = state.withLock { state in
            (state.entries[key], state.generation, state.observed)
        }
        if let cached, observed, time >= cached.readAt, time < cached.readAt.addingTimeInterval(seconds(timeToLive)) {
            // Expiry is checked on every hit: the cache never outlives it.
            return cached.token.isActive(at: time) ? (cached.token, cached.user) : nil
        }
        let found = try await tokens.authenticate(secret: secret)
        state.withLock { state in
            guard let found else {
                state.entries[key] = nil
                return
            }
            // A commit that dropped entries since the read began may have
            // been this token's revocation: the next request reads again.
            guard observed, state.generation == generation else { return }
            if state.entries[key] == nil, state.entries.count >= capacity { evict(&state, at: time) }
            state.entries[key] = Entry(token: found.token, user: found.user, readAt: time)
        }
        return found
    }

    /// Forgets every entry: the next request of each token reads the
    /// database.
    public func removeAll() {
        state.withLock { state in
            state.entries.removeAll()
            state.generation &+= 1
        }
    }

    /// How many tokens are kept now.
    public var count: Int { state.withLock { $0.entries.count } }

    /// Drops what a committed transaction may have changed: a token
    /// updated or deleted (revoked, renamed, its last use written), and
    /// every entry when a user changed or went (a password change, a
    /// deletion, a profile edit), as the user's rows are not keyed here.
    private func drop(_ transaction: CommittedTransaction) {
        let tokenTable = APITokenSchema.tableName.lowercased()
        var tokenIDs: Set<Int64> = []
        var usersChanged = false
        for change in transaction.changes where change.kind != .insert {
            if change.table.lowercased() == tokenTable {
                tokenIDs.insert(change.rowID)
            } else {
                usersChanged = true
            }
        }
        // An insert changes no entry, but a read that began before it is
        // harmless to keep; only drops move the generation.
        guard usersChanged || !tokenIDs.isEmpty else { return }
        state.withLock { state in
            state.generation &+= 1
            if usersChanged {
                state.entries.removeAll()
            } else {
                state.entries = state.entries.filter { !tokenIDs.contains($0.value.token.id) }
            }
        }
    }

    /// Makes room for one entry: the expired entries go, and when none
    /// has, the one read longest ago.
    private func evict(_ state: inout State, at time: Date) {
        let cutoff = time.addingTimeInterval(-seconds(timeToLive))
        state.entries = state.entries.filter { $0.value.readAt > cutoff && $0.value.readAt <= time }
        if state.entries.count >= capacity, let oldest = state.entries.min(by: { $0.value.readAt < $1.value.readAt }) {
            state.entries[oldest.key] = nil
        }
    }

    private func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}

/// A value behind a lock, for the cache's state.
private final class LockedState<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
