#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// Owns a `sqlite3*` handle. Shared by a ``Database`` and its statements, so
/// that statements can be finalized after the connection object is gone.
@usableFromInline
final class SQLiteConnection {
    /// Read before every step; see the note on Row's stored properties.
    @usableFromInline @exclusivity(unchecked) var handle: OpaquePointer?
    let includesArgumentsInErrors: Bool
    /// Bumped after each schema change made through this connection.
    var schemaGeneration = 0
    var traceBox: Unmanaged<TraceBox>?
    /// The busy handler's state, kept alive as long as the handler is
    /// installed.
    var busyWaiter: BusyWaiter?
    /// Run (and forgotten) just before the handle closes: open BLOB handles
    /// register here, keyed by their identity, so that closing the
    /// connection closes them instead of leaving it a zombie that holds its
    /// locks. Each handle removes its entry when it closes first.
    var closeHandlers: [ObjectIdentifier: () -> Void] = [:]
    /// How many ``Database/transaction(_:_:)`` and ``Database/savepoint(_:)``
    /// closures are running on this connection. While any is, statements
    /// that end or nest transactions (`BEGIN`, `COMMIT`, `ROLLBACK`, ...)
    /// are refused unless the library runs them itself.
    var transactionScopeDepth = 0
    /// Set while a transaction or savepoint runs its own `BEGIN`, `COMMIT`,
    /// `SAVEPOINT`, `RELEASE` or `ROLLBACK`.
    var isRunningScopeControl = false
    /// Set while a read access runs: statements that would write
    /// (`sqlite3_stmt_readonly` false) are refused before they run. Checked
    /// at run time, not at prepare time, so cached statements stay valid
    /// (an authorizer or `PRAGMA query_only` would expire them all).
    ///
    /// Read every time a statement runs, on the connection's thread, by
    /// accesses that never overlap: unchecked, so that each read is a load
    /// rather than a run-time exclusivity check (`swift_beginAccess`).
    @usableFromInline @exclusivity(unchecked) var isReadOnlyAccess = false
    /// The library's authorizer, installed when the connection opens (see
    /// ``ConnectionAuthorizer``).
    let authorizer = ConnectionAuthorizer()
    /// Set while an observed fetch runs: the statements it runs add the
    /// region they read.
    var regionRecorder: RegionRecorder?
    /// Installed while transaction observers or value observations watch
    /// this connection's commits (see ``ChangeRecorder``).
    var changeRecorder: ChangeRecorder?
    /// The connection counted among those open on its database file, so
    /// that the last one to close removes the `-wal` and `-shm` files the
    /// process created and nobody uses (see ``CompanionFiles``).
    var companionFiles: CompanionFiles.Registration?

    init(handle: OpaquePointer, includesArgumentsInErrors: Bool) {
        self.handle = handle
        self.includesArgumentsInErrors = includesArgumentsInErrors
    }

    @inlinable var isClosed: Bool { handle == nil }

    /// Closes the connection. `sqlite3_close_v2` defers the actual close
    /// until statements still held elsewhere are finalized, so closing never
    /// fails or leaks because of them.
    func close() {
        guard let handle else { return }
        let handlers = closeHandlers.values
        closeHandlers.removeAll()
        for handler in handlers { handler() }
        self.handle = nil
        sqlite3_trace_v2(handle, 0, nil, nil)
        sqlite3_busy_handler(handle, nil, nil)
        sqlite3_set_authorizer(handle, nil, nil)
        // The user's closure, and what it captured, goes with the connection.
        authorizer.user = nil
        changeRecorder?.uninstall(from: handle)
        changeRecorder = nil
        sqlite3_close_v2(handle)
        // Even when statements held elsewhere keep SQLite's connection open
        // until they are finalized: they throw if used, so nothing reads
        // the files any more.
        companionFiles?.release()
        companionFiles = nil
        traceBox?.release()
        traceBox = nil
        busyWaiter = nil
    }

    deinit { close() }
}
