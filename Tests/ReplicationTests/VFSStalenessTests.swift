import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import Replication

/// When a connection through Litestream's VFS is replaced: the check
/// `records serve --read-replica` installs.
@Suite("Litestream VFS: stale connections")
struct VFSStalenessTests {
    /// A directory replica as Litestream lays it out, with level 0 only.
    private func replica() throws -> (TemporaryDirectory, ReplicaLocation) {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path("replica/ltx/0"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(
            atPath: dir.path("replica/ltx/0/0000000000000001-0000000000000001.ltx"), contents: Data())
        return (dir, .directory(dir.path("replica")))
    }

    private func addLevelOneFile(_ dir: TemporaryDirectory) throws {
        try FileManager.default.createDirectory(atPath: dir.path("replica/ltx/1"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(
            atPath: dir.path("replica/ltx/1/0000000000000001-000000000000001e.ltx"), contents: Data())
    }

    @Test("A connection opened before the replica's first level-1 file is replaced once that file appears")
    func openedBeforeLevelOne() throws {
        let (dir, location) = try replica()
        let check = LitestreamVFS.staleConnectionCheck(replica: location).makeCheck()
        let db = try Database(path: ":memory:")
        #expect(try check(db) == nil)
        try addLevelOneFile(dir)
        let reason = try #require(try check(db))
        #expect(reason.contains("level-1"))
        // The connection that replaces it opened after the file: it stays.
        #expect(try LitestreamVFS.staleConnectionCheck(replica: location).makeCheck()(db) == nil)
    }

    @Test("A connection is replaced at each new level-1 file, and kept while there is none")
    func replacedAtEachCompaction() throws {
        let (dir, location) = try replica()
        try addLevelOneFile(dir)
        let staleness = LitestreamVFS.staleConnectionCheck(replica: location)
        let check = staleness.makeCheck()
        let db = try Database(path: ":memory:")
        // More commits at level 0 only: the connection follows them.
        _ = FileManager.default.createFile(
            atPath: dir.path("replica/ltx/0/0000000000000002-0000000000000002.ltx"), contents: Data())
        #expect(try check(db) == nil)
        _ = FileManager.default.createFile(
            atPath: dir.path("replica/ltx/1/000000000000001f-000000000000003d.ltx"), contents: Data())
        #expect(try check(db) != nil)
        // Its replacement, opened after that compaction, stays until the next.
        #expect(try staleness.makeCheck()(db) == nil)
    }

    @Test(
        "A connection to a replica that is not listed is replaced 3 s after the next compaction of the clock",
        arguments: [(10.0, 33.0), (29.0, 33.0), (31.0, 33.0), (32.5, 33.0), (33.0, 63.0), (45.0, 63.0)])
    func compactionOfTheClock(opened: Double, settled: Double) {
        // Seconds past a minute: Litestream compacts level 1 at :00 and :30.
        let minute = 1_800_000_000.0 - 1_800_000_000.0.truncatingRemainder(dividingBy: 60)
        let due = LitestreamVFS.compactionSettled(after: Date(timeIntervalSince1970: minute + opened))
        #expect(due.timeIntervalSince1970 - minute == settled)
    }

    @Test("Without the VFS (no litestream_lag answer) a connection is never called stale")
    func plainConnection() throws {
        let (_, location) = try replica()
        let check = LitestreamVFS.staleConnectionCheck(replica: location).makeCheck()
        let db = try Database(path: ":memory:")
        #expect(try check(db) == nil)
        #expect(try check(db) == nil)
    }
}
