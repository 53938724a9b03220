import Foundation
import Testing

@testable import SQLiteStore

/// Reading a column by name takes the first column of that name, also
/// when the columns are read in order (the lookup's fast path).
@Suite("Column lookup by name")
struct ColumnLookupTests {
    @Test("A name read after the column before it finds the first column of that name, not a later duplicate")
    func duplicateNameAfterHint() throws {
        let db = try Database.inMemory()
        let row = try #require(try db.fetchOne("SELECT NULL AS id, 'x' AS name, -8 AS id"))
        let name: String = try row["name"]
        let id: Int64? = try row["id"]
        #expect(name == "x")
        #expect(id == nil)
    }

    @Test("A Decodable record whose first property comes second in the row reads the first column of a duplicated name")
    func decodableWithDuplicateNames() throws {
        struct Item: Decodable, FetchableRecord {
            var name: String
            var id: Int64?
        }
        let db = try Database.inMemory()
        let item = try #require(try db.fetchOne(Item.self, "SELECT NULL AS id, 'x' AS name, -8 AS id"))
        #expect(item.name == "x")
        #expect(item.id == nil)
    }

    @Test("Columns read in order still find each column, whatever their case")
    func inOrderReads() throws {
        let db = try Database.inMemory()
        let row = try #require(try db.fetchOne("SELECT 1 AS a, 2 AS B, 3 AS c"))
        #expect(try row["a"] as Int == 1)
        #expect(try row["b"] as Int == 2)
        #expect(try row["C"] as Int == 3)
    }

    @Test("Columns read in reverse order find each column")
    func reverseOrderReads() throws {
        let db = try Database.inMemory()
        let cursor = try db.fetchCursor("SELECT 1 AS a, 2 AS b, 3 AS c, 4 AS d UNION ALL SELECT 5, 6, 7, 8")
        var read: [[Int]] = []
        while let row = try cursor.next() {
            read.append([try row["d"], try row["c"], try row["B"], try row["a"]])
        }
        #expect(read == [[4, 3, 2, 1], [8, 7, 6, 5]])
    }

    @Test("A name read just after the column behind it finds the first column of that name, not a later duplicate")
    func duplicateNameBeforeHint() throws {
        let db = try Database.inMemory()
        let row = try #require(try db.fetchOne("SELECT 1 AS a, 2 AS a, 3 AS c"))
        // After c, the column before it is the second `a`, not the first.
        #expect(try row["c"] as Int == 3)
        #expect(try row["a"] as Int == 1)
    }

    @Test("A name not in the row is not found after a reverse-order read")
    func missingNameAfterReverseRead() throws {
        let db = try Database.inMemory()
        let row = try #require(try db.fetchOne("SELECT 1 AS a, 2 AS b"))
        #expect(try row["b"] as Int == 2)
        #expect(throws: ValueConversionError.self) { try row["z"] as Int }
        #expect(try row["a"] as Int == 1)
    }
}
