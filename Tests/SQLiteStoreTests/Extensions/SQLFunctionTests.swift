import Foundation
import SQLiteStore
import TestSupport
import Testing

/// Echoes its arguments' storage classes and values, to check what reaches Swift.
private func registerDescribe(_ db: Database) throws {
    try db.createFunction("describe") { (arguments: [SQLiteValue]) -> String in
        arguments.map { "\($0.storageClass):\($0)" }.joined(separator: ",")
    }
}

private struct Refusal: Error, CustomStringConvertible {
    var description: String { "refused by the function" }
}

@Suite("SQL functions from Swift closures")
struct SQLFunctionTests {
    @Test("NULL, integer, real, text and blob arguments reach the closure as they are")
    func argumentsOfEveryStorageClass() throws {
        let db = try Database.inMemory()
        try registerDescribe(db)
        let result = try db.fetchOne(String.self, "SELECT describe(NULL, 42, 2.5, 'it''s', x'00FF')")
        #expect(result == "NULL:NULL,INTEGER:42,REAL:2.5,TEXT:'it''s',BLOB:X'00FF'")
    }

    @Test("An empty blob argument stays an empty blob, not NULL")
    func emptyBlobArgument() throws {
        let db = try Database.inMemory()
        try registerDescribe(db)
        #expect(try db.fetchOne(String.self, "SELECT describe(x'')") == "BLOB:X''")
    }

    @Test("Text with an embedded NUL is passed and returned whole")
    func embeddedNulInText() throws {
        let db = try Database.inMemory()
        try db.createFunction("twice", argumentCount: 1) { (arguments: [SQLiteValue]) -> String? in
            guard case .text(let text) = arguments[0] else { return nil }
            return text + text
        }
        let text = "a\u{0}b"
        let result = try db.fetchOne(String.self, "SELECT twice(?)", arguments: [text])
        #expect(result == "a\u{0}ba\u{0}b")
        #expect(try db.fetchOne(Int.self, "SELECT length(CAST(twice(?) AS BLOB))", arguments: [text]) == 6)
    }

    @Test("Text that is not valid UTF-8 reaches the closure as its stored bytes, not repaired")
    func invalidUTF8TextArgument() throws {
        let db = try Database.inMemory()
        try db.createFunction("bytes", argumentCount: 1) { (arguments: [SQLiteValue]) -> Data? in
            guard case .textBytes(let data) = arguments[0] else { return nil }
            return data
        }
        let stored = try db.fetchOne(Data.self, "SELECT bytes(CAST(x'41FF42C0' AS TEXT))")
        #expect(stored == Data([0x41, 0xFF, 0x42, 0xC0]))
    }

    @Test("Text that is not valid UTF-8 goes through a function unchanged and stays TEXT")
    func invalidUTF8TextResult() throws {
        let db = try Database.inMemory()
        try db.createFunction("same", argumentCount: 1) { (arguments: [SQLiteValue]) -> SQLiteValue in arguments[0] }
        let row = try #require(
            try db.fetchOne("SELECT typeof(same(CAST(x'41FF42C0' AS TEXT))), hex(same(CAST(x'41FF42C0' AS TEXT)))"))
        #expect(row.values == ["text", "41FF42C0"])
    }

    @Test("Each kind of return value comes back with its storage class")
    func returnValues() throws {
        let db = try Database.inMemory()
        try db.createFunction("value", argumentCount: 1) { (arguments: [SQLiteValue]) -> SQLiteValue in
            switch arguments[0] {
            case .integer(0): .null
            case .integer(1): .integer(-7)
            case .integer(2): .real(0.5)
            case .integer(3): .text("é")
            case .integer(4): .blob(Data([1, 2]))
            default: .blob(Data())
            }
        }
        let rows = try db.fetchAll(
            "SELECT typeof(value(0)), value(1), value(2), value(3), hex(value(4)), typeof(value(5)), length(value(5))")
        let row = try #require(rows.first)
        #expect(try row[0] as String == "null")
        #expect(try row[1] as Int == -7)
        #expect(try row[2] as Double == 0.5)
        #expect(try row[3] as String == "é")
        #expect(try row[4] as String == "0102")
        #expect(try row[5] as String == "blob")
        #expect(try row[6] as Int == 0)
    }

    @Test("A Swift type's conversion is used for the result, and nil is NULL")
    func convertibleResults() throws {
        let db = try Database.inMemory()
        try db.createFunction("maybe", argumentCount: 1) { (arguments: [SQLiteValue]) -> Int? in
            arguments[0].isNull ? nil : 1
        }
        #expect(try db.fetchOne(String.self, "SELECT typeof(maybe(NULL))") == "null")
        #expect(try db.fetchOne(Int.self, "SELECT maybe(3)") == 1)
    }

    @Test("A call with the wrong number of arguments fails to prepare, naming the function")
    func wrongArgumentCount() throws {
        let db = try Database.inMemory()
        try db.createFunction("one", argumentCount: 1) { (arguments: [SQLiteValue]) -> Int in arguments.count }
        let error = try #require(throws: SQLiteError.self) { try db.fetchOne(Int.self, "SELECT one(1, 2)") }
        #expect(error.code == .error)
        #expect(error.message.contains("wrong number of arguments to function one()"))
        #expect(try db.fetchOne(Int.self, "SELECT one(1)") == 1)
    }

    @Test("A variadic function takes any number of arguments")
    func variadicFunction() throws {
        let db = try Database.inMemory()
        try db.createFunction("count_args") { (arguments: [SQLiteValue]) -> Int in arguments.count }
        #expect(try db.fetchOne(Int.self, "SELECT count_args()") == 0)
        #expect(try db.fetchOne(Int.self, "SELECT count_args(1, 'a', NULL, 4, 5)") == 5)
    }

    @Test("An argument count outside 0...127 is refused before reaching SQLite")
    func invalidArgumentCount() throws {
        let db = try Database.inMemory()
        let error = try #require(throws: SQLiteError.self) {
            try db.createFunction("many", argumentCount: 128) { (_: [SQLiteValue]) -> Int in 0 }
        }
        #expect(error.code == .misuse)
        #expect(error.message.contains("0 to 127"))
    }

    @Test("An empty name or one with a NUL is refused")
    func invalidName() throws {
        let db = try Database.inMemory()
        for name in ["", "a\u{0}b", String(repeating: "f", count: 256)] {
            let error = try #require(throws: SQLiteError.self) {
                try db.createFunction(name) { (_: [SQLiteValue]) -> Int in 0 }
            }
            #expect(error.code == .misuse)
        }
    }

    @Test("An error thrown by the closure fails the statement with its message")
    func throwingFunction() throws {
        let db = try Database.inMemory()
        try db.createFunction("refuse", argumentCount: 0) { (_: [SQLiteValue]) throws -> Int in throw Refusal() }
        let error = try #require(throws: SQLiteError.self) { try db.fetchOne(Int.self, "SELECT refuse()") }
        #expect(error.code == .error)
        #expect(error.message == "refused by the function")
        // The connection is still usable.
        #expect(try db.fetchOne(Int.self, "SELECT 1") == 1)
    }

    @Test("A thrown SQLiteError keeps its code")
    func throwingSQLiteError() throws {
        let db = try Database.inMemory()
        try db.createFunction("check_fails", argumentCount: 0) { (_: [SQLiteValue]) throws -> Int in
            throw SQLiteError(code: .constraintCheck, message: "not allowed here")
        }
        let error = try #require(throws: SQLiteError.self) { try db.execute("SELECT check_fails()") }
        #expect(error.extendedCode == .constraintCheck)
        #expect(error.message == "not allowed here")
    }

    @Test("A result that cannot be stored (NaN) is an error, not NULL")
    func unstorableResult() throws {
        let db = try Database.inMemory()
        try db.createFunction("nan", argumentCount: 0) { (_: [SQLiteValue]) -> Double in .nan }
        let error = try #require(throws: SQLiteError.self) { try db.fetchOne(Double.self, "SELECT nan()") }
        #expect(error.message.contains("NaN"))
    }

    @Test("A deterministic function is accepted in an index expression")
    func deterministicInIndex() throws {
        let db = try Database.inMemory()
        try db.createFunction("lower_swift", argumentCount: 1, options: .deterministic) {
            (arguments: [SQLiteValue]) -> String? in
            guard case .text(let text) = arguments[0] else { return nil }
            return text.lowercased()
        }
        try db.execute("CREATE TABLE t(name TEXT)")
        try db.execute("CREATE INDEX t_lower ON t(lower_swift(name))")
        try db.execute("INSERT INTO t VALUES ('ÉLISE'), ('bob')")
        #expect(try db.fetchOne(String.self, "SELECT name FROM t WHERE lower_swift(name) = 'élise'") == "ÉLISE")
    }

    @Test("A function that is not deterministic is refused in an index expression")
    func nonDeterministicRefusedInIndex() throws {
        let db = try Database.inMemory()
        try db.createFunction("lower_swift", argumentCount: 1) { (arguments: [SQLiteValue]) -> String in
            "\(arguments[0])".lowercased()
        }
        try db.execute("CREATE TABLE t(name TEXT)")
        let error = try #require(throws: SQLiteError.self) {
            try db.execute("CREATE INDEX t_lower ON t(lower_swift(name))")
        }
        #expect(error.message.contains("non-deterministic"))
        #expect(try db.indexes(on: "t").isEmpty)
    }

    @Test("A direct-only function cannot be called from a view")
    func directOnlyRefusedInView() throws {
        let db = try Database.inMemory()
        try db.createFunction("secret", argumentCount: 0, options: .directOnly) { (_: [SQLiteValue]) -> Int in 42 }
        #expect(try db.fetchOne(Int.self, "SELECT secret()") == 42)
        try db.execute("CREATE VIEW v AS SELECT secret() AS s")
        let error = try #require(throws: SQLiteError.self) { try db.fetchOne(Int.self, "SELECT s FROM v") }
        #expect(error.message.contains("unsafe use of secret()"))
    }

    @Test("Registering again replaces the closure")
    func replacingFunction() throws {
        let db = try Database.inMemory()
        try db.createFunction("version_of", argumentCount: 0) { (_: [SQLiteValue]) -> Int in 1 }
        try db.createFunction("version_of", argumentCount: 0) { (_: [SQLiteValue]) -> Int in 2 }
        #expect(try db.fetchOne(Int.self, "SELECT version_of()") == 2)
    }

    @Test("A removed function is no longer known")
    func removingFunction() throws {
        let db = try Database.inMemory()
        try db.createFunction("gone", argumentCount: 0) { (_: [SQLiteValue]) -> Int in 1 }
        try db.removeFunction("gone", argumentCount: 0)
        let error = try #require(throws: SQLiteError.self) { try db.fetchOne(Int.self, "SELECT gone()") }
        #expect(error.message.contains("no such function: gone"))
    }

    @Test("Registering on a closed connection throws a misuse error")
    func closedConnection() throws {
        let db = try Database.inMemory()
        db.close()
        let error = try #require(throws: SQLiteError.self) {
            try db.createFunction("f") { (_: [SQLiteValue]) -> Int in 1 }
        }
        #expect(error.code == .misuse)
    }
}

/// An object whose release the tests watch through a weak reference.
private final class Captured {
    let value = 5
}

@Suite("Closures registered on a connection are released")
struct FunctionLifetimeTests {
    @Test("A function's captured object is released when the connection closes")
    func functionReleasedOnClose() throws {
        weak var weakCaptured: Captured?
        let db = try Database.inMemory()
        do {
            let captured = Captured()
            weakCaptured = captured
            try db.createFunction("captured", argumentCount: 0) { (_: [SQLiteValue]) -> Int in captured.value }
        }
        #expect(try db.fetchOne(Int.self, "SELECT captured()") == 5)
        #expect(weakCaptured != nil)
        db.close()
        #expect(weakCaptured == nil)
    }

    @Test("A function's captured object is released when the function is replaced")
    func functionReleasedOnReplace() throws {
        weak var weakCaptured: Captured?
        let db = try Database.inMemory()
        do {
            let captured = Captured()
            weakCaptured = captured
            try db.createFunction("captured", argumentCount: 0) { (_: [SQLiteValue]) -> Int in captured.value }
        }
        #expect(weakCaptured != nil)
        try db.createFunction("captured", argumentCount: 0) { (_: [SQLiteValue]) -> Int in 0 }
        #expect(weakCaptured == nil)
    }

    @Test("A function's captured object is released when the function is removed")
    func functionReleasedOnRemove() throws {
        weak var weakCaptured: Captured?
        let db = try Database.inMemory()
        do {
            let captured = Captured()
            weakCaptured = captured
            try db.createFunction("captured") { (_: [SQLiteValue]) -> Int in captured.value }
        }
        #expect(weakCaptured != nil)
        try db.removeFunction("captured")
        #expect(weakCaptured == nil)
    }

    @Test("A collation's captured object is released when the connection closes")
    func collationReleasedOnClose() throws {
        weak var weakCaptured: Captured?
        let db = try Database.inMemory()
        do {
            let captured = Captured()
            weakCaptured = captured
            try db.createCollation("captured") { left, right in
                _ = captured.value
                return left < right ? .orderedAscending : left == right ? .orderedSame : .orderedDescending
            }
        }
        #expect(weakCaptured != nil)
        db.close()
        #expect(weakCaptured == nil)
    }

    @Test("An authorizer's captured object is released when the connection closes, or when it is replaced")
    func authorizerReleased() throws {
        weak var first: Captured?
        weak var second: Captured?
        let db = try Database.inMemory()
        do {
            let captured = Captured()
            first = captured
            db.setAuthorizer { _ in captured.value == 5 ? .allow : .deny }
        }
        #expect(first != nil)
        do {
            let captured = Captured()
            second = captured
            db.setAuthorizer { _ in captured.value == 5 ? .allow : .deny }
        }
        #expect(first == nil)
        #expect(try db.fetchOne(Int.self, "SELECT 1") == 1)
        #expect(second != nil)
        db.close()
        #expect(second == nil)
    }

    @Test("Functions registered in prepareDatabase reach every pool connection, readers opened later included")
    func poolConnectionsGetFunctions() async throws {
        let directory = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.prepareDatabase = { db in
            try db.createFunction("answer", argumentCount: 0, options: .deterministic) { (_: [SQLiteValue]) -> Int in
                42
            }
        }
        let pool = try DatabasePool(path: directory.path("pool.sqlite"), configuration: configuration)
        let written = try await pool.write { db in try db.fetchOne(Int.self, "SELECT answer()") }
        #expect(written == 42)
        // Several reads at once make the pool open several readers.
        let results = try await withThrowingTaskGroup(of: Int?.self) { group in
            for _ in 0..<4 {
                group.addTask { try await pool.read { db in try db.fetchOne(Int.self, "SELECT answer()") } }
            }
            return try await group.reduce(into: [Int?]()) { $0.append($1) }
        }
        #expect(results == [42, 42, 42, 42])
        await pool.close()
    }
}
