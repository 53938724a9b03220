import Foundation
import Testing

@testable import SQLiteStore

@Suite("SQL built by interpolation")
struct SQLInterpolationTests {
    let db: Database
    init() throws {
        db = try makeMemoryDatabase()
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v)")
    }

    struct Item: FetchableRecord, Equatable {
        var id: Int64
        var v: String
        init(id: Int64, v: String) {
            self.id = id
            self.v = v
        }
        init(row: Row) throws {
            id = try row["id"]
            v = try row["v"]
        }
    }

    private func insertLetters() throws {
        for (id, letter) in ["a", "b", "c"].enumerated() {
            try db.execute("INSERT INTO t (id, v) VALUES (\(id + 1), \(letter))")
        }
    }

    private func misuseMessage(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as SQLiteError {
            return error.code == .misuse ? error.message : "not misuse: \(error)"
        } catch {
            return "unexpected: \(error)"
        }
    }

    // MARK: - Values

    @Test("Values of every type are bound, not spliced, and read back")
    func valuesOfEveryTypeBind() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let uuid = UUID()
        let missing: String? = nil
        let bytes: [UInt8] = [0, 1, 255]
        let data = Data([7, 0, 9])
        let sql: SQL = """
            SELECT \(42), \(Int64.min), \(2.5), \(true), \("text"), \(data), \(bytes), \(date), \(uuid), \(missing)
            """
        #expect(sql.text == "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?")
        #expect(sql.arguments.positional.count == 10)
        let row = try #require(try db.fetchOne(sql))
        #expect(try row[0] as Int == 42)
        #expect(try row[1] as Int64 == Int64.min)
        #expect(try row[2] as Double == 2.5)
        #expect(try row[3] as Bool == true)
        #expect(try row[4] as String == "text")
        #expect(try row[5] as Data == data)
        #expect(try row[6] as [UInt8] == bytes)
        #expect(try row[7] as Date == date)
        #expect(try row[8] as UUID == uuid)
        #expect(try row[9] as SQLiteValue == .null)
    }

    @Test("Bytes and Data interpolate as one blob, not as a list")
    func bytesAreOneValue() throws {
        let bytes: [UInt8] = [1, 2, 3]
        let optionalData: Data? = Data([4, 5])
        let sql: SQL = "SELECT \(bytes), \(optionalData)"
        #expect(sql.text == "SELECT ?, ?")
        #expect(sql.arguments.positional == [.blob(Data([1, 2, 3])), .blob(Data([4, 5]))])
    }

    @Test("A value that cannot be stored is a conversion error and nothing runs")
    func unstorableValueThrows() throws {
        #expect(throws: ValueConversionError.self) {
            try db.execute("INSERT INTO t (v) VALUES (\(UInt64.max))")
        }
        #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM t") == 0)
    }

    // MARK: - Which overload a call picks

    @Test("An interpolated literal passed to execute binds: injection text round-trips as data")
    func injectionRoundTrips() throws {
        let names = ["O'Brien", "x'); DROP TABLE t; --", "Robert\"); DELETE FROM t; --", "semi;colon :name ?"]
        for name in names {
            try db.execute("INSERT INTO t (v) VALUES (\(name))")
        }
        #expect(try db.fetchAll(String.self, "SELECT v FROM t ORDER BY id") == names)
    }

    @Test("A constant literal with arguments: works as before, positional and named")
    func constantLiteralWithArguments() throws {
        try db.execute("INSERT INTO t (id, v) VALUES (?, ?)", arguments: [1, "one"])
        try db.execute("INSERT INTO t (id, v) VALUES (:id, :v)", arguments: ["id": 2, "v": "two"])
        #expect(
            try db.fetchAll(String.self, "SELECT v FROM t WHERE id >= ? ORDER BY id", arguments: [1]) == ["one", "two"])
    }

    @Test("A plain String variable goes to the String overload: its text is used as written")
    func stringVariableIsText() throws {
        let word = "spliced"
        let text = "SELECT '\(word)'"  // a String, built by Swift before the call
        #expect(try db.fetchOne(String.self, sql: text) == "spliced")
        let script = "INSERT INTO t (v) VALUES ('a'); INSERT INTO t (v) VALUES ('b')"
        try db.execute(sql: script)
        #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM t") == 2)
    }

    @Test("Values both interpolated and given in arguments: are refused")
    func interpolatedAndArgumentsRefused() throws {
        let message = misuseMessage { try db.execute("INSERT INTO t (id, v) VALUES (\(1), ?)", arguments: ["x"]) }
        #expect(message?.contains("both interpolated") == true)
        #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM t") == 0)
    }

    @Test("A wrong number of values is still a clear error")
    func argumentCountMismatch() throws {
        let message = misuseMessage { _ = try db.fetchAll("SELECT \(1), ?") }
        #expect(message?.contains("wrong number of arguments") == true)
    }

    // MARK: - Quotes

    @Test("A value inside quotes is refused before running, naming the mistake")
    func valueInsideQuotesRefused() throws {
        let name = "Ann"
        let quoted = misuseMessage { try db.execute("INSERT INTO t (v) VALUES ('\(name)')") }
        #expect(quoted?.contains("inside a quoted string") == true)
        let pattern = misuseMessage { _ = try db.fetchAll("SELECT * FROM t WHERE v LIKE '%\(name)%'") }
        #expect(pattern?.contains("remove the quotes") == true)
        let inName = misuseMessage { _ = try db.fetchAll("SELECT \"\(name)\" FROM t") }
        #expect(inName?.contains("a quoted name") == true)
        let inComment = misuseMessage { _ = try db.fetchAll("SELECT 1 -- \(name)\n") }
        #expect(inComment?.contains("a comment") == true)
        let inBlockComment = misuseMessage { _ = try db.fetchAll("SELECT 1 /* \(name) */") }
        #expect(inBlockComment?.contains("a comment") == true)
        #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM t") == 0)
    }

    @Test("Closed quotes, doubled quotes and comments before a value are fine")
    func valueAfterClosedQuotes() throws {
        let sql: SQL = "SELECT 'it''s' || \(" ok") /* a */ -- b\n || \"v\" FROM (SELECT \(1) AS v)"
        #expect(try db.fetchOne(String.self, sql) == "it's ok1")
    }

    // MARK: - Identifiers, fragments, lists

    @Test("Identifiers with quotes and spaces are quoted, qualified or in lists")
    func identifiers() throws {
        let table = "my \"odd\" table"
        let columns = ["first name", "order"]
        try db.execute("CREATE TABLE \(identifier: table) (\(identifiers: columns))")
        try db.execute("INSERT INTO \(identifier: table) (\(identifiers: columns)) VALUES (\("Ada"), \(1))")
        let sql: SQL = "SELECT \(identifier: table, "first name") FROM \(identifier: table)"
        #expect(sql.text == #"SELECT "my ""odd"" table"."first name" FROM "my ""odd"" table""#)
        #expect(try db.fetchOne(String.self, sql) == "Ada")
    }

    @Test("Fragments nest: text spliced, values in order")
    func fragmentsNest() throws {
        try insertLetters()
        let low: SQL = "id >= \(2)"
        let both: SQL = "\(low) AND v <> \("z")"
        let order: SQL = "id DESC"
        let sql: SQL = "SELECT v FROM t WHERE \(both) AND id <= \(3) ORDER BY \(order)"
        #expect(sql.text == "SELECT v FROM t WHERE id >= ? AND v <> ? AND id <= ? ORDER BY id DESC")
        #expect(sql.arguments.positional == [.integer(2), .text("z"), .integer(3)])
        #expect(try db.fetchAll(String.self, sql) == ["c", "b"])
    }

    @Test("Lists: many, one and none")
    func lists() throws {
        try insertLetters()
        let many: SQL = "SELECT v FROM t WHERE id IN \([1, 3]) ORDER BY id"
        #expect(many.text == "SELECT v FROM t WHERE id IN (?, ?) ORDER BY id")
        #expect(try db.fetchAll(String.self, many) == ["a", "c"])
        #expect(try db.fetchAll(String.self, "SELECT v FROM t WHERE v IN \(Set(["b"]))") == ["b"])
        let none: [Int] = []
        let empty: SQL = "SELECT v FROM t WHERE id IN \(none)"
        #expect(empty.text == "SELECT v FROM t WHERE id IN ()")
        #expect(try db.fetchAll(String.self, empty).isEmpty)
        #expect(try db.fetchAll(String.self, "SELECT v FROM t WHERE id NOT IN \(none) ORDER BY id") == ["a", "b", "c"])
    }

    @Test("+ and joined(separator:) concatenate text and values in order")
    func concatenation() throws {
        try insertLetters()
        var sql: SQL = "SELECT v FROM t WHERE "
        let conditions: [SQL] = ["id > \(1)", "v <> \("c")", "id < \(10)"]
        sql += conditions.joined(separator: " AND ")
        sql = sql + " ORDER BY " + SQL(unsafeLiteral: "id")
        #expect(sql.text == "SELECT v FROM t WHERE id > ? AND v <> ? AND id < ? ORDER BY id")
        #expect(sql.arguments.positional == [.integer(1), .text("c"), .integer(10)])
        #expect(try db.fetchAll(String.self, sql) == ["b"])
        #expect([SQL]().joined(separator: ", ").isEmpty)
    }

    @Test("unsafeLiteral splices text as written")
    func unsafeLiteral() throws {
        try insertLetters()
        let direction = "DESC"
        let sql: SQL = "SELECT v FROM t ORDER BY id \(unsafeLiteral: direction)"
        #expect(sql.text == "SELECT v FROM t ORDER BY id DESC")
        #expect(try db.fetchAll(String.self, sql) == ["c", "b", "a"])
    }

    // MARK: - Every entry point

    @Test("Every execute, fetch and statement method accepts SQL")
    func everyOverloadAcceptsSQL() throws {
        let two = 2
        try db.execute("INSERT INTO t (id, v) VALUES (\(1), \("a")), (\(two), \("b"))")
        let query: SQL = "SELECT id, v FROM t WHERE id >= \(1) ORDER BY id"
        #expect(try db.fetchAll(query).count == 2)
        #expect(try db.fetchOne(query)?["v"] as String? == "a")
        #expect(try Array(db.fetchCursor(query)).count == 2)
        #expect(try db.fetchAll(Int64.self, query) == [1, 2])
        #expect(try db.fetchOne(Int64.self, query) == 1)
        #expect(try Array(db.fetchCursor(Int64.self, query)) == [1, 2])
        #expect(try db.fetchAll(Item.self, query) == [Item(id: 1, v: "a"), Item(id: 2, v: "b")])
        #expect(try db.fetchOne(Item.self, query) == Item(id: 1, v: "a"))
        #expect(try Array(db.fetchCursor(Item.self, query)) == [Item(id: 1, v: "a"), Item(id: 2, v: "b")])
        let statement = try db.makeStatement(query)
        #expect(try statement.fetchAll(arguments: query.arguments).count == 2)
        #expect(try db.cachedStatement(query).fetchAll(arguments: query.arguments).count == 2)
    }

    @Test("SQL of the same shape shares one cached statement whatever the values")
    func cacheHitForSameShape() throws {
        try insertLetters()
        let first = try db.cachedStatement("SELECT v FROM t WHERE id = \(1)" as SQL)
        let second = try db.cachedStatement("SELECT v FROM t WHERE id = \(3)" as SQL)
        #expect(first === second)
        #expect(try db.fetchOne(String.self, "SELECT v FROM t WHERE id = \(1)") == "a")
        #expect(try db.fetchOne(String.self, "SELECT v FROM t WHERE id = \(3)") == "c")
        #expect(try db.cachedStatement("SELECT v FROM t WHERE id = ?") === first)
    }

    @Test("makeStatement refuses SQL with a value inside quotes")
    func makeStatementChecksQuotes() throws {
        let message = misuseMessage { _ = try db.makeStatement("SELECT '\(1)'") }
        #expect(message?.contains("inside a quoted string") == true)
    }
}
