import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

@Suite("Opening and closing connections")
struct OpeningTests {
    @Test("A missing file is created; a second connection sees its data")
    func createsFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("new.sqlite")
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t (a); INSERT INTO t VALUES (1)")
        #expect(FileManager.default.fileExists(atPath: path))
        let other = try Database(path: path)
        #expect(try other.fetchOne(Int.self, "SELECT a FROM t") == 1)
    }

    @Test("Must-exist refuses a missing file and creates nothing")
    func mustExist() throws {
        let dir = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.createsMissingFile = false
        let path = dir.path("missing.sqlite")
        #expect {
            try Database(path: path, configuration: configuration)
        } throws: { error in
            (error as? SQLiteError)?.code == .cantOpen
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("A path in a missing directory fails with a message naming it")
    func missingDirectory() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("no/such/dir/db.sqlite")
        do {
            _ = try Database(path: path)
            Issue.record("expected an error")
        } catch let error as SQLiteError {
            #expect(error.code == .cantOpen)
            #expect(error.message.contains(path))
            #expect(error.message.contains("does not exist"))
        }
    }

    @Test("A file that is not a database is reported when it is opened")
    func notADatabase() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("text.sqlite")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        do {
            _ = try Database(path: path)
            Issue.record("expected an error")
        } catch let error as SQLiteError {
            #expect(error.code == .notADatabase)
            #expect(error.description.contains("not a database"))
        }
        // The file is left as it was.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(repeating: 0x41, count: 4096))
    }

    @Test("A read-only connection refuses writes and keeps the data")
    func readOnly() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("ro.sqlite")
        do {
            let db = try Database(path: path)
            try db.execute("CREATE TABLE t (a); INSERT INTO t VALUES (1)")
        }
        var configuration = Configuration()
        configuration.isReadOnly = true
        let db = try Database(path: path, configuration: configuration)
        #expect(db.isReadOnly)
        do {
            try db.execute("INSERT INTO t VALUES (2)")
            Issue.record("expected an error")
        } catch let error as SQLiteError {
            #expect(error.code == .readOnly)
            #expect(error.sql == "INSERT INTO t VALUES (2)")
        }
        #expect(try db.fetchAll(Int.self, "SELECT a FROM t") == [1])
    }

    @Test(
        "A read-only file opened for writing refuses writes", .enabled(if: !isRoot, "root ignores file permissions"),
        .tags(.unprivileged))
    func readOnlyFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("locked.sqlite")
        try Database(path: path).execute("CREATE TABLE t (a)")
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        let db = try Database(path: path)
        #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (1)") }
    }

    @Test("In-memory and temporary databases are private to their connection")
    func privateDatabases() throws {
        let first = try Database.inMemory()
        let second = try Database.inMemory()
        try first.execute("CREATE TABLE t (a)")
        #expect(throws: SQLiteError.self) { try second.execute("SELECT * FROM t") }
        let temporary = try Database.temporary()
        try temporary.execute("CREATE TABLE t (a); INSERT INTO t VALUES (1)")
        #expect(try temporary.fetchOne(Int.self, "SELECT a FROM t") == 1)
    }

    @Test("Foreign keys are enforced by default and can be turned off")
    func foreignKeys() throws {
        let schema = """
            CREATE TABLE parent (id INTEGER PRIMARY KEY);
            CREATE TABLE child (parentID INTEGER REFERENCES parent(id));
            """
        let db = try Database.inMemory()
        try db.execute(sql: schema)
        do {
            try db.execute("INSERT INTO child VALUES (1)")
            Issue.record("expected an error")
        } catch let error as SQLiteError {
            #expect(error.extendedCode == .constraintForeignKey)
        }
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        let lax = try Database.inMemory(configuration: configuration)
        try lax.execute(sql: schema)
        try lax.execute("INSERT INTO child VALUES (1)")
    }

    @Test("WAL journal mode can be requested; an impossible mode is an error")
    func journalMode() throws {
        let dir = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.journalMode = .wal
        let db = try Database(path: dir.path("wal.sqlite"), configuration: configuration)
        #expect(try db.fetchOne(String.self, "PRAGMA journal_mode") == "wal")
        #expect(throws: SQLiteError.self) { try Database.inMemory(configuration: configuration) }
    }

    @Test("The synchronous mode is set on every connection, read-only and pool readers too; nil keeps SQLite's")
    func synchronousMode() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("sync.sqlite")
        let plain = try Database(path: path)
        let sqliteDefault = try plain.fetchOne(Int.self, "PRAGMA synchronous")
        try plain.execute("CREATE TABLE t(x)")
        plain.close()
        // SQLite numbers the modes 0 to 3 in the order of the enum's cases.
        for (number, mode) in SynchronousMode.allCases.enumerated() {
            var configuration = Configuration()
            configuration.synchronous = mode
            let db = try Database(path: path, configuration: configuration)
            #expect(try db.fetchOne(Int.self, "PRAGMA synchronous") == number, "\(mode)")
            db.close()
            configuration.isReadOnly = true
            let reader = try Database(path: path, configuration: configuration)
            #expect(try reader.fetchOne(Int.self, "PRAGMA synchronous") == number, "read-only, \(mode)")
            reader.close()
        }
        var configuration = Configuration()
        configuration.synchronous = .normal
        let pool = try DatabasePool(path: path, configuration: configuration)
        defer { try? pool.close() }
        #expect(try pool.read { try $0.fetchOne(Int.self, "PRAGMA synchronous") } == 1)
        #expect(try pool.write { try $0.fetchOne(Int.self, "PRAGMA synchronous") } == 1)
        let unset = try Database(path: path)
        #expect(try unset.fetchOne(Int.self, "PRAGMA synchronous") == sqliteDefault)
    }

    @Test("Automatic checkpoints off: commits leave the write-ahead log to grow for another program to checkpoint")
    func automaticCheckpointsOff() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("wal.sqlite")
        var configuration = Configuration()
        configuration.journalMode = .wal
        #expect(
            try Database(path: path, configuration: configuration).fetchOne(Int.self, "PRAGMA wal_autocheckpoint")
                == 1000)
        configuration.automaticCheckpointFrames = 0
        let pool = try DatabasePool(path: path, configuration: configuration)
        defer { try? pool.close() }
        #expect(try pool.write { try $0.fetchOne(Int.self, "PRAGMA wal_autocheckpoint") } == 0)
        // 1,500 commits of a page or more each: SQLite's default would have
        // checkpointed and reused the log from its start after 1,000 frames.
        try pool.write { db in try db.execute("CREATE TABLE t (x BLOB)") }
        for _ in 0..<1500 { try pool.write { db in try db.execute("INSERT INTO t VALUES (zeroblob(3000))") } }
        let walSize = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
        #expect(walSize > 1500 * 4096)
        configuration.automaticCheckpointFrames = -5
        #expect(
            try Database(path: path, configuration: configuration).fetchOne(Int.self, "PRAGMA wal_autocheckpoint") == 0)
    }

    @Test("The busy timeout installs the library's busy handler, not SQLite's")
    func busyTimeout() throws {
        var configuration = Configuration()
        configuration.busyTimeout = .milliseconds(1234)
        let db = try Database.inMemory(configuration: configuration)
        // SQLite's own handler would report its timeout here; the library's
        // replaces it (see BusyWaitingTests for how it waits).
        #expect(try db.fetchOne(Int.self, "PRAGMA busy_timeout") == 0)
        #expect(db.connection.busyWaiter != nil)
        configuration.busyTimeout = .zero
        #expect(try Database.inMemory(configuration: configuration).connection.busyWaiter == nil)
    }

    @Test("A database locked by another connection gives SQLITE_BUSY after the timeout, losing nothing")
    func lockedDatabase() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("locked.sqlite")
        let holder = try Database(path: path)
        try holder.execute("CREATE TABLE t (a); INSERT INTO t VALUES (1)")
        var configuration = Configuration()
        configuration.busyTimeout = .milliseconds(50)
        let other = try Database(path: path, configuration: configuration)
        try holder.execute("BEGIN EXCLUSIVE")
        #expect {
            try other.execute("INSERT INTO t VALUES (2)")
        } throws: { error in
            (error as? SQLiteError)?.code == .busy
        }
        try holder.execute("COMMIT")
        try other.execute("INSERT INTO t VALUES (2)")
        #expect(try holder.fetchAll(Int.self, "SELECT a FROM t ORDER BY a") == [1, 2])
    }

    @Test("close() is idempotent; later use throws a clear error")
    func closeTwice() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (a)")
        db.close()
        db.close()
        #expect(db.isClosed)
        do {
            try db.execute("SELECT 1")
            Issue.record("expected an error")
        } catch let error as SQLiteError {
            #expect(error.code == .misuse)
            #expect(error.message.contains("closed"))
        }
    }

    @Test("Closing with live statements and cursors neither crashes nor leaks them")
    func closeWithLiveStatements() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (a); INSERT INTO t VALUES (1), (2)")
        let statement = try db.makeStatement("SELECT a FROM t")
        let cursor = try db.fetchCursor("SELECT a FROM t")
        let first = try #require(try cursor.next())
        db.close()
        #expect(throws: SQLiteError.self) { try statement.execute() }
        #expect(throws: SQLiteError.self) { try cursor.next() }
        // The row read before closing stays readable.
        _ = first.values
    }
}

@Suite("Executing SQL")
struct ExecuteTests {
    let db: Database
    init() throws {
        db = try makeMemoryDatabase()
        try db.execute(
            "CREATE TABLE people (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, age INTEGER)")
    }

    @Test("Several statements in one string run in order")
    func multipleStatements() throws {
        try db.execute(
            """
            -- a comment first
            CREATE TABLE a (x);
            INSERT INTO a VALUES (1);
            /* block comment */ INSERT INTO a VALUES (2);;
            """)
        #expect(try db.fetchAll(Int.self, "SELECT x FROM a ORDER BY x") == [1, 2])
    }

    @Test("Arguments are consumed across several statements")
    func multipleStatementsWithArguments() throws {
        try db.execute(
            "INSERT INTO people (name, age) VALUES (?, ?); INSERT INTO people (name) VALUES (?)",
            arguments: ["Ada", 36, "Alan"])
        #expect(try db.fetchAll(String.self, "SELECT name FROM people ORDER BY id") == ["Ada", "Alan"])
        #expect(throws: SQLiteError.self) {
            try db.execute("DELETE FROM people WHERE id = ?; DELETE FROM people WHERE id = ?", arguments: [1, 2, 3])
        }
    }

    @Test("changesCount, totalChangesCount and lastInsertedRowID follow writes")
    func changeCounters() throws {
        #expect(db.totalChangesCount == 0)
        try db.execute("INSERT INTO people (name, age) VALUES (?, ?)", arguments: ["Ada", 36])
        #expect(db.lastInsertedRowID == 1)
        #expect(db.changesCount == 1)
        try db.execute("INSERT INTO people (name, age) VALUES (?, ?)", arguments: ["Alan", 41])
        #expect(db.lastInsertedRowID == 2)
        try db.execute("UPDATE people SET age = age + 1")
        #expect(db.changesCount == 2)
        try db.execute("DELETE FROM people WHERE id = ?", arguments: [99])
        #expect(db.changesCount == 0)
        #expect(db.totalChangesCount == 4)
    }

    @Test("A syntax error carries SQLite's message and the SQL")
    func syntaxError() throws {
        do {
            try db.execute("SELEC * FROM people")
            Issue.record("expected an error")
        } catch let error as SQLiteError {
            #expect(error.code == .error)
            #expect(error.message.contains("syntax error"))
            #expect(error.sql == "SELEC * FROM people")
            #expect(error.description.contains("SELEC * FROM people"))
            #expect(error.description.contains("SQLITE_ERROR"))
        }
    }

    @Test("A missing table is reported by name")
    func missingTable() throws {
        do {
            _ = try db.fetchAll("SELECT * FROM nowhere")
            Issue.record("expected an error")
        } catch let error as SQLiteError {
            #expect(error.message == "no such table: nowhere")
        }
    }

    @Test("Constraint violations carry extended codes and change nothing")
    func constraints() throws {
        try db.execute("INSERT INTO people (name) VALUES ('Ada')")
        do {
            try db.execute("INSERT INTO people (name) VALUES (?)", arguments: ["Ada"])
            Issue.record("expected an error")
        } catch let error as SQLiteError {
            #expect(error.code == .constraint)
            #expect(error.extendedCode == .constraintUnique)
            #expect(error.description.contains("SQLITE_CONSTRAINT_UNIQUE"))
        }
        do {
            try db.execute("INSERT INTO people (name) VALUES (?)", arguments: [String?.none])
            Issue.record("expected an error")
        } catch let error as SQLiteError {
            #expect(error.extendedCode == .constraintNotNull)
        }
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM people") == 1)
    }

    @Test("Arguments are not in an error's description unless configured")
    func argumentsArePrivate() throws {
        try db.execute("INSERT INTO people (name) VALUES ('secret-name')")
        do {
            try db.execute("INSERT INTO people (name) VALUES (?)", arguments: ["secret-name"])
        } catch let error as SQLiteError {
            #expect(!error.description.contains("secret-name"))
            #expect(error.arguments == ["secret-name"])
        }
        var configuration = Configuration()
        configuration.includesArgumentsInErrors = true
        let verbose = try Database.inMemory(configuration: configuration)
        try verbose.execute("CREATE TABLE t (a UNIQUE); INSERT INTO t VALUES ('x')")
        do {
            try verbose.execute("INSERT INTO t VALUES (?)", arguments: ["x"])
        } catch let error as SQLiteError {
            #expect(error.description.contains("'x'"))
        }
    }

    @Test("Values with quotes, colons and SQL are data, never SQL")
    func injectionIsData() throws {
        let nasty = "Robert'); DROP TABLE people; --"
        try db.execute("INSERT INTO people (name) VALUES (?)", arguments: [nasty])
        try db.execute("INSERT INTO people (name) VALUES (:name)", arguments: ["name": "http://host:80/a?b=c"])
        #expect(try db.fetchAll(String.self, "SELECT name FROM people ORDER BY id") == [nasty, "http://host:80/a?b=c"])
    }

    @Test("A full database fails with SQLITE_FULL and keeps what was there")
    func fullDatabase() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("full.sqlite"))
        try db.execute("CREATE TABLE t (data BLOB); INSERT INTO t VALUES (x'01')")
        let pages = try #require(try db.fetchOne(Int.self, "PRAGMA page_count"))
        try db.execute("PRAGMA max_page_count = \(unsafeLiteral: String(pages + 2))")
        #expect {
            try db.transaction { db in
                for _ in 0..<10 { try db.execute("INSERT INTO t VALUES (?)", arguments: [Data(count: 8192)]) }
            }
        } throws: { error in
            (error as? SQLiteError)?.code == .full
        }
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") == 1)
        #expect(!db.isInsideTransaction)
    }
}

@Suite("Statement arguments")
struct ArgumentTests {
    let db: Database
    init() throws {
        db = try makeMemoryDatabase()
        try db.execute("CREATE TABLE t (a, b)")
    }

    @Test("Positional ? and ?NNN parameters")
    func positional() throws {
        try db.execute("INSERT INTO t VALUES (?, ?)", arguments: [1, "x"])
        try db.execute("INSERT INTO t VALUES (?2, ?1)", arguments: ["y", 2])
        #expect(try db.fetchAll("SELECT a, b FROM t ORDER BY a").map { try $0["b"] as String } == ["x", "y"])
    }

    @Test("Named :name, @name and $name parameters, keys with or without prefix")
    func named() throws {
        try db.execute("INSERT INTO t VALUES (:a, @b)", arguments: ["a": 1, "b": "x"])
        try db.execute("INSERT INTO t VALUES ($a, :b)", arguments: ["$a": 2, ":b": "y"])
        try db.execute("INSERT INTO t VALUES (:a, :a)", arguments: ["a": 3])
        #expect(try db.fetchAll(Int.self, "SELECT a FROM t ORDER BY a") == [1, 2, 3])
        #expect(try db.fetchOne(Int.self, "SELECT b FROM t WHERE a = 3") == 3)
    }

    @Test("Too few or too many positional arguments throw before anything runs")
    func wrongCount() throws {
        for arguments: StatementArguments in [[1], [1, 2, 3], []] {
            do {
                try db.execute("INSERT INTO t VALUES (?, ?)", arguments: arguments)
                Issue.record("expected an error for \(arguments)")
            } catch let error as SQLiteError {
                #expect(error.code == .misuse)
                #expect(error.message.contains("wrong number of arguments"))
                #expect(error.message.contains("2 parameters"))
            }
        }
        #expect(throws: SQLiteError.self) { try db.execute("DELETE FROM t", arguments: [1]) }
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") == 0)
    }

    @Test("Unknown and missing names throw before anything runs")
    func wrongNames() throws {
        do {
            try db.execute("INSERT INTO t VALUES (:a, :b)", arguments: ["a": 1, "b": 2, "c": 3])
            Issue.record("expected an error")
        } catch let error as SQLiteError {
            #expect(error.message.contains("unknown argument name 'c'"))
        }
        do {
            try db.execute("INSERT INTO t VALUES (:a, :b)", arguments: ["a": 1])
            Issue.record("expected an error")
        } catch let error as SQLiteError {
            #expect(error.message.contains("missing argument for parameter :b"))
        }
        #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (?, :b)", arguments: ["b": 1]) }
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") == 0)
    }

    @Test("NULL binds through every form of argument")
    func nullArguments() throws {
        try db.execute("INSERT INTO t VALUES (?, ?)", arguments: [nil, Int?.none])
        try db.execute("INSERT INTO t VALUES (:a, :b)", arguments: ["a": nil, "b": SQLiteValue.null])
        var arguments = StatementArguments()
        arguments.append(nil)
        arguments.append(String?.none)
        try db.execute("INSERT INTO t VALUES (?, ?)", arguments: arguments)
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t WHERE a IS NULL AND b IS NULL") == 3)
    }
}
