import Foundation

@testable import RecordsApp
@testable import SQLiteStore

/// The repository's root, found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

let resourcesDirectory = repositoryRoot.appendingPathComponent("Sources/RecordsApp/Resources")

/// An empty app database (schema, no rows) in memory.
func emptyDatabase() throws -> AppDatabase {
    try AppDatabase.inMemory()
}

/// The rows of every table, as text, for comparing databases by content.
func contentDump(_ path: String) throws -> [String] {
    var configuration = Configuration()
    configuration.isReadOnly = true
    let db = try Database(path: path, configuration: configuration)
    var lines = try db.fetchAll(
        String.self, "SELECT type || ' ' || name || ': ' || ifnull(sql, '') FROM sqlite_master ORDER BY type, name")
    for table in try db.fetchAll("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name") {
        let name: String = try table["name"]
        let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        // A WITHOUT ROWID table (FTS5 keeps some) has no rowid; its rows come in key order.
        let withoutRowID = (try table["sql"] as String?)?.uppercased().hasSuffix("WITHOUT ROWID") ?? false
        let order = withoutRowID ? "" : " ORDER BY rowid"
        for row in try db.fetchAll("SELECT * FROM \(unsafeLiteral: quoted)\(unsafeLiteral: order)") {
            lines.append("\(name) \(row)")
        }
    }
    lines.append("user_version \(try db.fetchOne(Int.self, "PRAGMA user_version") ?? 0)")
    lines.append("page_size \(try db.fetchOne(Int.self, "PRAGMA page_size") ?? 0)")
    return lines
}
