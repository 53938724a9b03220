import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// Column names of cached statements follow schema changes.
@Suite("Column names after a schema change")
struct StaleColumnNamesTests {
    /// The column names `SELECT * FROM t` reports through a cursor run to
    /// its end (the cached statement is reused).
    private func selectAllNames(_ db: Database) throws -> [String] {
        let cursor = try db.fetchCursor("SELECT * FROM t")
        while try cursor.next() != nil {}
        return cursor.columnNames
    }

    @Test("A cached SELECT * with no rows reports the column added by ALTER TABLE")
    func noRowsAfterAlter() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (a)")
        #expect(try selectAllNames(db) == ["a"])
        try db.execute("ALTER TABLE t ADD COLUMN b")
        #expect(try selectAllNames(db) == ["a", "b"])
        #expect(try db.cachedStatement("SELECT * FROM t").columnNames == ["a", "b"])
    }

    @Test("DDL run through a cursor (fetchAll of ALTER TABLE) refreshes the names of a cached SELECT * with rows")
    func ddlThroughCursor() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (a)")
        try db.execute("INSERT INTO t VALUES (1)")
        #expect(try db.fetchAll("SELECT * FROM t").first?.columnNames == ["a"])
        // A rename keeps the column count: only a schema check can see it.
        _ = try db.fetchAll("ALTER TABLE t RENAME COLUMN a TO c")
        let row = try #require(try db.fetchAll("SELECT * FROM t").first)
        #expect(row.columnNames == ["c"])
        #expect(try row["c"] as Int == 1)
    }

    @Test("A pool reader's cached SELECT * sees the writer's RENAME COLUMN, with rows and without")
    func otherConnectionRename() throws {
        let dir = try TemporaryDirectory()
        let pool = try DatabasePool(path: dir.path("db.sqlite"), maximumReaderCount: 1)
        try pool.write { db in try db.execute("CREATE TABLE t (a); CREATE TABLE e (x)") }
        #expect(try pool.read { db in try db.fetchAll("SELECT * FROM t").count } == 0)
        #expect(try pool.read { db in try db.cachedStatement("SELECT * FROM e").columnNames } == ["x"])
        try pool.write { db in try db.execute("ALTER TABLE e RENAME COLUMN x TO y") }
        #expect(try pool.read { db in try selectAllNames(db) } == ["a"])
        let emptyNames = try pool.read { db -> [String] in
            let cursor = try db.fetchCursor("SELECT * FROM e")
            while try cursor.next() != nil {}
            return cursor.columnNames
        }
        #expect(emptyNames == ["y"])
        try pool.write { db in
            try db.execute("INSERT INTO t VALUES (1)")
            try db.execute("ALTER TABLE t RENAME COLUMN a TO c")
        }
        let names = try pool.read { db in try db.fetchAll("SELECT * FROM t").first?.columnNames }
        #expect(names == ["c"])
    }

    @Test("Names stay as they are, and the statement is not re-prepared, when the schema does not change")
    func unchangedSchemaKeepsNames() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (a, b)")
        let statement = try db.cachedStatement("SELECT * FROM t")
        #expect(try selectAllNames(db) == ["a", "b"])
        try db.execute("INSERT INTO t VALUES (1, 2)")
        #expect(try selectAllNames(db) == ["a", "b"])
        #expect(statement.repreparedCount == 0)
    }
}
