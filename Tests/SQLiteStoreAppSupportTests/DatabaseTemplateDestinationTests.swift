import Foundation
import TestSupport
import Testing

@testable import SQLiteStore
@testable import SQLiteStoreAppSupport

/// Installs the template `dir/template.sqlite` at `destination`.
private func install(_ dir: TemporaryDirectory, to destination: String, unnamed: Bool = true) throws
    -> TemplateInstallation
{
    try DatabaseTemplate.install(
        from: URL(fileURLWithPath: dir.path("template.sqlite")), to: URL(fileURLWithPath: destination),
        allowsUnnamedFiles: unnamed)
}

/// The `DatabaseFileError` that `body` throws.
private func fileError(_ body: () throws -> Void) -> DatabaseFileError? {
    do {
        try body()
    } catch let error as DatabaseFileError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
    Issue.record("no error was thrown")
    return nil
}

private func storedValue(_ path: String) throws -> String? {
    let db = try Database(path: path)
    defer { db.close() }
    return try db.fetchOne(String.self, "SELECT a FROM t")
}

@Suite("Installing a template: what is at the destination")
struct DatabaseTemplateDestinationTests {
    @Test(
        "A character device at the destination is refused and left as it is", .enabled(if: isRoot, "mknod needs root"))
    func characterDevice() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        let null = dir.path("null")
        try SpecialFiles.makeNullDevice(at: null)
        let error = fileError { _ = try install(dir, to: null) }
        #expect(error?.kind == .destinationUnusable)
        #expect(error?.message == "cannot install the database at \(null): it is a character device")
        #expect(SpecialFiles.type(null) == .characterDevice)
        #expect(SpecialFiles.deviceID(null) == SpecialFiles.deviceNumber(major: 1, minor: 3))
        #expect(!DatabaseTemplate.isInstalled(at: URL(fileURLWithPath: null)))
        #expect(try dir.entries() == ["null", "template.sqlite"])
    }

    @Test("A FIFO at the destination is refused and left as it is")
    func fifo() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        let fifo = dir.path("fifo")
        try SpecialFiles.makeFIFO(at: fifo)
        let error = fileError { _ = try install(dir, to: fifo) }
        #expect(error?.kind == .destinationUnusable)
        #expect(error?.message.hasSuffix(": it is a FIFO (named pipe)") == true)
        #expect(SpecialFiles.type(fifo) == .fifo)
        #expect(try dir.entries() == ["fifo", "template.sqlite"])
    }

    @Test("A socket at the destination is refused and left as it is")
    func socketDestination() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        let path = dir.path("sock")
        let descriptor = try SpecialFiles.makeSocket(at: path)
        defer { close(descriptor) }
        let error = fileError { _ = try install(dir, to: path) }
        #expect(error?.message.hasSuffix(": it is a socket") == true)
        #expect(SpecialFiles.type(path) == .socket)
    }

    @Test("A symbolic link to a FIFO is refused, and neither is replaced")
    func linkToFIFO() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        try SpecialFiles.makeFIFO(at: dir.path("fifo"))
        try FileManager.default.createSymbolicLink(atPath: dir.path("link"), withDestinationPath: "fifo")
        let error = fileError { _ = try install(dir, to: dir.path("link")) }
        #expect(error?.message.hasSuffix(": it is a symbolic link to a FIFO (named pipe)") == true)
        #expect(SpecialFiles.type(dir.path("link")) == .symbolicLink)
        #expect(SpecialFiles.type(dir.path("fifo")) == .fifo)
    }

    @Test("A symbolic link to an empty file: the file it points to receives the database, the link stays")
    func linkToEmptyFile() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        try FileManager.default.createDirectory(atPath: dir.path("real"), withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: dir.path("real/app.sqlite"), contents: Data()))
        try FileManager.default.createSymbolicLink(
            atPath: dir.path("app.sqlite"), withDestinationPath: "real/app.sqlite")
        #expect(try install(dir, to: dir.path("app.sqlite")) == .installed)
        #expect(SpecialFiles.type(dir.path("app.sqlite")) == .symbolicLink)
        #expect(try storedValue(dir.path("real/app.sqlite")) == "from template")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("real")) == ["app.sqlite"])
        #expect(try dir.entries() == ["app.sqlite", "real", "template.sqlite"])
    }

    @Test("A symbolic link to a database counts as installed")
    func linkToDatabase() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        try makeTemplate(at: dir.path("mine.sqlite"), value: "mine")
        try FileManager.default.createSymbolicLink(atPath: dir.path("app.sqlite"), withDestinationPath: "mine.sqlite")
        #expect(DatabaseTemplate.isInstalled(at: URL(fileURLWithPath: dir.path("app.sqlite"))))
        #expect(try install(dir, to: dir.path("app.sqlite")) == .alreadyInstalled)
        #expect(try storedValue(dir.path("mine.sqlite")) == "mine")
    }

    @Test("A dangling symbolic link: the database is created where it points, the link stays")
    func danglingLink() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        try FileManager.default.createSymbolicLink(atPath: dir.path("app.sqlite"), withDestinationPath: "target.sqlite")
        #expect(try install(dir, to: dir.path("app.sqlite")) == .installed)
        #expect(SpecialFiles.type(dir.path("app.sqlite")) == .symbolicLink)
        #expect(try storedValue(dir.path("target.sqlite")) == "from template")
        #expect(try dir.entries() == ["app.sqlite", "target.sqlite", "template.sqlite"])
    }

    @Test("A dangling symbolic link into a missing directory names the link's target and the directory")
    func danglingLinkIntoMissingDirectory() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        let target = dir.path("gone/target.sqlite")
        try FileManager.default.createSymbolicLink(atPath: dir.path("app.sqlite"), withDestinationPath: target)
        let error = fileError { _ = try install(dir, to: dir.path("app.sqlite")) }
        #expect(error?.kind == .destinationUnusable)
        #expect(
            error?.message
                == "cannot install the database at \(dir.path("app.sqlite")): it is a symbolic link to \(target), "
                + "which cannot be created: the directory \(dir.path("gone")) does not exist")
        #expect(try dir.entries() == ["app.sqlite", "template.sqlite"])
    }

    @Test("A symbolic link that leads back to itself is named as such")
    func linkLoop() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        try FileManager.default.createSymbolicLink(atPath: dir.path("a"), withDestinationPath: "b")
        try FileManager.default.createSymbolicLink(atPath: dir.path("b"), withDestinationPath: "a")
        let error = fileError { _ = try install(dir, to: dir.path("a")) }
        #expect(error?.message.contains("it is a symbolic link that leads back to itself") == true)
    }

    @Test("An empty 0600 file keeps its permissions when the template replaces it", arguments: [true, false])
    func emptyFileKeepsPermissions(unnamed: Bool) throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        let destination = dir.path("app.sqlite")
        #expect(
            FileManager.default.createFile(
                atPath: destination, contents: Data(), attributes: [.posixPermissions: 0o600]))
        #expect(try install(dir, to: destination, unnamed: unnamed) == .installed)
        #expect(SpecialFiles.permissions(destination) == 0o600)
        #expect(try storedValue(destination) == "from template")
        #expect(try dir.entries() == ["app.sqlite", "template.sqlite"])
    }

    @Test(
        "An empty file that may not be written is refused and left as it is",
        .disabled(if: isRoot, "root writes any file"), .tags(.unprivileged))
    func emptyReadOnlyFile() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        let destination = dir.path("app.sqlite")
        #expect(
            FileManager.default.createFile(
                atPath: destination, contents: Data(), attributes: [.posixPermissions: 0o400]))
        let error = fileError { _ = try install(dir, to: destination) }
        #expect(
            error?.message
                == "cannot install the database at \(destination): it is an empty file that may not be written (Permission denied)"
        )
        #expect(fileSize(destination) == 0)
        #expect(SpecialFiles.permissions(destination) == 0o400)
    }

    @Test("A path ending in / names a directory: refused, and no file of that name is created")
    func trailingSlash() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        let destination = URL(fileURLWithPath: dir.path("new") + "/")
        #expect(!DatabaseTemplate.isInstalled(at: destination))
        let error = fileError {
            try DatabaseTemplate.install(from: URL(fileURLWithPath: dir.path("template.sqlite")), to: destination)
        }
        #expect(
            error?.message
                == "cannot install the database at \(dir.path("new"))/: the path names a directory, not a file")
        #expect(try dir.entries() == ["template.sqlite"])
    }

    @Test("A name over 255 bytes is named as the problem, not the directory")
    func nameTooLong() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        let error = fileError { _ = try install(dir, to: dir.path(String(repeating: "n", count: 300))) }
        #expect(error?.kind == .destinationUnusable)
        #expect(
            error?.message.hasSuffix(
                ": the name \"nnnnnnnnnnnnnnnnnnnnnnnn…\" is 300 bytes long, over the limit of 255 bytes for one name")
                == true)
        #expect(error?.message.contains("directory") == false)
    }

    @Test("A name without room for SQLite's journal beside it is refused before anything is written")
    func nameWithoutRoomForJournal() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        let error = fileError { _ = try install(dir, to: dir.path(String(repeating: "j", count: 250))) }
        #expect(error?.message.contains("is 250 bytes long, over the limit of 247 bytes for a database") == true)
        #expect(try dir.entries() == ["template.sqlite"])
    }

    @Test("A path over PATH_MAX is named as the problem, not the directory")
    func pathTooLong() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        let path = dir.path(Array(repeating: "deep", count: 1100).joined(separator: "/"))
        let error = fileError { _ = try install(dir, to: path) }
        #expect(
            error?.message.hasSuffix(": the path is \(path.utf8.count) bytes long, over the limit of 4095 bytes")
                == true)
    }

    @Test(
        "A name at the longest a database can have installs; its temporary name is shortened", arguments: [true, false])
    func longestName(unnamed: Bool) throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        let name = String(repeating: "é", count: 123) + "x"  // 247 bytes
        #expect(try install(dir, to: dir.path(name), unnamed: unnamed) == .installed)
        #expect(try storedValue(dir.path(name)) == "from template")
        #expect(try dir.entries() == [name, "template.sqlite"].sorted())
    }

    @Test("Through a named temporary file (no O_TMPFILE), a fresh install leaves nothing else behind")
    func namedTemporaryFile() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        #expect(try install(dir, to: dir.path("app.sqlite"), unnamed: false) == .installed)
        #expect(try install(dir, to: dir.path("app.sqlite"), unnamed: false) == .alreadyInstalled)
        #expect(try dir.entries() == ["app.sqlite", "template.sqlite"])
    }

    @Test("A WAL-mode template is checked without leaving files beside it, and installs")
    func walTemplate() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("template.sqlite"))
        try db.execute("PRAGMA journal_mode = WAL; CREATE TABLE t (a TEXT); INSERT INTO t VALUES ('from template')")
        db.close()
        #expect(try dir.entries() == ["template.sqlite"])
        #expect(try install(dir, to: dir.path("app.sqlite")) == .installed)
        #expect(try dir.entries() == ["app.sqlite", "template.sqlite"])
        #expect(try storedValue(dir.path("app.sqlite")) == "from template")
    }
}

@Suite("Installing a template: stale temporary files")
struct DatabaseTemplateSweepTests {
    @Test("Stale temporary files of this destination are swept; recent, foreign and odd ones are left")
    func sweep() throws {
        let dir = try TemporaryDirectory()
        try makeTemplate(at: dir.path("template.sqlite"))
        let stale = stagingName(for: "app.sqlite")
        let legacy = ".app.sqlite.\(UUID().uuidString).installing"
        let legacyJournal = ".app.sqlite.\(UUID().uuidString).installing-journal"
        let recent = stagingName(for: "app.sqlite")
        let notUUID = ".app.sqlite.sqlitestore-not-a-uuid.tmp"
        let otherDestination = stagingName(for: "other.sqlite")
        let lowercase = ".app.sqlite.sqlitestore-\(UUID().uuidString.lowercased()).tmp"
        let directory = stagingName(for: "app.sqlite")
        for name in [stale, legacy, legacyJournal, recent, notUUID, otherDestination, lowercase] {
            try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: dir.path(name)))
        }
        try FileManager.default.createDirectory(atPath: dir.path(directory), withIntermediateDirectories: false)
        for name in [stale, legacy, legacyJournal, notUUID, otherDestination, lowercase, directory] {
            try age(dir.path(name), by: 2 * 3600)
        }
        var kept = [recent, notUUID, otherDestination, lowercase, directory]
        if isRoot {
            // Another user's file of the right name is not ours to remove.
            let foreign = stagingName(for: "app.sqlite")
            try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: dir.path(foreign)))
            #expect(chown(dir.path(foreign), 4242, 4242) == 0)
            try age(dir.path(foreign), by: 2 * 3600)
            kept.append(foreign)
        }
        #expect(try install(dir, to: dir.path("app.sqlite")) == .installed)
        #expect(try dir.entries() == (kept + ["app.sqlite", "template.sqlite"]).sorted())
    }
}
