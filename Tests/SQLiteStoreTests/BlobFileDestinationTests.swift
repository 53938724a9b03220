import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// A picture database whose row 1 holds `count` pattern bytes.
private func databaseWithPicture(_ dir: TemporaryDirectory, count: Int = 5000) throws -> (Database, Data) {
    let db = try makePictureDatabase(in: dir)
    let picture = PatternBytes.data(count: count, seed: 23)
    try db.writeBlob(from: .data(picture), table: "pictures", column: "picture", rowID: 1)
    return (db, picture)
}

/// Copies row 1's picture to `path`.
@discardableResult
private func readPicture(_ db: Database, to path: String, unnamed: Bool = true) throws -> Int {
    try db.readBlob(
        table: "pictures", column: "picture", rowID: 1,
        to: BlobDestination(kind: .file(path: path, allowsUnnamedFiles: unnamed)))
}

private func contents(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
}

@Suite("Streaming large values: what is at a file destination")
struct BlobFileDestinationTests {
    @Test(
        "A regular file is replaced whole and keeps its permissions, with or without O_TMPFILE",
        arguments: [true, false])
    func regularFile(unnamed: Bool) throws {
        let dir = try TemporaryDirectory()
        let (db, picture) = try databaseWithPicture(dir)
        let path = dir.path("out.bin")
        #expect(
            FileManager.default.createFile(
                atPath: path, contents: Data("old".utf8), attributes: [.posixPermissions: 0o600]))
        #expect(try readPicture(db, to: path, unnamed: unnamed) == picture.count)
        #expect(try contents(path) == picture)
        #expect(SpecialFiles.permissions(path) == 0o600)
        #expect(try dir.entries() == ["out.bin", "pictures.sqlite"])
    }

    @Test("A new file is created, with or without O_TMPFILE, and nothing else is left", arguments: [true, false])
    func newFile(unnamed: Bool) throws {
        let dir = try TemporaryDirectory()
        let (db, picture) = try databaseWithPicture(dir)
        try readPicture(db, to: dir.path("new.bin"), unnamed: unnamed)
        #expect(try contents(dir.path("new.bin")) == picture)
        #expect(try dir.entries() == ["new.bin", "pictures.sqlite"])
    }

    @Test("A replaced file keeps its owner and group", .enabled(if: isRoot, "only root gives files away"))
    func keepsOwner() throws {
        let dir = try TemporaryDirectory()
        let (db, picture) = try databaseWithPicture(dir)
        let path = dir.path("theirs.bin")
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        #expect(chown(path, 4242, 4343) == 0)
        try readPicture(db, to: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.ownerAccountID] as? NSNumber)?.intValue == 4242)
        #expect((attributes[.groupOwnerAccountID] as? NSNumber)?.intValue == 4343)
        #expect(try contents(path) == picture)
    }

    @Test(
        "A symbolic link to a file: the file is replaced in its own directory, the link stays",
        arguments: [true, false])
    func linkToFile(unnamed: Bool) throws {
        let dir = try TemporaryDirectory()
        let (db, picture) = try databaseWithPicture(dir)
        try FileManager.default.createDirectory(atPath: dir.path("real"), withIntermediateDirectories: false)
        let real = dir.path("real/picture.bin")
        #expect(
            FileManager.default.createFile(
                atPath: real, contents: Data("old".utf8), attributes: [.posixPermissions: 0o640]))
        // A chain: link -> link2 -> real/picture.bin, relative targets.
        try FileManager.default.createSymbolicLink(atPath: dir.path("link2"), withDestinationPath: "real/picture.bin")
        try FileManager.default.createSymbolicLink(atPath: dir.path("link"), withDestinationPath: "link2")
        try readPicture(db, to: dir.path("link"), unnamed: unnamed)
        #expect(SpecialFiles.type(dir.path("link")) == .symbolicLink)
        #expect(SpecialFiles.type(dir.path("link2")) == .symbolicLink)
        #expect(try contents(real) == picture)
        #expect(SpecialFiles.permissions(real) == 0o640)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("real")) == ["picture.bin"])
        #expect(try dir.entries() == ["link", "link2", "pictures.sqlite", "real"])
    }

    @Test("A dangling symbolic link: the file it points to is created, the link stays")
    func danglingLink() throws {
        let dir = try TemporaryDirectory()
        let (db, picture) = try databaseWithPicture(dir)
        try FileManager.default.createSymbolicLink(atPath: dir.path("link"), withDestinationPath: "target.bin")
        try readPicture(db, to: dir.path("link"))
        #expect(SpecialFiles.type(dir.path("link")) == .symbolicLink)
        #expect(try contents(dir.path("target.bin")) == picture)
    }

    @Test("A FIFO is written into, to the reader at its other end, and stays a FIFO")
    func fifo() throws {
        let dir = try TemporaryDirectory()
        let (db, picture) = try databaseWithPicture(dir, count: 300_000)
        let fifo = dir.path("fifo")
        try SpecialFiles.makeFIFO(at: fifo)
        // A second name for the FIFO: if the FIFO were replaced, opening it
        // for writing still ends the reader, which would otherwise wait for
        // a writer forever.
        #expect(link(fifo, dir.path("fifo-kept")) == 0)
        let reader = FIFOReader(fifo)
        let written = Result { try readPicture(db, to: fifo) }
        close(open(dir.path("fifo-kept"), O_WRONLY | O_NONBLOCK))
        #expect(try written.get() == picture.count)
        #expect(reader.received() == picture)
        #expect(SpecialFiles.type(fifo) == .fifo)
        #expect(try dir.entries() == ["fifo", "fifo-kept", "pictures.sqlite"])
    }

    @Test("A character device is written into and stays a device", .enabled(if: isRoot, "mknod needs root"))
    func characterDevice() throws {
        let dir = try TemporaryDirectory()
        let (db, picture) = try databaseWithPicture(dir)
        let null = dir.path("null")
        try SpecialFiles.makeNullDevice(at: null)
        #expect(try readPicture(db, to: null) == picture.count)
        #expect(SpecialFiles.type(null) == .characterDevice)
        #expect(SpecialFiles.deviceID(null) == SpecialFiles.deviceNumber(major: 1, minor: 3))
        #expect(try dir.entries() == ["null", "pictures.sqlite"])
    }

    @Test("A symbolic link to a character device writes into the device", .enabled(if: isRoot, "mknod needs root"))
    func linkToCharacterDevice() throws {
        let dir = try TemporaryDirectory()
        let (db, _) = try databaseWithPicture(dir)
        try SpecialFiles.makeNullDevice(at: dir.path("null"))
        try FileManager.default.createSymbolicLink(atPath: dir.path("link"), withDestinationPath: "null")
        try readPicture(db, to: dir.path("link"))
        #expect(SpecialFiles.type(dir.path("link")) == .symbolicLink)
        #expect(SpecialFiles.type(dir.path("null")) == .characterDevice)
    }

    @Test("A block device is refused and left as it is", .enabled(if: isRoot, "mknod needs root"))
    func blockDevice() throws {
        let dir = try TemporaryDirectory()
        let (db, _) = try databaseWithPicture(dir)
        let device = dir.path("disk")
        try SpecialFiles.makeBlockDevice(at: device)
        let error = blobError { try readPicture(db, to: device) }
        #expect(error?.reason == .unwritableDestination("it is a block device"))
        #expect(SpecialFiles.type(device) == .blockDevice)
        #expect(try dir.entries() == ["disk", "pictures.sqlite"])
    }

    @Test("A socket is refused and left as it is")
    func socketDestination() throws {
        let dir = try TemporaryDirectory()
        let (db, _) = try databaseWithPicture(dir)
        let path = dir.path("sock")
        let descriptor = try SpecialFiles.makeSocket(at: path)
        defer { close(descriptor) }
        #expect(blobError { try readPicture(db, to: path) }?.reason == .unwritableDestination("it is a socket"))
        #expect(SpecialFiles.type(path) == .socket)
    }

    @Test("A directory, or a symbolic link to one, is refused and left as it is")
    func directory() throws {
        let dir = try TemporaryDirectory()
        let (db, _) = try databaseWithPicture(dir)
        try FileManager.default.createDirectory(atPath: dir.path("folder"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: dir.path("link"), withDestinationPath: "folder")
        #expect(
            blobError { try readPicture(db, to: dir.path("folder")) }?.reason
                == .unwritableDestination("it is a directory"))
        #expect(
            blobError { try readPicture(db, to: dir.path("link")) }?.reason
                == .unwritableDestination("it is a symbolic link to a directory"))
        #expect(SpecialFiles.type(dir.path("link")) == .symbolicLink)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("folder")).isEmpty)
    }

    @Test("A file URL with a trailing slash names a directory and is refused")
    func urlWithTrailingSlash() throws {
        let dir = try TemporaryDirectory()
        let (db, _) = try databaseWithPicture(dir)
        let error = blobError {
            try db.readBlob(
                table: "pictures", column: "picture", rowID: 1, to: .file(URL(fileURLWithPath: dir.path("new") + "/")))
        }
        #expect(error?.reason == .unwritableDestination("the path names a directory, not a file"))
        #expect(try dir.entries() == ["pictures.sqlite"])
    }

    @Test("A 255-byte name is written: the temporary name is shortened to fit", arguments: [true, false])
    func longestName(unnamed: Bool) throws {
        let dir = try TemporaryDirectory()
        let (db, picture) = try databaseWithPicture(dir)
        let name = String(repeating: "ü", count: 127) + "x"
        #expect(name.utf8.count == 255)
        try Data("old".utf8).write(to: URL(fileURLWithPath: dir.path(name)))
        try readPicture(db, to: dir.path(name), unnamed: unnamed)
        #expect(try contents(dir.path(name)) == picture)
        #expect(try dir.entries() == [name, "pictures.sqlite"].sorted())
    }

    @Test("Names and paths over the system's limits are named as the problem")
    func tooLong() throws {
        let dir = try TemporaryDirectory()
        let (db, _) = try databaseWithPicture(dir)
        let longName = dir.path(String(repeating: "n", count: 256))
        #expect(
            blobError { try readPicture(db, to: longName) }?.reason
                == .unwritableDestination(
                    "the name \"nnnnnnnnnnnnnnnnnnnnnnnn…\" is 256 bytes long, over the limit of 255 bytes for one name"
                ))
        let longPath = dir.path(Array(repeating: "deep", count: 1100).joined(separator: "/"))
        #expect(
            blobError { try readPicture(db, to: longPath) }?.reason
                == .unwritableDestination("the path is \(longPath.utf8.count) bytes long, over the limit of 4095 bytes")
        )
        #expect(try dir.entries() == ["pictures.sqlite"])
    }

    @Test(
        "A name that begins with a combining mark is written in its own directory, with or without O_TMPFILE",
        arguments: [true, false])
    func nameBeginningWithCombiningMark(unnamed: Bool) throws {
        // "/" and U+0301 are one Character: taken apart by Character, the
        // path's directory was its parent's, and the name held a slash.
        let dir = try TemporaryDirectory()
        let (db, picture) = try databaseWithPicture(dir)
        try FileManager.default.createDirectory(atPath: dir.path("sub"), withIntermediateDirectories: false)
        let name = "\u{301}out.bin"
        let path = dir.path("sub") + "/" + name
        #expect(try readPicture(db, to: path, unnamed: unnamed) == picture.count)
        #expect(try contents(path) == picture)
        #expect(try dir.entries() == ["pictures.sqlite", "sub"])
        let inSub = try FileManager.default.contentsOfDirectory(atPath: dir.path("sub"))
        #expect(inSub.map { Array($0.utf8) } == [Array(name.utf8)])
    }

    @Test("A dangling link to a name that begins with a combining mark: that file is created beside the link")
    func danglingLinkToCombiningMarkName() throws {
        let dir = try TemporaryDirectory()
        let (db, picture) = try databaseWithPicture(dir)
        let target = "\u{301}target.bin"
        try FileManager.default.createSymbolicLink(atPath: dir.path("link"), withDestinationPath: target)
        try readPicture(db, to: dir.path("link"), unnamed: false)
        #expect(try contents(dir.path(target)) == picture)
        #expect(SpecialFiles.type(dir.path("link")) == .symbolicLink)
    }

    @Test("A stale temporary file of the destination is swept by the next copy; a recent one is left")
    func sweep() throws {
        let dir = try TemporaryDirectory()
        let (db, _) = try databaseWithPicture(dir)
        let stale = stagingName(for: "out.bin")
        let recent = stagingName(for: "out.bin")
        for name in [stale, recent] {
            try Data(repeating: 7, count: 100).write(to: URL(fileURLWithPath: dir.path(name)))
        }
        try age(dir.path(stale), by: 2 * 3600)
        try readPicture(db, to: dir.path("out.bin"))
        #expect(try dir.entries() == [recent, "out.bin", "pictures.sqlite"].sorted())
    }

    @Test("The sweep matches names byte for byte: a copy to é.bin leaves the stale files of e + U+0301 .bin")
    func sweepComparesBytes() throws {
        // The two names are canonically equivalent, so equal as Strings, but
        // they are two files to the system.
        let dir = try TemporaryDirectory()
        let (db, _) = try databaseWithPicture(dir)
        let decomposed = "e\u{301}.bin"
        let precomposed = "\u{E9}.bin"
        let others = stagingName(for: decomposed)
        try Data(repeating: 7, count: 100).write(to: URL(fileURLWithPath: dir.path(others)))
        try age(dir.path(others), by: 2 * 3600)
        try readPicture(db, to: dir.path(precomposed))
        let entries = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).map { Array($0.utf8) }
        #expect(entries.contains(Array(others.utf8)))
        #expect(entries.contains(Array(precomposed.utf8)))
        // Its own stale file is still swept.
        let own = stagingName(for: precomposed)
        try Data(repeating: 7, count: 100).write(to: URL(fileURLWithPath: dir.path(own)))
        try age(dir.path(own), by: 2 * 3600)
        try readPicture(db, to: dir.path(precomposed))
        let after = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).map { Array($0.utf8) }
        #expect(!after.contains(Array(own.utf8)))
        #expect(after.contains(Array(others.utf8)))
    }
}

@Suite("Staged files")
struct StagedFileTests {
    @Test("Discarded content leaves nothing, with or without O_TMPFILE", arguments: [true, false])
    func discard(unnamed: Bool) throws {
        let dir = try TemporaryDirectory()
        let staged = try StagedFile.create(for: dir.path("out.bin"), mode: 0o644, allowsUnnamed: unnamed)
        try Data(repeating: 1, count: 1000).withUnsafeBytes { try staged.write($0) }
        #expect(try dir.entries().count == (unnamed && staged.isUnnamed ? 0 : 1))
        staged.discard()
        staged.discard()
        #expect(try dir.entries().isEmpty)
    }

    @Test("On Linux the content has no name until it is published", .enabled(if: isLinux))
    func unnamedOnLinux() throws {
        let dir = try TemporaryDirectory()
        let staged = try StagedFile.create(for: dir.path("out.bin"), mode: 0o644)
        #expect(staged.isUnnamed)
        try Data("content".utf8).withUnsafeBytes { try staged.write($0) }
        #expect(try dir.entries().isEmpty)
        #expect(try staged.publishIfAbsent())
        #expect(try dir.entries() == ["out.bin"])
        #expect(try contents(dir.path("out.bin")) == Data("content".utf8))
    }

    @Test("Publishing only if absent leaves a file that appeared meanwhile alone", arguments: [true, false])
    func publishIfAbsentKeepsExisting(unnamed: Bool) throws {
        let dir = try TemporaryDirectory()
        let staged = try StagedFile.create(for: dir.path("out.bin"), mode: 0o644, allowsUnnamed: unnamed)
        try Data("mine".utf8).withUnsafeBytes { try staged.write($0) }
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: dir.path("out.bin")))
        #expect(try staged.publishIfAbsent() == false)
        staged.discard()
        #expect(try contents(dir.path("out.bin")) == Data("theirs".utf8))
        #expect(try dir.entries() == ["out.bin"])
    }

    @Test("Replacing refuses a FIFO that appeared during the copy, and leaves it")
    func replacingRefusesSpecialFile() throws {
        let dir = try TemporaryDirectory()
        let staged = try StagedFile.create(for: dir.path("out.bin"), mode: 0o644)
        try SpecialFiles.makeFIFO(at: dir.path("out.bin"))
        #expect(throws: SystemCallError.self) { try staged.publishReplacing(nil) }
        staged.discard()
        #expect(SpecialFiles.type(dir.path("out.bin")) == .fifo)
        #expect(try dir.entries() == ["out.bin"])
    }
}

#if os(Linux)
    let isLinux = true
#else
    let isLinux = false
#endif
