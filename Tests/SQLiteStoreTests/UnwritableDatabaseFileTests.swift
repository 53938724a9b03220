import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

private let holderVariable = "SQLITESTORE_HOLDER_DATABASE"
private let isHolder = ProcessInfo.processInfo.environment[holderVariable] != nil

/// Runs in a child process started by ``UnwritableDatabaseFileTests``: keeps
/// a database open, having read it, until the parent ends it. Skipped
/// otherwise.
@Suite("Database holder probe")
struct DatabaseHolderProbe {
    @Test("Child process: a connection that reads a database and stays open", .enabled(if: isHolder, "run by a test"))
    func hold() throws {
        let path = try #require(ProcessInfo.processInfo.environment[holderVariable])
        let db = try Database(path: path)
        _ = try db.fetchAll(Int.self, "SELECT a FROM t")
        #expect(FileManager.default.createFile(atPath: path + ".ready", contents: nil))
        ChildProcess.probeWaitsForItsEnd()
        Issue.record("the parent did not end the holder")
    }
}

/// A WAL database at `path` with one row (`t.a` = 1), closed: no `-wal`
/// or `-shm` file is left.
func makeWALDatabase(_ path: String) throws {
    let db = try Database(path: path)
    try db.execute("PRAGMA journal_mode = wal")
    try db.execute("CREATE TABLE t (a); INSERT INTO t VALUES (1)")
    db.close()
}

private func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

private func setPermissions(_ path: String, _ permissions: Int) throws {
    try FileManager.default.setAttributes([.posixPermissions: permissions], ofItemAtPath: path)
}

private func readOnlyConfiguration() -> Configuration {
    var configuration = Configuration()
    configuration.isReadOnly = true
    return configuration
}

@Suite("Database files this process cannot write")
struct UnwritableDatabaseFileTests {
    @Test("A read-only connection removes the -wal and -shm files it made when it closes")
    func readOnlyConnectionRemovesWhatItMade() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("db.sqlite")
        try makeWALDatabase(path)
        try setPermissions(path, 0o444)
        let db = try Database(path: path, configuration: readOnlyConfiguration())
        #expect(try db.fetchAll(Int.self, "SELECT a FROM t") == [1])
        #expect(exists(path + "-wal") && exists(path + "-shm"), "SQLite made them for the read")
        db.close()
        #expect(try dir.entries() == ["db.sqlite"])
    }

    @Test("Several read-only connections: the files stay until the last one closes")
    func lastConnectionRemoves() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("db.sqlite")
        try makeWALDatabase(path)
        let first = try Database(path: path, configuration: readOnlyConfiguration())
        let second = try Database(path: path, configuration: readOnlyConfiguration())
        #expect(try first.fetchAll(Int.self, "SELECT a FROM t") == [1])
        #expect(try second.fetchAll(Int.self, "SELECT a FROM t") == [1])
        first.close()
        #expect(exists(path + "-wal") && exists(path + "-shm"))
        #expect(try second.fetchAll(Int.self, "SELECT a FROM t") == [1])
        second.close()
        #expect(try dir.entries() == ["db.sqlite"])
    }

    @Test("A -wal file that was there before is left; the -shm file the connection made is removed")
    func fileFoundIsLeft() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("db.sqlite")
        try makeWALDatabase(path)
        #expect(FileManager.default.createFile(atPath: path + "-wal", contents: nil))
        let db = try Database(path: path, configuration: readOnlyConfiguration())
        #expect(try db.fetchAll(Int.self, "SELECT a FROM t") == [1])
        db.close()
        #expect(try dir.entries() == ["db.sqlite", "db.sqlite-wal"])
    }

    @Test("The files stay while a writing connection of the same process uses them")
    func filesOfOpenWriterStay() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("db.sqlite")
        try makeWALDatabase(path)
        let writer = try Database(path: path)
        try writer.execute("INSERT INTO t VALUES (2)")
        // The writer keeps its connection, so its files, open meanwhile.
        let reader = try Database(path: path, configuration: readOnlyConfiguration())
        #expect(try reader.fetchAll(Int.self, "SELECT a FROM t") == [1, 2])
        reader.close()
        #expect(exists(path + "-wal") && exists(path + "-shm"))
        #expect(try writer.fetchAll(Int.self, "SELECT a FROM t") == [1, 2])
        writer.close()
    }

    @Test(
        "Files another process is using are left when the read-only connection closes",
        .enabled(if: isLinux && !isHolder, "starts this test binary again through /proc"))
    func filesInUseElsewhereAreLeft() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("db.sqlite")
        try makeWALDatabase(path)
        let reader = try Database(path: path, configuration: readOnlyConfiguration())
        #expect(try reader.fetchAll(Int.self, "SELECT a FROM t") == [1])
        let holder = try startHolder(path, log: dir.path("holder.log"))
        let ready = path + ".ready"
        // Polled on a thread of its own, not a cooperative one.
        await onOwnThread {
            let deadline = ContinuousClock.now.advanced(by: livenessTimeout)
            while ContinuousClock.now < deadline && holder.isRunning && !FileManager.default.fileExists(atPath: ready) {
                usleep(1000)
            }
        }
        let started = exists(ready)
        if started {
            reader.close()
            #expect(exists(path + "-wal") && exists(path + "-shm"))
        }
        holder.send(SIGKILL)
        await holder.exited()
        try #require(started, "the holder did not start")
    }

    @Test(
        "A database file that is not writable opens read-only: reads work, a write names the file, nothing is left",
        .disabled(if: isRoot, "root writes any file"), .tags(.unprivileged))
    func unwritableFileOpensReadOnly() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("db.sqlite")
        try makeWALDatabase(path)
        try setPermissions(path, 0o444)
        let db = try Database(path: path)
        #expect(db.isReadOnly)
        #expect(try db.fetchAll(Int.self, "SELECT a FROM t") == [1])
        let error = try #require(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (2)") }
        #expect(error.code == .readOnly)
        #expect(error.message.contains("the database file \(path) is not writable"), "\(error.message)")
        db.close()
        #expect(try dir.entries() == ["db.sqlite"])

        try setPermissions(path, 0o644)
        let writable = try Database(path: path)
        try writable.execute("INSERT INTO t VALUES (2)")
        #expect(try writable.fetchAll(Int.self, "SELECT a FROM t") == [1, 2])
    }

    @Test(
        "A pool opens a database file that is not writable, in either journal mode, and reads it",
        .disabled(if: isRoot, "root writes any file"), .tags(.unprivileged), arguments: ["wal", "delete"])
    func poolReadsUnwritableFile(journalMode: String) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("db.sqlite")
        let setup = try Database(path: path)
        try setup.execute("PRAGMA journal_mode = \(unsafeLiteral: journalMode)")
        try setup.execute("CREATE TABLE t (a); INSERT INTO t VALUES (1)")
        setup.close()
        try setPermissions(path, 0o444)
        let pool = try DatabasePool(path: path)
        #expect(try pool.read { try $0.fetchAll(Int.self, "SELECT a FROM t") } == [1])
        #expect(try pool.writeWithoutTransaction { try $0.fetchAll(Int.self, "SELECT a FROM t") } == [1])
        try pool.close()
        #expect(try dir.entries() == ["db.sqlite"])
    }

    @Test(
        "A write refused because the -wal or -shm file is not writable names that file",
        .disabled(if: isRoot, "root writes any file"), .tags(.unprivileged), arguments: ["-wal", "-shm"])
    func unwritableCompanionIsNamed(suffix: String) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("db.sqlite")
        try makeWALDatabase(path)
        // Not empty: SQLite gives an empty one the database's permissions
        // when it opens it (though that connection still cannot write it).
        // A -shm left by a read is 32 KiB.
        #expect(FileManager.default.createFile(atPath: path + suffix, contents: Data(count: 32768)))
        try setPermissions(path + suffix, 0o444)
        let db = try Database(path: path)
        let error = try #require(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (2)") }
        #expect(error.code == .readOnly)
        #expect(
            error.message.contains("the file \(path + suffix) beside the database is not writable"), "\(error.message)")
    }
}

/// Starts this test binary again, running only the holder probe on `path`.
private func startHolder(_ path: String, log: String) throws -> ChildProcess {
    try ChildProcess.startingTestProbe(filter: "DatabaseHolderProbe", environment: [holderVariable: path], log: log)
}
