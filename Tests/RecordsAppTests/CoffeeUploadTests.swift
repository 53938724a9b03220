import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

/// The files of `directory` this process holds open, from `/proc/self/fd`:
/// an unlinked temporary file shows there (as "… (deleted)") until it is
/// closed, though it is gone from the directory.
func openFiles(in directory: TemporaryDirectory) -> [String] {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.compactMap { descriptor in
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
        else { return nil }
        return target.hasPrefix(directory.url.path + "/") ? target : nil
    }
}

@Suite("Coffee pictures uploaded in chunks", .tags(.concurrency))
struct CoffeeUploadTests {
    let database: AppDatabase
    let store: CoffeeStore
    let spool: TemporaryDirectory

    init() async throws {
        database = try emptyDatabase()
        store = CoffeeStore(database: database, pictureSizeLimit: 1000)
        spool = try TemporaryDirectory()
        try await store.add(CoffeeDraft(name: "Espresso", price: 2))
        try await store.add(CoffeeDraft(name: "Mocha", price: 3))
    }

    func upload(_ name: String = "latte.png") -> PictureUpload {
        store.makePictureUpload(name: name, directory: spool.url)
    }

    /// The stored picture and type.
    func stored(_ id: Int64) throws -> (Data?, String?) {
        try database.read { db in
            let row = try db.fetchOne("SELECT picture, pictureType FROM coffee WHERE coffeeID = ?", arguments: [id])
            return (try row?[0] as Data?, try row?[1] as String?)
        }
    }

    /// Sends `bytes` in chunks of `size`.
    func send(_ bytes: Data, to upload: PictureUpload, chunksOf size: Int) throws {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let end = min(offset + size, bytes.endIndex)
            try upload.append(bytes[offset..<end])
            offset = end
        }
    }

    @Test(
        "An upload in chunks of any size is stored byte for byte, in its format",
        arguments: [1, 5, 11, 12, 13, 100, 999, 1000])
    func chunksStoreExactBytes(chunkSize: Int) async throws {
        let bytes = PictureBytes.make(PictureBytes.webp, count: 1000)
        let upload = upload()
        try send(bytes, to: upload, chunksOf: chunkSize)
        #expect(upload.byteCount == 1000)
        #expect(upload.format == .webp)
        let picture = try await store.setPicture(id: 1, from: .upload(upload))
        #expect(picture == CoffeePicture(size: 1000, format: .webp))
        #expect(try stored(1) == (bytes, "image/webp"))
    }

    @Test("While bytes arrive they are in one unlinked file, closed once stored")
    func spooledToUnlinkedFile() async throws {
        let upload = upload()
        try upload.append(PictureBytes.make(count: 600))
        // Nothing in the directory, but the file is open.
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.url.path).isEmpty)
        #expect(openFiles(in: spool).count == 1, "\(openFiles(in: spool))")
        try await store.setPicture(id: 1, from: .upload(upload))
        #expect(openFiles(in: spool).isEmpty)
        #expect(try stored(1).0 == PictureBytes.make(count: 600))
    }

    @Test("A wrong type is refused on its first 12 bytes, with no file made and nothing stored")
    func wrongTypeRefusedEarly() async throws {
        try await store.setPicture(id: 1, from: .data(PictureBytes.make(count: 50)))
        let before = try stored(1)
        let upload = upload("notes.txt")
        try upload.append(Data("<html><".utf8))
        let error = try #require(throws: PictureError.self) { try upload.append(Data("body>hello</body>".utf8)) }
        #expect(error.reason == .unrecognizedFormat(firstBytes: Array("<html><body>".utf8)))
        #expect(
            error.description
                == "notes.txt is not a PNG, JPEG, GIF or WebP picture (it starts with 3C 68 74 6D 6C 3E 3C 62); "
                + "nothing was stored")
        #expect(openFiles(in: spool).isEmpty)
        // Every later use answers the same.
        #expect(throws: error) { try upload.append(PictureBytes.make(count: 10)) }
        await #expect(throws: error) { try await store.setPicture(id: 1, from: .upload(upload)) }
        #expect(try stored(1) == before)
    }

    @Test("Bytes past the limit are refused at once, the file is closed, nothing is stored")
    func tooLargeRefusedAsBytesArrive() async throws {
        let upload = upload()
        try upload.append(PictureBytes.make(count: 600))
        let changes = try totalChanges(database)
        let error = try #require(throws: PictureError.self) { try upload.append(Data(count: 401)) }
        #expect(error.reason == .tooLarge(size: nil, limit: 1000))
        #expect(
            error.description
                == "latte.png holds more than the picture limit of 1,000 bytes; nothing was stored")
        #expect(openFiles(in: spool).isEmpty)
        await #expect(throws: error) { try await store.setPicture(id: 1, from: .upload(upload)) }
        #expect(try stored(1) == (nil, nil))
        #expect(try totalChanges(database) == changes)
    }

    @Test("An upload of exactly the limit is stored")
    func exactlyTheLimit() async throws {
        let upload = upload()
        try send(PictureBytes.make(count: 1000), to: upload, chunksOf: 300)
        #expect(try await store.setPicture(id: 2, from: .upload(upload)).size == 1000)
    }

    @Test("The store's own limit applies to an upload made with a higher one")
    func storeLimitApplies() async throws {
        let upload = PictureUpload(name: "big.png", limit: 5000, directory: spool.url)
        try upload.append(PictureBytes.make(count: 1500))
        let error = await thrown(PictureError.self) { try await store.setPicture(id: 1, from: .upload(upload)) }
        #expect(error == PictureError(.tooLarge(size: 1500, limit: 1000), subject: "big.png"))
        #expect(openFiles(in: spool).isEmpty)
        #expect(try stored(1) == (nil, nil))
    }

    @Test("A cancelled upload (client gone) closes its file and stores nothing")
    func cancelledUploadLeavesNothing() async throws {
        try await store.setPicture(id: 1, from: .data(PictureBytes.make(PictureBytes.gif89, count: 70)))
        let before = try stored(1)
        let upload = upload()
        try upload.append(PictureBytes.make(count: 700))
        #expect(openFiles(in: spool).count == 1)
        upload.cancel()
        #expect(openFiles(in: spool).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.url.path).isEmpty)
        #expect(throws: CancellationError.self) { try upload.append(Data([1, 2, 3])) }
        await #expect(throws: CancellationError.self) { try await store.setPicture(id: 1, from: .upload(upload)) }
        #expect(try stored(1) == before)
        upload.cancel()
    }

    @Test("An upload dropped without being stored or cancelled closes its file")
    func droppedUploadClosesFile() throws {
        do {
            let upload = upload()
            try upload.append(PictureBytes.make(count: 300))
            #expect(openFiles(in: spool).count == 1)
        }
        #expect(openFiles(in: spool).isEmpty)
    }

    @Test("An upload is stored once: used up, even when the coffee is missing")
    func usedUp() async throws {
        let upload = upload()
        try upload.append(PictureBytes.make(count: 100))
        await #expect(throws: RecordNotFoundError(kind: "coffee", id: 99)) {
            try await store.setPicture(id: 99, from: .upload(upload))
        }
        #expect(openFiles(in: spool).isEmpty)
        let again = await thrown(PictureError.self) { try await store.setPicture(id: 1, from: .upload(upload)) }
        #expect(again == PictureError(.unreadable("it was stored already"), subject: "latte.png"))
        #expect(try stored(1) == (nil, nil))
    }

    @Test("Uploads shorter than a signature are checked when stored: a tiny JPEG passes, junk and nothing do not")
    func shortUploads() async throws {
        let tiny = upload("tiny.jpg")
        try tiny.append(Data(PictureBytes.jpeg))
        #expect(tiny.format == nil)
        #expect(try await store.setPicture(id: 1, from: .upload(tiny)) == CoffeePicture(size: 4, format: .jpeg))
        #expect(try stored(1) == (Data(PictureBytes.jpeg), "image/jpeg"))

        let junk = upload("junk.png")
        try junk.append(Data([0x01, 0x02]))
        let notPicture = await thrown(PictureError.self) { try await store.setPicture(id: 2, from: .upload(junk)) }
        #expect(notPicture == PictureError(.unrecognizedFormat(firstBytes: [1, 2]), subject: "junk.png"))

        let empty = upload("empty.png")
        try empty.append(Data())
        let nothing = await thrown(PictureError.self) { try await store.setPicture(id: 2, from: .upload(empty)) }
        #expect(nothing?.description == "empty.png is empty, not a picture")
        #expect(try stored(2) == (nil, nil))
    }

    @Test(
        "An upload's refusals read as the command's for the same bytes on its standard input",
        arguments: [Data("GIF88a not quite".utf8), PictureBytes.make(count: 1001), Data()])
    func sameMessagesAsCommand(bytes: Data) async throws {
        let pipe = Pipe()
        try pipe.fileHandleForWriting.write(contentsOf: bytes)
        try pipe.fileHandleForWriting.close()
        let fromCommand = await thrown(PictureError.self) {
            try await store.setPicture(id: 1, from: .fileHandle(pipe.fileHandleForReading, name: "standard input"))
        }
        let upload = upload("standard input")
        let fromUpload = await thrown(PictureError.self) {
            try send(bytes, to: upload, chunksOf: 7)
            try await store.setPicture(id: 1, from: .upload(upload))
        }
        #expect(fromCommand != nil)
        #expect(fromUpload?.description == fromCommand?.description)
        #expect(try stored(1) == (nil, nil))
    }

    @Test("A temporary file that cannot be made is a clear error, and nothing is stored")
    func unusableSpoolDirectory() async throws {
        let upload = store.makePictureUpload(name: "latte.png", directory: spool.fileURL("missing"))
        let error = try #require(throws: PictureError.self) { try upload.append(PictureBytes.make(count: 20)) }
        #expect(error.description == "cannot write the temporary file for latte.png: No such file or directory")
        await #expect(throws: error) { try await store.setPicture(id: 1, from: .upload(upload)) }
        #expect(try stored(1) == (nil, nil))
    }
}
