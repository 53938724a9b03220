import Foundation
import Testing

@testable import SQLiteStore

/// TEXT whose bytes are not valid UTF-8 is read back exactly, never
/// repaired with U+FFFD behind the caller's back, and stays TEXT when it is
/// written back.
@Suite("TEXT that is not valid UTF-8")
struct InvalidUTF8TextTests {
    /// A database holding one TEXT value made of `bytes`.
    private func database(holding bytes: [UInt8]) throws -> Database {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (a)")
        try db.execute("INSERT INTO t VALUES (CAST(? AS TEXT))", arguments: [Data(bytes)])
        #expect(try db.fetchOne(String.self, "SELECT typeof(a) FROM t") == "text")
        return db
    }

    private let invalid: [UInt8] = [0x41, 0xFF, 0x42, 0xC0]

    @Test("Reading such TEXT as Data returns the stored bytes")
    func dataReadsStoredBytes() throws {
        let db = try database(holding: invalid)
        #expect(try db.fetchOne(Data.self, "SELECT a FROM t") == Data(invalid))
    }

    @Test("Reading such TEXT as [UInt8] returns the stored bytes")
    func byteArrayReadsStoredBytes() throws {
        let db = try database(holding: invalid)
        #expect(try db.fetchOne([UInt8].self, "SELECT a FROM t") == invalid)
    }

    @Test("Such TEXT read as a SQLiteValue keeps its bytes, as TEXT")
    func sqliteValueKeepsBytes() throws {
        let db = try database(holding: invalid)
        let value = try db.fetchOne(SQLiteValue.self, "SELECT a FROM t")
        #expect(value == .textBytes(Data(invalid)))
        #expect(value?.storageClass == .text)
        #expect(value?.description == "CAST(X'41FF42C0' AS TEXT)")
    }

    @Test("A row read and kept (detached) still gives the stored bytes")
    func detachedRowKeepsBytes() throws {
        let db = try database(holding: invalid)
        let row = try #require(try db.fetchOne("SELECT a FROM t"))
        let bytes: Data = try row["a"]
        #expect(bytes == Data(invalid))
    }

    @Test("Reading such TEXT as String throws instead of repairing it")
    func stringReadThrows() throws {
        let db = try database(holding: invalid)
        let error = #expect(throws: ValueConversionError.self) { try db.fetchOne(String.self, "SELECT a FROM t") }
        #expect(error?.description.contains("UTF-8") == true)
    }

    @Test("A truncated sequence, which repair would replace by as many bytes, is still detected")
    func sameLengthRepairDetected() throws {
        // F0 9F 98 is a 4-byte sequence cut short: repair makes it U+FFFD,
        // three bytes, so the length alone would not show the change.
        let bytes: [UInt8] = [0xF0, 0x9F, 0x98, 0x41]
        let db = try database(holding: bytes)
        #expect(try db.fetchOne(SQLiteValue.self, "SELECT a FROM t") == .textBytes(Data(bytes)))
        #expect(throws: ValueConversionError.self) { try db.fetchOne(String.self, "SELECT a FROM t") }
    }

    @Test("Valid UTF-8 text, NUL and multi-byte characters included, is still text")
    func validTextStaysText() throws {
        let text = "a\u{0}é😀"
        let db = try database(holding: Array(text.utf8))
        #expect(try db.fetchOne(SQLiteValue.self, "SELECT a FROM t") == .text(text))
        #expect(try db.fetchOne(String.self, "SELECT a FROM t") == text)
        #expect(try db.fetchOne(Data.self, "SELECT a FROM t") == Data(text.utf8))
    }

    @Test("Such bytes written back as the value read are stored unchanged")
    func roundTripKeepsBytes() throws {
        let db = try database(holding: invalid)
        let value = try #require(try db.fetchOne(SQLiteValue.self, "SELECT a FROM t"))
        try db.execute("INSERT INTO t VALUES (?)", arguments: [value])
        #expect(try db.fetchAll(Data.self, "SELECT a FROM t") == [Data(invalid), Data(invalid)])
    }

    /// `typeof()` and the bytes of every row of `t`.
    private func stored(_ db: Database) throws -> [[SQLiteValue]] {
        try db.fetchAll("SELECT typeof(a), CAST(a AS BLOB) FROM t ORDER BY rowid").map(\.values)
    }

    @Test("Such a value written back stays TEXT, with the same bytes")
    func roundTripKeepsStorageClass() throws {
        let db = try database(holding: invalid)
        let value = try #require(try db.fetchOne(SQLiteValue.self, "SELECT a FROM t"))
        try db.execute("INSERT INTO t VALUES (?)", arguments: [value])
        let row: [SQLiteValue] = ["text", .blob(Data(invalid))]
        #expect(try stored(db) == [row, row])
    }

    @Test("A row read and written back column by column keeps each column's type and bytes")
    func rowRoundTripKeepsTypes() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (a, b, c, d)")
        try db.execute(
            "INSERT INTO t VALUES (CAST(? AS TEXT), ?, ?, CAST(x'' AS TEXT))",
            arguments: [Data(invalid), Data(invalid), "é"])
        let row = try #require(try db.fetchOne("SELECT a, b, c, d FROM t"))
        try db.execute("INSERT INTO t VALUES (?, ?, ?, ?)", arguments: StatementArguments(values: row.values))
        let types = try db.fetchAll(
            "SELECT typeof(a), typeof(b), typeof(c), typeof(d), hex(a), hex(b), hex(c), hex(d) FROM t ORDER BY rowid"
        ).map(\.values)
        #expect(types.count == 2)
        #expect(types.first == types.last)
        #expect(types.first?.prefix(4) == ["text", "blob", "text", "text"])
    }

    private struct Note: FetchableRecord, PersistableRecord {
        static let tableName = "t"
        var a: SQLiteValue
        init(row: Row) throws { a = try row["a"] }
        func encode(to columns: inout RecordColumns) { columns["a"] = a }
    }

    @Test("A record whose property is a SQLiteValue writes such TEXT back as TEXT")
    func recordRoundTripKeepsStorageClass() throws {
        let db = try database(holding: invalid)
        var note = try #require(try db.fetchOne(Note.self, "SELECT a FROM t"))
        #expect(note.a == .textBytes(Data(invalid)))
        try note.insert(db)
        let row: [SQLiteValue] = ["text", .blob(Data(invalid))]
        #expect(try stored(db) == [row, row])
    }

    @Test("Empty text given as bytes is empty TEXT, not NULL")
    func emptyTextBytes() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (a)")
        try db.execute("INSERT INTO t VALUES (?)", arguments: [SQLiteValue.textBytes(Data())])
        #expect(try stored(db) == [["text", .blob(Data())]])
    }
}
