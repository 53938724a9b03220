// Migrating through a DatabaseQueue or DatabasePool: the migrator needs the
// writer connection outside any transaction (each migration opens its own),
// which is what `writeWithoutTransaction` gives. `write { migrate($0) }`
// cannot work: its transaction is already open when the migrator starts.

extension Migrator {
    /// Applies, in order, every registered migration the database of a
    /// ``DatabaseQueue`` or ``DatabasePool`` has not applied yet, on its
    /// writer connection. Blocks the calling thread until the writer is free.
    ///
    /// ```swift
    /// let pool = try DatabasePool(path: path)
    /// try migrator.migrate(pool)
    /// ```
    ///
    /// Each migration runs in its own transaction, as with
    /// ``migrate(_:)-(Database)``; do not call it from inside the writer's
    /// `write { }`, whose transaction is already open.
    ///
    /// - Parameter writer: The queue or pool whose database is migrated.
    /// - Returns: The identifiers of the migrations applied now.
    /// - Throws: What ``migrate(_:)-(Database)`` throws; a
    ///   ``ResultCode/misuse`` error when called from inside an access
    ///   closure of the same queue or pool, or after it was closed.
    @discardableResult
    public func migrate(_ writer: some DatabaseWriter) throws -> [String] {
        try writer.writeWithoutTransaction { db in try migrate(db) }
    }

    /// Applies the pending migrations up to and including `identifier` on
    /// the writer connection of a queue or pool, leaving the later ones
    /// pending (see ``migrate(_:upTo:)-(Database,_)``).
    ///
    /// - Parameters:
    ///   - writer: The queue or pool whose database is migrated.
    ///   - identifier: The last migration to apply.
    /// - Returns: The identifiers of the migrations applied now.
    @discardableResult
    public func migrate(_ writer: some DatabaseWriter, upTo identifier: String) throws -> [String] {
        try writer.writeWithoutTransaction { db in try migrate(db, upTo: identifier) }
    }

    /// Applies the pending migrations like the blocking overload, on a
    /// thread of the writer connection, suspending the caller meanwhile.
    ///
    /// ```swift
    /// try await migrator.migrate(pool)
    /// ```
    ///
    /// Cancelling the task interrupts the running migration, which is
    /// rolled back; the migrations applied before it stay applied.
    ///
    /// - Parameter writer: The queue or pool whose database is migrated.
    /// - Returns: The identifiers of the migrations applied now.
    @discardableResult
    public func migrate(_ writer: some DatabaseWriter) async throws -> [String] {
        try await writer.writeWithoutTransaction { db in try migrate(db) }
    }

    /// Applies the pending migrations up to and including `identifier` like
    /// the blocking overload, suspending the caller meanwhile.
    ///
    /// - Parameters:
    ///   - writer: The queue or pool whose database is migrated.
    ///   - identifier: The last migration to apply.
    /// - Returns: The identifiers of the migrations applied now.
    @discardableResult
    public func migrate(_ writer: some DatabaseWriter, upTo identifier: String) async throws -> [String] {
        try await writer.writeWithoutTransaction { db in try migrate(db, upTo: identifier) }
    }

    /// Whether every registered migration has been applied to the database
    /// of a queue or pool. Blocks the calling thread until a reader is free.
    ///
    /// - Parameter reader: The queue or pool whose database is checked.
    public func isUpToDate(_ reader: some DatabaseReader) throws -> Bool {
        try reader.read { db in try isUpToDate(db) }
    }

    /// Whether every registered migration has been applied, suspending the
    /// caller instead of blocking it.
    ///
    /// - Parameter reader: The queue or pool whose database is checked.
    public func isUpToDate(_ reader: some DatabaseReader) async throws -> Bool {
        try await reader.read { db in try isUpToDate(db) }
    }
}
