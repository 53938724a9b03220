import Foundation
import PasswordHashing
import SQLiteStore

/// How long a session lasts, and how often its last use is written.
///
/// The defaults suit an app people come back to over days: a session
/// ends after **7 days without a request** (idle timeout) and in any case
/// **30 days after log-in** (absolute lifetime), when the password must be
/// typed again. Its last use is written at most once a **minute**
/// (``touchInterval``), not on every request, so reading pages costs no
/// write; the idle timeout is therefore counted from up to a minute
/// before the last request.
public struct SessionPolicy: Sendable, Equatable {
    /// How long a session may go unused.
    public var idleTimeout: Duration
    /// How long a session lasts after log-in, however much it is used.
    public var absoluteLifetime: Duration
    /// The least time between two writes of a session's last use.
    public var touchInterval: Duration

    /// 7 days idle, 30 days in all, last use written at most once a minute.
    public static let standard = SessionPolicy()

    /// Creates a policy.
    ///
    /// - Precondition: The timeout and lifetime are at least a second; the
    ///   touch interval is not negative.
    public init(
        idleTimeout: Duration = .seconds(7 * 86_400), absoluteLifetime: Duration = .seconds(30 * 86_400),
        touchInterval: Duration = .seconds(60)
    ) {
        precondition(idleTimeout >= .seconds(1) && absoluteLifetime >= .seconds(1), "sessions must last a second")
        precondition(touchInterval >= .zero, "the touch interval cannot be negative")
        self.idleTimeout = idleTimeout
        self.absoluteLifetime = absoluteLifetime
        self.touchInterval = touchInterval
    }
}

/// The secret a browser holds for its session: 256 bits from the system's
/// cryptographically secure generator (`SystemRandomNumberGenerator`:
/// `getrandom` on Linux, `arc4random` on Apple platforms), written as 43
/// characters of unpadded base64url, which fits a cookie as it is.
///
/// Only its SHA-256 is stored. Its `description` never shows it, so a
/// token that reaches a log by mistake stays secret; ``value`` is for the
/// cookie alone.
public struct SessionToken: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The token as the cookie carries it.
    public let value: String

    /// Its length in characters.
    public static let length = 43

    /// A fresh token.
    public static func generate() -> SessionToken {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for _ in 0..<4 {
            let word = generator.next()
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> shift)) }
        }
        return SessionToken(bytes: bytes)
    }

    private init(bytes: [UInt8]) {
        value = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The token a cookie holds, or nil when `text` is not one: exactly 43
    /// characters of base64url in their canonical form (32 bytes).
    public init?(_ text: some StringProtocol) {
        // Checked without decoding: every request with a cookie or an API
        // token comes here. 43 characters carry 258 bits, the token's 256
        // and two low bits of the last character, which must be zero: set,
        // they would make another spelling of the same bytes.
        var count = 0
        var last: UInt8 = 0
        for byte in text.utf8 {
            count += 1
            guard count <= Self.length, let sextet = Self.sextet(byte) else { return nil }
            last = sextet
        }
        guard count == Self.length, last & 0b11 == 0 else { return nil }
        value = String(text)
    }

    /// The 6 bits a base64url character stands for, or nil.
    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }

    /// The bytes the database keeps: SHA-256 of the token's text.
    func digest() throws -> Data { Data(try SHA256.digest(Array(value.utf8))) }

    /// Never the token itself.
    public var description: String { "SessionToken(redacted)" }
    /// Never the token itself.
    public var debugDescription: String { description }
}

/// One signed-in browser of a user.
public struct Session: Sendable, Equatable, Identifiable {
    /// The row's ID; it names the session in the "your sessions" list
    /// (it is no secret: only the token signs in).
    public let id: Int64
    /// Whose it is.
    public let userID: Int64
    /// When the user logged in.
    public let createdAt: Date
    /// When it was last used (written at most once per
    /// ``SessionPolicy/touchInterval``).
    public let lastSeenAt: Date
    /// The browser's `User-Agent`, cut to ``SessionStore/maxUserAgentLength``.
    public let userAgent: String?
    /// The client's address, cut to ``SessionStore/maxClientAddressLength``.
    public let clientAddress: String?

    /// When it ends unless used again: the idle timeout after its last use,
    /// or its absolute end, whichever is first.
    public func expiresAt(under policy: SessionPolicy) -> Date {
        min(
            lastSeenAt.addingTimeInterval(Self.seconds(policy.idleTimeout)),
            createdAt.addingTimeInterval(Self.seconds(policy.absoluteLifetime)))
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        TimeInterval(duration.components.seconds) + TimeInterval(duration.components.attoseconds) * 1e-18
    }
}

/// A session that is valid now, and its user.
public struct SignedInSession: Sendable, Equatable {
    /// The user.
    public let user: User
    /// The session.
    public let session: Session
}

/// Log-in sessions of the Users app's accounts, kept in the app database
/// (``SessionSchema``), so they survive a restart of the server and can
/// be revoked from anywhere.
///
/// ```swift
/// let sessions = SessionStore(database: database)
/// let (token, _) = try await sessions.create(userID: user.id, userAgent: agent)   // after a good password
/// // the browser keeps token.value in a cookie; on each request:
/// if let signedIn = try await sessions.signedIn(token: token) { show(signedIn.user) }
/// try await sessions.revoke(token: token)                                       // log out
/// ```
///
/// Only the SHA-256 of a token is stored. A session ends when it is
/// revoked, when it has been idle for ``SessionPolicy/idleTimeout``, when
/// it is ``SessionPolicy/absoluteLifetime`` old, when its user changes
/// their password (every session but the one that changed it; see
/// ``UsersStore/changePassword(id:current:new:confirmation:keepingSession:)``)
/// and when its user is deleted.
///
/// Time comes from `now`, so tests move a clock instead of waiting.
public struct SessionStore: Sendable {
    /// The longest `User-Agent` kept, in characters.
    public static let maxUserAgentLength = 200
    /// The longest client address kept, in characters (an IPv6 address
    /// with a zone fits).
    public static let maxClientAddressLength = 64

    private let database: AppDatabase
    /// How long sessions last.
    public let policy: SessionPolicy
    private let now: @Sendable () -> Date

    /// Creates a store on the app's database.
    ///
    /// - Parameters:
    ///   - policy: How long sessions last; ``SessionPolicy/standard`` by default.
    ///   - now: The clock; the system's by default. Tests pass their own.
    public init(
        database: AppDatabase, policy: SessionPolicy = .standard, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.database = database
        self.policy = policy
        self.now = now
    }

    // MARK: - Creating and checking

    /// Starts a session for a user who has just proved who they are, and
    /// returns its token (for the cookie; it is not kept) with the session.
    /// Expired sessions of every user are deleted on the way.
    ///
    /// - Throws: ``RecordNotFoundError`` when no user has that ID; a
    ///   database error.
    public func create(userID: Int64, userAgent: String? = nil, clientAddress: String? = nil) async throws -> (
        token: SessionToken, session: Session
    ) {
        let token = SessionToken.generate()
        let digest = try token.digest()
        let time = Self.timestamp(now())
        let cutoffs = self.cutoffs(at: time)
        let agent = Self.clean(userAgent, maxLength: Self.maxUserAgentLength)
        let client = Self.clean(clientAddress, maxLength: Self.maxClientAddressLength)
        let session = try await database.write(for: .users) { db in
            try Self.purge(db, cutoffs: cutoffs)
            guard try User.exists(db, id: userID) else { throw RecordNotFoundError(kind: "user", id: userID) }
            try db.execute(
                """
                INSERT INTO \(Self.table) (\(columns: [Column.tokenHash, .userID, .created, .lastSeen, .userAgent, .client]))
                VALUES (\(digest), \(userID), \(time), \(time), \(agent), \(client))
                """)
            return Session(
                id: db.lastInsertedRowID, userID: userID, createdAt: Self.date(time), lastSeenAt: Self.date(time),
                userAgent: agent, clientAddress: client)
        }
        return (token, session)
    }

    /// The session a token opens and its user, or nil when the token opens
    /// none (never issued, revoked, expired, or its user deleted). An
    /// expired session found this way is deleted. When its last use was
    /// written more than ``SessionPolicy/touchInterval`` ago, it is written
    /// now; otherwise this only reads.
    ///
    /// - Throws: ``UnreadableRowError`` when the user's row holds a value
    ///   the app cannot read; a database error.
    public func signedIn(token: SessionToken) async throws -> SignedInSession? {
        let digest = try token.digest()
        let time = Self.timestamp(now())
        let cutoffs = self.cutoffs(at: time)
        let found = try await database.read(for: .users) { db in
            try db.fetchOne(
                """
                SELECT \(Self.sessionColumns), \(User.selection)
                FROM \(Self.table) JOIN \(identifier: User.tableName) ON \(User.Columns.id) = \(Column.userID)
                WHERE \(Column.tokenHash) = \(digest)
                """
            ).map { row in SignedInSession(user: try User(row: row), session: try Self.session(row)) }
        }
        guard let found else { return nil }
        let lastSeen = Self.timestamp(found.session.lastSeenAt)
        let created = Self.timestamp(found.session.createdAt)
        if lastSeen <= cutoffs.idle || created <= cutoffs.absolute {
            // A read replica leaves the removal to the primary.
            if database.isReadOnly { return nil }
            let id = found.session.id
            try await database.write(for: .users) { db in
                try db.execute("DELETE FROM \(Self.table) WHERE \(Column.id) = \(id)")
            }
            return nil
        }
        // Written as a cutoff so that no stored value can overflow the arithmetic.
        // A read replica keeps the primary's record of use: a session used
        // only on replicas expires after the idle timeout.
        guard lastSeen <= time - policy.touchInterval.components.seconds, !database.isReadOnly else { return found }
        let id = found.session.id
        let stillThere = try await database.write(for: .users) { db in
            try db.execute("UPDATE \(Self.table) SET \(Column.lastSeen) = \(time) WHERE \(Column.id) = \(id)")
            return db.changesCount > 0
        }
        // Revoked between the read and the write: it opens nothing any more.
        guard stillThere else { return nil }
        let session = found.session
        return SignedInSession(
            user: found.user,
            session: Session(
                id: session.id, userID: session.userID, createdAt: session.createdAt, lastSeenAt: Self.date(time),
                userAgent: session.userAgent, clientAddress: session.clientAddress))
    }

    // MARK: - Listing and ending

    /// A user's sessions that are valid now, the most recently used first.
    public func sessions(userID: Int64) async throws -> [Session] {
        let cutoffs = self.cutoffs(at: Self.timestamp(now()))
        return try await database.read(for: .users) { db in
            try db.fetchAll(
                """
                SELECT \(Self.sessionColumns) FROM \(Self.table)
                WHERE \(Column.userID) = \(userID) AND \(Column.lastSeen) > \(cutoffs.idle)
                    AND \(Column.created) > \(cutoffs.absolute)
                ORDER BY \(Column.lastSeen) DESC, \(Column.id) DESC
                """
            ).map(Self.session)
        }
    }

    /// Which of `ids` name sessions that are valid now: not revoked, not
    /// expired, their user not deleted. Unlike ``signedIn(token:)`` it
    /// only reads, so asking is no use of a session (it keeps none from
    /// going idle). The web app asks it for its live pages' event
    /// streams, which end with their session.
    public func openSessionIDs(among ids: Set<Int64>) async throws -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        let cutoffs = self.cutoffs(at: Self.timestamp(now()))
        let list = ids.sorted()
        let open = try await database.read(for: .users) { db in
            try db.fetchAll(
                Int64.self,
                """
                SELECT \(Column.id) FROM \(Self.table)
                WHERE \(Column.id) IN \(list) AND \(Column.lastSeen) > \(cutoffs.idle)
                    AND \(Column.created) > \(cutoffs.absolute)
                """)
        }
        return Set(open)
    }

    /// A signal now, then again after every committed transaction that
    /// changed the sessions (a log-in, a log-out, a revocation, a password
    /// change that ended sessions), whoever committed it, as
    /// ``AppDatabase/changes(of:)`` signals an app's: this database's
    /// writes at once, another process's within the library's polling
    /// interval.
    public var changes: AppChanges {
        database.changes(ofTable: SessionSchema.tableName, of: .users)
    }

    /// Ends the session a token opens (log-out).
    ///
    /// - Returns: Whether there was one.
    @discardableResult
    public func revoke(token: SessionToken) async throws -> Bool {
        let digest = try token.digest()
        return try await database.write(for: .users) { db in
            try db.execute("DELETE FROM \(Self.table) WHERE \(Column.tokenHash) = \(digest)")
            return db.changesCount > 0
        }
    }

    /// Ends one of a user's sessions, by its ID; another user's session of
    /// that ID is left alone.
    ///
    /// - Returns: Whether the user had that session.
    @discardableResult
    public func revoke(sessionID: Int64, userID: Int64) async throws -> Bool {
        try await database.write(for: .users) { db in
            try db.execute(
                "DELETE FROM \(Self.table) WHERE \(Column.id) = \(sessionID) AND \(Column.userID) = \(userID)")
            return db.changesCount > 0
        }
    }

    /// Ends every session of a user, or every one but `kept`.
    ///
    /// - Returns: How many ended.
    @discardableResult
    public func revokeAll(userID: Int64, except kept: Int64? = nil) async throws -> Int {
        try await database.write(for: .users) { db in
            try SessionSchema.deleteSessions(db, userID: userID, except: kept)
        }
    }

    /// Deletes every expired session.
    ///
    /// - Returns: How many were deleted.
    @discardableResult
    public func purgeExpired() async throws -> Int {
        let cutoffs = self.cutoffs(at: Self.timestamp(now()))
        return try await database.write(for: .users) { db in try Self.purge(db, cutoffs: cutoffs) }
    }

    // MARK: - Rows

    private typealias Column = SessionSchema.Columns
    private static let table = SessionSchema.table

    /// Every column but the token's digest.
    private static let sessionColumns: SQL = "\(columns: Column.allCases.filter { $0 != .tokenHash })"

    @Sendable private static func session(_ row: Row) throws -> Session {
        Session(
            id: try row[Column.id], userID: try row[Column.userID], createdAt: date(try row[Column.created]),
            lastSeenAt: date(try row[Column.lastSeen]), userAgent: try row[Column.userAgent],
            clientAddress: try row[Column.client])
    }

    /// A session last used at or before `idle`, or created at or before
    /// `absolute`, has expired.
    private struct Cutoffs: Sendable {
        let idle: Int64
        let absolute: Int64
    }

    private func cutoffs(at time: Int64) -> Cutoffs {
        Cutoffs(
            idle: time - policy.idleTimeout.components.seconds,
            absolute: time - policy.absoluteLifetime.components.seconds)
    }

    @discardableResult
    private static func purge(_ db: Database, cutoffs: Cutoffs) throws -> Int {
        try db.execute(
            "DELETE FROM \(table) WHERE \(Column.lastSeen) <= \(cutoffs.idle) OR \(Column.created) <= \(cutoffs.absolute)"
        )
        return db.changesCount
    }

    /// Whole seconds since 1970, kept between 0 and 2^62 so that no
    /// arithmetic on them overflows, whatever the clock says.
    private static func timestamp(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return seconds < 0x1p62 ? Int64(seconds) : 1 << 62
    }

    private static func date(_ timestamp: Int64) -> Date { Date(timeIntervalSince1970: TimeInterval(timestamp)) }

    /// Text for the sessions list: control and format characters dropped
    /// (so no line break or bidirectional override reaches a page), cut
    /// to `maxLength` characters; nil when nothing is left.
    private static func clean(_ text: String?, maxLength: Int) -> String? {
        guard let text else { return nil }
        var scalars = String.UnicodeScalarView()
        scalars.append(
            contentsOf: text.unicodeScalars.filter {
                let category = $0.properties.generalCategory
                return category != .control && category != .format
            })
        let cleaned = String(String(scalars).prefix(maxLength)).trimmingCharacters(in: .whitespaces)
        return cleaned.isEmpty ? nil : cleaned
    }
}
