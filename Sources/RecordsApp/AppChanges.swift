import SQLiteStore

/// The signals of ``AppDatabase/changes(of:)``: one now, then one after
/// each committed change.
public typealias AppChanges = ObservedValues<Bool>

extension AppDatabase {
    /// A signal now, then again after every committed transaction that
    /// changed `app`'s table (its ``AppDescriptor/table``, or one of its
    /// ``AppDescriptor/topicTables``: a profile picture), whoever
    /// committed it: this database's writes at once, another connection's
    /// or process's (the `records` command beside a server) within the
    /// library's `observationPollingInterval`.
    ///
    /// ```swift
    /// for try await _ in database.changes(of: .people) {
    ///     people = try await store.all()   // now, and after each change
    /// }
    /// ```
    ///
    /// It is a signal, not the data: the receiver reads what it shows
    /// through the app's store, so what it shows is never older than the
    /// commit that was signalled. The first signal is the state at the
    /// start; each later one a change after it. Many changes in one
    /// transaction make one signal; a receiver slower than the commits
    /// gets fewer signals, never none after the last commit. A commit by
    /// another connection may signal every observed app, as the library
    /// cannot tell which tables another connection changed.
    ///
    /// Each iteration is an observation of its own, which stops when its
    /// loop ends or its task is cancelled.
    ///
    /// - Throws: From `next()`: ``AppUnavailableError`` when the app cannot
    ///   use this database; a failed read, or the database closing, ends
    ///   the sequence with its error.
    public func changes(of app: App) -> AppChanges {
        let descriptor = app.descriptor
        return changes(ofTables: [descriptor.table] + descriptor.topicTables, of: app)
    }

    /// Signals the changes of `table`, one of `app`'s, as
    /// ``changes(of:)`` signals those of an app's table.
    func changes(ofTable table: String, of app: App) -> AppChanges {
        changes(ofTables: [table], of: app)
    }

    /// Signals the changes of any of `tables`, `app`'s.
    private func changes(ofTables tables: [String], of app: App) -> AppChanges {
        let unavailable = unavailability(of: app)
        // One row of each table and nothing else, so that the observation
        // follows those tables only.
        let probes: [SQL] = tables.map { "SELECT 1 FROM \(identifier: $0)" }
        let probe: SQL = "SELECT EXISTS (\(probes.joined(separator: " UNION ALL ")))"
        return writer.observe { db in
            if let unavailable { throw unavailable }
            return try db.fetchOne(Bool.self, probe) ?? false
        }
    }
}
