import Foundation
import Testing

@testable import SQLiteStore

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// A record of text and bytes, written by insert, update and save.
private struct Note: Codable, FetchableRecord, PersistableRecord, Equatable {
    static let tableName = "note"
    static let primaryKey = "id"
    var id: Int64
    var title: String
    var body: String?
    var attachment: Data?
}

/// A record of `count` text columns, `c0` to `c<count - 1>`.
private struct WideRecord: PersistableRecord {
    static let tableName = "wide"
    var texts: [String]

    func encode(to columns: inout RecordColumns) {
        for (index, text) in texts.enumerated() { columns["c\(index)"] = text }
    }
}

private func makeNotes() throws -> Database {
    let db = try makeMemoryDatabase()
    try db.execute("CREATE TABLE note (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT, attachment BLOB)")
    return db
}

/// Text of every kind the binding treats differently: inline (up to 15
/// bytes) and allocated, empty, with NUL characters, beyond ASCII.
private let texts = [
    "", "a", "fifteen bytes!!", "sixteen bytes!!!", String(repeating: "long text ", count: 500), "nul\u{0}inside",
    "été 🌍 中文", "\u{0}",
]

/// The expanded SQL of every statement the connection has prepared.
private func expandedSQL(of db: Database) throws -> [String] {
    let handle = try #require(db.sqliteConnection)
    var result: [String] = []
    var statement = sqlite3_next_stmt(handle, nil)
    while let current = statement {
        if let expanded = sqlite3_expanded_sql(current) {
            result.append(String(cString: expanded))
            sqlite3_free(expanded)
        }
        statement = sqlite3_next_stmt(handle, current)
    }
    return result
}

@Suite("Records: text and blob binding")
struct RecordValueBindingTests {
    @Test("Text written by insert, update and save reads back byte for byte: empty, short, long, NUL, non-ASCII")
    func textRoundTrips() throws {
        let db = try makeNotes()
        for (index, text) in texts.enumerated() {
            var note = Note(id: Int64(index), title: text, body: text, attachment: nil)
            try note.insert(db)
            #expect(try Note.fetchOne(db, id: Int64(index)) == note)
            note.body = text + "!" + text
            try note.update(db)
            #expect(try Note.fetchOne(db, id: Int64(index)) == note)
            note.title = "saved " + text
            try note.save(db)
            #expect(try Note.fetchOne(db, id: Int64(index)) == note)
        }
        let bytes = try db.fetchAll(Int.self, "SELECT length(CAST(title AS BLOB)) FROM note ORDER BY id")
        #expect(bytes == texts.map { 6 + $0.utf8.count })
    }

    @Test("Blobs written by records read back byte for byte: empty, small, large")
    func blobRoundTrips() throws {
        let db = try makeNotes()
        let blobs = [
            Data(), Data([0]), Data([1, 2, 3]), Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
        ]
        for (index, blob) in blobs.enumerated() {
            var note = Note(id: Int64(index), title: "t", body: nil, attachment: blob)
            try note.insert(db)
            #expect(try Note.fetchOne(db, id: Int64(index))?.attachment == blob)
            note.attachment = blob + Data([9])
            try note.update(db)
            #expect(try Note.fetchOne(db, id: Int64(index))?.attachment == blob + Data([9]))
        }
    }

    @Test("After a record write, no statement of the connection still holds the record's text or bytes")
    func writeLeavesNoBoundBytes() throws {
        let db = try makeNotes()
        let text = "kept-only-by-the-record-" + String(repeating: "x", count: 40)
        var note = Note(id: 1, title: text, body: text, attachment: Data(text.utf8))
        try note.insert(db)
        try note.update(db)
        try note.save(db)
        let statements = try expandedSQL(of: db)
        #expect(statements.contains { $0.hasPrefix("INSERT INTO \"note\"") })
        #expect(
            !statements.contains {
                $0.contains("kept-only") || $0.contains(text.utf8.map { String(format: "%02x", $0) }.joined())
            })
    }

    @Test("Text over the connection's length limit fails the insert with SQLITE_TOOBIG; the next insert is intact")
    func tooLongTextFailsAndNextInsertWorks() throws {
        let db = try makeNotes()
        let handle = try #require(db.sqliteConnection)
        sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, 1000)
        var tooLong = Note(id: 1, title: "short", body: String(repeating: "y", count: 2000), attachment: nil)
        #expect {
            try tooLong.insert(db)
        } throws: { error in
            (error as? SQLiteError)?.code == .tooBig
        }
        #expect(try Note.fetchCount(db) == 0)
        var next = Note(id: 2, title: "next title", body: "next body", attachment: Data([4, 5]))
        try next.insert(db)
        #expect(try Note.fetchAll(db) == [next])
    }

    @Test("A failed insert (constraint) leaves the statement usable: the next insert writes its own text")
    func constraintFailureThenInsert() throws {
        let db = try makeNotes()
        var first = Note(id: 1, title: "first title", body: "first body", attachment: nil)
        try first.insert(db)
        var duplicate = Note(id: 1, title: "duplicate title", body: "duplicate body", attachment: nil)
        #expect(throws: SQLiteError.self) { try duplicate.insert(db) }
        var second = Note(id: 2, title: "second title", body: nil, attachment: Data([1]))
        try second.insert(db)
        #expect(try Note.fetchAll(db) == [first, second])
    }

    @Test("A record of more text columns than are bound without a copy writes all of them")
    func manyTextColumns() throws {
        let db = try makeMemoryDatabase()
        let count = 150
        let columns = (0..<count).map { "c\($0) TEXT" }.joined(separator: ", ")
        try db.execute(SQL(unsafeLiteral: "CREATE TABLE wide (\(columns))"))
        var record = WideRecord(texts: (0..<count).map { "value \($0) " + String(repeating: "z", count: $0) })
        try record.insert(db)
        let row = try #require(try db.fetchOne("SELECT * FROM wide"))
        for index in 0..<count {
            #expect(try row[index] as String == record.texts[index])
        }
    }
}
