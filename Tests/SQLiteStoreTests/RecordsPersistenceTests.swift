import Foundation
import Testing

@testable import SQLiteStore

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

// MARK: - Record types used by the tests

/// The original tutorials' people, with columns listed by hand.
private struct Person: FetchableRecord, PersistableRecord, Equatable {
    static let tableName = "peopleInfo"
    static let primaryKey = "peopleInfoID"
    var id: Int64?
    var firstname: String
    var lastname: String?
    var age: Int

    init(id: Int64? = nil, firstname: String, lastname: String?, age: Int) {
        (self.id, self.firstname, self.lastname, self.age) = (id, firstname, lastname, age)
    }

    init(row: Row) throws {
        id = try row["peopleInfoID"]
        firstname = try row["firstname"]
        lastname = try row["lastname"]
        age = try row["age"]
    }

    func encode(to columns: inout RecordColumns) {
        columns["peopleInfoID"] = id
        columns["firstname"] = firstname
        columns["lastname"] = lastname
        columns["age"] = age
    }

    mutating func didInsert(rowID: Int64) { id = rowID }
}

/// The same table as a Codable record.
private struct CodablePerson: Codable, FetchableRecord, PersistableRecord, Equatable {
    static let tableName = "peopleInfo"
    static let primaryKey = "peopleInfoID"
    var peopleInfoID: Int64?
    var firstname: String
    var lastname: String?
    var age: Int

    mutating func didInsert(rowID: Int64) { peopleInfoID = rowID }
}

/// Identifiers that need quoting: a keyword, spaces, a double quote.
private struct Order: Codable, FetchableRecord, PersistableRecord, Equatable {
    static let tableName = "order"
    static let primaryKey = "group"
    var group: String
    var firstName: String
    var note: String?

    enum CodingKeys: String, CodingKey {
        case group
        case firstName = "first name"
        case note = "say \"hi\""
    }
}

/// A record whose key is text, so rowids play no part.
private struct Setting: Codable, FetchableRecord, PersistableRecord, Equatable {
    static let tableName = "setting"
    static let primaryKey = "name"
    var name: String
    var value: Double
}

/// A record with a column other than its declared key.
private struct Keyless: PersistableRecord {
    static let tableName = "peopleInfo"
    var firstname: String
    func encode(to columns: inout RecordColumns) { columns["firstname"] = firstname }
}

/// A record that writes nothing.
private struct Empty: PersistableRecord {
    static let tableName = "peopleInfo"
    func encode(to columns: inout RecordColumns) {}
}

/// A record with a value SQLite cannot store.
private struct Reading: Codable, PersistableRecord {
    static let tableName = "reading"
    var id: Int64?
    var value: Double
    var count: UInt64
}

/// A record that writes different columns depending on its state.
private struct Sparse: PersistableRecord {
    static let tableName = "peopleInfo"
    static let primaryKey = "peopleInfoID"
    var id: Int64?
    var firstname: String
    var age: Int?
    func encode(to columns: inout RecordColumns) {
        columns["peopleInfoID"] = id
        if let age { columns["age"] = age }
        columns["firstname"] = firstname
    }
}

/// A record that writes another record of its type while it encodes itself.
private struct Nester: Codable, FetchableRecord, PersistableRecord {
    static let tableName = "nester"
    nonisolated(unsafe) static var database: Database?
    var id: Int64?
    var name: String

    mutating func didInsert(rowID: Int64) { id = rowID }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        if name == "parent", let database = Self.database {
            var child = Nester(id: nil, name: "child")
            try child.insert(database)
        }
    }
}

/// A record that (wrongly) keeps its encoding container.
private struct Leaker: Codable, PersistableRecord {
    static let tableName = "nester"
    enum CodingKeys: String, CodingKey { case name }
    nonisolated(unsafe) static var escaped: KeyedEncodingContainer<CodingKeys>?
    var name: String

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        Self.escaped = container
    }
}

/// Class records: a subclass writes its superclass's properties too.
private class Vehicle: Codable {
    var wheels: Int
    init(wheels: Int) { self.wheels = wheels }
}

private final class Car: Vehicle, FetchableRecord, PersistableRecord {
    static let tableName = "car"
    var model: String
    enum CodingKeys: String, CodingKey { case model }
    init(model: String, wheels: Int) {
        self.model = model
        super.init(wheels: wheels)
    }
    required init(from decoder: any Decoder) throws {
        model = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .model)
        try super.init(from: decoder)
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(model, forKey: .model)
        try super.encode(to: container.superEncoder())
    }
}

private let peopleSchema = """
    CREATE TABLE peopleInfo (
        peopleInfoID INTEGER PRIMARY KEY AUTOINCREMENT, firstname TEXT NOT NULL, lastname TEXT, age INTEGER,
        note TEXT DEFAULT 'untouched')
    """

// MARK: - Tests

@Suite("Records: persistence")
struct RecordsPersistenceTests {
    let db: Database

    init() throws {
        db = try makeMemoryDatabase()
        try db.execute(sql: peopleSchema)
    }

    @Test("insert hands back the auto-incremented id, and writes only the record's columns")
    func insertAssignsID() throws {
        var ada = Person(firstname: "Ada", lastname: "Lovelace", age: 36)
        let rowID = try ada.insert(db)
        #expect(ada.id == rowID)
        var alan = Person(firstname: "Alan", lastname: nil, age: 41)
        try alan.insert(db)
        #expect(alan.id == rowID + 1)
        #expect(db.lastInsertedRowID == alan.id)
        #expect(try Person.fetchAll(db) == [ada, alan])
        // The column the record does not know keeps its default.
        #expect(try db.fetchAll(String.self, "SELECT note FROM peopleInfo") == ["untouched", "untouched"])
    }

    @Test("The Encodable default inserts, updates and fetches like the hand-written record")
    func codableRecord() throws {
        var ada = CodablePerson(peopleInfoID: nil, firstname: "Ada", lastname: "Lovelace", age: 36)
        try ada.insert(db)
        let id = try #require(ada.peopleInfoID)
        ada.age = 37
        ada.lastname = nil
        try ada.update(db)
        #expect(try CodablePerson.fetchOne(db, id: id) == ada)
        // The nil optional was written as NULL, not left out.
        #expect(try db.fetchOne(String.self, "SELECT typeof(lastname) FROM peopleInfo") == "null")
        // Both record types read the same row.
        #expect(try Person.fetchOne(db, id: id) == Person(id: id, firstname: "Ada", lastname: nil, age: 37))
    }

    @Test("Inserting a key that is already in the table throws a primary key constraint error")
    func duplicatePrimaryKey() throws {
        var ada = Person(firstname: "Ada", lastname: nil, age: 36)
        try ada.insert(db)
        var copy = ada
        let error = #expect(throws: SQLiteError.self) { try copy.insert(db) }
        #expect(error?.extendedCode == .constraintPrimaryKey)
        #expect(try Person.fetchCount(db) == 1)
        // A failed insert leaves the statement usable.
        var grace = Person(firstname: "Grace", lastname: nil, age: 85)
        try grace.insert(db)
        #expect(try Person.fetchCount(db) == 2)
    }

    @Test("A NOT NULL column left NULL throws a constraint error")
    func notNullConstraint() throws {
        struct Nameless: PersistableRecord {
            static let tableName = "peopleInfo"
            func encode(to columns: inout RecordColumns) { columns["firstname"] = nil }
        }
        var nameless = Nameless()
        let error = #expect(throws: SQLiteError.self) { try nameless.insert(db) }
        #expect(error?.extendedCode == .constraintNotNull)
    }

    @Test("update writes every column of the record to the row with its key")
    func update() throws {
        var ada = Person(firstname: "Ada", lastname: "Lovelace", age: 36)
        var alan = Person(firstname: "Alan", lastname: "Turing", age: 41)
        try ada.insert(db)
        try alan.insert(db)
        ada.firstname = "Augusta Ada"
        ada.age = 37
        try ada.update(db)
        #expect(try Person.fetchOne(db, id: ada.id!) == ada)
        #expect(try Person.fetchOne(db, id: alan.id!) == alan)
        // Updating with unchanged values still finds the row.
        try ada.update(db)
    }

    @Test("Updating a row that is not there throws record not found, on both paths")
    func updateMissingRow() throws {
        let ghost = Person(id: 42, firstname: "Ghost", lastname: nil, age: 1)
        let error = #expect(throws: RecordError.self) { try ghost.update(db) }
        #expect(error == .recordNotFound(table: "peopleInfo", primaryKey: "peopleInfoID", key: .integer(42)))
        #expect(error?.isNotFound == true)
        #expect(error?.description == #"record not found: no row in "peopleInfo" with "peopleInfoID" = 42"#)

        let codable = CodablePerson(peopleInfoID: 42, firstname: "Ghost", lastname: nil, age: 1)
        #expect(throws: RecordError.recordNotFound(table: "peopleInfo", primaryKey: "peopleInfoID", key: 42)) {
            try codable.update(db)
        }
        // A record never inserted has a NULL key, which no row has.
        let unsaved = Person(firstname: "New", lastname: nil, age: 1)
        #expect(throws: RecordError.recordNotFound(table: "peopleInfo", primaryKey: "peopleInfoID", key: nil)) {
            try unsaved.update(db)
        }
        #expect(try Person.fetchCount(db) == 0)
    }

    @Test("save inserts a new record, then updates it")
    func save() throws {
        var ada = Person(firstname: "Ada", lastname: nil, age: 36)
        try ada.save(db)
        let id = try #require(ada.id)
        ada.age = 37
        try ada.save(db)
        #expect(ada.id == id)
        #expect(try Person.fetchAll(db) == [ada])
        // A record with a key that is not in the table yet is inserted with it.
        var grace = Person(id: 100, firstname: "Grace", lastname: nil, age: 85)
        try grace.save(db)
        #expect(grace.id == 100)
        #expect(try Person.fetchOne(db, id: 100) == grace)
        #expect(try Person.fetchCount(db) == 2)
    }

    @Test("save of a record whose only column is its key inserts it once")
    func saveKeyOnly() throws {
        try db.execute("CREATE TABLE tag (name TEXT PRIMARY KEY)")
        struct Tag: Codable, PersistableRecord {
            static let tableName = "tag"
            static let primaryKey = "name"
            var name: String
        }
        var tag = Tag(name: "swift")
        try tag.save(db)
        try tag.save(db)
        #expect(try db.fetchAll(String.self, "SELECT name FROM tag") == ["swift"])
        // Update finds it, and reports a missing one.
        try tag.update(db)
        #expect(throws: RecordError.self) { try Tag(name: "rust").update(db) }
    }

    @Test("delete, exists, fetchOne(id:), deleteOne, deleteAll and fetchCount work by primary key")
    func keyOperations() throws {
        var people = [
            Person(firstname: "Ada", lastname: nil, age: 36), Person(firstname: "Alan", lastname: nil, age: 41),
            Person(firstname: "Grace", lastname: nil, age: 85),
        ]
        for index in people.indices { try people[index].insert(db) }
        let (ada, alan, grace) = (people[0], people[1], people[2])
        #expect(try ada.exists(db))
        #expect(try Person.exists(db, id: alan.id!))
        #expect(try !Person.exists(db, id: 999))
        #expect(try Person.fetchOne(db, id: grace.id!) == grace)
        #expect(try Person.fetchOne(db, id: 999) == nil)

        #expect(try ada.delete(db))
        #expect(try !ada.delete(db))
        #expect(try !ada.exists(db))
        #expect(try Person.deleteOne(db, id: alan.id!))
        #expect(try !Person.deleteOne(db, id: alan.id!))
        #expect(try Person.fetchCount(db) == 1)

        var more = Person(firstname: "Edsger", lastname: nil, age: 72)
        try more.insert(db)
        #expect(try Person.deleteAll(db) == 2)
        #expect(try Person.fetchCount(db) == 0)
        #expect(try Person.fetchAll(db).isEmpty)
    }

    @Test("A record cursor over the whole table streams every record")
    func tableCursor() throws {
        for index in 0..<100 {
            var person = Person(firstname: "P\(index)", lastname: nil, age: index)
            try person.insert(db)
        }
        let cursor = try Person.fetchCursor(db)
        var total = 0
        while let person = try cursor.next() { total += person.age }
        #expect(total == 4950)
    }

    @Test("Records work in a transaction and roll back with it")
    func transactionRollback() throws {
        var ada = Person(firstname: "Ada", lastname: nil, age: 36)
        try ada.insert(db)
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try db.transaction { db in
                var alan = Person(firstname: "Alan", lastname: nil, age: 41)
                try alan.insert(db)
                ada.age = 99
                try ada.update(db)
                throw Abort()
            }
        }
        #expect(try Person.fetchAll(db).map(\.firstname) == ["Ada"])
        #expect(try Person.fetchOne(db, id: ada.id!)?.age == 36)
    }

    @Test("Identifiers that are keywords or contain spaces and quotes are quoted in generated SQL")
    func quotedIdentifiers() throws {
        try db.execute(#"CREATE TABLE "order" ("group" TEXT PRIMARY KEY, "first name" TEXT, "say ""hi""" TEXT)"#)
        var statements: [String] = []
        db.trace { statements.append($0.sql) }
        var order = Order(group: "a", firstName: "Ada", note: "hello")
        try order.insert(db)
        order.note = nil
        try order.update(db)
        order.firstName = "Grace"
        try order.save(db)
        #expect(try Order.fetchOne(db, id: "a") == order)
        #expect(try order.exists(db))
        #expect(try Order.fetchCount(db) == 1)
        #expect(try order.delete(db))
        db.trace(nil)
        #expect(
            statements.contains(#"INSERT INTO "order" ("group", "first name", "say ""hi""") VALUES (?, ?, ?)"#))
        #expect(statements.contains(#"UPDATE "order" SET "first name" = ?, "say ""hi""" = ? WHERE "group" = ?"#))
        #expect(
            statements.contains(
                #"INSERT INTO "order" ("group", "first name", "say ""hi""") VALUES (?, ?, ?) ON CONFLICT ("group") "#
                    + #"DO UPDATE SET "first name" = excluded."first name", "say ""hi""" = excluded."say ""hi""""#))
        #expect(statements.contains(#"SELECT * FROM "order" WHERE "group" = ?"#))
        #expect(statements.contains(#"DELETE FROM "order" WHERE "group" = ?"#))
        // Values are bound, never spliced into the SQL.
        #expect(!statements.contains { $0.contains("Ada") || $0.contains("Grace") || $0.contains("hello") })
    }

    @Test("quotedIdentifier doubles quotes and keeps everything else")
    func quotedIdentifierFunction() {
        #expect(quotedIdentifier("people") == #""people""#)
        #expect(quotedIdentifier("order") == #""order""#)
        #expect(quotedIdentifier("first name") == #""first name""#)
        #expect(quotedIdentifier(#"say "hi""#) == #""say ""hi""""#)
        #expect(quotedIdentifier("") == #""""#)
        #expect(quotedIdentifier("é 名前") == "\"é 名前\"")
        // A quote and a combining mark are one Character; the quote is still doubled.
        // (Kept out of the macros: written inside #expect or #require,
        // these literals make the expansion fail to compile.)
        let identifier = "a\"\u{301}b"
        let quotedTwice = "\"a\"\"\u{301}b\""
        #expect(quotedIdentifier(identifier) == quotedTwice)
        let text = SQLiteValue.text("O'\u{301}Brien").description
        let literal = "'O''\u{301}Brien'"
        #expect(text == literal)
    }

    @Test("The SQL of a record type is generated once per connection and reused")
    func sqlIsCached() throws {
        var ada = Person(firstname: "Ada", lastname: nil, age: 36)
        try ada.insert(db)
        let plan = db.recordPlans.plan(for: Person.self)
        #expect(db.recordPlans.plan(for: Person.self) === plan)
        #expect(db.recordPlans.plan(for: CodablePerson.self) !== plan)
        var prepared: [String] = []
        db.trace(options: .profile) { prepared.append($0.sql) }
        for index in 0..<3 {
            var person = Person(firstname: "P\(index)", lastname: nil, age: index)
            try person.insert(db)
        }
        db.trace(nil)
        #expect(prepared.count == 3)
        #expect(Set(prepared).count == 1)
    }

    @Test("Records with a text key do not depend on rowids")
    func textKey() throws {
        try db.execute("CREATE TABLE setting (name TEXT PRIMARY KEY NOT NULL, value REAL) WITHOUT ROWID")
        var volume = Setting(name: "volume", value: 0.5)
        try volume.insert(db)
        volume.value = 0.8
        try volume.update(db)
        var brightness = Setting(name: "brightness", value: 1)
        try brightness.save(db)
        #expect(try Setting.fetchOne(db, id: "volume") == volume)
        #expect(try Setting.fetchAll(db).map(\.name).sorted() == ["brightness", "volume"])
        #expect(throws: RecordError.self) { try Setting(name: "contrast", value: 1).update(db) }
    }

    @Test("A record that does not encode its primary key can insert but not update, save, delete or check")
    func missingPrimaryKeyColumn() throws {
        var keyless = Keyless(firstname: "Ada")
        try keyless.insert(db)
        for operation in [
            { try keyless.update(db) }, { try keyless.save(db) }, { _ = try keyless.delete(db) },
            { _ = try keyless.exists(db) },
        ] as [() throws -> Void] {
            let error = #expect(throws: RecordError.self) { try operation() }
            guard case .invalidRecord(let type, let reason) = error else { continue }
            #expect(type == "Keyless")
            #expect(reason.contains("\"id\""))
        }
        #expect(try Person.fetchCount(db) == 1)
    }

    @Test("A record that encodes no columns cannot be written")
    func emptyRecord() throws {
        var empty = Empty()
        #expect(throws: RecordError.invalidRecord(type: "Empty", reason: "it encodes no columns")) {
            try empty.insert(db)
        }
    }

    @Test("A value SQLite cannot store throws before anything is written, naming the column")
    func unstorableValues() throws {
        try db.execute("CREATE TABLE reading (id INTEGER PRIMARY KEY, value REAL, count INTEGER)")
        var nan = Reading(value: .nan, count: 1)
        let nanError = #expect(throws: ValueConversionError.self) { try nan.insert(db) }
        #expect(nanError?.column == "value")
        var huge = Reading(value: 1, count: .max)
        let hugeError = #expect(throws: ValueConversionError.self) { try huge.insert(db) }
        #expect(hugeError?.column == "count")
        #expect(hugeError?.type == "UInt64")

        struct Dated: PersistableRecord {
            static let tableName = "reading"
            var when: Date
            func encode(to columns: inout RecordColumns) { columns["value"] = when }
        }
        var farFuture = Dated(when: Date(timeIntervalSince1970: 1e15))
        let dateError = #expect(throws: ValueConversionError.self) { try farFuture.insert(db) }
        #expect(dateError?.column == "value")
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM reading") == 0)

        // Storable values go through afterwards.
        var fine = Reading(value: 2.5, count: 3)
        try fine.insert(db)
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM reading") == 1)
    }

    @Test("Records that write different columns each time get SQL for each set")
    func varyingColumns() throws {
        var withAge = Sparse(firstname: "Ada", age: 36)
        var withoutAge = Sparse(firstname: "Alan", age: nil)
        try withAge.insert(db)
        try withoutAge.insert(db)
        var again = Sparse(firstname: "Grace", age: 85)
        try again.insert(db)
        let rows = try db.fetchAll("SELECT firstname, age FROM peopleInfo ORDER BY peopleInfoID")
        #expect(try rows.map { try $0["firstname"] as String } == ["Ada", "Alan", "Grace"])
        #expect(try rows.map { try $0["age"] as Int? } == [36, nil, 85])
    }

    @Test("Columns written twice keep the last value; the columns can be read back")
    func recordColumns() throws {
        var columns = RecordColumns()
        columns["a"] = 1
        columns["b"] = "two"
        columns["a"] = 3
        columns["c"] = nil
        let optional: Double? = nil
        columns["d"] = optional
        columns["e"] = SQLiteValue.blob(Data([1]))
        #expect(columns.columnNames == ["a", "b", "c", "d", "e"])
        #expect(columns.count == 5)
        #expect(columns["a"] == .integer(3))
        #expect(columns["a"] as Int? == 3)
        #expect(columns["b"] as String? == "two")
        #expect(columns["b"] as Int? == nil)
        #expect(columns["c"] == .null)
        #expect(columns["d"] == .null)
        #expect(columns["missing"] == nil)
        #expect(columns["e"] as Data? == Data([1]))
    }

    @Test("A record that writes another of its type while encoding itself writes both")
    func nestedEncoding() throws {
        try db.execute("CREATE TABLE nester (id INTEGER PRIMARY KEY, name TEXT)")
        Nester.database = db
        defer { Nester.database = nil }
        var parent = Nester(id: nil, name: "parent")
        try parent.insert(db)
        var other = Nester(id: nil, name: "other")
        try other.insert(db)
        #expect(try Nester.fetchAll(db).map(\.name).sorted() == ["child", "other", "parent"])
        let parentID = try #require(parent.id)
        #expect(try Nester.fetchOne(db, id: parentID)?.name == "parent")
    }

    @Test("An encoding container kept past its record cannot change other records")
    func escapedEncodingContainer() throws {
        try db.execute("CREATE TABLE nester (id INTEGER PRIMARY KEY, name TEXT)")
        var first = Leaker(name: "first")
        try first.insert(db)
        var escaped = try #require(Leaker.escaped)
        try escaped.encode("junk", forKey: .name)
        var second = Leaker(name: "second")
        try second.insert(db)
        #expect(try db.fetchAll(String.self, "SELECT name FROM nester ORDER BY id") == ["first", "second"])
        Leaker.escaped = nil
    }

    @Test("A subclass writes and reads its superclass's properties in the same row")
    func classRecords() throws {
        try db.execute("CREATE TABLE car (id INTEGER PRIMARY KEY, model TEXT, wheels INTEGER)")
        var car = Car(model: "T", wheels: 4)
        try car.insert(db)
        var trike = Car(model: "Trike", wheels: 3)
        try trike.insert(db)
        let cars = try Car.fetchAll(db)
        #expect(cars.map(\.model) == ["T", "Trike"])
        #expect(cars.map(\.wheels) == [4, 3])
    }

    @Test("Writing a record on a closed connection throws")
    func closedConnection() throws {
        var ada = Person(firstname: "Ada", lastname: nil, age: 36)
        try ada.insert(db)
        db.close()
        var alan = Person(firstname: "Alan", lastname: nil, age: 41)
        #expect(throws: SQLiteError.self) { try alan.insert(db) }
        #expect(throws: SQLiteError.self) { try ada.update(db) }
        #expect(throws: SQLiteError.self) { try Person.fetchOne(db, id: 1) }
    }
}

@Suite("Statement.execute(values:)")
struct StatementValuesTests {
    let db: Database

    init() throws {
        db = try makeMemoryDatabase()
        try db.execute("CREATE TABLE t (a INTEGER, b TEXT, c REAL, d BLOB)")
    }

    @Test("Values of mixed types are bound in order")
    func bindsInOrder() throws {
        let insert = try db.makeStatement("INSERT INTO t VALUES (?, ?, ?, ?)")
        try insert.execute(values: 1, "O'Brien", 2.5, Data([0, 255]))
        let none: String? = nil
        try insert.execute(values: 2, none, Double?.none, [UInt8]())
        let rows = try db.fetchAll("SELECT * FROM t ORDER BY a")
        #expect(rows[0] == Row(["a": 1, "b": "O'Brien", "c": 2.5, "d": .blob(Data([0, 255]))]))
        #expect(rows[1] == Row(["a": 2, "b": nil, "c": nil, "d": .blob(Data())]))
    }

    @Test("The wrong number of values throws before anything runs")
    func wrongCount() throws {
        let insert = try db.makeStatement("INSERT INTO t (a, b) VALUES (?, ?)")
        let error = #expect(throws: SQLiteError.self) { try insert.execute(values: 1) }
        #expect(error?.code == .misuse)
        #expect(throws: SQLiteError.self) { try insert.execute(values: 1, "x", 3) }
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") == 0)
        try insert.execute(values: 1, "x")
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") == 1)
    }

    @Test("A value SQLite cannot store throws a conversion error with the SQL")
    func unstorable() throws {
        let insert = try db.makeStatement("INSERT INTO t (a, c) VALUES (?, ?)")
        let error = #expect(throws: ValueConversionError.self) { try insert.execute(values: 1, Double.nan) }
        #expect(error?.sql == "INSERT INTO t (a, c) VALUES (?, ?)")
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") == 0)
    }

    @Test("A failing statement throws SQLite's error and stays usable")
    func constraintFailure() throws {
        try db.execute("CREATE TABLE u (id INTEGER PRIMARY KEY)")
        let insert = try db.makeStatement("INSERT INTO u VALUES (?)")
        try insert.execute(values: 1)
        let error = #expect(throws: SQLiteError.self) { try insert.execute(values: 1) }
        #expect(error?.extendedCode == .constraintPrimaryKey)
        try insert.execute(values: 2)
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM u") == 2)
    }

    /// Runs `execute(values:)` with `count` distinct values (1 to 12: the
    /// overloads for one to ten values, then the variadic version).
    private static func execute(_ statement: Statement, count: Int, base: Int) throws {
        let v = (0..<12).map { base + $0 }
        switch count {
        case 1: try statement.execute(values: v[0])
        case 2: try statement.execute(values: v[0], v[1])
        case 3: try statement.execute(values: v[0], v[1], v[2])
        case 4: try statement.execute(values: v[0], v[1], v[2], v[3])
        case 5: try statement.execute(values: v[0], v[1], v[2], v[3], v[4])
        case 6: try statement.execute(values: v[0], v[1], v[2], v[3], v[4], v[5])
        case 7: try statement.execute(values: v[0], v[1], v[2], v[3], v[4], v[5], v[6])
        case 8: try statement.execute(values: v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7])
        case 9: try statement.execute(values: v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8])
        case 10: try statement.execute(values: v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9])
        case 11: try statement.execute(values: v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10])
        default:
            try statement.execute(values: v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11])
        }
    }

    @Test("Each count of values, one to twelve, binds every value at its own parameter", arguments: 1...12)
    func everyCountBindsInPlace(count: Int) throws {
        let columns = (1...count).map { "c\($0)" }.joined(separator: ", ")
        try db.execute(SQL(unsafeLiteral: "CREATE TABLE w (\(columns))"))
        let marks = Array(repeating: "?", count: count).joined(separator: ", ")
        let insert = try db.makeStatement(SQL(unsafeLiteral: "INSERT INTO w VALUES (\(marks))"))
        try Self.execute(insert, count: count, base: 100)
        let row = try #require(try db.fetchOne("SELECT * FROM w"))
        #expect(try (0..<count).map { try row[$0] as Int } == (0..<count).map { 100 + $0 })
        // One value too few and one too many are refused before anything runs.
        if count > 1 {
            #expect(throws: SQLiteError.self) { try Self.execute(insert, count: count - 1, base: 0) }
        }
        if count < 12 {
            let error = #expect(throws: SQLiteError.self) { try Self.execute(insert, count: count + 1, base: 0) }
            #expect(error?.message.contains("\(count + 1) values given") == true)
        }
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM w") == 1)
    }

    @Test("A value SQLite refuses to bind throws its error with every argument of the call")
    func refusedBindNamesTheArguments() throws {
        var configuration = Configuration()
        configuration.includesArgumentsInErrors = true
        let db = try Database(path: ":memory:", configuration: configuration)
        try db.execute("CREATE TABLE t (a, b, c)")
        sqlite3_limit(db.sqliteConnection, SQLITE_LIMIT_LENGTH, 100)
        let insert = try db.makeStatement("INSERT INTO t VALUES (?, ?, ?)")
        let long = String(repeating: "y", count: 200)
        let error = #expect(throws: SQLiteError.self) { try insert.execute(values: 7, long, "z") }
        #expect(error?.code == .tooBig)
        #expect(error?.arguments == StatementArguments([7, long, "z"]))
        try insert.execute(values: 8, "short", "z")
        #expect(try db.fetchAll("SELECT a FROM t").map { try $0[0] as Int } == [8])
    }

    @Test("A statement iterated by a cursor, or on a closed connection, refuses to run")
    func busyOrClosed() throws {
        try db.execute("INSERT INTO t (a) VALUES (1), (2)")
        let select = try db.makeStatement("SELECT a FROM t WHERE a > ?")
        let cursor = try select.fetchCursor(arguments: [0])
        _ = try cursor.next()
        #expect(throws: SQLiteError.self) { try select.execute(values: 0) }
        let insert = try db.makeStatement("INSERT INTO t (a) VALUES (?)")
        db.close()
        #expect(throws: SQLiteError.self) { try insert.execute(values: 3) }
    }
}
