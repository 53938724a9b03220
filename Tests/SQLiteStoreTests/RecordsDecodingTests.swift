import Foundation
import Testing

@testable import SQLiteStore

// MARK: - Record types used by the tests

/// A record decoded by hand, by column name.
private struct Person: FetchableRecord, Equatable {
    var id: Int64
    var name: String
    var age: Int?

    init(id: Int64, name: String, age: Int?) {
        (self.id, self.name, self.age) = (id, name, age)
    }

    init(row: Row) throws {
        id = try row["id"]
        name = try row["name"]
        age = try row["age"]
    }
}

/// A record decoded by hand, by index.
private struct Pair: FetchableRecord, Equatable {
    var first: Int
    var second: String

    init(row: Row) throws {
        first = try row[0]
        second = try row[1]
    }
}

private enum Mood: String, Codable, Equatable {
    case happy, grumpy
}

private enum Priority: Int, Codable, Equatable {
    case low = 1
    case high = 9
}

private struct Address: Codable, Equatable {
    var street: String
    var city: String
    var since: Date
}

/// A wrapper that codes itself as a single string.
private struct Email: Codable, Equatable {
    var address: String
    init(_ address: String) { self.address = address }
    init(from decoder: any Decoder) throws { address = try decoder.singleValueContainer().decode(String.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(address)
    }
}

/// Every kind of property the Codable path handles.
private struct Everything: Codable, FetchableRecord, PersistableRecord, Equatable {
    static let tableName = "everything"
    var id: Int64?
    var flag: Bool
    var small: Int8
    var unsigned: UInt32
    var big: Int64
    var ratio: Double
    var single: Float
    var text: String
    var bytes: Data
    var byteArray: [UInt8]
    var date: Date
    var uuid: UUID
    var price: Decimal
    var mood: Mood
    var priority: Priority
    var email: Email
    var website: URL
    var address: Address
    var tags: [String]
    var scores: [String: Int]
    var nickname: String?
    var lastMood: Mood?
    var previousAddress: Address?

    mutating func didInsert(rowID: Int64) { id = rowID }

    static let schema = """
        CREATE TABLE everything (
            id INTEGER PRIMARY KEY, flag, small, unsigned, big, ratio, single, text, bytes, byteArray, date, uuid,
            price, mood, priority, email, website, address, tags, scores, nickname, lastMood, previousAddress)
        """

    static func sample(nickname: String? = "Ace", lastMood: Mood? = .grumpy) -> Everything {
        Everything(
            id: nil, flag: true, small: -8, unsigned: 4_000_000_000, big: Int64.max, ratio: 0.1, single: 1.5,
            text: "O'Brien; DROP TABLE x; -- :colon", bytes: Data([0, 1, 2, 255]), byteArray: [9, 8, 7],
            date: Date(timeIntervalSince1970: 1_764_495_665.25), uuid: UUID(), price: Decimal(string: "19.99")!,
            mood: .happy, priority: .high, email: Email("ada@example.com"),
            website: URL(string: "https://example.com/a?b=c")!,
            address: Address(street: "1 Main St", city: "Springfield", since: Date(timeIntervalSince1970: 86_400.5)),
            tags: ["a", "b \"quoted\""], scores: ["x": 1, "y": 2], nickname: nickname, lastMood: lastMood,
            previousAddress: nil)
    }
}

/// A Decodable record with optional properties, for missing columns.
private struct Partial: Decodable, FetchableRecord {
    var id: Int64
    var price: Double?
}

/// Class records: a subclass decodes its superclass from the same row.
private class Animal: Codable {
    var name: String
    init(name: String) { self.name = name }
}

private final class Dog: Animal, FetchableRecord {
    var breed: String
    enum CodingKeys: String, CodingKey { case breed }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        breed = try container.decode(String.self, forKey: .breed)
        try super.init(from: container.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(breed, forKey: .breed)
        try super.encode(to: container.superEncoder())
    }
}

/// A Decodable type that is not keyed, which a row cannot be.
private struct Tuple: Decodable, FetchableRecord {
    var values: [Int]
    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        values = [try container.decode(Int.self)]
    }
}

/// A record that (wrongly) keeps its decoding container.
private struct Escaper: Decodable, FetchableRecord {
    enum CodingKeys: String, CodingKey { case name }
    nonisolated(unsafe) static var escaped: [KeyedDecodingContainer<CodingKeys>] = []
    var name: String
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        Self.escaped.append(container)
        name = try container.decode(String.self, forKey: .name)
    }
}

/// Two records over the same rows with different coding keys.
private struct NameOnly: Decodable, FetchableRecord { var name: String }
private struct AgeOnly: Decodable, FetchableRecord { var age: Int? }
private struct NameAndAge: Decodable, FetchableRecord {
    var first: NameOnly
    var second: AgeOnly
    init(from decoder: any Decoder) throws {
        first = try NameOnly(from: decoder)
        second = try AgeOnly(from: decoder)
    }
}

/// A record that keeps its row.
private struct Keeper: FetchableRecord {
    var row: Row
    init(row: Row) { self.row = row }
}

// MARK: - Tests

@Suite("Records: decoding rows")
struct RecordsDecodingTests {
    let db: Database

    init() throws {
        db = try makeMemoryDatabase()
        try db.execute(
            """
            CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER);
            INSERT INTO people VALUES (1, 'Ada', 36), (2, 'Alan', NULL), (3, 'Grace', 85);
            """)
    }

    @Test("fetchAll, fetchOne and fetchCursor decode hand-written records, with arguments")
    func fetchHandWritten() throws {
        let people = try db.fetchAll(Person.self, "SELECT * FROM people ORDER BY id")
        #expect(
            people == [
                Person(id: 1, name: "Ada", age: 36), Person(id: 2, name: "Alan", age: nil),
                Person(id: 3, name: "Grace", age: 85),
            ])
        let alan = try db.fetchOne(Person.self, "SELECT * FROM people WHERE name = ?", arguments: ["Alan"])
        #expect(alan == Person(id: 2, name: "Alan", age: nil))
        #expect(try db.fetchOne(Person.self, "SELECT * FROM people WHERE id = :id", arguments: ["id": 9]) == nil)
        let cursor = try db.fetchCursor(Person.self, "SELECT * FROM people WHERE age > ? ORDER BY id", arguments: [40])
        #expect(try cursor.next()?.name == "Grace")
        #expect(try cursor.next() == nil)
        #expect(try cursor.next() == nil)
    }

    @Test("Records read by index, and from a prepared statement")
    func byIndexAndStatement() throws {
        let statement = try db.makeStatement("SELECT id, name FROM people WHERE id <= ? ORDER BY id")
        let pairs = try statement.fetchAll(Pair.self, arguments: [2])
        #expect(pairs.map(\.second) == ["Ada", "Alan"])
        #expect(try statement.fetchOne(Pair.self, arguments: [1])?.first == 1)
        #expect(try statement.fetchOne(Pair.self, arguments: [0]) == nil)
    }

    @Test("Single columns are fetched as values")
    func singleColumns() throws {
        #expect(try db.fetchAll(String.self, "SELECT name FROM people ORDER BY id") == ["Ada", "Alan", "Grace"])
        #expect(try db.fetchAll(Int?.self, "SELECT age FROM people ORDER BY id") == [36, nil, 85])
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM people") == 3)
    }

    @Test("A NULL read into a non-optional property throws, naming the column and the type")
    func nullIntoNonOptional() throws {
        struct Strict: FetchableRecord {
            var age: Int
            init(row: Row) throws { age = try row["age"] }
        }
        let error = #expect(throws: ValueConversionError.self) {
            try db.fetchAll(Strict.self, "SELECT age FROM people ORDER BY id")
        }
        #expect(error?.reason == .unexpectedNull)
        #expect(error?.column == "age")
        #expect(error?.type == "Int")
        #expect(error?.sql == "SELECT age FROM people ORDER BY id")
        #expect(error?.description.contains("\"age\"") == true)
    }

    @Test("A missing column throws, naming it, on both decoding paths")
    func missingColumn() throws {
        let handWritten = #expect(throws: ValueConversionError.self) {
            try db.fetchAll(Person.self, "SELECT id, name FROM people")
        }
        #expect(handWritten?.reason == .columnNotFound)
        #expect(handWritten?.column == "age")

        struct Named: Decodable, FetchableRecord {
            var id: Int64
            var name: String
        }
        let decodable = #expect(throws: ValueConversionError.self) {
            try db.fetchAll(Named.self, "SELECT id FROM people")
        }
        #expect(decodable?.reason == .columnNotFound)
        #expect(decodable?.column == "name")
        #expect(decodable?.type == "String")
    }

    @Test("A value of the wrong type throws on both decoding paths")
    func typeMismatch() throws {
        struct NameAsNumber: FetchableRecord {
            var name: Int
            init(row: Row) throws { name = try row["name"] }
        }
        let handWritten = #expect(throws: ValueConversionError.self) {
            try db.fetchOne(NameAsNumber.self, "SELECT name FROM people")
        }
        #expect(handWritten?.reason == .typeMismatch(found: .text))

        struct Decoded: Decodable, FetchableRecord { var name: Double }
        let decodable = #expect(throws: ValueConversionError.self) {
            try db.fetchOne(Decoded.self, "SELECT name FROM people")
        }
        #expect(decodable?.reason == .typeMismatch(found: .text))
        #expect(decodable?.column == "name")
        #expect(decodable?.type == "Double")
    }

    @Test("After a decoding error the cursor moves on to the next row")
    func cursorContinuesAfterError() throws {
        struct Strict: Decodable, FetchableRecord { var age: Int }
        let cursor = try db.fetchCursor(Strict.self, "SELECT age FROM people ORDER BY id")
        #expect(try cursor.next()?.age == 36)
        #expect(throws: ValueConversionError.self) { try cursor.next() }
        #expect(try cursor.next()?.age == 85)
        #expect(try cursor.next() == nil)
    }

    @Test("Decodable optionals are nil for NULL and for a missing column; present values decode")
    func decodableOptionals() throws {
        let rows = try db.fetchAll(Partial.self, "SELECT id FROM people ORDER BY id")
        #expect(rows.map(\.id) == [1, 2, 3])
        #expect(rows.allSatisfy { $0.price == nil })
        let withPrice = try db.fetchOne(Partial.self, "SELECT 7 AS id, 2.5 AS price")
        #expect(withPrice?.price == 2.5)
        let nullPrice = try db.fetchOne(Partial.self, "SELECT 7 AS id, NULL AS price")
        #expect(nullPrice?.id == 7 && nullPrice?.price == nil)
        #expect(throws: ValueConversionError.self) { try db.fetchOne(Partial.self, "SELECT 7 AS id, 'x' AS price") }
    }

    @Test("Column names match coding keys case-insensitively, and in any order")
    func caseInsensitiveNames() throws {
        struct Shouting: Decodable, FetchableRecord {
            var name: String
            var id: Int
        }
        let row = try db.fetchOne(Shouting.self, "SELECT ID, NAME FROM people WHERE id = 3")
        #expect(row?.id == 3 && row?.name == "Grace")
    }

    @Test("Every supported property type round-trips through Encodable and Decodable")
    func codableRoundTrip() throws {
        try db.execute(sql: Everything.schema)
        var record = Everything.sample()
        try record.insert(db)
        let id = try #require(record.id)
        let fetched = try #require(try Everything.fetchOne(db, id: id))
        #expect(fetched == record)

        var empty = Everything.sample(nickname: nil, lastMood: nil)
        try empty.insert(db)
        let fetchedEmpty = try #require(try Everything.fetchOne(db, id: empty.id!))
        #expect(fetchedEmpty.nickname == nil && fetchedEmpty.lastMood == nil && fetchedEmpty.previousAddress == nil)
        #expect(fetchedEmpty == empty)
    }

    @Test("Codable properties are stored as readable SQLite values; nested values as JSON text")
    func codableStorage() throws {
        try db.execute(sql: Everything.schema)
        var record = Everything.sample()
        try record.insert(db)
        let row = try #require(try db.fetchOne("SELECT * FROM everything"))
        #expect(try row["flag"] as SQLiteValue == .integer(1))
        #expect(try row["mood"] as SQLiteValue == .text("happy"))
        #expect(try row["priority"] as SQLiteValue == .integer(9))
        #expect(try row["email"] as SQLiteValue == .text("ada@example.com"))
        #expect(try row["website"] as SQLiteValue == .text("https://example.com/a?b=c"))
        #expect(try row["price"] as SQLiteValue == .text("19.99"))
        #expect(try row["date"] as SQLiteValue == .text("2025-11-30 09:41:05.250"))
        #expect(try row["bytes"] as SQLiteValue == .blob(Data([0, 1, 2, 255])))
        #expect(try row["previousAddress"] as SQLiteValue == .null)
        #expect(
            try row["address"] as String
                == #"{"city":"Springfield","since":"1970-01-02T00:00:00.500Z","street":"1 Main St"}"#)
        #expect(try row["tags"] as String == #"["a","b \"quoted\""]"#)
        #expect(try row["scores"] as String == #"{"x":1,"y":2}"#)
    }

    @Test("Invalid stored values for enums, UUIDs and JSON throw, naming the column and type")
    func invalidStoredValues() throws {
        try db.execute(sql: Everything.schema)
        var record = Everything.sample()
        try record.insert(db)
        let cases: [(column: String, value: SQLiteValue, type: String)] = [
            ("mood", "sleepy", "Mood"),
            ("priority", 5, "Priority"),
            ("uuid", "not-a-uuid", "UUID"),
            ("address", "{not json", "Address"),
            ("address", 12, "Address"),
            ("tags", #"{"a":1}"#, "Array<String>"),
            ("date", "yesterday", "Date"),
            ("price", "12abc", "Decimal"),
            ("website", 3, "URL"),
        ]
        for (column, value, type) in cases {
            try db.execute("UPDATE everything SET \(identifier: column) = ?", arguments: [value])
            let error = #expect(throws: ValueConversionError.self, "\(column) = \(value)") {
                try Everything.fetchAll(db)
            }
            #expect(error?.column == column)
            #expect(error?.type == type)
            // The stored value is not part of the message.
            if case .text(let text) = value { #expect(error?.description.contains(text) == false) }
            try record.update(db)
        }
        #expect(try Everything.fetchAll(db) == [record])
    }

    @Test("A subclass decodes its superclass's properties from the same row")
    func classInheritance() throws {
        let dog = try #require(try db.fetchOne(Dog.self, "SELECT 'Rex' AS name, 'collie' AS breed"))
        #expect(dog.name == "Rex")
        #expect(dog.breed == "collie")
    }

    @Test("A Decodable type that is not keyed cannot be a record")
    func unkeyedRecord() throws {
        #expect(throws: DecodingError.self) { try db.fetchOne(Tuple.self, "SELECT 1") }
    }

    @Test("A record may keep its row, which stays valid after the cursor moves on")
    func recordKeepsRow() throws {
        let keepers = try db.fetchAll(Keeper.self, "SELECT name FROM people ORDER BY id")
        #expect(try keepers.map { try $0.row["name"] as String } == ["Ada", "Alan", "Grace"])
        let kept = try #require(try db.fetchOne(Keeper.self, "SELECT name FROM people WHERE id = 2"))
        #expect(try kept.row["name"] as String == "Alan")
    }

    @Test("A container kept past its record reads a frozen row, never a statement that moved on")
    func escapedContainer() throws {
        Escaper.escaped = []
        let names = try db.fetchAll(Escaper.self, "SELECT name FROM people ORDER BY id").map(\.name)
        #expect(names == ["Ada", "Alan", "Grace"])
        let escaped = try #require(Escaper.escaped.last)
        // The statement was reset when the cursor ended: the frozen row has
        // its last state, no row, hence NULL.
        #expect(throws: ValueConversionError.self) { try escaped.decode(String.self, forKey: .name) }
        try db.execute("UPDATE people SET name = 'changed'")
        #expect(try escaped.decodeIfPresent(String.self, forKey: .name) == nil)
        Escaper.escaped = []
    }

    @Test("Records with different coding keys decode the same rows, in one record and in turn")
    func severalKeyTypes() throws {
        let both = try db.fetchAll(NameAndAge.self, "SELECT name, age FROM people ORDER BY id")
        #expect(both.map(\.first.name) == ["Ada", "Alan", "Grace"])
        #expect(both.map(\.second.age) == [36, nil, 85])
        let cursor = try db.fetchCursor("SELECT name, age FROM people ORDER BY id")
        var decoded: [String] = []
        while let row = try cursor.next() {
            decoded.append(try NameOnly(row: row).name)
            decoded.append(String(describing: try AgeOnly(row: row).age))
        }
        #expect(decoded == ["Ada", "Optional(36)", "Alan", "nil", "Grace", "Optional(85)"])
    }

    @Test("Rows kept from a row cursor stay correct after records decoded them")
    func keptRowsAfterDecoding() throws {
        let rows = try db.fetchAll("SELECT name, age FROM people ORDER BY id")
        #expect(try rows.map { try NameOnly(row: $0).name } == ["Ada", "Alan", "Grace"])
        let cursor = try db.fetchCursor("SELECT name, age FROM people ORDER BY id")
        var kept: [Row] = []
        while let row = try cursor.next() {
            _ = try NameOnly(row: row)
            kept.append(row)
        }
        #expect(try kept.map { try NameOnly(row: $0).name } == ["Ada", "Alan", "Grace"])
        #expect(try kept.map { try $0["age"] as Int? } == [36, nil, 85])
    }

    @Test("A record cursor frees its statement for reuse when done or released")
    func cursorReleasesStatement() throws {
        let sql = "SELECT * FROM people ORDER BY id"
        do {
            let cursor = try db.fetchCursor(Person.self, sql: sql)
            _ = try cursor.next()
            // Meanwhile the same SQL runs on a fresh statement.
            #expect(try db.fetchAll(Person.self, sql: sql).count == 3)
        }
        #expect(try db.cachedStatement(sql: sql).isBusy == false)
        #expect(try db.fetchAll(Person.self, sql: sql).count == 3)
    }

    @Test("Fetching records on a closed connection throws")
    func closedConnection() throws {
        db.close()
        #expect(throws: SQLiteError.self) { try db.fetchAll(Person.self, "SELECT * FROM people") }
    }
}
