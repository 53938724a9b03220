import Foundation
import TestSupport
import Testing

@testable import SQLiteStore
@testable import SQLiteStoreAppSupport

/// Writes a small valid database to `path` with one row in `t`.
func makeTemplate(at path: String, value: String = "from template") throws {
    let db = try Database(path: path)
    try db.execute("CREATE TABLE t (a TEXT); INSERT INTO t VALUES (?)", arguments: [value])
    db.close()
}

func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? -1
}

@Suite("Installing a template database")
struct DatabaseTemplateTests {
    @Test("A fresh install copies the template, and the copy opens with its data")
    func freshInstall() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        let destination = URL(fileURLWithPath: dir.path("app.sqlite"))
        #expect(!DatabaseTemplate.isInstalled(at: destination))
        let outcome = try DatabaseTemplate.install(
            from: URL(fileURLWithPath: dir.path("template.sqlite")), to: destination)
        #expect(outcome == .installed)
        #expect(DatabaseTemplate.isInstalled(at: destination))
        let db = try Database(path: destination.path)
        #expect(try db.fetchOne(String.self, "SELECT a FROM t") == "from template")
        // No temporary file is left behind.
        #expect(try dir.entries() == ["app.sqlite", "template.sqlite"])
    }

    @Test("An installed database is never overwritten")
    func alreadyInstalled() throws {
        let dir = try TemporaryDirectory()
        let template = URL(fileURLWithPath: dir.path("template.sqlite"))
        try makeTemplate(at: template.path)
        let destination = URL(fileURLWithPath: dir.path("app.sqlite"))
        try DatabaseTemplate.install(from: template, to: destination)
        let db = try Database(path: destination.path)
        try db.execute("INSERT INTO t VALUES ('user data')")
        db.close()
        #expect(try DatabaseTemplate.install(from: template, to: destination) == .alreadyInstalled)
        let reopened = try Database(path: destination.path)
        #expect(try reopened.fetchAll(String.self, "SELECT a FROM t ORDER BY rowid") == ["from template", "user data"])
    }

    @Test("A zero-byte file at the destination counts as not installed (the seeds' empty-file bug)")
    func zeroByteDestination() throws {
        let dir = try TemporaryDirectory()
        let template = URL(fileURLWithPath: dir.path("template.sqlite"))
        try makeTemplate(at: template.path)
        let destination = URL(fileURLWithPath: dir.path("app.sqlite"))
        // What sqlite3_open leaves when it runs before the copy.
        #expect(FileManager.default.createFile(atPath: destination.path, contents: Data()))
        #expect(fileSize(destination.path) == 0)
        #expect(!DatabaseTemplate.isInstalled(at: destination))
        #expect(try DatabaseTemplate.install(from: template, to: destination) == .installed)
        let db = try Database(path: destination.path)
        #expect(try db.fetchOne(String.self, "SELECT a FROM t") == "from template")
    }

    @Test("A missing template throws and leaves nothing at the destination")
    func missingTemplate() throws {
        let dir = try TemporaryDirectory()
        let destination = URL(fileURLWithPath: dir.path("app.sqlite"))
        #expect {
            try DatabaseTemplate.install(from: URL(fileURLWithPath: dir.path("nope.sqlite")), to: destination)
        } throws: { error in
            let error = error as? DatabaseFileError
            return error?.kind == .templateMissing && error?.message.contains("nope.sqlite") == true
        }
        #expect(try dir.entries().isEmpty)
    }

    @Test("A template that is not a database throws and leaves nothing behind")
    func notADatabaseTemplate() throws {
        let dir = try TemporaryDirectory()
        let template = URL(fileURLWithPath: dir.path("template.sqlite"))
        try Data(repeating: 0x41, count: 8192).write(to: template)
        let destination = URL(fileURLWithPath: dir.path("app.sqlite"))
        #expect {
            try DatabaseTemplate.install(from: template, to: destination)
        } throws: { error in
            let error = error as? DatabaseFileError
            return error?.kind == .templateNotADatabase && error?.message.contains("template.sqlite") == true
        }
        #expect(try dir.entries() == ["template.sqlite"])
    }

    @Test("An empty template throws and leaves nothing behind")
    func emptyTemplate() throws {
        let dir = try TemporaryDirectory()
        let template = URL(fileURLWithPath: dir.path("template.sqlite"))
        #expect(FileManager.default.createFile(atPath: template.path, contents: Data()))
        #expect {
            try DatabaseTemplate.install(from: template, to: URL(fileURLWithPath: dir.path("app.sqlite")))
        } throws: { error in
            (error as? DatabaseFileError)?.kind == .templateNotADatabase
        }
        #expect(try dir.entries() == ["template.sqlite"])
    }

    @Test("A truncated template (an interrupted copy of it) is refused; a later good install works")
    func truncatedTemplate() throws {
        let dir = try TemporaryDirectory()
        let good = dir.path("good.sqlite")
        let db = try Database(path: good)
        try db.execute("CREATE TABLE t (a TEXT)")
        try db.transaction { db in
            for index in 0..<2000 {
                try db.execute("INSERT INTO t VALUES (?)", arguments: [String(repeating: "x", count: 50) + "\(index)"])
            }
        }
        db.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: good))
        let truncated = URL(fileURLWithPath: dir.path("truncated.sqlite"))
        try bytes.prefix(bytes.count / 2).write(to: truncated)
        let destination = URL(fileURLWithPath: dir.path("app.sqlite"))
        #expect {
            try DatabaseTemplate.install(from: truncated, to: destination)
        } throws: { error in
            (error as? DatabaseFileError)?.kind == .templateNotADatabase
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(try DatabaseTemplate.install(from: URL(fileURLWithPath: good), to: destination) == .installed)
        #expect(try Database(path: destination.path).fetchOne(Int.self, "SELECT COUNT(*) FROM t") == 2000)
    }

    @Test("A temporary file left by a crashed install does not block the next one")
    func leftoverTemporaryFile() throws {
        let dir = try TemporaryDirectory()
        let template = URL(fileURLWithPath: dir.path("template.sqlite"))
        try makeTemplate(at: template.path)
        let leftover = dir.path(".app.sqlite.DEAD.installing")
        try Data(repeating: 0, count: 100).write(to: URL(fileURLWithPath: leftover))
        let destination = URL(fileURLWithPath: dir.path("app.sqlite"))
        #expect(try DatabaseTemplate.install(from: template, to: destination) == .installed)
        #expect(try Database(path: destination.path).fetchOne(String.self, "SELECT a FROM t") == "from template")
    }

    @Test("A directory at the destination is refused")
    func destinationIsDirectory() throws {
        let dir = try TemporaryDirectory()
        let template = URL(fileURLWithPath: dir.path("template.sqlite"))
        try makeTemplate(at: template.path)
        try FileManager.default.createDirectory(atPath: dir.path("app.sqlite"), withIntermediateDirectories: false)
        #expect {
            try DatabaseTemplate.install(from: template, to: URL(fileURLWithPath: dir.path("app.sqlite")))
        } throws: { error in
            let error = error as? DatabaseFileError
            return error?.kind == .destinationUnusable && error?.message.contains("is a directory") == true
        }
    }

    @Test("A missing destination directory is refused, naming it")
    func missingDirectory() throws {
        let dir = try TemporaryDirectory()
        let template = URL(fileURLWithPath: dir.path("template.sqlite"))
        try makeTemplate(at: template.path)
        #expect {
            try DatabaseTemplate.install(from: template, to: URL(fileURLWithPath: dir.path("missing/app.sqlite")))
        } throws: { error in
            let error = error as? DatabaseFileError
            return error?.kind == .destinationUnusable && error?.message.contains("does not exist") == true
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("missing")))
    }

    @Test(
        "A read-only directory is refused and nothing is written", .enabled(if: !isRoot, "root ignores permissions"),
        .tags(.unprivileged))
    func readOnlyDirectory() throws {
        let dir = try TemporaryDirectory()
        let template = URL(fileURLWithPath: dir.path("template.sqlite"))
        try makeTemplate(at: template.path)
        let target = dir.path("locked")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: target)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: target) }
        #expect {
            try DatabaseTemplate.install(from: template, to: URL(fileURLWithPath: target + "/app.sqlite"))
        } throws: { error in
            let error = error as? DatabaseFileError
            return error?.kind == .destinationUnusable && error?.message.contains("locked") == true
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: target).isEmpty)
    }

    @Test("Concurrent installs: exactly one copies, the others find it installed")
    func concurrentInstalls() async throws {
        let dir = try TemporaryDirectory()
        let template = URL(fileURLWithPath: dir.path("template.sqlite"))
        try makeTemplate(at: template.path)
        let destination = URL(fileURLWithPath: dir.path("app.sqlite"))
        let outcomes = try await withThrowingTaskGroup(of: TemplateInstallation.self) { group in
            for _ in 0..<8 {
                group.addTask { try DatabaseTemplate.install(from: template, to: destination) }
            }
            return try await group.reduce(into: [TemplateInstallation]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .installed }.count == 1)
        #expect(outcomes.filter { $0 == .alreadyInstalled }.count == 7)
        #expect(try dir.entries() == ["app.sqlite", "template.sqlite"])
    }
}
