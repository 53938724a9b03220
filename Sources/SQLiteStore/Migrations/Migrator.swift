/// Upgrades a database's schema step by step: named migrations, registered
/// in order, each applied once and recorded in the database.
///
/// This is how a database installed from an older template, or created by
/// an older version of the app, is brought up to date when a new version
/// ships (the original tutorials' "my updated database is never copied again").
///
/// ```swift
/// var migrator = Migrator()
/// migrator.registerMigration("createPeople") { db in
///     try db.execute("""
///         CREATE TABLE people (
///             id INTEGER PRIMARY KEY AUTOINCREMENT,
///             name TEXT NOT NULL)
///         """)
/// }
/// migrator.registerMigration("addAge") { db in
///     try db.execute("ALTER TABLE people ADD COLUMN age INTEGER")
/// }
/// try migrator.migrate(db)   // applies what this database has not seen yet
/// ```
///
/// Rules:
/// - Each migration runs in its own immediate transaction together with
///   the record that it ran, so a migration that throws (or fails in SQLite)
///   leaves the database exactly as it was before it, and is tried again
///   next time. Migrations applied before it stay applied.
/// - Never edit or remove a migration that has shipped: add a new one.
/// - A database that records migrations this migrator does not know was
///   made by a newer version of the app; ``migrate(_:)-(Database)`` refuses it rather
///   than run an older schema against it.
///
/// Applied migrations are recorded in the table `sqlitestore_migrations`.
public struct Migrator: Sendable {
    /// One registered migration.
    public struct Migration: Sendable {
        /// The name under which the migration is recorded in the database.
        public let identifier: String
        /// Whether foreign keys are turned off while the migration runs, for
        /// migrations that rebuild tables (see ``Migrator/registerMigration(_:disablingForeignKeys:_:)``).
        public let disablesForeignKeys: Bool
        let body: @Sendable (Database) throws -> Void
    }

    /// The table that records applied migrations.
    public static let tableName = "sqlitestore_migrations"

    /// The registered migrations, in order.
    public private(set) var migrations: [Migration] = []

    /// Creates a migrator with no migrations.
    public init() {}

    /// The identifiers of the registered migrations, in order.
    public var identifiers: [String] { migrations.map(\.identifier) }

    /// Registers a migration after the ones already registered.
    ///
    /// - Parameters:
    ///   - identifier: A unique, non-empty name. It is stored in the
    ///     database, so it must never change once shipped.
    ///   - disablingForeignKeys: Turn `PRAGMA foreign_keys` off while the
    ///     migration runs, as SQLite requires for rebuilding a table that
    ///     other tables reference. Before the migration commits, a
    ///     `PRAGMA foreign_key_check` must find no violation, or it is
    ///     rolled back.
    ///   - migrate: The schema and data changes. Do not open or end
    ///     transactions in it; savepoints are fine.
    ///
    /// A duplicate or empty identifier is reported by ``migrate(_:)-(Database)``.
    public mutating func registerMigration(
        _ identifier: String, disablingForeignKeys: Bool = false,
        _ migrate: @escaping @Sendable (Database) throws -> Void
    ) {
        migrations.append(Migration(identifier: identifier, disablesForeignKeys: disablingForeignKeys, body: migrate))
    }

    /// Registers migrations made elsewhere (for example one list per
    /// feature of an app), after the ones already registered.
    public mutating func register(_ migrations: [Migration]) {
        self.migrations += migrations
    }

    /// Makes a migration to pass to ``register(_:)``.
    public static func migration(
        _ identifier: String, disablingForeignKeys: Bool = false,
        _ migrate: @escaping @Sendable (Database) throws -> Void
    ) -> Migration {
        Migration(identifier: identifier, disablesForeignKeys: disablingForeignKeys, body: migrate)
    }

    // MARK: - State of a database

    /// The migrations recorded in the database, in the order they were
    /// applied; empty for a database that was never migrated.
    public func appliedIdentifiers(in db: Database) throws -> [String] {
        guard try hasMigrationTable(db) else { return [] }
        return try db.fetchAll(String.self, "SELECT identifier FROM sqlitestore_migrations ORDER BY rowid")
    }

    /// The registered migrations that the database has not applied yet, in
    /// the order ``migrate(_:)-(Database)`` would apply them.
    public func pendingIdentifiers(in db: Database) throws -> [String] {
        let applied = Set(try appliedIdentifiers(in: db))
        return identifiers.filter { !applied.contains($0) }
    }

    /// Whether every registered migration has been applied.
    public func isUpToDate(_ db: Database) throws -> Bool {
        try pendingIdentifiers(in: db).isEmpty
    }

    // MARK: - Migrating

    /// Applies, in order, every registered migration the database has not
    /// applied yet.
    ///
    /// - Returns: The identifiers of the migrations applied now.
    /// - Throws: ``MigrationError`` when the registrations are invalid, when
    ///   the database was made by a newer version (it records unknown
    ///   migrations), or when a migration fails; the failed migration left
    ///   nothing behind.
    @discardableResult
    public func migrate(_ db: Database) throws -> [String] {
        try migrate(db, upTo: nil)
    }

    /// Applies the pending migrations up to and including `identifier`,
    /// leaving the later ones pending. Useful to build a database as an
    /// older version of the app left it.
    @discardableResult
    public func migrate(_ db: Database, upTo identifier: String) throws -> [String] {
        guard identifiers.contains(identifier) else {
            throw MigrationError(.invalidRegistration, message: "no migration named \"\(identifier)\" is registered")
        }
        return try migrate(db, upTo: Optional(identifier))
    }

    private func migrate(_ db: Database, upTo last: String?) throws -> [String] {
        try validateRegistrations()
        guard !db.isInsideTransaction else {
            throw MigrationError(
                .invalidRegistration,
                message: "migrations cannot run inside a transaction: each one opens its own; with a "
                    + "DatabaseQueue or DatabasePool, call migrator.migrate(queue) instead of migrating "
                    + "inside write { }")
        }
        let applied = try appliedIdentifiers(in: db)
        let known = Set(identifiers)
        let unknown = applied.filter { !known.contains($0) }
        guard unknown.isEmpty else {
            let location = db.path.isEmpty || db.path == ":memory:" ? "the database" : "the database \(db.path)"
            throw MigrationError(
                .databaseIsNewer,
                message: "\(location) was upgraded by a newer version of this app: it has migrations this "
                    + "version does not know (\(unknown.joined(separator: ", "))); use the newer version")
        }
        let appliedSet = Set(applied)
        var appliedNow: [String] = []
        for migration in migrations {
            if !appliedSet.contains(migration.identifier), try apply(migration, to: db) {
                appliedNow.append(migration.identifier)
            }
            if migration.identifier == last { break }
        }
        return appliedNow
    }

    /// Applies one migration in its own transaction; returns false when
    /// another connection (another process running the same app) applied it
    /// after the pending list was read.
    private func apply(_ migration: Migration, to db: Database) throws -> Bool {
        var restoreForeignKeys = false
        if migration.disablesForeignKeys {
            restoreForeignKeys = try db.fetchOne(Bool.self, "PRAGMA foreign_keys") ?? false
            if restoreForeignKeys { try db.execute("PRAGMA foreign_keys = OFF") }
        }
        let applied: Bool
        do {
            applied = try applyInTransaction(migration, to: db)
        } catch {
            // The migration's own error comes first; keys left off are
            // reported with it.
            if restoreForeignKeys, let failure = turnForeignKeysBackOn(db, after: migration, applied: false) {
                throw MigrationError(
                    failure.kind, message: "\(error)\n\(failure.message)", underlyingError: error)
            }
            throw error
        }
        if restoreForeignKeys, let failure = turnForeignKeysBackOn(db, after: migration, applied: applied) {
            throw failure
        }
        return applied
    }

    /// Turns foreign keys back on after a migration that disabled them, and
    /// checks that they are on: a failure (or a silent no-op, as inside a
    /// transaction) would leave the connection without foreign key checks.
    /// Returns the error to report, or nil when they are on.
    private func turnForeignKeysBackOn(_ db: Database, after migration: Migration, applied: Bool) -> MigrationError? {
        let problem: String
        do {
            try db.execute("PRAGMA foreign_keys = ON")
            if try db.fetchOne(Bool.self, "PRAGMA foreign_keys") == true { return nil }
            problem = "PRAGMA foreign_keys = ON had no effect"
        } catch {
            problem = "\(error)"
        }
        return MigrationError(
            .foreignKeysNotRestored(identifier: migration.identifier),
            message: "migration \"\(migration.identifier)\" "
                + (applied ? "was applied" : "did not apply")
                + ", but foreign keys could not be turned back on afterwards, so this connection does not "
                + "enforce them: \(problem)")
    }

    private func applyInTransaction(_ migration: Migration, to db: Database) throws -> Bool {
        do {
            return try db.transaction(.immediate) { db in
                // Created inside the first migration's transaction, so that
                // a failed first migration does not leave it behind.
                // The pending list was read before this transaction took
                // the write lock: check again now that nobody else can
                // migrate.
                if try hasMigrationTable(db) {
                    let recorded = try db.fetchOne(
                        Int.self, "SELECT 1 FROM sqlitestore_migrations WHERE identifier = ?",
                        arguments: [migration.identifier])
                    if recorded != nil { return false }
                } else {
                    try db.execute(
                        """
                        CREATE TABLE sqlitestore_migrations (
                            identifier TEXT NOT NULL PRIMARY KEY,
                            appliedAt TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))
                        """)
                }
                try migration.body(db)
                if migration.disablesForeignKeys {
                    let violations = try db.fetchAll("PRAGMA foreign_key_check")
                    if let first = violations.first {
                        let table: String = (try? first[0]) ?? "?"
                        throw MigrationError(
                            .foreignKeyViolation,
                            message: "migration \"\(migration.identifier)\" leaves \(violations.count) "
                                + "foreign key violation\(violations.count == 1 ? "" : "s") (first in table \(table))")
                    }
                }
                try db.execute(
                    "INSERT INTO sqlitestore_migrations (identifier) VALUES (?)", arguments: [migration.identifier])
                return true
            }
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrationError(
                .migrationFailed(identifier: migration.identifier),
                message: "migration \"\(migration.identifier)\" failed and was rolled back: \(error)",
                underlyingError: error)
        }
    }

    private func hasMigrationTable(_ db: Database) throws -> Bool {
        try db.fetchOne(
            Int.self, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlitestore_migrations'") != nil
    }

    private func validateRegistrations() throws {
        var seen = Set<String>()
        for identifier in identifiers {
            if identifier.isEmpty {
                throw MigrationError(.invalidRegistration, message: "a migration was registered with an empty name")
            }
            if !seen.insert(identifier).inserted {
                throw MigrationError(
                    .invalidRegistration, message: "the migration \"\(identifier)\" is registered more than once")
            }
        }
    }
}

/// A migration could not be applied, or the database cannot be migrated.
public struct MigrationError: Error, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// The migrator's registrations are invalid (empty or duplicate
        /// identifier, unknown target), or it was called inside a transaction.
        case invalidRegistration
        /// The database records migrations this migrator does not know: it
        /// was made by a newer version of the app. Nothing was changed.
        case databaseIsNewer
        /// A migration threw or failed in SQLite; it was rolled back.
        case migrationFailed(identifier: String)
        /// A migration that disabled foreign keys left violations; it was
        /// rolled back.
        case foreignKeyViolation
        /// Foreign keys, turned off for a migration (`disablingForeignKeys`),
        /// could not be turned back on: the connection no longer enforces
        /// them. The message says whether the migration was applied.
        case foreignKeysNotRestored(identifier: String)
    }

    /// What went wrong.
    public let kind: Kind
    /// A sentence for people.
    public let message: String
    /// The error the failing migration threw, if any.
    public let underlyingError: (any Error)?

    /// Creates an error.
    public init(_ kind: Kind, message: String, underlyingError: (any Error)? = nil) {
        self.kind = kind
        self.message = message
        self.underlyingError = underlyingError
    }

    public var description: String { message }
}
