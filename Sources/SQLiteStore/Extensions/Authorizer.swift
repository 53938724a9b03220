#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// What a statement being prepared wants to do, as SQLite's authorizer
/// reports it (`SQLITE_READ`, `SQLITE_INSERT`, ...).
///
/// A struct rather than an enum, so that codes added by later SQLite
/// versions still come through (compare with the constants).
public struct AuthorizerAction: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// SQLite's action code.
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `CREATE INDEX`: index name, table name.
    public static let createIndex = AuthorizerAction(rawValue: SQLITE_CREATE_INDEX)
    /// `CREATE TABLE`: table name.
    public static let createTable = AuthorizerAction(rawValue: SQLITE_CREATE_TABLE)
    /// `CREATE TEMP INDEX`: index name, table name.
    public static let createTempIndex = AuthorizerAction(rawValue: SQLITE_CREATE_TEMP_INDEX)
    /// `CREATE TEMP TABLE`: table name.
    public static let createTempTable = AuthorizerAction(rawValue: SQLITE_CREATE_TEMP_TABLE)
    /// `CREATE TEMP TRIGGER`: trigger name, table name.
    public static let createTempTrigger = AuthorizerAction(rawValue: SQLITE_CREATE_TEMP_TRIGGER)
    /// `CREATE TEMP VIEW`: view name.
    public static let createTempView = AuthorizerAction(rawValue: SQLITE_CREATE_TEMP_VIEW)
    /// `CREATE TRIGGER`: trigger name, table name.
    public static let createTrigger = AuthorizerAction(rawValue: SQLITE_CREATE_TRIGGER)
    /// `CREATE VIEW`: view name.
    public static let createView = AuthorizerAction(rawValue: SQLITE_CREATE_VIEW)
    /// `DELETE`: table name.
    public static let delete = AuthorizerAction(rawValue: SQLITE_DELETE)
    /// `DROP INDEX`: index name, table name.
    public static let dropIndex = AuthorizerAction(rawValue: SQLITE_DROP_INDEX)
    /// `DROP TABLE`: table name.
    public static let dropTable = AuthorizerAction(rawValue: SQLITE_DROP_TABLE)
    /// `DROP TEMP INDEX`: index name, table name.
    public static let dropTempIndex = AuthorizerAction(rawValue: SQLITE_DROP_TEMP_INDEX)
    /// `DROP TEMP TABLE`: table name.
    public static let dropTempTable = AuthorizerAction(rawValue: SQLITE_DROP_TEMP_TABLE)
    /// `DROP TEMP TRIGGER`: trigger name, table name.
    public static let dropTempTrigger = AuthorizerAction(rawValue: SQLITE_DROP_TEMP_TRIGGER)
    /// `DROP TEMP VIEW`: view name.
    public static let dropTempView = AuthorizerAction(rawValue: SQLITE_DROP_TEMP_VIEW)
    /// `DROP TRIGGER`: trigger name, table name.
    public static let dropTrigger = AuthorizerAction(rawValue: SQLITE_DROP_TRIGGER)
    /// `DROP VIEW`: view name.
    public static let dropView = AuthorizerAction(rawValue: SQLITE_DROP_VIEW)
    /// `INSERT`: table name.
    public static let insert = AuthorizerAction(rawValue: SQLITE_INSERT)
    /// `PRAGMA`: pragma name, its argument or nil.
    public static let pragma = AuthorizerAction(rawValue: SQLITE_PRAGMA)
    /// Reading a column: table name, column name. Answering
    /// ``AuthorizerDecision/ignore`` makes the column read as NULL.
    public static let read = AuthorizerAction(rawValue: SQLITE_READ)
    /// `SELECT`: no arguments.
    public static let select = AuthorizerAction(rawValue: SQLITE_SELECT)
    /// `BEGIN`, `COMMIT`, `ROLLBACK`: the operation (`BEGIN`, ...).
    public static let transaction = AuthorizerAction(rawValue: SQLITE_TRANSACTION)
    /// Updating a column: table name, column name.
    public static let update = AuthorizerAction(rawValue: SQLITE_UPDATE)
    /// `ATTACH`: file name.
    public static let attach = AuthorizerAction(rawValue: SQLITE_ATTACH)
    /// `DETACH`: schema name.
    public static let detach = AuthorizerAction(rawValue: SQLITE_DETACH)
    /// `ALTER TABLE`: schema name, table name.
    public static let alterTable = AuthorizerAction(rawValue: SQLITE_ALTER_TABLE)
    /// `REINDEX`: index name.
    public static let reindex = AuthorizerAction(rawValue: SQLITE_REINDEX)
    /// `ANALYZE`: table name.
    public static let analyze = AuthorizerAction(rawValue: SQLITE_ANALYZE)
    /// `CREATE VIRTUAL TABLE`: table name, module name.
    public static let createVirtualTable = AuthorizerAction(rawValue: SQLITE_CREATE_VTABLE)
    /// `DROP VIRTUAL TABLE`: table name, module name.
    public static let dropVirtualTable = AuthorizerAction(rawValue: SQLITE_DROP_VTABLE)
    /// Calling a function: nil, function name.
    public static let function = AuthorizerAction(rawValue: SQLITE_FUNCTION)
    /// `SAVEPOINT`, `RELEASE`, `ROLLBACK TO`: the operation (`BEGIN`,
    /// `RELEASE`, `ROLLBACK`), savepoint name.
    public static let savepoint = AuthorizerAction(rawValue: SQLITE_SAVEPOINT)
    /// A recursive common table expression: no arguments.
    public static let recursive = AuthorizerAction(rawValue: SQLITE_RECURSIVE)

    private static let names: [Int32: String] = [
        SQLITE_CREATE_INDEX: "createIndex", SQLITE_CREATE_TABLE: "createTable",
        SQLITE_CREATE_TEMP_INDEX: "createTempIndex", SQLITE_CREATE_TEMP_TABLE: "createTempTable",
        SQLITE_CREATE_TEMP_TRIGGER: "createTempTrigger", SQLITE_CREATE_TEMP_VIEW: "createTempView",
        SQLITE_CREATE_TRIGGER: "createTrigger", SQLITE_CREATE_VIEW: "createView", SQLITE_DELETE: "delete",
        SQLITE_DROP_INDEX: "dropIndex", SQLITE_DROP_TABLE: "dropTable", SQLITE_DROP_TEMP_INDEX: "dropTempIndex",
        SQLITE_DROP_TEMP_TABLE: "dropTempTable", SQLITE_DROP_TEMP_TRIGGER: "dropTempTrigger",
        SQLITE_DROP_TEMP_VIEW: "dropTempView", SQLITE_DROP_TRIGGER: "dropTrigger", SQLITE_DROP_VIEW: "dropView",
        SQLITE_INSERT: "insert", SQLITE_PRAGMA: "pragma", SQLITE_READ: "read", SQLITE_SELECT: "select",
        SQLITE_TRANSACTION: "transaction", SQLITE_UPDATE: "update", SQLITE_ATTACH: "attach",
        SQLITE_DETACH: "detach", SQLITE_ALTER_TABLE: "alterTable", SQLITE_REINDEX: "reindex",
        SQLITE_ANALYZE: "analyze", SQLITE_CREATE_VTABLE: "createVirtualTable",
        SQLITE_DROP_VTABLE: "dropVirtualTable", SQLITE_FUNCTION: "function", SQLITE_SAVEPOINT: "savepoint",
        SQLITE_RECURSIVE: "recursive",
    ]

    /// The constant's name (`read`), or the code for an unknown one.
    public var description: String { Self.names[rawValue] ?? "action \(rawValue)" }
}

/// One question SQLite's authorizer asks while a statement is prepared.
public struct AuthorizerRequest: Sendable, CustomStringConvertible {
    /// What the statement wants to do.
    public var action: AuthorizerAction
    /// The action's first argument (see each ``AuthorizerAction``), such as
    /// the table name.
    public var firstArgument: String?
    /// The action's second argument, such as the column name.
    public var secondArgument: String?
    /// The schema (`main`, `temp`, an attached name), when it applies.
    public var schema: String?
    /// The innermost trigger or view that caused the access, nil for the
    /// statement's own SQL.
    public var triggerOrView: String?

    /// Creates a request (for testing an authorizer closure).
    public init(
        action: AuthorizerAction, firstArgument: String? = nil, secondArgument: String? = nil,
        schema: String? = nil, triggerOrView: String? = nil
    ) {
        self.action = action
        self.firstArgument = firstArgument
        self.secondArgument = secondArgument
        self.schema = schema
        self.triggerOrView = triggerOrView
    }

    public var description: String {
        var text = action.description
        let details = [firstArgument, secondArgument].compactMap { $0 }
        if !details.isEmpty { text += " " + details.joined(separator: ".") }
        if let schema { text += " in \(schema)" }
        if let triggerOrView { text += " (from \(triggerOrView))" }
        return text
    }
}

/// An authorizer's answer.
public enum AuthorizerDecision: Sendable, Hashable {
    /// Go ahead (`SQLITE_OK`).
    case allow
    /// Refuse: the statement fails to prepare with a ``SQLiteError`` whose
    /// code is ``ResultCode/auth`` (`SQLITE_DENY`).
    case deny
    /// Prepare the statement without the action (`SQLITE_IGNORE`): a
    /// ``AuthorizerAction/read`` reads NULL, an ``AuthorizerAction/update``
    /// leaves the column unchanged, a `DELETE` of a table in a trigger
    /// deletes nothing; for other actions SQLite treats it as ``deny``.
    case ignore

    var code: Int32 {
        switch self {
        case .allow: SQLITE_OK
        case .deny: SQLITE_DENY
        case .ignore: SQLITE_IGNORE
        }
    }
}

extension Database {
    /// Sets the connection's authorizer (`sqlite3_set_authorizer`), or
    /// removes it when `authorizer` is nil.
    ///
    /// SQLite asks the authorizer about each action of each statement while
    /// the statement is prepared, not while it runs: it is a way to run SQL
    /// you did not write with less power (no writes, no `ATTACH`, no access
    /// to a private column), or to see what a statement touches.
    ///
    /// ```swift
    /// db.setAuthorizer { request in
    ///     switch request.action {
    ///     case .select, .read, .function: .allow
    ///     default: .deny
    ///     }
    /// }
    /// try db.execute("DELETE FROM people")   // throws SQLiteError, code .auth
    /// db.setAuthorizer(nil)
    /// ```
    ///
    /// Setting or removing an authorizer expires the connection's prepared
    /// statements, cached ones included, so each is prepared again, and
    /// authorized again, at its next use. The closure is released when it is
    /// replaced or the connection closes. It runs on the thread that
    /// prepares the statement and must not use the connection.
    ///
    /// A connection has one authorizer closure: this replaces the one set
    /// before. The library keeps an authorizer of its own installed, which
    /// records what each statement reads for value observation (see
    /// <doc:ObservingChanges>) and then asks this closure; do not install
    /// one through the C API, which would disable observation on the
    /// connection.
    public func setAuthorizer(_ authorizer: ((AuthorizerRequest) -> AuthorizerDecision)?) {
        guard let handle = connection.handle else { return }
        // The library's own authorizer (see ConnectionAuthorizer) stays
        // installed and asks this closure; installing it again expires the
        // prepared statements, so that they are authorized again.
        connection.authorizer.user = authorizer
        sqlite3_set_authorizer(
            handle, libraryAuthorizerCallback, Unmanaged.passUnretained(connection.authorizer).toOpaque())
    }
}
