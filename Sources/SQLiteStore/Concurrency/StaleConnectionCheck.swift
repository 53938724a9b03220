/// A check that replaces a connection which stopped seeing its database's
/// new commits.
///
/// Some VFSes serve a database that lives elsewhere and changes under
/// them, such as a read replica following another machine's commits
/// (Litestream's read-replica VFS). A connection through such a VFS can
/// fall behind for good while a new one would read the latest commits. Set
/// ``Configuration/staleConnectionCheck`` and a ``DatabaseQueue`` or
/// ``DatabasePool`` asks, before it lends a connection to an access and at
/// most once per ``interval``, whether that connection is stale. A stale
/// connection is closed, and a new one is opened for the access.
///
/// ```swift
/// var configuration = Configuration()
/// configuration.vfs = "litestream"
/// configuration.isReadOnly = true
/// configuration.staleConnectionCheck = StaleConnectionCheck(every: .seconds(1)) {
///     // Called for each connection opened: what it captures is that
///     // connection's own state.
///     { db in
///         let lag = try db.fetchOne(String.self, sql: "PRAGMA litestream_lag").flatMap { Int($0) } ?? 0
///         return lag >= 3 ? "no new commits read for \(lag) s" : nil
///     }
/// }
/// let replica = try DatabaseQueue(path: "replica.sqlite", configuration: configuration)
/// ```
///
/// The check runs outside any transaction, on the connection it checks,
/// by the access about to use it; it must not write, nor keep the
/// database. A check that throws leaves the connection in place (the
/// access then reports what is wrong with it).
public struct StaleConnectionCheck: Sendable {
    /// Checks one connection: returns why it is stale, or nil when it is
    /// current.
    public typealias Check = @Sendable (Database) throws -> String?

    /// The least time between two checks of one connection.
    public var interval: Duration
    /// Makes the check of a connection just opened. Each connection gets
    /// its own, so the check may capture state of the moment it opened.
    public var makeCheck: @Sendable () -> Check
    /// Called with the check's reason each time a stale connection is
    /// replaced, before the new one opens (for a log).
    public var onReplace: (@Sendable (String) -> Void)?

    /// A check run at most once per `interval` on each connection.
    ///
    /// - Parameters:
    ///   - interval: The least time between two checks of one connection.
    ///   - onReplace: Called with the reason each time a connection is
    ///     replaced.
    ///   - makeCheck: Makes the check of each connection opened.
    public init(
        every interval: Duration, onReplace: (@Sendable (String) -> Void)? = nil,
        makeCheck: @escaping @Sendable () -> Check
    ) {
        self.interval = interval
        self.onReplace = onReplace
        self.makeCheck = makeCheck
    }
}

/// The check of one open connection, kept by its ``ConnectionSlot``.
struct ConnectionFreshness {
    private let check: StaleConnectionCheck.Check
    private let interval: Duration
    private var lastCheck: ContinuousClock.Instant

    init(_ staleness: StaleConnectionCheck) {
        check = staleness.makeCheck()
        interval = staleness.interval
        lastCheck = .now
    }

    /// Why `database` is stale, when a check is due and finds it so.
    mutating func staleReason(_ database: Database) -> String? {
        let now = ContinuousClock.now
        guard now - lastCheck >= interval else { return nil }
        lastCheck = now
        return (try? check(database)) ?? nil
    }
}
