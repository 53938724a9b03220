import SQLiteStore

/// The Users app's tokens for programs: `api_tokens`, one row per token a
/// user made for a script or another program, beside `User_Master`.
///
/// - `secret_hash` is the SHA-256 of the secret the program holds, never
///   the secret: a copy of the database (a backup, a stolen file) opens
///   nothing. The secret carries 256 random bits, so a fast digest is
///   enough, as for sessions (``SessionSchema``).
/// - `hint` is the secret's first characters, so that its owner can tell
///   which token a program holds; it is no secret (see
///   ``APIToken/hint``).
/// - `user_id` references the user with `ON DELETE CASCADE`: deleting a
///   user deletes their tokens.
/// - A revoked token keeps its row (with `revoked_at`) for a while, so its
///   owner sees that it was revoked; see ``APITokenStore``.
/// - Times are whole seconds since 1970 (UTC); `expires_at` NULL never
///   expires, `last_used_at` NULL was never used.
enum APITokenSchema {
    /// In order; append, never edit a shipped one.
    static let migrations: [Migrator.Migration] = [
        Migrator.migration("users.apiTokens") { db in
            try db.execute(
                """
                CREATE TABLE api_tokens (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    user_id INTEGER NOT NULL REFERENCES User_Master (UID) ON DELETE CASCADE,
                    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 400),
                    secret_hash BLOB NOT NULL UNIQUE
                        CHECK (typeof(secret_hash) = 'blob' AND length(secret_hash) = 32),
                    hint TEXT NOT NULL,
                    scope TEXT NOT NULL CHECK (scope IN ('read', 'read-write')),
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER,
                    last_used_at INTEGER,
                    revoked_at INTEGER)
                """)
            try db.execute("CREATE INDEX api_tokens_user ON api_tokens (user_id)")
        }
    ]

    /// The table's name.
    static let tableName = "api_tokens"

    /// The columns of `api_tokens`, in the table's order.
    enum Columns: String, TableColumn {
        case id
        case userID = "user_id"
        case name
        /// The SHA-256 digest of the secret; the secret itself is never stored.
        case secretHash = "secret_hash"
        case hint
        case scope
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case lastUsedAt = "last_used_at"
        case revokedAt = "revoked_at"
    }

    /// The table, for SQL.
    static let table: SQL = "\(identifier: tableName)"

    /// Revokes every token of a user that is not revoked yet, in the
    /// caller's transaction (a password change), and returns how many.
    @discardableResult
    static func revokeTokens(_ db: Database, userID: Int64, at time: Int64) throws -> Int {
        try db.execute(
            """
            UPDATE \(table) SET \(Columns.revokedAt) = \(time)
            WHERE \(Columns.userID) = \(userID) AND \(Columns.revokedAt) IS NULL
            """)
        return db.changesCount
    }
}
