import Foundation
import Testing

@testable import SQLiteStore

/// The statement cache evicts the least recently used statement.
@Suite("Statement cache")
struct StatementCacheTests {
    private func database(capacity: Int) throws -> Database {
        var configuration = Configuration()
        configuration.statementCacheCapacity = capacity
        return try Database.inMemory(configuration: configuration)
    }

    @Test("At capacity 1, each new SQL replaces the cached statement")
    func capacityOne() throws {
        let db = try database(capacity: 1)
        let first = try db.cachedStatement("SELECT 1")
        #expect(try db.cachedStatement("SELECT 1") === first)
        let second = try db.cachedStatement("SELECT 2")
        #expect(try db.cachedStatement("SELECT 2") === second)
        #expect(try db.cachedStatement("SELECT 1") !== first)
        #expect(db.cachedStatementSQL == ["SELECT 1"])
    }

    @Test("At capacity N, the least recently used statement goes first")
    func leastRecentlyUsedGoesFirst() throws {
        let db = try database(capacity: 4)
        var statements: [String: Statement] = [:]
        for sql in ["SELECT 1", "SELECT 2", "SELECT 3", "SELECT 4"] {
            statements[sql] = try db.cachedStatement(sql: sql)
        }
        // Use 1, 2 and 3 again (execute and fetch count as uses): 4 is now
        // the least recently used, then 1.
        try db.execute("SELECT 1")
        _ = try db.fetchAll(Int.self, "SELECT 2")
        _ = try db.cachedStatement("SELECT 3")
        _ = try db.cachedStatement("SELECT 5")
        #expect(db.cachedStatementSQL == ["SELECT 5", "SELECT 3", "SELECT 2", "SELECT 1"])
        try db.execute("SELECT 6")
        #expect(db.cachedStatementSQL == ["SELECT 6", "SELECT 5", "SELECT 3", "SELECT 2"])
        for sql in ["SELECT 2", "SELECT 3"] { #expect(try db.cachedStatement(sql: sql) === statements[sql]) }
        #expect(try db.cachedStatement("SELECT 1") !== statements["SELECT 1"])
    }

    @Test("At capacity 0, nothing is cached")
    func capacityZero() throws {
        let db = try database(capacity: 0)
        let first = try db.cachedStatement("SELECT 1")
        #expect(try db.cachedStatement("SELECT 1") !== first)
        try db.execute("SELECT 1")
        #expect(db.cachedStatementSQL.isEmpty)
    }
}

/// `case .constraint` in a pattern matches every extended constraint code.
@Suite("Result code patterns")
struct ResultCodePatternTests {
    private func uniqueViolation() throws -> SQLiteError {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (a UNIQUE NOT NULL)")
        try db.execute("INSERT INTO t VALUES (1)")
        let error = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (1)") }
        return try #require(error)
    }

    @Test("switch on an error's extended code: case .constraint matches .constraintUnique")
    func primaryPatternMatchesExtendedCode() throws {
        let error = try uniqueViolation()
        #expect(error.extendedCode == .constraintUnique)
        switch error.extendedCode {
        case .busy: Issue.record("matched .busy")
        case .constraint: break
        default: Issue.record("case .constraint did not match \(error.extendedCode)")
        }
    }

    @Test("switch on an error's primary code: case .constraint matches")
    func primaryPatternMatchesPrimaryCode() throws {
        let error = try uniqueViolation()
        switch error.code {
        case .constraint: break
        default: Issue.record("case .constraint did not match \(error.code)")
        }
    }

    @Test("An extended pattern matches only itself; == stays exact")
    func extendedPatternIsExact() {
        #expect(ResultCode.constraintUnique ~= .constraintUnique)
        #expect(!(ResultCode.constraintUnique ~= .constraintNotNull))
        #expect(!(ResultCode.constraintUnique ~= .constraint))
        #expect(!(ResultCode.constraint ~= .busy))
        #expect(ResultCode.constraint ~= .constraintNotNull)
        #expect(ResultCode.constraintUnique != .constraint)
        #expect(ResultCode.constraint.isPrimary && !ResultCode.constraintUnique.isPrimary)
    }
}
