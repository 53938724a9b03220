import Foundation
import TestSupport
import Testing

@testable import RecordsApp
@testable import SQLiteStore

@Suite("AppDatabase backup")
struct AppDatabaseBackupTests {
    @Test("A backup copies the database as committed when it started, while another connection writes")
    func backupCopiesTheSnapshotItStartedFrom() throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("records.sqlite")
        let database = try AppDatabase(url: url, start: .empty)
        defer { database.close() }
        let other = try Database(path: url.path)
        defer { other.close() }
        // About 1,000 pages: several steps of the default 256.
        try other.execute("CREATE TABLE filler (data BLOB NOT NULL)")
        try other.execute("INSERT INTO filler (data) VALUES (zeroblob(4000000))")
        var reports: [BackupProgress] = []

        try database.backup(to: directory.url.appendingPathComponent("copy.sqlite")) { progress in
            reports.append(progress)
            if reports.count == 1 { try other.execute("INSERT INTO filler (data) VALUES (x'01')") }
        }

        #expect(reports.count > 2)
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.copiedPageCount < $1.copiedPageCount })
        let copy = try Database(path: directory.url.appendingPathComponent("copy.sqlite").path)
        defer { copy.close() }
        #expect(try copy.fetchOne(Int.self, "SELECT COUNT(*) FROM filler") == 1)
        #expect(try other.fetchOne(Int.self, "SELECT COUNT(*) FROM filler") == 2)
    }
}
