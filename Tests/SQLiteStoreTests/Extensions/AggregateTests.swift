import Foundation
import SQLiteStore
import Testing

/// Concatenates text with `|`, in step order.
private struct Joined: SQLiteAggregate {
    var parts: [String] = []
    mutating func step(_ arguments: [SQLiteValue]) throws {
        parts.append(try String(sqliteValue: arguments[0]))
    }
    func finalize() -> String { parts.joined(separator: "|") }
}

/// The product of its arguments; 1 for no rows.
private struct Product: SQLiteAggregate {
    var product: Int64 = 1
    mutating func step(_ arguments: [SQLiteValue]) throws {
        product *= try Int64(sqliteValue: arguments[0])
    }
    func finalize() -> Int64 { product }
}

/// Fails on a negative value.
private struct PositiveSum: SQLiteAggregate {
    var sum = 0
    mutating func step(_ arguments: [SQLiteValue]) throws {
        let value = try Int(sqliteValue: arguments[0])
        guard value >= 0 else { throw SQLiteError(code: .error, message: "negative value \(value)") }
        sum += value
    }
    func finalize() -> Int { sum }
}

/// Fails at the end only.
private struct FailingFinal: SQLiteAggregate {
    mutating func step(_ arguments: [SQLiteValue]) throws {}
    func finalize() throws -> Int { throw SQLiteError(code: .error, message: "cannot finish") }
}

/// How many `Tracked` instances are alive, per key (one key per test).
private final class LiveInstances: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [Int64: Int] = [:]
    func withLock<T>(_ body: (inout [Int64: Int]) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&counts)
    }
}

private let liveInstances = LiveInstances()

/// An aggregate that counts its live instances under the key given as its
/// second argument, so that a test sees whether each group is released.
private final class Tracked: SQLiteAggregate {
    var key: Int64?
    var count = 0
    init() {}
    func step(_ arguments: [SQLiteValue]) throws {
        if key == nil {
            let key = try Int64(sqliteValue: arguments[1])
            self.key = key
            liveInstances.withLock { $0[key, default: 0] += 1 }
        }
        count += 1
        if case .text("fail") = arguments[0] { throw SQLiteError(code: .error, message: "tracked failure") }
    }
    func finalize() -> Int { count }
    deinit {
        if let key { liveInstances.withLock { $0[key, default: 0] -= 1 } }
    }
}

@Suite("Aggregate SQL functions")
struct AggregateTests {
    @Test("Each group gets its own instance")
    func aggregateOverGroups() throws {
        let db = try Database.inMemory()
        try db.createAggregate("product", argumentCount: 1, Product.self)
        try db.execute("CREATE TABLE t(g INTEGER, x INTEGER)")
        try db.execute("INSERT INTO t VALUES (1, 2), (2, 5), (1, 3), (2, 7), (3, 11)")
        let products = try db.fetchAll(Int64.self, "SELECT product(x) FROM t GROUP BY g ORDER BY g")
        #expect(products == [6, 35, 11])
    }

    @Test("Rows reach step in the order the query gives them")
    func stepOrder() throws {
        let db = try Database.inMemory()
        try db.createAggregate("joined", argumentCount: 1, Joined.self)
        let joined = try db.fetchOne(
            String.self, "SELECT joined(v) FROM (SELECT 'b' AS v UNION ALL SELECT 'a' UNION ALL SELECT 'c')")
        #expect(joined == "b|a|c")
    }

    @Test("Over no rows, a fresh instance is finalized")
    func aggregateOverEmptyInput() throws {
        let db = try Database.inMemory()
        try db.createAggregate("product", argumentCount: 1, Product.self)
        try db.createAggregate("joined", argumentCount: 1, Joined.self)
        try db.execute("CREATE TABLE t(x INTEGER)")
        #expect(try db.fetchOne(Int64.self, "SELECT product(x) FROM t") == 1)
        #expect(try db.fetchOne(String.self, "SELECT joined(x) FROM t") == "")
        // With GROUP BY and no rows there is no group, hence no row.
        #expect(try db.fetchAll("SELECT product(x) FROM t GROUP BY x").isEmpty)
        try db.execute("INSERT INTO t VALUES (2), (3), (7)")
        #expect(try db.fetchOne(Int64.self, "SELECT product(x) FROM t") == 42)
    }

    @Test("An error thrown by step fails the statement with its message")
    func throwingStep() throws {
        let db = try Database.inMemory()
        try db.createAggregate("positive_sum", argumentCount: 1, PositiveSum.self)
        try db.execute("CREATE TABLE t(x INTEGER)")
        try db.execute("INSERT INTO t VALUES (1), (-2), (3)")
        let error = try #require(throws: SQLiteError.self) {
            try db.fetchOne(Int.self, "SELECT positive_sum(x) FROM t")
        }
        #expect(error.message == "negative value -2")
        try db.execute("DELETE FROM t WHERE x < 0")
        #expect(try db.fetchOne(Int.self, "SELECT positive_sum(x) FROM t") == 4)
    }

    @Test("An error thrown by finalize fails the statement with its message")
    func throwingFinalize() throws {
        let db = try Database.inMemory()
        try db.createAggregate("failing", argumentCount: 1, FailingFinal.self)
        let error = try #require(throws: SQLiteError.self) { try db.fetchOne(Int.self, "SELECT failing(1)") }
        #expect(error.message == "cannot finish")
    }

    @Test("The wrong number of arguments fails to prepare")
    func aggregateWrongArgumentCount() throws {
        let db = try Database.inMemory()
        try db.createAggregate("product", argumentCount: 1, Product.self)
        let error = try #require(throws: SQLiteError.self) { try db.fetchOne(Int.self, "SELECT product(1, 2)") }
        #expect(error.message.contains("wrong number of arguments to function product()"))
    }

    @Test("Every group's instance is released, after success, failure, or a statement left unfinished")
    func groupsReleased() throws {
        let db = try Database.inMemory()
        try db.createAggregate("tracked", argumentCount: 2, Tracked.self)
        try db.execute("CREATE TABLE t(g INTEGER, v TEXT)")
        try db.execute("INSERT INTO t VALUES (1, 'a'), (1, 'b'), (2, 'c'), (3, 'fail'), (3, 'd')")
        let key: Int64 = 1_000 + Int64.random(in: 0..<1_000_000)

        let counts = try db.fetchAll(
            Int.self, "SELECT tracked(v, ?) FROM t WHERE g < 3 GROUP BY g ORDER BY g", arguments: [key])
        #expect(counts == [2, 1])
        #expect(liveInstances.withLock { $0[key] } == 0)

        #expect(throws: SQLiteError.self) {
            try db.fetchAll(Int.self, "SELECT tracked(v, ?) FROM t GROUP BY g", arguments: [key + 1])
        }
        #expect(liveInstances.withLock { $0[key + 1] } == 0)

        // A cursor dropped after its first row: the remaining groups were
        // never finalized by a step, only by the statement's reset.
        do {
            let cursor = try db.fetchCursor(
                Int.self, "SELECT tracked(v, ?) FROM t WHERE g < 3 GROUP BY g", arguments: [key + 2])
            _ = try cursor.next()
        }
        db.clearStatementCache()
        #expect(liveInstances.withLock { $0[key + 2] } == 0)
    }

    @Test("A class aggregate's groups do not share state between statements")
    func freshInstancePerStatement() throws {
        let db = try Database.inMemory()
        try db.createAggregate("joined", argumentCount: 1, Joined.self)
        #expect(try db.fetchOne(String.self, "SELECT joined('a')") == "a")
        #expect(try db.fetchOne(String.self, "SELECT joined('b')") == "b")
    }
}
