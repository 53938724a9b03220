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

    /// The snippet above covers the methods there are today; this covers
    /// any added later: no public method of the libraries takes SQL text
    /// as an unlabeled `String`, unless it is one of the unavailable old
    /// forms that point the user at `sql:`.
    @Test("No public method takes SQL text as an unlabeled String")
    func noPublicMethodTakesUnlabeledStringSQL() throws {
        let sources = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
        var offenders: [String] = []
        var scanned = 0
        for library in ["SQLiteStore", "SQLiteStoreAppSupport"] {
            let folder = sources.appendingPathComponent(library)
            let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
            while let file = files?.nextObject() as? URL {
                guard file.pathExtension == "swift" else { continue }
                scanned += 1
                let lines = try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n")
                for (index, line) in lines.enumerated() {
                    // A declaration may break its parameters over lines.
                    let declaration = lines[index..<min(lines.count, index + 3)].joined(separator: " ")
                    guard line.contains("public func ") || line.contains("public init("),
                        declaration.contains("_ sql: String")
                    else { continue }
                    let before = lines[max(0, index - 6)..<index].joined(separator: " ")
                    if before.contains("unavailable") && before.contains("sql:") { continue }
                    offenders.append("\(library)/\(file.lastPathComponent):\(index + 1): \(line)")
                }
            }
        }
        #expect(scanned > 50, "the scan found the libraries' sources")
        #expect(offenders == [])
    }
}
