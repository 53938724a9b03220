import Foundation
import SQLiteStore
import Testing

/// Orders strings by length, then by their characters.
private func byLength(_ left: String, _ right: String) -> ComparisonResult {
    if left.count != right.count { return left.count < right.count ? .orderedAscending : .orderedDescending }
    if left == right { return .orderedSame }
    return left < right ? .orderedAscending : .orderedDescending
}

@Suite("Collations from Swift closures")
struct CollationTests {
    @Test("ORDER BY ... COLLATE uses the closure's order")
    func orderByCollation() throws {
        let db = try Database.inMemory()
        try db.createCollation("by_length", byLength)
        try db.execute("CREATE TABLE t(name TEXT)")
        try db.execute("INSERT INTO t VALUES ('ccc'), ('a'), ('bb'), ('aa')")
        let names = try db.fetchAll(String.self, "SELECT name FROM t ORDER BY name COLLATE by_length")
        #expect(names == ["a", "aa", "bb", "ccc"])
    }

    @Test("A column declared with the collation uses it for comparisons and its index")
    func columnCollation() throws {
        let db = try Database.inMemory()
        try db.createCollation("folded") { left, right in
            left.compare(right, options: [.caseInsensitive, .diacriticInsensitive])
        }
        try db.execute("CREATE TABLE t(name TEXT COLLATE folded UNIQUE)")
        try db.execute("INSERT INTO t VALUES ('Élise')")
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t WHERE name = 'elise'") == 1)
        let error = try #require(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES ('ELISE')") }
        #expect(error.extendedCode == .constraintUnique)
    }

    @Test("Strings with embedded NULs reach the closure whole")
    func embeddedNulInCollation() throws {
        let db = try Database.inMemory()
        try db.createCollation("by_length", byLength)
        let names = try db.fetchAll(
            String.self, "SELECT x FROM (SELECT ? AS x UNION ALL SELECT 'ab') ORDER BY x COLLATE by_length",
            arguments: ["a\u{0}bc"])
        #expect(names == ["ab", "a\u{0}bc"])
    }

    @Test("An unknown or removed collation fails to prepare, naming it")
    func removedCollation() throws {
        let db = try Database.inMemory()
        try db.createCollation("by_length", byLength)
        try db.removeCollation("by_length")
        let error = try #require(throws: SQLiteError.self) {
            try db.fetchAll(String.self, "SELECT 'a' ORDER BY 1 COLLATE by_length")
        }
        #expect(error.message.contains("no such collation sequence: by_length"))
    }

    @Test("Registering a collation again replaces it")
    func replacedCollation() throws {
        let db = try Database.inMemory()
        try db.createCollation("order", byLength)
        try db.createCollation("order") { left, right in byLength(right, left) }
        let names = try db.fetchAll(
            String.self, "SELECT x FROM (SELECT 'a' AS x UNION ALL SELECT 'bbb') ORDER BY x COLLATE \"order\"")
        #expect(names == ["bbb", "a"])
    }
}

@Suite("The authorizer hook")
struct AuthorizerTests {
    @Test("A denied action fails to prepare with SQLiteError .auth and changes nothing")
    func denialGivesAuthError() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t(x INTEGER)")
        try db.execute("INSERT INTO t VALUES (1)")
        db.setAuthorizer { request in request.action == .delete ? .deny : .allow }
        let error = try #require(throws: SQLiteError.self) { try db.execute("DELETE FROM t") }
        #expect(error.code == .auth)
        #expect(error.message == "not authorized")
        #expect(error.sql == "DELETE FROM t")
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") == 1)
    }

    @Test("The request names the action, table and column")
    func requestArguments() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE people(name TEXT, secret TEXT)")
        var reads: [String] = []
        db.setAuthorizer { request in
            if request.action == .read {
                reads.append(
                    "\(request.schema ?? "?").\(request.firstArgument ?? "?").\(request.secondArgument ?? "?")")
            }
            return .allow
        }
        _ = try db.fetchAll("SELECT name FROM people")
        #expect(reads == ["main.people.name"])
    }

    @Test("Ignoring a column read makes it read as NULL")
    func ignoredRead() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE people(name TEXT, secret TEXT)")
        try db.execute("INSERT INTO people VALUES ('Ada', 'hidden')")
        db.setAuthorizer { request in
            request.action == .read && request.secondArgument == "secret" ? .ignore : .allow
        }
        let row = try #require(try db.fetchOne("SELECT name, secret FROM people"))
        #expect(try row["name"] as String == "Ada")
        #expect(try row["secret"] as String? == nil)
    }

    @Test("A cached statement is authorized again after an authorizer is set")
    func cachedStatementReauthorized() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t(x INTEGER)")
        let sql = "INSERT INTO t VALUES (1)"
        try db.execute(sql: sql)
        db.setAuthorizer { request in request.action == .insert ? .deny : .allow }
        let error = try #require(throws: SQLiteError.self) { try db.execute(sql: sql) }
        #expect(error.code == .auth)
        db.setAuthorizer(nil)
        try db.execute(sql: sql)
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") == 2)
    }

    @Test("Removing the authorizer allows everything again")
    func removingAuthorizer() throws {
        let db = try Database.inMemory()
        db.setAuthorizer { _ in .deny }
        #expect(throws: SQLiteError.self) { try db.fetchOne(Int.self, "SELECT 1") }
        db.setAuthorizer(nil)
        #expect(try db.fetchOne(Int.self, "SELECT 1") == 1)
    }

    @Test("Unknown action codes come through with their number")
    func actionDescriptions() {
        #expect(AuthorizerAction.read.description == "read")
        #expect(AuthorizerAction(rawValue: 999).description == "action 999")
        let request = AuthorizerRequest(action: .update, firstArgument: "t", secondArgument: "x", schema: "main")
        #expect(request.description == "update t.x in main")
    }
}

@Suite("The SQLite version")
struct SQLiteVersionTests {
    @Test("The version's number and text agree")
    func versionNumberMatchesString() throws {
        let version = Database.sqliteVersion
        #expect(version.string == "\(version.major).\(version.minor).\(version.patch)")
        #expect(version.major == 3)
        #expect(!version.sourceID.isEmpty)
        let db = try Database.inMemory()
        #expect(try db.fetchOne(String.self, "SELECT sqlite_version()") == version.string)
    }

    @Test("Versions compare by number")
    func versionComparison() {
        #expect(SQLiteVersion(3, 9, 0) < SQLiteVersion(3, 10, 0))
        #expect(SQLiteVersion(3, 40, 1).number == 3_040_001)
        #expect(Database.sqliteVersion >= SQLiteVersion(3, 0, 0))
    }
}
