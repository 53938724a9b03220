import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

@Suite("Each record names its table's columns once")
struct TableColumnTests {
    /// The names of a table's columns, in order.
    private func names(_ db: Database, _ table: String) throws -> [String] {
        try db.columns(in: table).map(\.name)
    }

    private func checkTables(of database: AppDatabase) throws {
        let expected: [(table: String, columns: [String])] = [
            (Person.tableName, Person.Columns.allCases.map(\.rawValue)),
            (Contact.tableName, Contact.Columns.allCases.map(\.rawValue)),
            (Coffee.tableName, Coffee.Columns.allCases.map(\.rawValue)),
            (User.tableName, User.Columns.allCases.map(\.rawValue)),
            (SessionSchema.tableName, SessionSchema.Columns.allCases.map(\.rawValue)),
        ]
        for (table, columns) in expected {
            let found = try database.read { db in try names(db, table) }
            #expect(found == columns, "\(table)")
        }
    }

    @Test("A database the migrations made has exactly each record's columns, in order")
    func migratedTables() throws {
        try checkTables(of: try emptyDatabase())
    }

    @Test("The shipped sample's tables have exactly each record's columns, in order")
    func sampleTables() throws {
        let dir = try TemporaryDirectory()
        try checkTables(
            of: try AppDatabase(url: dir.fileURL("records.sqlite"), template: try AppDatabase.bundledTemplateURL()))
    }

    @Test("Each record's key is its Columns.id")
    func primaryKeys() {
        #expect(Person.primaryKey == Person.Columns.id.rawValue)
        #expect(Contact.primaryKey == Contact.Columns.id.rawValue)
        #expect(Coffee.primaryKey == Coffee.Columns.id.rawValue)
        #expect(User.primaryKey == User.Columns.id.rawValue)
    }

    @Test("A column in SQL is a quoted identifier, never a bound value")
    func columnInSQL() {
        let sql: SQL = "SELECT \(Person.Columns.firstName) FROM t WHERE \(Person.Columns.age) > \(3)"
        #expect(sql.text == #"SELECT "firstname" FROM t WHERE "age" > ?"#)
        #expect(sql.arguments == [3])
        let list: SQL = "\(columns: [Contact.Columns.id, .name])"
        #expect(list.text == #""ID", "NAME""#)
        #expect(list.arguments.isEmpty)
    }

    @Test("A record's encode(to:) writes its Columns' names")
    func encodeWritesColumns() throws {
        var columns = RecordColumns()
        Person(id: 1, firstName: "Ada", lastName: "Lovelace", age: 36).encode(to: &columns)
        #expect(columns.columnNames == Person.Columns.allCases.map(\.rawValue))
        #expect(columns[Person.Columns.age] == 36)
    }

    @Test("The app checks schemas through the library's introspection, not hand-written pragma_table_info")
    func noHandWrittenTableInfo() throws {
        let sources = repositoryRoot.appendingPathComponent("Sources/RecordsApp")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var found: [String] = []
        for case let url as URL in files where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            if text.contains("pragma_table_info") { found.append(url.lastPathComponent) }
        }
        #expect(found.isEmpty, "\(found)")
    }
}
