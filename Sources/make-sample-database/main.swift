import Foundation
import RecordsApp

// Builds the shipped sample database from its SQL. Run through
// scripts/make-sample-database.sh, which also says how to check the result.
let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let sqlPath = arguments.first, let outputPath = arguments.last else {
    FileHandle.standardError.write(Data("usage: make-sample-database SQL_FILE OUTPUT.sqlite\n".utf8))
    exit(2)
}
do {
    let sql = try String(contentsOfFile: sqlPath, encoding: .utf8)
    try AppDatabase.buildSampleDatabase(sql: sql, at: URL(fileURLWithPath: outputPath))
} catch {
    FileHandle.standardError.write(Data("make-sample-database: error: \(error)\n".utf8))
    exit(1)
}
