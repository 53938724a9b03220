import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// A file database with `count` rows of text (several pages) and one blob.
private func makeSource(at path: String, rows count: Int = 200, journalMode: JournalMode? = nil) throws -> Database {
    var configuration = Configuration()
    configuration.journalMode = journalMode
    let db = try Database(path: path, configuration: configuration)
    try db.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL, picture BLOB)")
    try db.execute("CREATE INDEX item_name ON item (name)")
    try db.transaction { db in
        for index in 0..<count {
            try db.execute(
                "INSERT INTO item (name) VALUES (?)",
                arguments: [String(repeating: "name \(index) ", count: 20)])
        }
        let blob = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try db.execute("INSERT INTO item (name, picture) VALUES ('blob', ?)", arguments: [blob])
    }
    return db
}

/// Every row of `item`, as comparable values.
private func contents(_ db: Database) throws -> [[SQLiteValue]] {
    try db.fetchAll("SELECT id, name, picture FROM item ORDER BY id").map(\.values)
}

private func integrity(ofFile path: String) throws -> [String] {
    let db = try Database(path: path)
    defer { db.close() }
    return try db.fetchAll(String.self, "PRAGMA integrity_check")
}

private func fileExists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
}

/// The names in the directory, so that a test can see no temporary file
/// was left behind.
private func names(in directory: TemporaryDirectory) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
}

private func fastOptions(pagesPerStep: Int = 1) -> BackupOptions {
    BackupOptions(pagesPerStep: pagesPerStep, pauseBetweenSteps: .zero)
}

@Suite("Online backup and VACUUM INTO")
struct BackupTests {
    // MARK: - Copies

    @Test("A backup into a new file holds the same rows and blob and passes the integrity check")
    func backupToNewFile() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"))
        let destination = directory.path("copy.sqlite")

        let result = try source.backup(toPath: destination)

        #expect(try integrity(ofFile: destination) == ["ok"])
        let copy = try Database(path: destination)
        #expect(try contents(copy) == contents(source))
        #expect(result.pageCount == (try source.fetchOne(Int.self, "PRAGMA page_count")))
        #expect(result.byteCount == (try FileManager.default.attributesOfItem(atPath: destination)[.size] as? Int))
        #expect(try names(in: directory) == ["copy.sqlite", "source.sqlite"])
    }

    @Test("An in-memory database backs up to a file")
    func inMemoryToFile() throws {
        let directory = try TemporaryDirectory()
        let source = try Database.inMemory()
        try source.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL, picture BLOB)")
        try source.execute(
            "INSERT INTO item (name, picture) VALUES (?, ?)", arguments: ["Ada", Data([0, 1, 2, 0xFF])])
        let destination = directory.path("memory copy.sqlite")

        try source.backup(toPath: destination)

        #expect(try contents(Database(path: destination)) == contents(source))
        #expect(try integrity(ofFile: destination) == ["ok"])
    }

    @Test("A backup into another Database replaces its content")
    func backupToDatabase() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"), rows: 10)
        let copy = try Database.inMemory()
        try copy.execute("CREATE TABLE other (x)")

        try source.backup(to: copy, options: fastOptions(pagesPerStep: 2))

        #expect(try contents(copy) == contents(source))
        #expect(try copy.fetchAll(String.self, "SELECT name FROM sqlite_master WHERE name = 'other'").isEmpty)
    }

    // MARK: - Progress and cancellation

    @Test("Progress is reported after every step, grows steadily and ends complete")
    func progressIsMonotonic() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"))
        let pageCount = try source.fetchOne(Int.self, "PRAGMA page_count") ?? 0
        var reports: [BackupProgress] = []

        try source.backup(toPath: directory.path("copy.sqlite"), options: fastOptions(pagesPerStep: 3)) {
            reports.append($0)
        }

        #expect(reports.count == (pageCount + 2) / 3)
        #expect(reports.allSatisfy { $0.totalPageCount == pageCount })
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.copiedPageCount < $1.copiedPageCount })
        #expect(reports.dropLast().allSatisfy { !$0.isComplete })
        #expect(reports.last?.isComplete == true)
        #expect(reports.last?.fractionCompleted == 1)
    }

    @Test("Throwing from the progress callback cancels the backup and leaves no file")
    func cancellationLeavesNoFile() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"))
        let destination = directory.path("copy.sqlite")
        var calls = 0

        #expect(throws: CancellationError.self) {
            try source.backup(toPath: destination, options: fastOptions()) { _ in
                calls += 1
                if calls == 2 { throw CancellationError() }
            }
        }

        #expect(calls == 2)
        #expect(!fileExists(destination))
        #expect(try names(in: directory) == ["source.sqlite"])
    }

    @Test("Cancelling at the last report still publishes nothing")
    func cancellationAtTheEndLeavesNoFile() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"), rows: 5)
        let destination = directory.path("copy.sqlite")

        #expect(throws: CancellationError.self) {
            try source.backup(toPath: destination) { progress in
                if progress.isComplete { throw CancellationError() }
            }
        }

        #expect(try names(in: directory) == ["source.sqlite"])
    }

    @Test("Cancelling the task of an async queue backup stops it and leaves no file")
    func asyncCancellation() async throws {
        let directory = try TemporaryDirectory()
        try makeSource(at: directory.path("source.sqlite")).close()
        let queue = try DatabaseQueue(path: directory.path("source.sqlite"))
        let destination = directory.path("copy.sqlite")
        let firstStep = Gate("first step")
        let cancelled = Gate("cancelled")

        let task = Task {
            try await queue.backup(toPath: destination, options: fastOptions()) { _ in
                firstStep.open()
                try cancelled.waitBlocking()
            }
        }
        try await firstStep.wait()
        task.cancel()
        cancelled.open()

        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try names(in: directory) == ["source.sqlite"])
        await queue.close()
    }

    // MARK: - Connections closed during the copy

    /// A source of 50 blobs of 100 kB: enough pages for many small steps.
    private func makeBlobSource() throws -> Database {
        let source = try Database.inMemory()
        try source.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL, picture BLOB)")
        try source.transaction { db in
            for index in 0..<50 {
                try db.execute(
                    "INSERT INTO item (name, picture) VALUES (?, ?)",
                    arguments: ["blob \(index)", PatternBytes.data(count: 100_000, seed: UInt64(index + 1))])
            }
        }
        return source
    }

    @Test(
        "Closing the destination from the progress callback stops the backup with an error",
        arguments: ["memory", "file"])
    func closingTheDestinationDuringTheCopy(kind: String) throws {
        let directory = try TemporaryDirectory()
        let source = try makeBlobSource()
        let copy = kind == "memory" ? try Database.inMemory() : try Database(path: directory.path("copy.sqlite"))
        var calls = 0

        let error = #expect(throws: SQLiteError.self) {
            try source.backup(to: copy, options: fastOptions(pagesPerStep: 5)) { _ in
                calls += 1
                copy.close()
            }
        }

        #expect(calls == 1)
        #expect(error?.code == .misuse)
        #expect(
            error?.message
                == "the backup stopped: its destination database connection was closed during the copy")
        #expect(copy.isClosed)
        // The source is untouched and can back up again.
        let again = try Database.inMemory()
        try source.backup(to: again)
        #expect(try contents(again) == contents(source))
    }

    @Test("Closing the source from the progress callback stops the backup with an error")
    func closingTheSourceDuringTheCopy() throws {
        let source = try makeBlobSource()
        let copy = try Database.inMemory()
        var calls = 0

        let error = #expect(throws: SQLiteError.self) {
            try source.backup(to: copy, options: fastOptions(pagesPerStep: 5)) { _ in
                calls += 1
                source.close()
            }
        }

        #expect(calls == 1)
        #expect(error?.code == .misuse)
        #expect(error?.message == "the backup stopped: its source database connection was closed during the copy")
        #expect(source.isClosed)
        // The destination is still a working connection.
        try copy.execute("CREATE TABLE after (x)")
        try copy.execute("INSERT INTO after VALUES (1)")
        #expect(try copy.fetchOne(Int.self, "SELECT x FROM after") == 1)
    }

    @Test("Closing the destination at the last report keeps the finished copy's result")
    func closingTheDestinationAtTheEnd() throws {
        let directory = try TemporaryDirectory()
        let source = try makeBlobSource()
        let path = directory.path("copy.sqlite")
        let copy = try Database(path: path)

        let result = try source.backup(to: copy, options: fastOptions(pagesPerStep: 50)) { progress in
            if progress.isComplete { copy.close() }
        }

        #expect(result.pageCount == (try source.fetchOne(Int.self, "PRAGMA page_count")))
        #expect(try contents(Database(path: path)) == contents(source))
    }

    // MARK: - Writers during the copy

    @Test("A write by another connection between steps restarts the copy, which then holds the write")
    func writeDuringBackupRestarts() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"))
        let writer = try Database(path: directory.path("source.sqlite"))
        let destination = directory.path("copy.sqlite")
        var reports: [BackupProgress] = []

        try source.backup(toPath: destination, options: fastOptions(pagesPerStep: 2)) { progress in
            reports.append(progress)
            if reports.count == 3 {
                try writer.execute("INSERT INTO item (name) VALUES ('written during the backup')")
            }
        }

        let copy = try Database(path: destination)
        #expect(try contents(copy) == contents(source))
        #expect(try copy.fetchOne(Int.self, "SELECT COUNT(*) FROM item WHERE name = 'written during the backup'") == 1)
        #expect(reports[3].copiedPageCount < reports[2].copiedPageCount, "the copy started over")
        #expect(try integrity(ofFile: destination) == ["ok"])
    }

    @Test("A queue in rollback-journal mode lets another connection write between steps")
    func queueBackupDoesNotLockOutWriters() throws {
        let directory = try TemporaryDirectory()
        try makeSource(at: directory.path("source.sqlite")).close()
        let queue = try DatabaseQueue(path: directory.path("source.sqlite"))
        var configuration = Configuration()
        configuration.busyTimeout = .zero
        let writer = try Database(path: directory.path("source.sqlite"), configuration: configuration)
        let destination = directory.path("copy.sqlite")
        var written = false

        try queue.backup(toPath: destination, options: fastOptions(pagesPerStep: 2)) { _ in
            if !written {
                try writer.execute("INSERT INTO item (name) VALUES ('written during the backup')")
                written = true
            }
        }

        let copy = try Database(path: destination)
        #expect(try contents(copy) == contents(writer))
        #expect(try integrity(ofFile: destination) == ["ok"])
    }

    @Test("A pool copies the snapshot it started from while another connection writes")
    func poolBackupCopiesSnapshot() throws {
        let directory = try TemporaryDirectory()
        try makeSource(at: directory.path("source.sqlite")).close()
        let pool = try DatabasePool(path: directory.path("source.sqlite"))
        let before = try pool.read { try contents($0) }
        var configuration = Configuration()
        configuration.busyTimeout = .zero  // a blocked writer fails at once
        let writer = try Database(path: directory.path("source.sqlite"), configuration: configuration)
        let destination = directory.path("copy.sqlite")
        var reports: [BackupProgress] = []

        try pool.backup(toPath: destination, options: fastOptions(pagesPerStep: 2)) { progress in
            reports.append(progress)
            // A few writes, not one per step: a copy that restarted for
            // each would never end.
            if reports.count <= 3 {
                try writer.execute("INSERT INTO item (name) VALUES ('written during the backup')")
            }
        }

        #expect(reports.count > 3)
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.copiedPageCount < $1.copiedPageCount })
        #expect(try contents(Database(path: destination)) == before)
        #expect(try writer.fetchOne(Int.self, "SELECT COUNT(*) FROM item") == before.count + 3)
        #expect(try integrity(ofFile: destination) == ["ok"])
        try pool.close()
    }

    @Test("A source connection that is writing is refused instead of waiting for itself")
    func backupInsideWriteIsMisuse() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"), rows: 2)
        try source.transaction(.immediate) { db in
            try db.execute("INSERT INTO item (name) VALUES ('pending')")
            let error = #expect(throws: SQLiteError.self) { try db.backup(toPath: directory.path("copy.sqlite")) }
            #expect(error?.code == .misuse)
        }
        #expect(try names(in: directory) == ["source.sqlite"])
    }

    @Test("A source locked by another connection past the busy timeout fails with busy and leaves no file")
    func busySourceGivesUp() throws {
        let directory = try TemporaryDirectory()
        try makeSource(at: directory.path("source.sqlite"), rows: 2).close()
        var configuration = Configuration()
        configuration.busyTimeout = .zero
        let source = try Database(path: directory.path("source.sqlite"), configuration: configuration)
        let locker = try Database(path: directory.path("source.sqlite"))
        try locker.execute("BEGIN EXCLUSIVE")
        let destination = directory.path("copy.sqlite")
        let options = BackupOptions(pagesPerStep: 1, pauseBetweenSteps: .zero, busyTimeout: .milliseconds(20))

        let error = #expect(throws: SQLiteError.self) { try source.backup(toPath: destination, options: options) }

        #expect(error?.code == .busy)
        #expect(!fileExists(destination))
        try locker.execute("ROLLBACK")
    }

    @Test("Zero pages per step is refused")
    func zeroPagesPerStepIsMisuse() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"), rows: 2)
        let error = #expect(throws: SQLiteError.self) {
            try source.backup(toPath: directory.path("copy.sqlite"), options: BackupOptions(pagesPerStep: 0))
        }
        #expect(error?.code == .misuse)
        #expect(try names(in: directory) == ["source.sqlite"])
    }

    // MARK: - The destination file

    @Test("An existing destination is refused and left as it was")
    func existingDestinationIsRefused() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"), rows: 2)
        let destination = directory.path("copy.sqlite")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: destination))

        let error = #expect(throws: BackupError.self) { try source.backup(toPath: destination) }

        #expect(error?.kind == .destinationExists)
        #expect(error?.description == "cannot back up to \(destination): a file is already there")
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == Data("keep me".utf8))
        #expect(try names(in: directory) == ["copy.sqlite", "source.sqlite"])
    }

    @Test("With replace, an existing file is replaced by the copy")
    func replaceOverwrites() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"), rows: 2)
        let destination = directory.path("copy.sqlite")
        try Data("old".utf8).write(to: URL(fileURLWithPath: destination))

        try source.backup(toPath: destination, replace: true)

        #expect(try contents(Database(path: destination)) == contents(source))
        #expect(try names(in: directory) == ["copy.sqlite", "source.sqlite"])
    }

    @Test("Even with replace, a symbolic link at the destination is refused and kept")
    func replaceRefusesSymbolicLink() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"), rows: 2)
        let target = directory.path("target.txt")
        try Data("target".utf8).write(to: URL(fileURLWithPath: target))
        let destination = directory.path("link.sqlite")
        try FileManager.default.createSymbolicLink(atPath: destination, withDestinationPath: target)

        let error = #expect(throws: BackupError.self) { try source.backup(toPath: destination, replace: true) }

        #expect(error?.kind == .destinationUnusable)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: destination) == target)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == Data("target".utf8))
    }

    @Test("Backing up onto the database's own file is refused, even with replace")
    func ownFileIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("source.sqlite")
        let source = try makeSource(at: path, rows: 3)
        let before = try contents(source)

        let error = #expect(throws: BackupError.self) { try source.backup(toPath: path, replace: true) }

        #expect(error?.kind == .destinationUnusable)
        #expect(error?.message.contains("it is the database being copied") == true)
        #expect(try contents(source) == before)
        #expect(try names(in: directory) == ["source.sqlite"])
    }

    @Test("A missing destination directory is a clear error naming it")
    func missingDirectory() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"), rows: 2)
        let destination = directory.path("missing/copy.sqlite")

        let error = #expect(throws: BackupError.self) { try source.backup(toPath: destination) }

        #expect(error?.kind == .destinationUnusable)
        #expect(
            error?.description
                == "cannot back up to \(destination): the directory \(directory.path("missing")) does not exist")
    }

    @Test("A destination that is a directory is refused")
    func directoryDestination() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"), rows: 2)
        try FileManager.default.createDirectory(atPath: directory.path("folder"), withIntermediateDirectories: false)

        let error = #expect(throws: BackupError.self) {
            try source.backup(toPath: directory.path("folder"), replace: true)
        }

        #expect(error?.kind == .destinationUnusable)
        #expect(error?.message.hasSuffix("it is a directory") == true)
    }

    @Test(
        "A directory without write permission is a clear error", .disabled(if: isRoot, "root writes anywhere"),
        .tags(.unprivileged))
    func readOnlyDirectory() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"), rows: 2)
        let locked = directory.path("locked")
        try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: locked)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: locked) }
        let destination = locked + "/copy.sqlite"

        let error = #expect(throws: BackupError.self) { try source.backup(toPath: destination) }

        #expect(error?.kind == .destinationUnusable)
        #expect(
            error?.description == "cannot back up to \(destination): cannot write in the directory \(locked): "
                + "Permission denied")
    }

    @Test("A copy that fails the integrity check is discarded")
    func corruptCopyIsDiscarded() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("source.sqlite")
        let source = try makeSource(at: path)
        let rootPage = try source.fetchOne(Int.self, "SELECT rootpage FROM sqlite_master WHERE name = 'item_name'") ?? 0
        let pageSize = try source.fetchOne(Int.self, "PRAGMA page_size") ?? 0
        source.close()
        // Scramble the index's root page, past its header: the pages copy
        // as they are, and the check of the copy finds the damage.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64((rootPage - 1) * pageSize + 16))
        try handle.write(contentsOf: Data(repeating: 0x5A, count: pageSize - 32))
        try handle.close()
        let damaged = try Database(path: path)
        let destination = directory.path("copy.sqlite")

        let error = #expect(throws: BackupError.self) { try damaged.backup(toPath: destination) }

        #expect(error?.kind == .integrityCheckFailed)
        #expect(!fileExists(destination))
        #expect(try names(in: directory) == ["source.sqlite"])
    }

    // MARK: - VACUUM INTO

    @Test("VACUUM INTO binds the file name, so quotes and spaces need no escaping")
    func vacuumIntoQuotedName() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"))
        let destination = directory.path("it's a \"copy\"; DROP TABLE item; '.sqlite")

        try source.vacuum(into: destination)

        #expect(try contents(Database(path: destination)) == contents(source))
        #expect(try integrity(ofFile: destination) == ["ok"])
        #expect(try names(in: directory) == ["it's a \"copy\"; DROP TABLE item; '.sqlite", "source.sqlite"])
    }

    @Test("VACUUM INTO refuses an existing file unless asked to replace it")
    func vacuumIntoExistingFile() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"), rows: 3)
        let destination = directory.path("copy.sqlite")
        try Data("old".utf8).write(to: URL(fileURLWithPath: destination))

        let error = #expect(throws: BackupError.self) { try source.vacuum(into: destination) }
        #expect(error?.kind == .destinationExists)
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == Data("old".utf8))

        try source.vacuum(into: destination, replace: true)
        #expect(try contents(Database(path: destination)) == contents(source))
    }

    @Test("VACUUM INTO inside a transaction fails with SQLite's error and leaves no file")
    func vacuumIntoInsideTransaction() throws {
        let directory = try TemporaryDirectory()
        let source = try makeSource(at: directory.path("source.sqlite"), rows: 3)
        let destination = directory.path("copy.sqlite")
        try source.transaction { db in
            #expect(throws: SQLiteError.self) { try db.vacuum(into: destination) }
        }
        #expect(try names(in: directory) == ["source.sqlite"])
    }

    @Test("A pool vacuums into a file through its writer")
    func poolVacuumInto() throws {
        let directory = try TemporaryDirectory()
        try makeSource(at: directory.path("source.sqlite"), rows: 3).close()
        let pool = try DatabasePool(path: directory.path("source.sqlite"))
        let destination = directory.path("compact.sqlite")

        try pool.vacuum(into: destination)

        #expect(try contents(Database(path: destination)) == (try pool.read { try contents($0) }))
        try pool.close()
    }
}
