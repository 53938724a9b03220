import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// A source database to back up, in `dir`.
private func source(_ dir: TemporaryDirectory) throws -> Database {
    let db = try Database(path: dir.path("source.sqlite"))
    try db.execute("CREATE TABLE t (a); INSERT INTO t VALUES (1)")
    return db
}

/// Writes a small file at `name` in `dir`, `seconds` old.
private func leftFile(_ dir: TemporaryDirectory, _ name: String, agedBy seconds: TimeInterval = 2 * 3600) throws {
    try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: dir.path(name)))
    if seconds > 0 { try age(dir.path(name), by: seconds) }
}

@Suite("Sweeping the journals of killed backups")
struct StagingSweepTests {
    @Test(
        "A stale journal, WAL or shared-memory file of a staging file that is gone is swept by the next backup",
        arguments: ["-journal", "-wal", "-shm"])
    func staleCompanionIsSwept(suffix: String) throws {
        let dir = try TemporaryDirectory()
        let db = try source(dir)
        let left = stagingName(for: "copy.sqlite") + suffix
        try leftFile(dir, left)
        try db.backup(toPath: dir.path("copy.sqlite"))
        #expect(try dir.entries() == ["copy.sqlite", "source.sqlite"])
    }

    @Test("A stale journal whose staging file is still there is kept, as is that staging file while recent")
    func journalOfExistingStagingFileIsKept() throws {
        let dir = try TemporaryDirectory()
        let db = try source(dir)
        let staging = stagingName(for: "copy.sqlite")
        try leftFile(dir, staging, agedBy: 0)
        try leftFile(dir, staging + "-journal")
        try db.backup(toPath: dir.path("copy.sqlite"))
        #expect(try dir.entries() == [staging, staging + "-journal", "copy.sqlite", "source.sqlite"].sorted())
    }

    @Test("A stale staging file and its journal are swept together")
    func staleStagingFileAndJournalAreSwept() throws {
        let dir = try TemporaryDirectory()
        let db = try source(dir)
        let staging = stagingName(for: "copy.sqlite")
        try leftFile(dir, staging)
        try leftFile(dir, staging + "-journal")
        try db.backup(toPath: dir.path("copy.sqlite"))
        #expect(try dir.entries() == ["copy.sqlite", "source.sqlite"])
    }

    @Test("Recent journals, and stale files that only look like ours, are left")
    func othersAreLeft() throws {
        let dir = try TemporaryDirectory()
        let db = try source(dir)
        let recent = stagingName(for: "copy.sqlite") + "-journal"
        let lowercase = ".copy.sqlite.sqlitestore-\(UUID().uuidString.lowercased()).tmp-journal"
        let otherSuffix = stagingName(for: "copy.sqlite") + "-journal2"
        let otherDestination = stagingName(for: "other.sqlite") + "-journal"
        // Canonically equivalent to copy-é.sqlite, but other bytes.
        let decomposed = stagingName(for: "copy-e\u{301}.sqlite") + "-wal"
        try leftFile(dir, recent, agedBy: 0)
        for name in [lowercase, otherSuffix, otherDestination, decomposed] { try leftFile(dir, name) }
        try db.backup(toPath: dir.path("copy-\u{E9}.sqlite"))
        try db.backup(toPath: dir.path("copy.sqlite"))
        let entries = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).map { Array($0.utf8) }
        for name in [recent, lowercase, otherSuffix, otherDestination, decomposed] {
            #expect(entries.contains(Array(name.utf8)), "\(name) was removed")
        }
        #expect(entries.count == 8)
    }

    @Test("Another user's stale journal is left", .enabled(if: isRoot, "only root gives files away"))
    func anotherUsersJournalIsLeft() throws {
        let dir = try TemporaryDirectory()
        let db = try source(dir)
        let foreign = stagingName(for: "copy.sqlite") + "-journal"
        try leftFile(dir, foreign)
        #expect(chown(dir.path(foreign), 4242, 4242) == 0)
        try age(dir.path(foreign), by: 2 * 3600)
        try db.backup(toPath: dir.path("copy.sqlite"))
        #expect(try dir.entries() == [foreign, "copy.sqlite", "source.sqlite"].sorted())
    }
}
