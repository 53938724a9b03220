/// How a transaction takes its locks (`BEGIN DEFERRED|IMMEDIATE|EXCLUSIVE`).
public enum TransactionKind: String, Sendable {
    /// Locks are taken when the transaction first reads or writes.
    case deferred = "DEFERRED"
    /// The write lock is taken at once, so the transaction cannot fail later
    /// with ``ResultCode/busy`` when it starts writing.
    case immediate = "IMMEDIATE"
    /// Like immediate; in rollback-journal modes, readers are locked out too.
    case exclusive = "EXCLUSIVE"
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
    /// Transactions do not nest: inside one, use ``savepoint(_:)``.
    @discardableResult
    public func transaction<T>(_ kind: TransactionKind = .deferred, _ body: (Database) throws -> T) throws -> T {
        guard !isInsideTransaction else {
            throw SQLiteError.misuse("a transaction is already open; use savepoint(_:) to nest one")
        }
        try execute("BEGIN \(unsafeLiteral: kind.rawValue) TRANSACTION")
        let result: T
        do {
            result = try body(self)
        } catch {
            rollbackQuietly("ROLLBACK TRANSACTION")
            throw error
        }
        // The body may have ended the transaction itself with SQL.
        guard isInsideTransaction else { return result }
        do {
            try execute("COMMIT TRANSACTION")
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
    @discardableResult
    public func savepoint<T>(_ body: (Database) throws -> T) throws -> T {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "sqlitestore_savepoint_\(savepointDepth)"
        try execute("SAVEPOINT \(unsafeLiteral: name)")
        let result: T
        do {
            result = try body(self)
        } catch {
            rollbackQuietly("ROLLBACK TRANSACTION TO SAVEPOINT \(name)")
            rollbackQuietly("RELEASE SAVEPOINT \(name)")
            throw error
        }
        do {
            try execute("RELEASE SAVEPOINT \(unsafeLiteral: name)")
        } catch {
            rollbackQuietly("ROLLBACK TRANSACTION TO SAVEPOINT \(name)")
            rollbackQuietly("RELEASE SAVEPOINT \(name)")
            throw error
        }
        return result
    }

    /// Rolls back after a failure. SQLite may already have rolled back on
    /// its own (after `SQLITE_FULL`, for instance), in which case the
    /// statement fails harmlessly; the caller throws the original error.
    private func rollbackQuietly(_ sql: String) {
        guard isInsideTransaction else { return }
        try? execute(sql)
    }
}
