import Foundation
import Testing

@testable import SQLiteStore

@Suite("Statements, rows and cursors")
struct StatementTests {
    let db: Database
    init() throws {
        db = try makeMemoryDatabase()
        try db.execute(
            """
            CREATE TABLE people (id INTEGER PRIMARY KEY, firstName TEXT, lastName TEXT, age INTEGER, photo BLOB);
            INSERT INTO people VALUES (1, 'Ada', 'Lovelace', 36, NULL);
            INSERT INTO people VALUES (2, 'Alan', NULL, NULL, x'00FF');
            """)
    }

    @Test("A prepared statement runs again with new arguments")
    func reusable() throws {
        let insert = try db.makeStatement("INSERT INTO people (firstName, age) VALUES (?, ?)")
        for index in 0..<5 { try insert.execute(arguments: ["P\(index)", index]) }
        #expect(insert.parameterCount == 2)
        #expect(!insert.isReadOnly)
        let select = try db.makeStatement("SELECT firstName FROM people WHERE age = ?")
        #expect(try select.fetchOne(arguments: [3])?["firstName"] as String? == "P3")
        #expect(try select.fetchOne(arguments: [4])?["firstName"] as String? == "P4")
        #expect(select.isReadOnly)
        #expect(select.columnNames == ["firstName"])
    }

    @Test("makeStatement refuses SQL with several statements or none")
    func singleStatementOnly() throws {
        #expect(throws: SQLiteError.self) { try db.makeStatement("SELECT 1; SELECT 2") }
        #expect(throws: SQLiteError.self) { try db.makeStatement("  -- nothing") }
        _ = try db.makeStatement("SELECT 1; -- trailing comment")
    }

    @Test("The same SQL gives the same cached statement")
    func cacheReuse() throws {
        let first = try db.cachedStatement("SELECT * FROM people WHERE id = ?")
        let second = try db.cachedStatement("SELECT * FROM people WHERE id = ?")
        #expect(first === second)
        #expect(try db.cachedStatement("SELECT 1") !== first)
        db.clearStatementCache()
        #expect(try db.cachedStatement("SELECT * FROM people WHERE id = ?") !== first)
    }

    @Test("execute and fetch reuse the cached statement for repeated SQL")
    func executeUsesCache() throws {
        try db.execute("UPDATE people SET age = ? WHERE id = ?", arguments: [1, 1])
        let cached = try db.cachedStatement("UPDATE people SET age = ? WHERE id = ?")
        try db.execute("UPDATE people SET age = ? WHERE id = ?", arguments: [2, 1])
        #expect(try db.cachedStatement("UPDATE people SET age = ? WHERE id = ?") === cached)
        #expect(try db.fetchOne(Int.self, "SELECT age FROM people WHERE id = 1") == 2)
    }

    @Test("A statement busy with a cursor is not handed out again")
    func busyStatementNotShared() throws {
        let sql = "SELECT id FROM people ORDER BY id"
        let cursor = try db.fetchCursor(sql: sql)
        _ = try cursor.next()
        // Same SQL while the cursor is mid-way: a fresh statement, and the
        // cursor keeps its place.
        #expect(try db.fetchAll(Int.self, sql: sql) == [1, 2])
        #expect(try cursor.next()?[0] as Int? == 2)
        #expect(try cursor.next() == nil)
        #expect(throws: SQLiteError.self) {
            let busy = try db.cachedStatement(sql: sql)
            let held = try busy.fetchCursor()
            _ = try held.next()
            try busy.execute()
        }
    }

    @Test("A row gives values by index and by case-insensitive name, NULLs kept")
    func rowAccess() throws {
        let row = try #require(try db.fetchOne("SELECT * FROM people WHERE id = 2"))
        #expect(row.count == 5)
        #expect(row.columnNames == ["id", "firstName", "lastName", "age", "photo"])
        #expect(try row["FIRSTNAME"] as String == "Alan")
        #expect(try row["firstname"] as String == "Alan")
        #expect(try row[2] as SQLiteValue == .null)
        #expect(try row["age"] as Int? == nil)
        #expect(try row["photo"] as Data == Data([0, 255]))
        #expect(row.values == [.integer(2), .text("Alan"), .null, .null, .blob(Data([0, 255]))])
        #expect(row.hasColumn("LastName"))
        #expect(!row.hasColumn("nickname"))
    }

    @Test("A missing column or index throws, naming it")
    func missingColumn() throws {
        let row = try #require(try db.fetchOne("SELECT id FROM people"))
        do {
            let _: Int = try row["nickname"]
            Issue.record("expected an error")
        } catch let error as ValueConversionError {
            #expect(error.reason == .columnNotFound)
            #expect(error.description.contains("nickname"))
        }
        #expect(throws: ValueConversionError.self) { try row[1] as SQLiteValue }
        #expect(throws: ValueConversionError.self) { try row[-1] as Int }
    }

    @Test("Rows with NULLs keep their length and positions")
    func nullsKeepPositions() throws {
        let rows = try db.fetchAll("SELECT NULL, firstName, NULL, age FROM people ORDER BY id")
        #expect(rows.count == 2)
        for row in rows { #expect(row.count == 4) }
        #expect(try rows[1][1] as String == "Alan")
        #expect(try rows[0][3] as Int == 36)
    }

    @Test("Duplicate column names resolve to the first")
    func duplicateNames() throws {
        let row = try #require(try db.fetchOne("SELECT 1 AS x, 2 AS x"))
        #expect(try row["x"] as Int == 1)
        #expect(try row[1] as Int == 2)
    }

    @Test("Rows kept from a cursor keep their own values")
    func keptRowsAreCopies() throws {
        let cursor = try db.fetchCursor("SELECT id, firstName FROM people ORDER BY id")
        let first = try #require(try cursor.next())
        let second = try #require(try cursor.next())
        #expect(try cursor.next() == nil)
        #expect(try first["firstName"] as String == "Ada")
        #expect(try second["firstName"] as String == "Alan")
        #expect(first != second)
    }

    @Test("fetchAll and fetchOne of values")
    func valueFetches() throws {
        #expect(try db.fetchAll(String.self, "SELECT firstName FROM people ORDER BY id") == ["Ada", "Alan"])
        #expect(try db.fetchAll(Int?.self, "SELECT age FROM people ORDER BY id") == [36, nil])
        #expect(throws: ValueConversionError.self) { try db.fetchAll(Int.self, "SELECT age FROM people ORDER BY id") }
        #expect(try db.fetchOne(Int.self, "SELECT age FROM people WHERE id = ?", arguments: [1]) == 36)
        #expect(try db.fetchOne(Int.self, "SELECT age FROM people WHERE id = ?", arguments: [99]) == nil)
        #expect(try db.fetchOne(Int.self, "SELECT age FROM people WHERE id = 2") == nil)
        #expect(try db.fetchOne("SELECT * FROM people WHERE id = 99") == nil)
    }

    @Test("A cursor streams a million rows one at a time")
    func millionRowCursor() throws {
        let cursor = try db.fetchCursor(
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000) SELECT i FROM n
            """)
        var count = 0
        var sum = 0
        var reused = 0
        var lastIdentifier: ObjectIdentifier?
        while let row = try cursor.next() {
            // The cursor hands out the same row object while nobody keeps
            // the previous one: nothing is accumulated per row.
            let identifier = ObjectIdentifier(row)
            if identifier == lastIdentifier { reused += 1 }
            lastIdentifier = identifier
            sum += try row[0] as Int
            count += 1
        }
        #expect(reused == count - 1)
        #expect(count == 1_000_000)
        #expect(sum == 500_000_500_000)
    }

    @Test("A cursor that is dropped early releases its statement")
    func cursorDroppedEarly() throws {
        let sql = "SELECT id FROM people ORDER BY id"
        do {
            let cursor = try db.fetchCursor(sql: sql)
            _ = try cursor.next()
        }
        let statement = try db.cachedStatement(sql: sql)
        #expect(!statement.isBusy)
        #expect(try statement.fetchAll().count == 2)
    }

    @Test("A failing step ends the cursor with the error")
    func cursorError() throws {
        let cursor = try db.fetchCursor("SELECT json_extract(x, '$') FROM (SELECT 'not json' AS x)")
        #expect(throws: SQLiteError.self) { try cursor.next() }
        #expect(try cursor.next() == nil)
    }

    @Test("Column names follow a schema change for a cached SELECT *")
    func schemaChange() throws {
        #expect(try db.fetchOne("SELECT * FROM people")?.count == 5)
        try db.execute("ALTER TABLE people ADD COLUMN email TEXT")
        let row = try #require(try db.fetchOne("SELECT * FROM people"))
        #expect(row.count == 6)
        #expect(row.columnNames.last == "email")
    }
}

@Suite("Transactions and savepoints")
struct TransactionTests {
    let db: Database
    init() throws {
        db = try makeMemoryDatabase()
        try db.execute("CREATE TABLE t (a INTEGER UNIQUE)")
    }

    func values() throws -> [Int] { try db.fetchAll(Int.self, "SELECT a FROM t ORDER BY a") }

    struct Failure: Error {}

    @Test(
        "A transaction commits when its closure returns", arguments: [TransactionKind.deferred, .immediate, .exclusive])
    func commits(kind: TransactionKind) throws {
        let result = try db.transaction(kind) { db in
            #expect(db.isInsideTransaction)
            try db.execute("INSERT INTO t VALUES (1), (2)")
            return db.changesCount
        }
        #expect(result == 2)
        #expect(!db.isInsideTransaction)
        #expect(try values() == [1, 2])
    }

    @Test("A transaction that throws leaves no rows behind")
    func rollsBack() throws {
        #expect(throws: Failure.self) {
            try db.transaction { db in
                try db.execute("INSERT INTO t VALUES (1), (2)")
                throw Failure()
            }
        }
        #expect(try values() == [])
        #expect(!db.isInsideTransaction)
    }

    @Test("A constraint error mid-transaction rolls back the earlier writes")
    func constraintRollsBack() throws {
        try db.execute("INSERT INTO t VALUES (5)")
        #expect(throws: SQLiteError.self) {
            try db.transaction { db in
                try db.execute("INSERT INTO t VALUES (1)")
                try db.execute("INSERT INTO t VALUES (5)")
            }
        }
        #expect(try values() == [5])
    }

    @Test("Nested savepoints roll back only their own part")
    func nestedSavepoints() throws {
        try db.transaction { db in
            try db.execute("INSERT INTO t VALUES (1)")
            try db.savepoint { db in
                try db.execute("INSERT INTO t VALUES (2)")
                try? db.savepoint { db in
                    try db.execute("INSERT INTO t VALUES (3)")
                    throw Failure()
                }
                try db.savepoint { db in try db.execute("INSERT INTO t VALUES (4)") }
            }
            try? db.savepoint { db in
                try db.execute("INSERT INTO t VALUES (5)")
                throw Failure()
            }
        }
        #expect(try values() == [1, 2, 4])
    }

    @Test("A savepoint outside a transaction acts as one")
    func savepointAlone() throws {
        #expect(throws: Failure.self) {
            try db.savepoint { db in
                try db.execute("INSERT INTO t VALUES (1)")
                throw Failure()
            }
        }
        try db.savepoint { db in try db.execute("INSERT INTO t VALUES (2)") }
        #expect(try values() == [2])
        #expect(!db.isInsideTransaction)
    }

    @Test("Opening a transaction inside another is a clear error")
    func noNestedTransactions() throws {
        try db.transaction { db in
            #expect(throws: SQLiteError.self) { try db.transaction { _ in } }
        }
    }

    @Test("A failed commit rolls back")
    func failedCommit() throws {
        try db.execute(
            """
            CREATE TABLE parent (id INTEGER PRIMARY KEY);
            CREATE TABLE child (p INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
            """)
        #expect {
            try db.transaction { db in
                try db.execute("INSERT INTO t VALUES (1)")
                try db.execute("INSERT INTO child VALUES (42)")
            }
        } throws: { error in
            (error as? SQLiteError)?.extendedCode == .constraintForeignKey
        }
        #expect(!db.isInsideTransaction)
        #expect(try values() == [])
    }
}

@Suite("Tracing")
struct TraceTests {
    final class Log: @unchecked Sendable {
        // Only touched from the test's own thread: the connection calls the
        // trace function synchronously, on the thread that runs the statement.
        var events: [TraceEvent] = []
    }

    @Test("The trace hook receives each statement's SQL, without argument values")
    func traceStatements() throws {
        let db = try makeMemoryDatabase()
        let log = Log()
        db.trace { log.events.append($0) }
        try db.execute("CREATE TABLE t (a)")
        try db.execute("INSERT INTO t VALUES (?)", arguments: ["private"])
        _ = try db.fetchAll("SELECT a FROM t")
        #expect(log.events.map(\.sql) == ["CREATE TABLE t (a)", "INSERT INTO t VALUES (?)", "SELECT a FROM t"])
        db.trace(nil)
        try db.execute("DELETE FROM t")
        #expect(log.events.count == 3)
    }

    @Test("Profile events carry a duration; configuration installs a trace at open")
    func profile() throws {
        let log = Log()
        var configuration = Configuration()
        configuration.traceOptions = .profile
        configuration.trace = { event in log.events.append(event) }
        let db = try Database.inMemory(configuration: configuration)
        try db.execute("SELECT 1")
        let last = try #require(log.events.last)
        #expect(last.sql == "SELECT 1")
        #expect(last.duration != nil)
    }
}
