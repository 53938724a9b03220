import Foundation
import TestSupport
import Testing

/// A user's code, type-checked against the built modules: every line
/// marked `// refused` passes SQL text held in a `String` where an `SQL`
/// is expected and must not compile; every other line must.
private let snippet = """
    import SQLiteStore
    import SQLiteStoreAppSupport

    func refused(_ manager: DBManager, text: String) throws {
        _ = try manager.loadData(text)  // refused
        _ = try manager.loadData(text, arguments: [1])  // refused
        try manager.executeQuery(text)  // refused
        try manager.executeQuery(text, arguments: [1])  // refused
    }

    func accepted(_ manager: DBManager, text: String, age: Int) throws {
        _ = try manager.loadData(sql: text, arguments: [1])
        try manager.executeQuery(sql: text)
        _ = try manager.loadData("SELECT * FROM peopleInfo WHERE age >= \\(age)")
        _ = try manager.loadData("SELECT * FROM peopleInfo WHERE age >= ?", arguments: [age])
        let delete: SQL = "DELETE FROM peopleInfo WHERE age < \\(age)"
        try manager.executeQuery(delete)
    }
    """

@Suite("DBManager: SQL text and SQL with bound values cannot be confused")
struct SQLTextLabelTests {
    @Test("A String passed to loadData or executeQuery without sql: does not compile; sql: takes it")
    func unlabeledStringDoesNotCompile() async throws {
        let mismatches = try await typeCheckMismatches(snippet) { $0.contains("renamed to") && $0.contains("sql:") }
        #expect(mismatches == [])
    }
}
