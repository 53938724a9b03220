import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import SQLiteStoreAppSupport

/// The original tutorial's sample database: the peopleInfo table with two people.
func makePeopleTemplate(at path: String) throws {
    let db = try Database(path: path)
    try db.execute(
        """
        CREATE TABLE peopleInfo (peopleInfoID INTEGER PRIMARY KEY AUTOINCREMENT, firstname TEXT, lastname TEXT, age INTEGER);
        INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Ada', 'Lovelace', 36), ('Alan', 'Turing', 41);
        """)
    db.close()
}

@Suite("DBManager", .tags(.concurrency))
struct DBManagerTests {
    @Test("The seed's flow: insert, load, update, delete, with affectedRows and lastInsertedRowID")
    func seedFlow() throws {
        let dir = try TemporaryDirectory()
        try makePeopleTemplate(at: dir.path("sampledb.sqlite"))
        let manager = try DBManager(
            databaseFilename: "people.sqlite", template: URL(fileURLWithPath: dir.path("sampledb.sqlite")),
            directory: dir.url)
        #expect(manager.path == dir.path("people.sqlite"))

        let insert = try manager.executeQuery(
            "INSERT INTO peopleInfo (firstname, lastname, age) VALUES (?, ?, ?)", arguments: ["Grace", "O'Hopper", nil])
        #expect(insert.affectedRows == 1)
        #expect(insert.lastInsertedRowID == 3)

        let loaded = try manager.loadData(
            "SELECT peopleInfoID, firstname, lastname, age FROM peopleInfo WHERE peopleInfoID = ?", arguments: [3])
        #expect(loaded.columnNames == ["peopleInfoID", "firstname", "lastname", "age"])
        #expect(loaded.count == 1)
        let row = loaded[0]
        #expect(row.values.count == 4)  // the NULL age keeps its place
        #expect(try row[3] == .null)
        #expect(try row["age"] as Int? == nil)
        #expect(try row["LASTNAME"] as String == "O'Hopper")
        #expect(try row[0] as Int64 == 3)
        #expect(loaded.index(ofColumn: "age") == 3)

        let update = try manager.executeQuery(
            "UPDATE peopleInfo SET age = :age WHERE peopleInfoID = :id", arguments: ["age": 85, "id": 3])
        #expect(update.affectedRows == 1)
        #expect(try manager.loadData("SELECT age FROM peopleInfo WHERE peopleInfoID = 3")[0]["age"] as Int == 85)

        let delete = try manager.executeQuery("DELETE FROM peopleInfo WHERE peopleInfoID = ?", arguments: [3])
        #expect(delete.affectedRows == 1)
        #expect(try manager.loadData("SELECT * FROM peopleInfo").count == 2)
        let noMatch = try manager.executeQuery("DELETE FROM peopleInfo WHERE peopleInfoID = ?", arguments: [3])
        #expect(noMatch.affectedRows == 0)
    }

    @Test("Quotes, semicolons and URLs with ':' are stored as data, never as SQL")
    func awkwardValues() throws {
        let dir = try TemporaryDirectory()
        defer { withExtendedLifetime(dir) {} }
        let manager = try DBManager(databaseURL: URL(fileURLWithPath: dir.path("x.sqlite")))
        try manager.executeQuery("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        let values = [
            "http://www.isleofskyeweather.org.uk/24elgol/clientraw.txt", "Robert'); DROP TABLE notes;--",
            "\"double\" and 'single'", ":name @at $dollar ?",
        ]
        for value in values {
            try manager.executeQuery("INSERT INTO notes (body) VALUES (?)", arguments: [value])
        }
        let result = try manager.loadData("SELECT body FROM notes ORDER BY id")
        #expect(try result.map { try $0[0] as String } == values)
    }

    @Test("Values come back typed: integer, real, text, blob and NULL")
    func typedValues() throws {
        let dir = try TemporaryDirectory()
        defer { withExtendedLifetime(dir) {} }
        let manager = try DBManager(databaseURL: URL(fileURLWithPath: dir.path("x.sqlite")))
        let result = try manager.loadData("SELECT 42, 2.5, 'text', x'00ff', NULL")
        #expect(result[0].values == [.integer(42), .real(2.5), .text("text"), .blob(Data([0, 255])), .null])
    }

    @Test("Schema changes report no affected rows; a script reports all its changes")
    func affectedRowsForDDLAndScripts() throws {
        let dir = try TemporaryDirectory()
        defer { withExtendedLifetime(dir) {} }
        let manager = try DBManager(databaseURL: URL(fileURLWithPath: dir.path("x.sqlite")))
        #expect(try manager.executeQuery("CREATE TABLE t (a)").affectedRows == 0)
        #expect(try manager.executeQuery("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)").affectedRows == 2)
        #expect(try manager.executeQuery("CREATE INDEX t_a ON t(a)").affectedRows == 0)
        #expect(try manager.executeQuery("UPDATE t SET a = a + 1").affectedRows == 2)
    }

    @Test("Errors are thrown with SQLite's message, and the manager keeps working")
    func errorsAreThrown() throws {
        let dir = try TemporaryDirectory()
        defer { withExtendedLifetime(dir) {} }
        let manager = try DBManager(databaseURL: URL(fileURLWithPath: dir.path("x.sqlite")))
        #expect {
            try manager.loadData("SELECT * FROM missing")
        } throws: { error in
            (error as? SQLiteError)?.message.contains("no such table: missing") == true
        }
        #expect(throws: SQLiteError.self) { try manager.executeQuery("INSERT INTO t VALUES (?)", arguments: [1, 2]) }
        #expect(try manager.loadData("SELECT 1")[0][0] as Int == 1)
    }

    @Test("A transaction that throws leaves nothing behind")
    func transactionRollsBack() throws {
        let dir = try TemporaryDirectory()
        defer { withExtendedLifetime(dir) {} }
        let manager = try DBManager(databaseURL: URL(fileURLWithPath: dir.path("x.sqlite")))
        try manager.executeQuery("CREATE TABLE t (a)")
        #expect(throws: TestFailure.self) {
            try manager.transaction { db in
                try db.execute("INSERT INTO t VALUES (1)")
                throw TestFailure()
            }
        }
        #expect(try manager.loadData("SELECT * FROM t").isEmpty)
        let count = try manager.transaction { db in
            try db.execute("INSERT INTO t VALUES (1)")
            return try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") ?? 0
        }
        #expect(count == 1)
    }

    @Test("The migrator runs on open and upgrades an installed copy, keeping user rows")
    func migratesOnOpen() throws {
        let dir = try TemporaryDirectory()
        let template = URL(fileURLWithPath: dir.path("template.sqlite"))
        try makePeopleTemplate(at: template.path)
        var v1 = Migrator()
        v1.registerMigration("people") { db in
            try db.execute("CREATE TABLE IF NOT EXISTS peopleInfo (peopleInfoID INTEGER PRIMARY KEY, firstname TEXT)")
        }
        do {
            let manager = try DBManager(
                databaseFilename: "app.sqlite", template: template, directory: dir.url, migrator: v1)
            try manager.executeQuery("INSERT INTO peopleInfo (firstname) VALUES ('Mine')")
        }
        var v2 = v1
        v2.registerMigration("email") { db in try db.execute("ALTER TABLE peopleInfo ADD COLUMN email TEXT") }
        let manager = try DBManager(
            databaseFilename: "app.sqlite", template: template, directory: dir.url, migrator: v2)
        let rows = try manager.loadData("SELECT firstname, email FROM peopleInfo ORDER BY peopleInfoID")
        #expect(try rows.map { try $0["firstname"] as String } == ["Ada", "Alan", "Mine"])
        #expect(rows.columnNames == ["firstname", "email"])
    }

    @Test("Opening refuses a database made by a newer version")
    func refusesNewerDatabase() throws {
        let dir = try TemporaryDirectory()
        var newer = Migrator()
        newer.registerMigration("a") { _ in }
        newer.registerMigration("b") { _ in }
        _ = try DBManager(databaseFilename: "app.sqlite", directory: dir.url, migrator: newer)
        var older = Migrator()
        older.registerMigration("a") { _ in }
        #expect {
            try DBManager(databaseFilename: "app.sqlite", directory: dir.url, migrator: older)
        } throws: { error in
            (error as? MigrationError)?.kind == .databaseIsNewer
        }
    }

    @Test("A file name that is a path is refused")
    func invalidFileName() throws {
        let dir = try TemporaryDirectory()
        #expect(throws: DatabaseFileError.self) { try DBManager(databaseFilename: "../x.sqlite", directory: dir.url) }
        #expect(throws: DatabaseFileError.self) { try DBManager(databaseFilename: "", directory: dir.url) }
    }

    @Test("After close, calls throw and isConnected is false")
    func close() throws {
        let dir = try TemporaryDirectory()
        defer { withExtendedLifetime(dir) {} }
        let manager = try DBManager(databaseURL: URL(fileURLWithPath: dir.path("x.sqlite")))
        #expect(manager.isConnected)
        manager.close()
        manager.close()
        #expect(!manager.isConnected)
        #expect {
            try manager.loadData("SELECT 1")
        } throws: { error in
            (error as? SQLiteError)?.message.contains("closed") == true
        }
    }

    @Test("The debug log receives every statement and every error, and can be turned off")
    func debugLog() throws {
        let log = LogLines()
        let dir = try TemporaryDirectory()
        defer { withExtendedLifetime(dir) {} }
        let manager = try DBManager(databaseURL: URL(fileURLWithPath: dir.path("x.sqlite")), debugLog: log.sink)
        try manager.executeQuery("CREATE TABLE t (a)")
        try manager.executeQuery("INSERT INTO t VALUES (?)", arguments: ["secret"])
        _ = try? manager.loadData("SELECT nope FROM t")
        let lines = log.all
        #expect(lines.contains("SQL: CREATE TABLE t (a)"))
        #expect(lines.contains("SQL: INSERT INTO t VALUES (?)"))
        #expect(lines.contains { $0.hasPrefix("error: ") && $0.contains("no such column: nope") })
        #expect(!lines.contains { $0.contains("secret") })

        manager.debugLog = nil
        let count = log.all.count
        try manager.executeQuery("INSERT INTO t VALUES (2)")
        #expect(log.all.count == count)
    }

    @Test("One manager is safe to use from many tasks at once")
    func concurrentUse() async throws {
        let dir = try TemporaryDirectory()
        defer { withExtendedLifetime(dir) {} }
        let manager = try DBManager(databaseURL: URL(fileURLWithPath: dir.path("x.sqlite")))
        try manager.executeQuery("CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, worker INTEGER)")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for _ in 0..<50 {
                        let result = try manager.executeQuery("INSERT INTO t (worker) VALUES (?)", arguments: [worker])
                        #expect(result.affectedRows == 1)
                        _ = try manager.loadData("SELECT COUNT(*) FROM t")
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try manager.loadData("SELECT COUNT(*) FROM t")[0][0] as Int == 400)
        #expect(try manager.loadData("SELECT COUNT(DISTINCT id) FROM t")[0][0] as Int == 400)
    }

    @Test("Reading a missing column or NULL into a non-optional throws, naming the column")
    func resultRowErrors() throws {
        let result = QueryResult(columnNames: ["name", "age"], rows: [[.text("Ann"), .null]])
        let row = result[0]
        #expect {
            try row["age"] as Int
        } throws: { error in
            (error as? ValueConversionError)?.description.contains("\"age\"") == true
        }
        #expect(throws: ValueConversionError.self) { try row["missing"] as SQLiteValue }
        #expect(throws: ValueConversionError.self) { try row[2] as SQLiteValue }
        #expect(throws: ValueConversionError.self) { try row[-1] as SQLiteValue }
    }
}

/// The manager's entry points, for calling one from inside another.
enum ManagerCall: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case loadData, executeQuery, transaction, withConnection

    var testDescription: String { rawValue }

    func run(_ manager: DBManager) throws {
        switch self {
        case .loadData: _ = try manager.loadData("SELECT 1")
        case .executeQuery: try manager.executeQuery("INSERT INTO t VALUES (2)")
        case .transaction: try manager.transaction { db in try db.execute("INSERT INTO t VALUES (2)") }
        case .withConnection: try manager.withConnection { db in try db.execute("INSERT INTO t VALUES (2)") }
        }
    }
}

@Suite("DBManager: nested calls and closing", .tags(.concurrency))
struct DBManagerNestingTests {
    private func makeManager(debugLog: (@Sendable (String) -> Void)? = nil) throws -> DBManager {
        let manager = try DBManager.inMemory(debugLog: debugLog)
        try manager.executeQuery("CREATE TABLE t (a INTEGER)")
        return manager
    }

    @Test(
        "Calling the manager from inside its transaction throws a misuse error naming the call",
        arguments: ManagerCall.allCases)
    func nestedInTransaction(call: ManagerCall) throws {
        let manager = try makeManager()
        let error = sqliteError {
            try manager.transaction { db in
                try db.execute("INSERT INTO t VALUES (1)")
                try call.run(manager)
            }
        }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("DBManager.\(call.rawValue) was called from inside") == true)
        #expect(error?.message.contains("use the Database that the closure received") == true)
    }

    @Test("Calling the manager from inside withConnection throws a misuse error", arguments: ManagerCall.allCases)
    func nestedInWithConnection(call: ManagerCall) throws {
        let manager = try makeManager()
        let error = sqliteError { try manager.withConnection { _ in try call.run(manager) } }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("DBManager.\(call.rawValue)") == true)
    }

    @Test("A refused nested call rolls the outer transaction back when it propagates")
    func nestedRollsBackOuter() throws {
        let manager = try makeManager()
        _ = sqliteError {
            try manager.transaction { db in
                try db.execute("INSERT INTO t VALUES (1)")
                try manager.executeQuery("INSERT INTO t VALUES (2)")
            }
        }
        #expect(try manager.loadData("SELECT a FROM t").isEmpty)
    }

    @Test("A refused nested call changes nothing: caught inside, the outer transaction commits its own work")
    func nestedCaughtInside() throws {
        let manager = try makeManager()
        let refused = try manager.transaction { db in
            try db.execute("INSERT INTO t VALUES (1)")
            return sqliteError { try manager.executeQuery("INSERT INTO t VALUES (2)") } != nil
        }
        #expect(refused)
        #expect(try manager.loadData("SELECT a FROM t").map { try $0[0] as Int } == [1])
    }

    @Test("After a refused nested call the manager keeps working, from this thread and others")
    func usableAfterNestedCall() async throws {
        let manager = try makeManager()
        _ = sqliteError { try manager.withConnection { _ in _ = try manager.loadData("SELECT 1") } }
        #expect(manager.isConnected)
        try manager.executeQuery("INSERT INTO t VALUES (1)")
        let count = try await Task.detached { try manager.loadData("SELECT COUNT(*) FROM t")[0][0] as Int }.value
        #expect(count == 1)
    }

    @Test("A nested call's error is logged once, by the outer call that propagates it")
    func nestedErrorLoggedOnce() throws {
        let log = LogLines()
        let manager = try makeManager(debugLog: log.sink)
        _ = sqliteError { try manager.withConnection { _ in _ = try manager.loadData("SELECT 1") } }
        #expect(log.all.filter { $0.hasPrefix("error: ") && $0.contains("DBManager.loadData") }.count == 1)
    }

    @Test("A transaction that closes its Database throws, keeps nothing, and the manager is closed")
    func databaseClosedInTransaction() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("x.sqlite")
        let manager = try DBManager(databaseURL: URL(fileURLWithPath: path))
        try manager.executeQuery("CREATE TABLE t (a INTEGER)")
        let error = sqliteError {
            _ = try manager.transaction { db in
                try db.execute("INSERT INTO t VALUES (1)")
                db.close()
            }
        }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("closed inside the closure") == true)
        #expect(!manager.isConnected)
        let later = sqliteError { _ = try manager.loadData("SELECT * FROM t") }
        #expect(later?.message.contains("is closed") == true)
        #expect(try Database(path: path).fetchOne(Int.self, "SELECT COUNT(*) FROM t") == 0)
    }

    @Test("withConnection whose closure closes the Database throws, and the manager is closed")
    func databaseClosedInWithConnection() throws {
        let manager = try makeManager()
        #expect(sqliteError { try manager.withConnection { db in db.close() } }?.code == .misuse)
        #expect(!manager.isConnected)
    }

    @Test("close() inside a closure closes the manager when the closure ends, and that call throws")
    func closeInsideClosure() throws {
        let log = LogLines()
        let manager = try makeManager(debugLog: log.sink)
        let error = sqliteError { try manager.withConnection { _ in manager.close() } }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("close() was called inside the closure") == true)
        #expect(!manager.isConnected)
        #expect(log.all.filter { $0.hasPrefix("closed") }.count == 1)
        manager.close()
        #expect(log.all.filter { $0.hasPrefix("closed") }.count == 1)
        #expect(sqliteError { _ = try manager.loadData("SELECT 1") }?.message.contains("is closed") == true)
    }

    @Test("close() inside a transaction rolls the transaction back")
    func closeInsideTransactionRollsBack() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("x.sqlite")
        let manager = try DBManager(databaseURL: URL(fileURLWithPath: path))
        try manager.executeQuery("CREATE TABLE t (a INTEGER)")
        _ = sqliteError {
            try manager.transaction { db in
                try db.execute("INSERT INTO t VALUES (1)")
                manager.close()
            }
        }
        #expect(try Database(path: path).fetchOne(Int.self, "SELECT COUNT(*) FROM t") == 0)
    }

    @Test("close() from another thread waits for the running closure, whose call succeeds")
    func closeFromAnotherThreadWaits() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("x.sqlite")
        let manager = try DBManager(databaseURL: URL(fileURLWithPath: path))
        try manager.executeQuery("CREATE TABLE t (a INTEGER)")
        let started = DispatchSemaphore(value: 0)
        let closer = Thread {
            started.wait()
            manager.close()
        }
        closer.start()
        let sawClosing = try manager.transaction { db in
            try db.execute("INSERT INTO t VALUES (1)")
            started.signal()
            // close() marks the manager closed, then waits for this access.
            for _ in 0..<10_000 where manager.isConnected { usleep(1000) }
            return !manager.isConnected
        }
        #expect(sawClosing)
        #expect(try Database(path: path).fetchOne(Int.self, "SELECT COUNT(*) FROM t") == 1)
        #expect(sqliteError { _ = try manager.loadData("SELECT 1") }?.message.contains("is closed") == true)
    }

    @Test("executeQuery that leaves a transaction open throws and keeps nothing")
    func executeQueryLeavingTransactionOpen() throws {
        let manager = try makeManager()
        let error = sqliteError { try manager.executeQuery("BEGIN; INSERT INTO t VALUES (1)") }
        #expect(error?.code == .misuse)
        #expect(try manager.loadData("SELECT a FROM t").isEmpty)
        try manager.executeQuery("BEGIN; INSERT INTO t VALUES (2); COMMIT")
        #expect(try manager.loadData("SELECT a FROM t").count == 1)
    }

    @Test("A debug log set after opening receives the next statements")
    func debugLogSetLater() throws {
        let log = LogLines()
        let manager = try makeManager()
        try manager.executeQuery("INSERT INTO t VALUES (1)")
        manager.debugLog = log.sink
        try manager.executeQuery("INSERT INTO t VALUES (2)")
        #expect(log.all == ["SQL: INSERT INTO t VALUES (2)"])
    }

    @Test("loadData and executeQuery accept SQL with interpolated values")
    func acceptsSQL() throws {
        let manager = try DBManager.inMemory()
        try manager.executeQuery("CREATE TABLE people (name TEXT)")
        let result = try manager.executeQuery("INSERT INTO people (name) VALUES (\("O'Hopper"))")
        #expect(result.affectedRows == 1)
        let loaded = try manager.loadData("SELECT name FROM people WHERE name = \("O'Hopper")")
        #expect(loaded.rows.count == 1)
        #expect(try loaded.rows.first?.decode(String.self, at: 0) == "O'Hopper")
    }
}
