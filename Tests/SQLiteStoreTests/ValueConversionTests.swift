import Foundation
import Testing

@testable import SQLiteStore

/// Writes a value through a bound parameter, reads it back through a query.
func roundTrip<T: SQLiteValueConvertible>(_ value: T, as type: T.Type = T.self, in db: Database) throws -> T {
    try db.execute("CREATE TABLE IF NOT EXISTS rt (v)")
    try db.execute("DELETE FROM rt")
    try db.execute("INSERT INTO rt (v) VALUES (?)", arguments: [value])
    let row = try #require(try db.fetchOne("SELECT v FROM rt"))
    return try row[0]
}

@Suite("Values convert both ways")
struct ValueConversionTests {
    let db: Database
    init() throws { db = try makeMemoryDatabase() }

    @Test("Integer types round-trip their extreme values")
    func integerExtremes() throws {
        #expect(try roundTrip(Int64.min, in: db) == Int64.min)
        #expect(try roundTrip(Int64.max, in: db) == Int64.max)
        #expect(try roundTrip(Int.min, in: db) == Int.min)
        #expect(try roundTrip(Int8.min, in: db) == Int8.min)
        #expect(try roundTrip(Int16.max, in: db) == Int16.max)
        #expect(try roundTrip(Int32.min, in: db) == Int32.min)
        #expect(try roundTrip(UInt8.max, in: db) == UInt8.max)
        #expect(try roundTrip(UInt16.max, in: db) == UInt16.max)
        #expect(try roundTrip(UInt32.max, in: db) == UInt32.max)
        #expect(try roundTrip(UInt64(Int64.max), in: db) == UInt64(Int64.max))
        #expect(try roundTrip(UInt(0), in: db) == 0)
    }

    @Test("Integers are stored with the INTEGER storage class")
    func integersAreTyped() throws {
        try db.execute("CREATE TABLE t (v)")
        try db.execute("INSERT INTO t VALUES (?)", arguments: [42])
        #expect(try db.fetchOne(String.self, "SELECT typeof(v) FROM t") == "integer")
        #expect(try db.fetchOne(SQLiteValue.self, "SELECT v FROM t") == .integer(42))
    }

    @Test("A UInt64 beyond Int64.max cannot be written")
    func uint64TooLargeToWrite() throws {
        try db.execute("CREATE TABLE t (v)")
        #expect(throws: ValueConversionError.self) {
            try db.execute("INSERT INTO t VALUES (?)", arguments: [UInt64.max])
        }
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") == 0)
        do {
            try db.execute("INSERT INTO t VALUES (?)", arguments: [UInt64(Int64.max) + 1])
            Issue.record("expected an error")
        } catch let error as ValueConversionError {
            #expect(error.description.contains("UInt64"))
        }
    }

    @Test("Reading a value too large for the integer type throws, never wraps")
    func integerOutOfRangeOnRead() throws {
        try db.execute("CREATE TABLE t (v)")
        try db.execute("INSERT INTO t VALUES (300), (-1), (?)", arguments: [Int64.max])
        let rows = try db.fetchAll("SELECT v FROM t")
        #expect(throws: ValueConversionError.self) { let _: Int8 = try rows[0][0] }
        #expect(throws: ValueConversionError.self) { let _: UInt8 = try rows[1][0] }
        #expect(throws: ValueConversionError.self) { let _: UInt64 = try rows[1][0] }
        #expect(throws: ValueConversionError.self) { let _: Int32 = try rows[2][0] }
        #expect(try rows[0][0] as Int16 == 300)
        #expect(try rows[2][0] as UInt64 == UInt64(Int64.max))
        do {
            let _: UInt8 = try rows[0]["v"]
        } catch let error as ValueConversionError {
            #expect(error.reason == .outOfRange)
            #expect(error.column == "v")
            #expect(error.type == "UInt8")
        }
    }

    @Test("A whole REAL reads as an integer; a fractional one throws")
    func realToInteger() throws {
        let row = try #require(try db.fetchOne("SELECT 3.0, 3.5, 1e300"))
        #expect(try row[0] as Int == 3)
        #expect(throws: ValueConversionError.self) { let _: Int = try row[1] }
        #expect(throws: ValueConversionError.self) { let _: Int = try row[2] }
    }

    @Test("Doubles round-trip, infinities included")
    func doubles() throws {
        for value in [
            0.0, -0.0, 0.1, -1.5e-300, Double.greatestFiniteMagnitude, Double.leastNonzeroMagnitude,
            Double.infinity, -Double.infinity,
        ] {
            #expect(try roundTrip(value, in: db) == value)
        }
        #expect(try roundTrip(Float(3.25), in: db) == 3.25)
        #expect(try roundTrip(Float.infinity, in: db) == Float.infinity)
    }

    @Test("NaN is refused instead of silently becoming NULL")
    func nanIsRefused() throws {
        try db.execute("CREATE TABLE t (v)")
        #expect(throws: ValueConversionError.self) {
            try db.execute("INSERT INTO t VALUES (?)", arguments: [Double.nan])
        }
        #expect(throws: ValueConversionError.self) {
            try db.execute("INSERT INTO t VALUES (?)", arguments: [Float.nan])
        }
        #expect(try db.fetchOne(Int.self, "SELECT COUNT(*) FROM t") == 0)
    }

    @Test("A Double too large for Float throws when read as Float")
    func floatOutOfRange() throws {
        let row = try #require(try db.fetchOne("SELECT 1e300"))
        #expect(throws: ValueConversionError.self) { let _: Float = try row[0] }
    }

    @Test("Bool is stored as 1 and 0")
    func bools() throws {
        #expect(try roundTrip(true, in: db) == true)
        #expect(try roundTrip(false, in: db) == false)
        #expect(try db.fetchOne(SQLiteValue.self, "SELECT ?", arguments: [true]) == .integer(1))
        #expect(throws: ValueConversionError.self) { try db.fetchOne(Bool.self, "SELECT 'yes'") }
    }

    @Test("Text round-trips: empty, non-ASCII, embedded NUL, quotes")
    func strings() throws {
        for value in [
            "", "héllo wörld", "日本語テキスト", "emoji 👩‍👩‍👧", "a\u{0}b\u{0}", "O'Brien \"quoted\"; DROP TABLE rt; --",
            "http://example.com:8080/path?q=1",
        ] {
            let back = try roundTrip(value, in: db)
            #expect(back == value)
            #expect(back.utf8.count == value.utf8.count)
        }
        #expect(try db.fetchOne(Int.self, "SELECT length(CAST(? AS BLOB))", arguments: ["a\u{0}b"]) == 3)
    }

    @Test("String does not silently read numbers")
    func stringFromNumberThrows() throws {
        let row = try #require(try db.fetchOne("SELECT 42 AS n"))
        do {
            let _: String = try row["n"]
            Issue.record("expected an error")
        } catch let error as ValueConversionError {
            #expect(error.reason == .typeMismatch(found: .integer))
            #expect(error.description == "cannot read column \"n\" (index 0) as String: found INTEGER")
        }
    }

    @Test("Blobs round-trip: empty, with NUL bytes, 10 MB")
    func blobs() throws {
        #expect(try roundTrip(Data(), in: db) == Data())
        #expect(try db.fetchOne(String.self, "SELECT typeof(v) FROM rt") == "blob")
        let withNul = Data([0, 1, 0, 255, 0])
        #expect(try roundTrip(withNul, in: db) == withNul)
        #expect(try roundTrip([UInt8]([0, 0, 7]), in: db) == [0, 0, 7])
        var big = Data(count: 10 * 1024 * 1024)
        for index in stride(from: 0, to: big.count, by: 4093) { big[index] = UInt8(truncatingIfNeeded: index) }
        let back = try roundTrip(big, in: db)
        #expect(back.count == big.count)
        #expect(back == big)
    }

    @Test("Dates are written as SQLite's UTC text with milliseconds")
    func dateWriting() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.123)
        #expect(try date.sqliteValue == .text("2023-11-14 22:13:20.123"))
        #expect(try Date(timeIntervalSince1970: 0).sqliteValue == .text("1970-01-01 00:00:00.000"))
        #expect(try Date(timeIntervalSince1970: -0.001).sqliteValue == .text("1969-12-31 23:59:59.999"))
        #expect(try Date(timeIntervalSince1970: 951_782_400).sqliteValue == .text("2000-02-29 00:00:00.000"))
        #expect(try roundTrip(date, in: db).timeIntervalSince1970 == 1_700_000_000.123)
        // SQLite's own date functions understand the stored text.
        #expect(
            try db.fetchOne(String.self, "SELECT date(?)", arguments: [date]) == "2023-11-14")
        #expect(throws: ValueConversionError.self) { try Date.distantFuture.addingTimeInterval(1e12).sqliteValue }
    }

    @Test("Dates are read from ISO text and Unix epoch numbers")
    func dateReading() throws {
        let expected = Date(timeIntervalSince1970: 1_700_000_000)
        let texts = [
            "2023-11-14T22:13:20Z", "2023-11-14 22:13:20", "2023-11-14T22:13:20.000Z", "2023-11-14T23:13:20+01:00",
            "2023-11-14T17:13:20-0500",
        ]
        for text in texts {
            #expect(try Date(sqliteValue: .text(text)) == expected, "\(text)")
        }
        #expect(try Date(sqliteValue: .text("2023-11-14")) == Date(timeIntervalSince1970: 1_699_920_000))
        #expect(try Date(sqliteValue: .integer(1_700_000_000)) == expected)
        #expect(try Date(sqliteValue: .real(1_700_000_000.5)) == expected.addingTimeInterval(0.5))
        for bad in ["", "yesterday", "2023-13-01", "2023-02-30", "2023-11-14T25:00", "2023-11-14T10:00:00junk"] {
            #expect(throws: ValueConversionError.self, "\(bad)") { try Date(sqliteValue: .text(bad)) }
        }
        #expect(throws: ValueConversionError.self) { try Date(sqliteValue: .blob(Data([1]))) }
    }

    @Test("UUIDs round-trip as text and are read from 16-byte blobs")
    func uuids() throws {
        let uuid = UUID()
        #expect(try roundTrip(uuid, in: db) == uuid)
        #expect(uuid.sqliteValue == .text(uuid.uuidString))
        #expect(try UUID(sqliteValue: .text(uuid.uuidString.lowercased())) == uuid)
        let bytes = withUnsafeBytes(of: uuid.uuid) { Data($0) }
        #expect(try UUID(sqliteValue: .blob(bytes)) == uuid)
        #expect(throws: ValueConversionError.self) { try UUID(sqliteValue: .text("not-a-uuid")) }
        #expect(throws: ValueConversionError.self) { try UUID(sqliteValue: .blob(Data([1, 2]))) }
    }

    @Test("Decimals are exact: stored as text, read back without rounding")
    func decimals() throws {
        for text in ["0.1", "19.99", "1234567.891", "-0.000001", "12345678901234567890.123456789", "0"] {
            let value = try #require(Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")))
            #expect(try roundTrip(value, in: db) == value)
            #expect(try value.sqliteValue == .text(text))
        }
        #expect(try Decimal(sqliteValue: .integer(42)) == Decimal(42))
        #expect(try Decimal(sqliteValue: .real(0.1)) == Decimal(string: "0.1"))
        #expect(try Decimal(sqliteValue: .text("1e-3")) == Decimal(string: "0.001"))
        for bad in ["12abc", "", "1.2.3", "--1", "e5", "1e"] {
            #expect(throws: ValueConversionError.self, "\(bad)") { try Decimal(sqliteValue: .text(bad)) }
        }
        #expect(throws: ValueConversionError.self) { try Decimal.nan.sqliteValue }
    }

    @Test("Optionals write nil as NULL and read NULL as nil")
    func optionals() throws {
        let none: Int? = nil
        #expect(try roundTrip(none, in: db) == nil)
        #expect(try db.fetchOne(String.self, "SELECT typeof(v) FROM rt") == "null")
        #expect(try roundTrip(Optional(5), in: db) == 5)
        #expect(try roundTrip(String?.none, in: db) == nil)
        #expect(try roundTrip(Date?.none, in: db) == nil)
        #expect(try roundTrip(Data?.none, in: db) == nil)
    }

    @Test("NULL into a non-optional type throws, naming the column and type")
    func nullIntoNonOptional() throws {
        let row = try #require(try db.fetchOne("SELECT NULL AS age"))
        do {
            let _: Int = try row["age"]
            Issue.record("expected an error")
        } catch let error as ValueConversionError {
            #expect(error.reason == .unexpectedNull)
            #expect(error.description == "cannot read column \"age\" (index 0) as Int: found NULL")
        }
        for read in [
            { _ = try row[0] as String }, { _ = try row[0] as Double }, { _ = try row[0] as Data },
            { _ = try row[0] as Date }, { _ = try row[0] as UUID }, { _ = try row[0] as Decimal },
            { _ = try row[0] as Bool }, { _ = try row[0] as UInt64 },
        ] as [() throws -> Void] {
            #expect(throws: ValueConversionError.self) { try read() }
        }
        #expect(try row[0] as Int? == nil)
        #expect(try row[0] as SQLiteValue == .null)
    }

    @Test("SQLiteValue describes itself as an SQL literal")
    func valueDescription() {
        #expect(SQLiteValue.null.description == "NULL")
        #expect(SQLiteValue.text("it's").description == "'it''s'")
        #expect(SQLiteValue.blob(Data([0, 255])).description == "X'00FF'")
        #expect(SQLiteValue.integer(-3).description == "-3")
    }
}
