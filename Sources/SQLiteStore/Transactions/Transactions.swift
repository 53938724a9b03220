/// How a transaction takes its locks (`BEGIN DEFERRED|IMMEDIATE|EXCLUSIVE`).
public enum TransactionKind: String, Sendable {
    /// Locks are taken when the transaction first reads or writes.
    case deferred = "DEFERRED"
    /// The write lock is taken at once, so the transaction cannot fail later
    /// with ``ResultCode/busy`` when it starts writing.
    case immediate = "IMMEDIATE"
    /// Like immediate; in rollback-journal modes, readers are locked out too.
    case exclusive = "EXCLUSIVE"

    /// The statement that begins such a transaction (a constant: one runs
    /// for every read and write access).
    var beginStatement: String {
        switch self {
        case .deferred: "BEGIN DEFERRED TRANSACTION"
        case .immediate: "BEGIN IMMEDIATE TRANSACTION"
        case .exclusive: "BEGIN EXCLUSIVE TRANSACTION"
        }
    }
}

extension Database {
    /// Runs `body` in a transaction: commits when it returns, rolls back when
    /// it throws (or when the commit fails), so that nothing of a failed
    /// transaction remains.
    ///
    /// ```swift
    /// try db.transaction { db in
    ///     try db.execute("UPDATE account SET balance = balance - 10 WHERE id = 1")
    ///     try db.execute("UPDATE account SET balance = balance + 10 WHERE id = 2")
    /// }
    /// ```
    ///
    /// Returning normally means the changes are committed; throwing means
    /// none of them are. To keep that promise:
    /// - Transactions do not nest: inside one, use ``savepoint(_:)``.
    /// - Statements that begin, end or nest a transaction (`BEGIN`,
    ///   `COMMIT`, `END`, `ROLLBACK`, `SAVEPOINT`, `RELEASE`) run by `body`
    ///   through this library are refused with a ``ResultCode/misuse`` error
    ///   before they run.
    /// - When the transaction is no longer open after `body` returns (the
    ///   connection was closed inside it, or SQLite rolled it back on its
    ///   own after an error that `body` caught, such as a full disk), the
    ///   call throws a ``ResultCode/misuse`` error instead of returning.
    @discardableResult
    public func transaction<T>(_ kind: TransactionKind = .deferred, _ body: (Database) throws -> T) throws -> T {
        guard !isInsideTransaction else {
            throw SQLiteError.misuse("a transaction is already open; use savepoint(_:) to nest one")
        }
        try executeScopeControl(kind.beginStatement)
        let result: T
        do {
            result = try inScope(body)
        } catch {
            rollbackQuietly("ROLLBACK TRANSACTION")
            throw error
        }
        if let error = endedScopeError("transaction(_:)") {
            rollbackQuietly("ROLLBACK TRANSACTION")
            throw error
        }
        do {
            try executeScopeControl("COMMIT TRANSACTION")
        } catch {
            rollbackQuietly("ROLLBACK TRANSACTION")
            throw error
        }
        return result
    }

    /// Runs `body` inside a savepoint: its changes are kept when it returns
    /// and undone when it throws, without ending an enclosing transaction.
    /// Savepoints nest; outside a transaction a savepoint acts as one.
    ///
    /// ```swift
    /// try db.transaction { db in
    ///     try db.execute("INSERT INTO log (message) VALUES ('kept')")
    ///     try? db.savepoint { db in
    ///         try db.execute("INSERT INTO log (message) VALUES ('undone')")
    ///         throw CancellationError()
    ///     }
    /// }
    /// ```
    ///
    /// As with ``transaction(_:_:)``, transaction-control statements run by
    /// `body` (`RELEASE`, `ROLLBACK TO`, `COMMIT`, ...) are refused before
    /// they run, and a savepoint that is gone when `body` returns (closed
    /// connection, transaction rolled back by SQLite after an error `body`
    /// caught) makes the call throw rather than return.
    @discardableResult
    public func savepoint<T>(_ body: (Database) throws -> T) throws -> T {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let statements = Self.savepointStatements(depth: savepointDepth)
        try executeScopeControl(statements.begin)
        let result: T
        do {
            result = try inScope(body)
        } catch {
            rollBackSavepoint(depth: savepointDepth)
            throw error
        }
        // A savepoint always holds a transaction open: none means it is gone.
        if let error = endedScopeError("savepoint(_:)") {
            throw error
        }
        do {
            try executeScopeControl(statements.release)
        } catch {
            rollBackSavepoint(depth: savepointDepth)
            throw error
        }
        return result
    }

    /// Undoes and ends the savepoint at `depth`, ignoring failures (the
    /// caller throws the error that led here).
    private func rollBackSavepoint(depth: Int) {
        let name = Self.savepointName(depth: depth)
        rollbackQuietly("ROLLBACK TRANSACTION TO SAVEPOINT \(name)")
        rollbackQuietly("RELEASE SAVEPOINT \(name)")
    }

    /// The name of the savepoint at `depth` (1 for the outermost).
    private static func savepointName(depth: Int) -> String { "sqlitestore_savepoint_\(depth)" }

    /// The `SAVEPOINT` and `RELEASE` of the savepoint at `depth`: made once
    /// for the first levels, as every write of a combined group runs in a
    /// savepoint of its own.
    private static func savepointStatements(depth: Int) -> (begin: String, release: String) {
        if depth >= 1, depth <= commonSavepointStatements.count { return commonSavepointStatements[depth - 1] }
        let name = savepointName(depth: depth)
        return ("SAVEPOINT \(name)", "RELEASE SAVEPOINT \(name)")
    }

    private static let commonSavepointStatements: [(begin: String, release: String)] = (1...4).map { depth in
        let name = savepointName(depth: depth)
        return ("SAVEPOINT \(name)", "RELEASE SAVEPOINT \(name)")
    }

    /// Runs the body of a transaction or savepoint, during which
    /// transaction-control statements are refused.
    private func inScope<T>(_ body: (Database) throws -> T) throws -> T {
        connection.transactionScopeDepth += 1
        defer { connection.transactionScopeDepth -= 1 }
        return try body(self)
    }

    /// Runs the library's own `BEGIN`, `COMMIT`, `SAVEPOINT`, ... which
    /// ``Statement/checkTransactionControlAllowed()`` lets through.
    private func executeScopeControl(_ sql: String) throws {
        let wasRunning = connection.isRunningScopeControl
        connection.isRunningScopeControl = true
        defer { connection.isRunningScopeControl = wasRunning }
        try execute(sql: sql)
    }

    /// The error to throw when the transaction is gone after the body
    /// returned, instead of reporting a commit that did not happen.
    private func endedScopeError(_ function: String) -> SQLiteError? {
        if isClosed {
            return SQLiteError.misuse(
                "the database connection was closed inside \(function), which rolled back its changes")
        }
        guard !isInsideTransaction else { return nil }
        return SQLiteError.misuse(
            "the transaction of \(function) ended before its closure returned, so its changes may not have been "
                + "kept: SQLite rolls back on its own after some errors (full disk, I/O error, interrupt), "
                + "which the closure must not swallow")
    }

    /// Rolls back after a failure. SQLite may already have rolled back on
    /// its own (after `SQLITE_FULL`, for instance), in which case the
    /// statement fails harmlessly; the caller throws the original error.
    private func rollbackQuietly(_ sql: String) {
        guard isInsideTransaction else { return }
        try? executeScopeControl(sql)
    }
}
