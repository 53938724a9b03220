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
}
