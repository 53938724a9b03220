import Foundation
import TestSupport
import Testing

/// A user's code, type-checked against the built module: every line marked
/// `// refused` passes SQL text held in a `String` where an `SQL` is
/// expected and must not compile; every other line must.
private let snippet = """
    import SQLiteStore

    struct Person: FetchableRecord {
        init(row: Row) throws {}
    }

    func refused(_ db: Database, text: String) throws {
        _ = try db.makeStatement(text)  // refused
        _ = try db.cachedStatement(text)  // refused
        try db.execute(text)  // refused
        try db.execute(text, arguments: [1])  // refused
        _ = try db.fetchCursor(text)  // refused
        _ = try db.fetchAll(text)  // refused
        _ = try db.fetchOne(text)  // refused
        _ = try db.fetchCursor(Int.self, text)  // refused
        _ = try db.fetchAll(Int.self, text)  // refused
        _ = try db.fetchOne(Int.self, text)  // refused
        _ = try db.fetchCursor(Person.self, text)  // refused
        _ = try db.fetchAll(Person.self, text)  // refused
        _ = try db.fetchOne(Person.self, text, arguments: [1])  // refused
    }

    func accepted(_ db: Database, text: String, name: String) throws {
        _ = try db.makeStatement(sql: text)
        _ = try db.cachedStatement(sql: text)
        try db.execute(sql: text, arguments: [1])
        _ = try db.fetchCursor(sql: text)
        _ = try db.fetchAll(sql: text)
        _ = try db.fetchOne(sql: text)
        _ = try db.fetchCursor(Int.self, sql: text)
        _ = try db.fetchAll(Int.self, sql: text)
        _ = try db.fetchOne(Int.self, sql: text)
        _ = try db.fetchCursor(Person.self, sql: text)
        _ = try db.fetchAll(Person.self, sql: text)
        _ = try db.fetchOne(Person.self, sql: text)
        let query: SQL = "SELECT * FROM people WHERE name = \\(name)"
        _ = try db.makeStatement(query)
        _ = try db.cachedStatement("SELECT 1")
        try db.execute("INSERT INTO people (name) VALUES (\\(name))")
        try db.execute("INSERT INTO people (name) VALUES (?)", arguments: [name])
        _ = try db.fetchCursor(query)
        _ = try db.fetchAll("SELECT * FROM people")
        _ = try db.fetchOne(query)
        _ = try db.fetchCursor(Int.self, "SELECT 1")
        _ = try db.fetchAll(Int.self, query)
        _ = try db.fetchOne(Int.self, "SELECT \\(1)")
        _ = try db.fetchCursor(Person.self, query)
        _ = try db.fetchAll(Person.self, "SELECT * FROM people")
        _ = try db.fetchOne(Person.self, query)
    }
    """

@Suite("SQL text and SQL with bound values cannot be confused")
struct SQLTextLabelTests {
    @Test("A String passed to an unlabeled execute, fetch or statement method does not compile; sql: takes it")
    func unlabeledStringDoesNotCompile() async throws {
        let mismatches = try await typeCheckMismatches(snippet) { $0.contains("renamed to") && $0.contains("sql:") }
        #expect(mismatches == [])
    }
}
