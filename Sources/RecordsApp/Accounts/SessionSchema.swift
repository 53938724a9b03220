import SQLiteStore

/// The web app's log-in sessions: `User_Session`, one row per signed-in
/// browser, beside the Users app's `User_Master`.
///
/// - `SESSION_TOKEN_HASH` is the SHA-256 of the token the browser holds,
///   never the token: a copy of the database (a backup, a stolen file)
///   signs no one in. The token is 256 random bits, so a fast digest is
///   enough; a guessable password would need scrypt.
/// - `SESSION_UID` references the user with `ON DELETE CASCADE`: deleting
///   a user ends their sessions. Foreign keys are on for every connection
///   of the app (the library's default). A later migration that rebuilds
///   `User_Master` must keep that in mind (dropping the table deletes the
///   sessions, which only signs people out).
/// - Times are whole seconds since 1970 (UTC).
/// - `SESSION_USER_AGENT` and `SESSION_CLIENT` are only for the user's
///   "your sessions" list, cut to ``SessionStore/maxUserAgentLength`` and
///   ``SessionStore/maxClientAddressLength`` characters.
///
/// The migration belongs to the Users app's group (``UsersSchema``): when
/// the Users table is refused, so are sessions, and the web app's log-in
/// says why.
enum SessionSchema {
    /// In order; append, never edit a shipped one.
    static let migrations: [Migrator.Migration] = [
        Migrator.migration("users.sessions") { db in
            try db.execute(
                """
                CREATE TABLE User_Session (
                    SID INTEGER PRIMARY KEY AUTOINCREMENT,
                    SESSION_TOKEN_HASH BLOB NOT NULL UNIQUE
                        CHECK (typeof(SESSION_TOKEN_HASH) = 'blob' AND length(SESSION_TOKEN_HASH) = 32),
                    SESSION_UID INTEGER NOT NULL REFERENCES User_Master (UID) ON DELETE CASCADE,
                    SESSION_CREATED INTEGER NOT NULL,
                    SESSION_LAST_SEEN INTEGER NOT NULL,
                    SESSION_USER_AGENT TEXT,
                    SESSION_CLIENT TEXT)
                """)
            try db.execute("CREATE INDEX User_Session_user ON User_Session (SESSION_UID)")
        }
    ]

    /// The table's name.
    static let tableName = "User_Session"

    /// The columns of `User_Session`, in the table's order.
    enum Columns: String, TableColumn {
        case id = "SID"
        /// The SHA-256 digest of the token; the token itself is never stored.
        case tokenHash = "SESSION_TOKEN_HASH"
        case userID = "SESSION_UID"
        case created = "SESSION_CREATED"
        case lastSeen = "SESSION_LAST_SEEN"
        case userAgent = "SESSION_USER_AGENT"
        case client = "SESSION_CLIENT"
    }

    /// The table, for SQL.
    static let table: SQL = "\(identifier: tableName)"

    /// Deletes every session of a user but `kept` (if any), in the caller's
    /// transaction, and returns how many were deleted.
    @discardableResult
    static func deleteSessions(_ db: Database, userID: Int64, except kept: Int64? = nil) throws -> Int {
        if let kept {
            try db.execute("DELETE FROM \(table) WHERE \(Columns.userID) = \(userID) AND \(Columns.id) <> \(kept)")
        } else {
            try db.execute("DELETE FROM \(table) WHERE \(Columns.userID) = \(userID)")
        }
        return db.changesCount
    }
}
