import Foundation
import PasswordHashing
import SQLiteStore

/// What a token for programs may do.
public enum APITokenScope: String, Sendable, CaseIterable {
    /// Read records, change nothing.
    case read = "read"
    /// Read and change records.
    case readWrite = "read-write"

    /// How pages and the `records` command name it: "Read only".
    public var label: String {
        switch self {
        case .read: "Read only"
        case .readWrite: "Read and write"
        }
    }
}

/// A token a user made for a program (a script, another app), without its
/// secret, which is shown once when it is made and never kept.
public struct APIToken: Sendable, Equatable, Identifiable {
    /// The row's ID; it names the token in lists and to revoke it (it is
    /// no secret: only the secret opens anything).
    public let id: Int64
    /// Whose it is.
    public let userID: Int64
    /// What its owner called it ("backup script").
    public let name: String
    /// What it may do.
    public let scope: APITokenScope
    /// When it was made.
    public let createdAt: Date
    /// When it stops working, or nil for never.
    public let expiresAt: Date?
    /// When a program last used it, to the minute (written at most once a
    /// minute), or nil when none has.
    public let lastUsedAt: Date?
    /// When it was revoked, or nil.
    public let revokedAt: Date?
    /// The secret's first ``APITokenStore/hintLength`` characters
    /// (`rst_` and two more), so its owner can tell which token a program
    /// holds. Twelve bits of 256 leave the secret as hard to guess.
    public let hint: String

    /// Whether it opens anything at `date`: not revoked, not expired.
    public func isActive(at date: Date) -> Bool {
        guard revokedAt == nil else { return false }
        guard let expiresAt else { return true }
        return expiresAt > date
    }
}

/// The tokens users make for their programs, kept in the app database
/// (`api_tokens`, see the Users app's migrations): a program sends the
/// secret (`Authorization: Bearer rst_...`) instead of the user's password.
///
/// ```swift
/// let tokens = APITokenStore(database: database)
/// let (secret, token) = try await tokens.create(userID: ada.id, name: "backup", scope: .read, expiresAt: nil)
/// // show `secret` once; later, for each request of the program:
/// if let (token, user) = try await tokens.authenticate(secret: sent) { serve(user, token.scope) }
/// try await tokens.revoke(id: token.id, userID: ada.id)
/// ```
///
/// - A secret is `rst_` and 43 characters of base64url: 256 bits from the
///   system's secure generator (as ``SessionToken``). Only its SHA-256 is
///   stored, and a secret is found by its digest, so the time a lookup
///   takes says nothing about any stored secret.
/// - A token stops working when it is revoked, when it expires, when its
///   user changes their password (every token of the user is revoked in
///   the password's transaction, as every other session ends; see
///   ``UsersStore/changePassword(id:current:new:confirmation:keepingSession:)``)
///   and when its user is deleted (the rows go with the user's).
/// - A user has at most ``maxActiveTokens`` working tokens. Revoked and
///   expired tokens stay listed for ``keptAfterEnd`` after they stopped,
///   then are deleted when a token is made.
///
/// Time comes from `now`, so tests move a clock instead of waiting.
public struct APITokenStore: Sendable {
    /// The longest name, in characters.
    public static let maxNameLength = 100
    /// How many working (not revoked, not expired) tokens a user may have.
    public static let maxActiveTokens = 50
    /// How many characters of the secret ``APIToken/hint`` shows.
    public static let hintLength = 6
    /// What every secret starts with, so that one found in a file or a log
    /// is recognised for what it is.
    public static let secretPrefix = "rst_"
    /// How long a revoked or expired token stays in its owner's list.
    public static let keptAfterEnd: Duration = .seconds(30 * 86_400)
    /// The least time between two writes of a token's last use.
    public static let touchInterval: Duration = .seconds(60)

    private let database: AppDatabase
    private let now: @Sendable () -> Date

    /// Creates a store on the app's database.
    ///
    /// - Parameter now: The clock; the system's by default. Tests pass their own.
    public init(database: AppDatabase, now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.now = now
    }

    // MARK: - Making and checking

    /// Makes a token for a user and returns its secret (to show once; it is
    /// not kept) with the token. Tokens that stopped more than
    /// ``keptAfterEnd`` ago, of every user, are deleted on the way.
    ///
    /// - Parameters:
    ///   - name: What the user calls it; trimmed, 1 to ``maxNameLength``
    ///     characters on one line.
    ///   - expiresAt: When it stops working, or nil for never; it must be
    ///     after now.
    /// - Throws: ``ValidationError`` for a bad name, an expiry that is not
    ///   in the future, or a user who has ``maxActiveTokens`` working
    ///   tokens already (nothing is written); ``RecordNotFoundError`` when
    ///   no user has that ID; a database error.
    public func create(userID: Int64, name: String, scope: APITokenScope, expiresAt: Date?) async throws -> (
        secret: String, token: APIToken
    ) {
        let time = Self.timestamp(now())
        var validator = Validator()
        let name = validator.text(name, field: Self.nameField, maxLength: Self.maxNameLength)
        var expiry: Int64?
        if let expiresAt {
            let seconds = Self.timestamp(expiresAt)
            if seconds <= time { validator.fail(Self.expiryField, "expiry must be in the future") }
            expiry = seconds
        }
        try validator.check()
        let secret = Self.secretPrefix + SessionToken.generate().value
        let digest = try Self.digest(secret)
        let hint = String(secret.prefix(Self.hintLength))
        let expiryValue = expiry
        let purgeBefore = time - Self.keptAfterEnd.components.seconds
        let token = try await database.write(for: .users) { db in
            try Self.purge(db, before: purgeBefore)
            guard try User.exists(db, id: userID) else { throw RecordNotFoundError(kind: "user", id: userID) }
            let active =
                try db.fetchOne(
                    Int.self,
                    """
                    SELECT count(*) FROM \(Self.table)
                    WHERE \(Column.userID) = \(userID) AND \(Self.activeCondition(at: time))
                    """) ?? 0
            if active >= Self.maxActiveTokens {
                throw ValidationError(
                    field: Self.tokensField,
                    message: "a user can have at most \(Self.maxActiveTokens) working tokens; revoke one first")
            }
            try db.execute(
                """
                INSERT INTO \(Self.table)
                    (\(columns: [Column.userID, .name, .secretHash, .hint, .scope, .createdAt, .expiresAt]))
                VALUES (\(userID), \(name), \(digest), \(hint), \(scope.rawValue), \(time), \(expiryValue))
                """)
            return APIToken(
                id: db.lastInsertedRowID, userID: userID, name: name, scope: scope, createdAt: Self.date(time),
                expiresAt: expiryValue.map(Self.date), lastUsedAt: nil, revokedAt: nil, hint: hint)
        }
        return (secret, token)
    }

    /// The working token a secret opens, and its user; nil when it opens
    /// none: not a secret's form, never issued, revoked, expired, or its
    /// user deleted. Which of these is not said. When its last use was
    /// written more than ``touchInterval`` ago (or never), it is written
    /// now; otherwise this only reads.
    ///
    /// - Throws: ``UnreadableRowError`` when the user's row holds a value
    ///   the app cannot read; a database error.
    public func authenticate(secret: String) async throws -> (token: APIToken, user: User)? {
        guard Self.isWellFormed(secret) else { return nil }
        let digest = try Self.digest(secret)
        let time = Self.timestamp(now())
        let found = try await database.read(for: .users) { db in
            try db.fetchOne(
                """
                SELECT \(Self.tokenColumns), \(User.selection)
                FROM \(Self.table) JOIN \(identifier: User.tableName) ON \(User.Columns.id) = \(Column.userID)
                WHERE \(Column.secretHash) = \(digest)
                """
            ).map { row in (token: try Self.token(row), user: try User(row: row)) }
        }
        guard let found, found.token.isActive(at: Self.date(time)) else { return nil }
        let lastUsed = found.token.lastUsedAt.map(Self.timestamp)
        // Written as a cutoff so that no stored value can overflow the arithmetic.
        if let lastUsed, lastUsed > time - Self.touchInterval.components.seconds { return found }
        // A read replica keeps the primary's record of use.
        if database.isReadOnly { return found }
        let id = found.token.id
        let stillActive = try await database.write(for: .users) { db in
            try db.execute(
                """
                UPDATE \(Self.table) SET \(Column.lastUsedAt) = \(time)
                WHERE \(Column.id) = \(id) AND \(Self.activeCondition(at: time))
                """)
            return db.changesCount > 0
        }
        // Revoked between the read and the write: it opens nothing any more.
        guard stillActive else { return nil }
        let token = found.token
        return (
            APIToken(
                id: token.id, userID: token.userID, name: token.name, scope: token.scope, createdAt: token.createdAt,
                expiresAt: token.expiresAt, lastUsedAt: Self.date(time), revokedAt: nil, hint: token.hint),
            found.user
        )
    }

    /// Whether the token of that ID works now: not revoked, not expired,
    /// its user not deleted. It only reads (asking is no use of the
    /// token); the web app asks it for the event streams a token opened,
    /// which end with it.
    public func isActive(id: Int64) async throws -> Bool {
        let time = Self.timestamp(now())
        return try await database.read(for: .users) { db in
            try db.fetchOne(
                Int.self, "SELECT 1 FROM \(Self.table) WHERE \(Column.id) = \(id) AND \(Self.activeCondition(at: time))"
            ) != nil
        }
    }

    // MARK: - Listing, renaming, revoking

    /// A user's tokens, the newest first: the working ones, and those that
    /// stopped (revoked or expired) less than ``keptAfterEnd`` ago (tell
    /// them apart with ``APIToken/isActive(at:)``).
    public func list(userID: Int64) async throws -> [APIToken] {
        try await database.read(for: .users) { db in
            try db.fetchAll(
                """
                SELECT \(Self.tokenColumns) FROM \(Self.table) WHERE \(Column.userID) = \(userID)
                ORDER BY \(Column.createdAt) DESC, \(Column.id) DESC
                """
            ).map(Self.token)
        }
    }

    /// Renames one of a user's tokens and returns it.
    ///
    /// - Throws: ``ValidationError`` for a bad name (see
    ///   ``create(userID:name:scope:expiresAt:)``); ``RecordNotFoundError``
    ///   when the user has no token of that ID, whether another user has
    ///   one or not.
    @discardableResult
    public func rename(id: Int64, userID: Int64, name: String) async throws -> APIToken {
        let name = try Self.validatedName(name)
        return try await database.write(for: .users) { db in
            try db.execute(
                "UPDATE \(Self.table) SET \(Column.name) = \(name) WHERE \(Column.id) = \(id) AND \(Column.userID) = \(userID)"
            )
            guard db.changesCount > 0,
                let token = try db.fetchOne(
                    "SELECT \(Self.tokenColumns) FROM \(Self.table) WHERE \(Column.id) = \(id)"
                ).map(Self.token)
            else { throw RecordNotFoundError(kind: "token", id: id) }
            return token
        }
    }

    /// Revokes one of a user's tokens: it opens nothing from now on.
    /// Revoking a token again, or one that expired, changes nothing and
    /// succeeds.
    ///
    /// - Throws: ``RecordNotFoundError`` when the user has no token of that
    ///   ID, whether another user has one or not (another user's token is
    ///   left alone).
    public func revoke(id: Int64, userID: Int64) async throws {
        let time = Self.timestamp(now())
        try await database.write(for: .users) { db in
            let owned = try db.fetchOne(
                Int.self, "SELECT 1 FROM \(Self.table) WHERE \(Column.id) = \(id) AND \(Column.userID) = \(userID)")
            guard owned != nil else { throw RecordNotFoundError(kind: "token", id: id) }
            try db.execute(
                """
                UPDATE \(Self.table) SET \(Column.revokedAt) = \(time)
                WHERE \(Column.id) = \(id) AND \(Column.revokedAt) IS NULL
                """)
        }
    }

    /// A token's name as it would be kept: trimmed, checked as
    /// ``create(userID:name:scope:expiresAt:)`` checks it. Front-ends ask
    /// before they ask for a password, so a bad name wastes no typing.
    ///
    /// - Throws: ``ValidationError`` for a bad name.
    public static func validatedName(_ name: String) throws -> String {
        var validator = Validator()
        let name = validator.text(name, field: nameField, maxLength: maxNameLength)
        try validator.check()
        return name
    }

    // MARK: - Secrets

    /// Whether `secret` has a secret's form: ``secretPrefix`` and 43
    /// characters of canonical base64url. Anything else is refused before
    /// the database is asked.
    static func isWellFormed(_ secret: String) -> Bool {
        guard secret.utf8.starts(with: secretPrefix.utf8) else { return false }
        // The rest is a session token's form: 256 bits, spelt one way only.
        return SessionToken(String(decoding: secret.utf8.dropFirst(secretPrefix.utf8.count), as: UTF8.self)) != nil
    }

    /// The bytes the database keeps: SHA-256 of the secret's text.
    static func digest(_ secret: String) throws -> Data { Data(try SHA256.digest(Array(secret.utf8))) }

    // MARK: - Rows

    /// Field names of the validation errors.
    static let nameField = "name"
    static let expiryField = "expiry"
    static let tokensField = "tokens"

    private typealias Column = APITokenSchema.Columns
    private static let table = APITokenSchema.table

    /// Every column but the secret's digest.
    private static let tokenColumns: SQL = "\(columns: Column.allCases.filter { $0 != .secretHash })"

    /// The rows of tokens that work at `time`.
    private static func activeCondition(at time: Int64) -> SQL {
        "\(Column.revokedAt) IS NULL AND (\(Column.expiresAt) IS NULL OR \(Column.expiresAt) > \(time))"
    }

    @Sendable private static func token(_ row: Row) throws -> APIToken {
        let scopeText: String = try row[Column.scope]
        let expires: Int64? = try row[Column.expiresAt]
        let lastUsed: Int64? = try row[Column.lastUsedAt]
        let revoked: Int64? = try row[Column.revokedAt]
        return APIToken(
            id: try row[Column.id], userID: try row[Column.userID], name: try row[Column.name],
            // The table's CHECK admits only the two; a tool's other value reads as the narrower.
            scope: APITokenScope(rawValue: scopeText) ?? .read, createdAt: date(try row[Column.createdAt]),
            expiresAt: expires.map(date), lastUsedAt: lastUsed.map(date), revokedAt: revoked.map(date),
            hint: try row[Column.hint])
    }

    /// Deletes the tokens revoked or expired at or before `cutoff`.
    private static func purge(_ db: Database, before cutoff: Int64) throws {
        try db.execute(
            "DELETE FROM \(table) WHERE \(Column.revokedAt) <= \(cutoff) OR \(Column.expiresAt) <= \(cutoff)")
    }

    /// Whole seconds since 1970, kept between 0 and 2^62 so that no
    /// arithmetic on them overflows, whatever the clock says.
    static func timestamp(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return seconds < 0x1p62 ? Int64(seconds) : 1 << 62
    }

    private static func date(_ timestamp: Int64) -> Date { Date(timeIntervalSince1970: TimeInterval(timestamp)) }
}
