import Foundation
import SQLiteStore

/// A response kept for an idempotency key, to answer the same request
/// again without doing it twice.
public struct StoredResponse: Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// The headers to send again (`Content-Type`, `Location`, `ETag`...).
    public var headers: [String: String]
    /// The body, byte for byte.
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// What ``IdempotencyStore/begin(owner:key:requestDigest:now:)`` decided.
public enum IdempotencyBegin: Sendable, Equatable {
    /// The key is new (or its earlier request was abandoned): do the
    /// request, then ``IdempotencyStore/finish(owner:key:response:)`` or
    /// ``IdempotencyStore/abandon(owner:key:)``.
    case proceed
    /// The same request was done with this key: send this response again,
    /// doing nothing.
    case replay(StoredResponse)
    /// The key was used for another request (another digest): refuse it.
    case keyReusedWithAnotherRequest
    /// The same key's request is being done right now: ask the client to
    /// retry later.
    case inProgress
}

/// The JSON API's idempotency keys (the `Idempotency-Key` header): a
/// client that sends a change again with the same key, because an answer
/// was lost, gets the first answer again instead of a second change.
///
/// ```swift
/// let keys = IdempotencyStore(database: database)
/// switch try await keys.begin(owner: user.id, key: key, requestDigest: digest, now: Date()) {
/// case .proceed:
///     let response = try await handle(request)            // do it once
///     try await keys.finish(owner: user.id, key: key, response: response)
/// case .replay(let stored): return stored                 // done before
/// case .keyReusedWithAnotherRequest: return unprocessable
/// case .inProgress: return conflict
/// }
/// ```
///
/// Keys belong to an owner (a user's ID): two owners' equal keys never
/// meet. An entry is kept ``keyLifetime`` (24 hours) from its request,
/// then ignored and purged (``begin(owner:key:requestDigest:now:)`` purges
/// as it goes). A request that never finished (the server stopped) leaves
/// its key pending; after ``abandonedAfter`` (60 s) the next request with
/// that key and digest takes it over.
///
/// The entries live in `api_idempotency`, a table of their own made by a
/// shared migration; every decision is one write transaction, so two
/// requests with the same key, from any process, can never both proceed.
public struct IdempotencyStore: Sendable {
    /// How long a key is remembered after its request began.
    public static let keyLifetime: TimeInterval = 24 * 60 * 60
    /// How long a request may stay unfinished before its key counts as
    /// abandoned.
    public static let abandonedAfter: TimeInterval = 60
    /// The longest key accepted, in UTF-8 bytes.
    public static let maxKeyLength = 255

    let database: AppDatabase

    /// Creates a store on the app's database.
    public init(database: AppDatabase) {
        self.database = database
    }

    /// Starts a request with an idempotency key, atomically: records the
    /// key as pending (``IdempotencyBegin/proceed``) unless an entry of
    /// the last 24 hours has it.
    ///
    /// - Parameters:
    ///   - owner: Whose key it is (the signed-in user's ID).
    ///   - key: The client's key, 1 to ``maxKeyLength`` bytes.
    ///   - requestDigest: What identifies the request (a digest of its
    ///     method, path and body): the same key with another digest is
    ///     ``IdempotencyBegin/keyReusedWithAnotherRequest``.
    ///   - now: The time of the request.
    /// - Throws: ``ValidationError`` for an empty or too long key or an
    ///   empty digest; a database error.
    public func begin(owner: Int64, key: String, requestDigest: String, now: Date) async throws -> IdempotencyBegin {
        try Self.validate(key: key)
        if requestDigest.isEmpty {
            throw ValidationError(field: "request digest", message: "request digest must not be empty")
        }
        let time = now.timeIntervalSince1970
        return try await database.sharedWrite { db in
            try db.execute("DELETE FROM \(Self.table) WHERE created_at <= \(time - Self.keyLifetime)")
            let entry = try db.fetchOne(
                """
                SELECT request_digest, state, status, headers, body, created_at FROM \(Self.table)
                WHERE owner = \(owner) AND key = \(key)
                """)
            guard let entry else {
                try db.execute(
                    """
                    INSERT INTO \(Self.table) (owner, key, request_digest, state, created_at)
                    VALUES (\(owner), \(key), \(requestDigest), \(State.pending.rawValue), \(time))
                    """)
                return .proceed
            }
            let digest: String = try entry[0]
            guard digest == requestDigest else { return .keyReusedWithAnotherRequest }
            let state: String = try entry[1]
            if state == State.finished.rawValue {
                let headers: String = try entry[3]
                let body: Data? = try entry[4]
                return .replay(
                    StoredResponse(
                        status: try entry[2], headers: try Self.decodeHeaders(headers), body: Array(body ?? Data())))
            }
            let created: Double = try entry[5]
            guard created <= time - Self.abandonedAfter else { return .inProgress }
            // Abandoned: this request takes the key over, from now.
            try db.execute(
                "UPDATE \(Self.table) SET created_at = \(time) WHERE owner = \(owner) AND key = \(key)")
            return .proceed
        }
    }

    /// Keeps the response of a request that ``begin(owner:key:requestDigest:now:)``
    /// let proceed, for the same key's next requests. Nothing happens when
    /// the key is no longer pending (purged, abandoned, or finished).
    ///
    /// - Throws: ``ValidationError`` for an invalid key; a database error.
    public func finish(owner: Int64, key: String, response: StoredResponse) async throws {
        try Self.validate(key: key)
        let headers = try Self.encodeHeaders(response.headers)
        let body = Data(response.body)
        let status = Int64(response.status)
        try await database.sharedWrite { db in
            try db.execute(
                """
                UPDATE \(Self.table)
                SET state = \(State.finished.rawValue), status = \(status), headers = \(headers), body = \(body)
                WHERE owner = \(owner) AND key = \(key) AND state = \(State.pending.rawValue)
                """)
        }
    }

    /// Forgets a pending key whose request failed without a response worth
    /// keeping, so that the client may retry it at once. A finished key is
    /// kept.
    ///
    /// - Throws: ``ValidationError`` for an invalid key; a database error.
    public func abandon(owner: Int64, key: String) async throws {
        try Self.validate(key: key)
        try await database.sharedWrite { db in
            try db.execute(
                """
                DELETE FROM \(Self.table)
                WHERE owner = \(owner) AND key = \(key) AND state = \(State.pending.rawValue)
                """)
        }
    }

    /// Deletes the entries whose request began before `date`, and returns
    /// how many.
    @discardableResult
    public func purge(before date: Date) async throws -> Int {
        let time = date.timeIntervalSince1970
        return try await database.sharedWrite { db in
            try db.execute("DELETE FROM \(Self.table) WHERE created_at < \(time)")
            return db.changesCount
        }
    }

    // MARK: - Rows

    /// The table's name.
    static let tableName = "api_idempotency"
    private static let table: SQL = "\(identifier: tableName)"

    /// An entry's state, as stored.
    private enum State: String {
        case pending, finished
    }

    /// The shared migration that makes the table. Never change it: it has
    /// shipped.
    static func createTable(_ db: Database) throws {
        try db.execute(
            """
            CREATE TABLE api_idempotency (
                owner INTEGER NOT NULL,
                key TEXT NOT NULL,
                request_digest TEXT NOT NULL,
                state TEXT NOT NULL CHECK (state IN ('pending', 'finished')),
                status INTEGER,
                headers TEXT,
                body BLOB,
                created_at REAL NOT NULL,
                PRIMARY KEY (owner, key))
            """)
        // The purge deletes by age.
        try db.execute("CREATE INDEX api_idempotency_created ON api_idempotency (created_at)")
    }

    private static func validate(key: String) throws {
        if key.isEmpty || key.utf8.count > maxKeyLength {
            throw ValidationError(
                field: "idempotency key", message: "idempotency key must be 1 to \(maxKeyLength) bytes long")
        }
    }

    private static func encodeHeaders(_ headers: [String: String]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(headers), as: UTF8.self)
    }

    private static func decodeHeaders(_ text: String) throws -> [String: String] {
        try JSONDecoder().decode([String: String].self, from: Data(text.utf8))
    }
}
