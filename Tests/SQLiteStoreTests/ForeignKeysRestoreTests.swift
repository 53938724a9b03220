import Foundation
import Testing

@testable import SQLiteStore

/// A migration that disables foreign keys reports a failure to turn them
/// back on instead of silently leaving them off.
@Suite("Foreign keys after a migration")
struct ForeignKeysRestoreTests {
    /// Denies `PRAGMA foreign_keys = ...` from now on, as a stand-in for any
    /// failure of that statement.
    private static func denyForeignKeysPragma(_ db: Database) {
        db.setAuthorizer { request in
            request.action == .pragma && request.firstArgument?.lowercased() == "foreign_keys"
                && request.secondArgument != nil ? .deny : .allow
        }
    }

    @Test("Foreign keys that cannot be turned back on after an applied migration are reported")
    func appliedMigrationReportsKeysLeftOff() throws {
        let db = try Database.inMemory()
        var migrator = Migrator()
        migrator.registerMigration("rebuild", disablingForeignKeys: true) { db in
            try db.execute("CREATE TABLE t (a)")
            Self.denyForeignKeysPragma(db)
        }
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(db) }
        #expect(error?.kind == .foreignKeysNotRestored(identifier: "rebuild"))
        #expect(error?.message.contains("was applied") == true)
        db.setAuthorizer(nil)
        #expect(try db.fetchOne(Bool.self, "PRAGMA foreign_keys") == false)
        #expect(try migrator.appliedIdentifiers(in: db) == ["rebuild"])
    }

    @Test("A failed migration whose foreign keys cannot be turned back on reports both")
    func failedMigrationReportsBoth() throws {
        struct Boom: Error, CustomStringConvertible { var description: String { "boom" } }
        let db = try Database.inMemory()
        var migrator = Migrator()
        migrator.registerMigration("fails", disablingForeignKeys: true) { db in
            Self.denyForeignKeysPragma(db)
            throw Boom()
        }
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(db) }
        #expect(error?.kind == .foreignKeysNotRestored(identifier: "fails"))
        #expect(error?.message.contains("boom") == true)
        #expect(error?.message.contains("did not apply") == true)
    }

    @Test("Foreign keys are on again after a migration that disabled them")
    func keysBackOn() throws {
        let db = try Database.inMemory()
        var migrator = Migrator()
        migrator.registerMigration("rebuild", disablingForeignKeys: true) { db in
            #expect(try db.fetchOne(Bool.self, "PRAGMA foreign_keys") == false)
            try db.execute("CREATE TABLE t (a)")
        }
        _ = try migrator.migrate(db)
        #expect(try db.fetchOne(Bool.self, "PRAGMA foreign_keys") == true)
    }
}
