import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

@Suite("Coffee pictures")
struct CoffeePictureTests {
    let database: AppDatabase
    let store: CoffeeStore
    let dir: TemporaryDirectory

    init() async throws {
        database = try emptyDatabase()
        store = CoffeeStore(database: database, pictureSizeLimit: 1000)
        dir = try TemporaryDirectory()
        try await store.add(CoffeeDraft(name: "Espresso", price: 2))
        try await store.add(CoffeeDraft(name: "Mocha", price: 3))
    }

    func write(_ data: Data, _ name: String) throws -> String {
        try data.write(to: dir.fileURL(name))
        return dir.path(name)
    }

    /// The stored picture column and type, read the ordinary way.
    func stored(_ id: Int64) throws -> (Data?, String?) {
        try database.read { db in
            let row = try db.fetchOne("SELECT picture, pictureType FROM coffee WHERE coffeeID = ?", arguments: [id])
            return (try row?[0] as Data?, try row?[1] as String?)
        }
    }

    @Test(
        "Each format is recognised by its signature, whatever the file's name",
        arguments: [
            (PictureBytes.png, PictureFormat.png), (PictureBytes.jpeg, .jpeg), (PictureBytes.gif87, .gif),
            (PictureBytes.gif89, .gif), (PictureBytes.webp, .webp),
        ])
    func formats(signature: [UInt8], format: PictureFormat) async throws {
        let bytes = PictureBytes.make(signature, count: 200)
        let path = try write(bytes, "picture.txt")
        let picture = try await store.setPicture(id: 1, from: .file(path: path))
        #expect(picture == CoffeePicture(size: 200, format: format))
        #expect(try stored(1) == (bytes, format.mimeType))
        #expect(try await store.coffee(id: 1)?.picture == picture)
    }

    @Test("A small picture goes to a file and back byte for byte")
    func smallRoundTrip() async throws {
        let bytes = PictureBytes.make(count: 777)
        let input = try write(bytes, "in.png")
        try await store.setPicture(id: 1, from: .file(path: input))
        let output = dir.path("out.png")
        let picture = try await store.writePicture(id: 1, to: .file(path: output))
        #expect(picture == CoffeePicture(size: 777, format: .png))
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == bytes)
    }

    @Test("Data and pipes are sources too; a pipe is checked the same way")
    func otherSources() async throws {
        let bytes = PictureBytes.make(PictureBytes.jpeg, count: 600)
        try await store.setPicture(id: 1, from: .data(bytes))
        #expect(try stored(1).0 == bytes)

        let pipe = Pipe()
        try pipe.fileHandleForWriting.write(contentsOf: PictureBytes.make(PictureBytes.gif89, count: 900))
        try pipe.fileHandleForWriting.close()
        let picture = try await store.setPicture(
            id: 2, from: .fileHandle(pipe.fileHandleForReading, name: "standard input"))
        #expect(picture == CoffeePicture(size: 900, format: .gif))
        #expect(try stored(2).0 == PictureBytes.make(PictureBytes.gif89, count: 900))
    }

    @Test("A pipe longer than the limit is refused and nothing is written")
    func pipeTooLarge() async throws {
        let pipe = Pipe()
        try pipe.fileHandleForWriting.write(contentsOf: PictureBytes.make(count: 1001))
        try pipe.fileHandleForWriting.close()
        let error = await thrown(PictureError.self) {
            try await store.setPicture(id: 1, from: .fileHandle(pipe.fileHandleForReading, name: "standard input"))
        }
        #expect(error == PictureError(.tooLarge(size: nil, limit: 1000), subject: "standard input"))
        #expect(try stored(1) == (nil, nil))
    }

    @Test("Setting a picture replaces the old one, type included")
    func replace() async throws {
        try await store.setPicture(id: 1, from: .data(PictureBytes.make(count: 500)))
        let smaller = PictureBytes.make(PictureBytes.webp, count: 40)
        try await store.setPicture(id: 1, from: .data(smaller))
        #expect(try stored(1) == (smaller, "image/webp"))
    }

    @Test(
        "Files that are not pictures are refused, and the old picture stays",
        arguments: [
            (
                Data("hello, this is text".utf8),
                "is not a PNG, JPEG, GIF or WebP picture (it starts with 68 65 6C 6C 6F 2C 20 74)"
            ),
            (Data(), "is empty, not a picture"),
            (
                Data(PictureBytes.png.prefix(7)),
                "is not a PNG, JPEG, GIF or WebP picture (it starts with 89 50 4E 47 0D 0A 1A)"
            ),
            (Data("RIFF\u{0}\u{0}\u{0}\u{0}WAVE".utf8), "is not a PNG, JPEG, GIF or WebP picture"),
            (Data("GIF88a".utf8), "is not a PNG, JPEG, GIF or WebP picture"),
        ])
    func wrongType(bytes: Data, message: String) async throws {
        let old = PictureBytes.make(count: 100)
        try await store.setPicture(id: 1, from: .data(old))
        let path = try write(bytes, "notes.png")
        let changes = try totalChanges(database)
        let error = try #require(
            await thrown(PictureError.self) { try await store.setPicture(id: 1, from: .file(path: path)) })
        #expect(error.description.hasPrefix(path + " "))
        #expect(error.description.contains(message), "\(error)")
        #expect(try stored(1) == (old, "image/png"))
        #expect(try totalChanges(database) == changes)
    }

    @Test("The size limit is checked before anything is written; the limit itself is allowed")
    func sizeLimit() async throws {
        let path = try write(PictureBytes.make(count: 1001), "big.png")
        let changes = try totalChanges(database)
        let traced = try await tracedStatements(database) {
            await thrown(PictureError.self) { try await store.setPicture(id: 1, from: .file(path: path)) }
        }
        #expect(traced.result == PictureError(.tooLarge(size: 1001, limit: 1000), subject: path))
        #expect(traced.sql.isEmpty)
        #expect(try totalChanges(database) == changes)
        #expect(
            traced.result?.description
                == "\(path) is 1,001 bytes, over the picture limit of 1,000 bytes; nothing was stored")
        let exact = try write(PictureBytes.make(count: 1000), "exact.png")
        #expect(try await store.setPicture(id: 1, from: .file(path: exact)).size == 1000)
    }

    @Test("The default limit is 64 MiB")
    func defaultLimit() throws {
        #expect(CoffeeStore(database: database).pictureSizeLimit == 64 * 1024 * 1024)
        #expect(CoffeePicture.sizeText(CoffeeRules.defaultPictureSizeLimit) == "64.0 MiB (67,108,864 bytes)")
    }

    @Test("A missing file, a directory: clear errors, nothing written")
    func unreadableSources() async throws {
        let missing = dir.path("nope.png")
        #expect(
            await thrown(PictureError.self) { try await store.setPicture(id: 1, from: .file(path: missing)) }?
                .description
                == "cannot read \(missing): No such file or directory")
        #expect(
            await thrown(PictureError.self) { try await store.setPicture(id: 1, from: .file(path: dir.url.path)) }?
                .description
                == "cannot read \(dir.url.path): it is a directory")
        #expect(try stored(1) == (nil, nil))
    }

    @Test("A picture for a missing coffee: not found, for set, get and remove")
    func missingCoffee() async throws {
        let path = try write(PictureBytes.make(count: 10), "a.png")
        let notFound = RecordNotFoundError(kind: "coffee", id: 42)
        await #expect(throws: notFound) { try await store.setPicture(id: 42, from: .file(path: path)) }
        await #expect(throws: notFound) { try await store.writePicture(id: 42, to: .file(path: dir.path("out.png"))) }
        await #expect(throws: notFound) { try await store.removePicture(id: 42) }
        #expect(!FileManager.default.fileExists(atPath: dir.path("out.png")))
    }

    @Test("Getting a picture a coffee does not have creates no file")
    func noPicture() async throws {
        let output = dir.path("out.png")
        let error = await thrown(PictureError.self) { try await store.writePicture(id: 1, to: .file(path: output)) }
        #expect(error == PictureError(.noPicture(coffeeID: 1), subject: nil))
        #expect(error?.description == "coffee 1 has no picture")
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(await thrown(PictureError.self) { try await store.removePicture(id: 1) } == error)
    }

    @Test("An unwritable output path is a clear error; an existing file is left as it was")
    func unwritableDestination() async throws {
        try await store.setPicture(id: 1, from: .data(PictureBytes.make(count: 100)))
        let inMissingDirectory = dir.path("no/such/dir/out.png")
        #expect(
            await thrown(PictureError.self) {
                try await store.writePicture(id: 1, to: .file(path: inMissingDirectory))
            }?
            .description
                == "cannot write \(inMissingDirectory): the directory \(dir.path("no/such/dir")) does not exist")
        let file = try write(Data("keep".utf8), "file")
        let underFile = file + "/out.png"
        #expect(
            await thrown(PictureError.self) { try await store.writePicture(id: 1, to: .file(path: underFile)) }?
                .description
                == "cannot write \(underFile): \(file) is not a directory")
        #expect(
            await thrown(PictureError.self) { try await store.writePicture(id: 1, to: .file(path: dir.url.path)) }?
                .description
                == "cannot write \(dir.url.path): it is a directory")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data("keep".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["file"])
    }

    @Test("An existing output file is replaced by the picture")
    func replaceOutput() async throws {
        let bytes = PictureBytes.make(count: 300)
        try await store.setPicture(id: 1, from: .data(bytes))
        let output = try write(Data(repeating: 1, count: 5000), "out.png")
        try await store.writePicture(id: 1, to: .file(path: output))
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == bytes)
    }

    @Test("Remove clears the picture and its type, and says what it was")
    func remove() async throws {
        try await store.setPicture(id: 1, from: .data(PictureBytes.make(PictureBytes.jpeg, count: 64)))
        #expect(try await store.removePicture(id: 1) == CoffeePicture(size: 64, format: .jpeg))
        #expect(try stored(1) == (nil, nil))
        #expect(try await store.coffee(id: 1)?.picture == nil)
    }

    @Test("A stored type the app does not know reads as an unknown format")
    func unknownStoredType() async throws {
        try await store.setPicture(id: 1, from: .data(PictureBytes.make(count: 64)))
        try database.write { db in try db.execute("UPDATE coffee SET pictureType = 'image/tiff' WHERE coffeeID = 1") }
        let picture = try #require(try await store.coffee(id: 1)?.picture)
        #expect(picture == CoffeePicture(size: 64, format: nil))
        #expect(picture.summary == "unknown format, 64 bytes")
    }

    @Test(
        "Sizes read as people read them",
        arguments: [
            (0, "0 bytes"), (1, "1 byte"), (1023, "1,023 bytes"), (1024, "1.0 KiB (1,024 bytes)"),
            (31_457_280, "30.0 MiB (31,457,280 bytes)"), (1_500_000_000, "1.4 GiB (1,500,000,000 bytes)"),
        ])
    func sizeText(bytes: Int, text: String) {
        #expect(CoffeePicture.sizeText(bytes) == text)
    }

    @Test("Formats from MIME types and file extensions")
    func formatNames() {
        for format in PictureFormat.allCases {
            #expect(PictureFormat(mimeType: format.mimeType) == format)
            #expect(PictureFormat(fileExtension: format.fileExtension.uppercased()) == format)
        }
        #expect(PictureFormat(fileExtension: "jpeg") == .jpeg)
        #expect(PictureFormat(fileExtension: "txt") == nil)
        #expect(PictureFormat(mimeType: "text/png") == nil)
        #expect(PictureFormat.detect([0xFF, 0xD8]) == nil)
    }
}
