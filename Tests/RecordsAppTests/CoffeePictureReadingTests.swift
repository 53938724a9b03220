import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

@Suite("Coffee pictures read in chunks, with versions", .tags(.concurrency))
struct CoffeePictureReadingTests {
    let dir: TemporaryDirectory
    let database: AppDatabase
    let store: CoffeeStore

    init() async throws {
        dir = try TemporaryDirectory()
        // A file, so that reads run on the pool's readers beside the writer.
        database = try AppDatabase(url: dir.fileURL("records.sqlite"), template: nil)
        store = CoffeeStore(database: database)
        try await store.add(CoffeeDraft(name: "Espresso", price: 2))
        try await store.add(CoffeeDraft(name: "Mocha", price: 3))
    }

    /// Every byte of an opened picture, read `count` at a time.
    func readAll(_ picture: PictureReader, count: Int) async throws -> Data {
        var data = Data()
        while data.count < picture.size {
            let chunk = try await picture.read(at: data.count, count: count)
            #expect(!chunk.isEmpty)
            if chunk.isEmpty { break }
            data.append(chunk)
        }
        return data
    }

    func tag(_ id: Int64) async throws -> String? { try await store.openPicture(id: id).entityTag }

    @Test("A picture read in chunks of any size comes back byte for byte", arguments: [1000, 65536, 262_144, 1 << 21])
    func chunkedReadIsExact(chunkSize: Int) async throws {
        let bytes = PictureBytes.make(PictureBytes.gif89, count: 1_000_003)
        try await store.setPicture(id: 1, from: .data(bytes))
        let picture = try await store.openPicture(id: 1)
        #expect(picture.size == bytes.count)
        #expect(picture.format == .gif)
        #expect(picture.mimeType == "image/gif")
        #expect(try await readAll(picture, count: chunkSize) == bytes)
    }

    @Test("Reads at or past the end, or with a negative offset or count, give nothing")
    func readsOutOfRange() async throws {
        try await store.setPicture(id: 1, from: .data(PictureBytes.make(count: 100)))
        let picture = try await store.openPicture(id: 1)
        #expect(try await picture.read(at: 90, count: 50) == PictureBytes.make(count: 100).suffix(10))
        for (offset, count) in [(100, 10), (Int.max, 10), (-1, 10), (0, -5), (0, 0)] {
            #expect(try await picture.read(at: offset, count: count).isEmpty)
        }
    }

    @Test("Opening a picture reads its header and version, not its bytes")
    func openReadsNoBytes() async throws {
        let size = 4 << 20
        try await store.setPicture(id: 1, from: .data(PictureBytes.make(count: size)))
        database.close()
        // A new connection starts with an empty page cache.
        let database = try AppDatabase(url: dir.fileURL("records.sqlite"), template: nil)
        let store = CoffeeStore(database: database)
        let before = try pagesRead(database)
        let picture = try await store.openPicture(id: 1)
        let pages = try pagesRead(database) - before
        #expect(picture.size == size)
        #expect(picture.entityTag != nil)
        #expect(pages < 10, "opening read \(pages) pages")
        // Reading the bytes does read the pages: the measure sees it.
        _ = try await readAll(picture, count: PictureReader.chunkSize)
        #expect(try pagesRead(database) - before > size / 4096 / 2)
    }

    @Test("A missing coffee, a coffee without a picture, a picture not stored as bytes: clear errors")
    func openErrors() async throws {
        await #expect(throws: RecordNotFoundError(kind: "coffee", id: 9)) { try await store.openPicture(id: 9) }
        await #expect(throws: PictureError(.noPicture(coffeeID: 1), subject: nil)) {
            try await store.openPicture(id: 1)
        }
        try database.write { db in try db.execute("UPDATE coffee SET picture = 'text' WHERE coffeeID = 2") }
        let error = await thrown(PictureError.self) { _ = try await store.openPicture(id: 2) }
        #expect(
            error?.description == "cannot read the picture: coffee 2 holds text where its picture's bytes should be")
    }

    @Test("An unknown stored type is served as plain bytes")
    func unknownType() async throws {
        try await store.setPicture(id: 1, from: .data(PictureBytes.make(count: 10)))
        try database.write { db in try db.execute("UPDATE coffee SET pictureType = 'image/tiff' WHERE coffeeID = 1") }
        let picture = try await store.openPicture(id: 1)
        #expect(picture.format == nil)
        #expect(picture.mimeType == "application/octet-stream")
    }

    @Test("The entity tag is a quoted strong tag, the same until the picture changes")
    func tagIsStable() async throws {
        try await store.setPicture(id: 1, from: .data(PictureBytes.make(count: 10)))
        let first = try #require(try await tag(1))
        #expect(first.hasPrefix("\"picture-") && first.hasSuffix("\""))
        #expect(try await tag(1) == first)
        // Editing the name or the price is not a change of picture.
        var coffee = try #require(try await store.coffee(id: 1))
        coffee.name = "Ristretto"
        coffee.price = 4
        try await store.save(&coffee)
        #expect(try await tag(1) == first)
    }

    @Test("Replacing, even with the same bytes, removing and storing again, changing the type: a new tag each time")
    func tagChangesWithPicture() async throws {
        let bytes = PictureBytes.make(count: 10)
        try await store.setPicture(id: 1, from: .data(bytes))
        var seen = [try #require(try await tag(1))]
        try await store.setPicture(id: 1, from: .data(bytes))
        seen.append(try #require(try await tag(1)))
        try await store.removePicture(id: 1)
        await #expect(throws: PictureError.self) { try await store.openPicture(id: 1) }
        try await store.setPicture(id: 1, from: .data(bytes))
        seen.append(try #require(try await tag(1)))
        try database.write { db in try db.execute("UPDATE coffee SET pictureType = 'image/webp' WHERE coffeeID = 1") }
        seen.append(try #require(try await tag(1)))
        #expect(Set(seen).count == seen.count, "\(seen)")
        // Another coffee's picture has a tag of its own.
        try await store.setPicture(id: 2, from: .data(bytes))
        let other = try #require(try await tag(2))
        #expect(!seen.contains(other))
    }

    @Test("A change made through another connection, or by another program's SQL, changes the tag")
    func tagChangesFromElsewhere() async throws {
        try await store.setPicture(id: 1, from: .data(PictureBytes.make(count: 10)))
        let first = try await tag(1)
        let other = try AppDatabase(url: dir.fileURL("records.sqlite"), template: nil)
        defer { other.close() }
        try await CoffeeStore(database: other).setPicture(id: 1, from: .data(PictureBytes.make(count: 10)))
        let second = try await tag(1)
        #expect(second != first)

        let program = try Database(path: dir.path("records.sqlite"))
        try program.execute("UPDATE coffee SET picture = x'FFD8FFE0' WHERE coffeeID = 1")
        program.close()
        let third = try await tag(1)
        #expect(third != second && third != first)
        #expect(try await store.openPicture(id: 1).size == 4)
    }

    @Test("A coffee deleted and another added with its ID never has the old picture's tag")
    func tagNotReusedAfterDelete() async throws {
        try await store.setPicture(id: 2, from: .data(PictureBytes.make(count: 10)))
        let old = try await tag(2)
        try await store.delete(id: 2)
        // SQLite gives the highest free rowid again.
        let added = try await store.add(CoffeeDraft(name: "Flat white", price: 3))
        #expect(added.id == 2)
        try await store.setPicture(id: 2, from: .data(PictureBytes.make(count: 10)))
        #expect(try await tag(2) != old)
    }

    @Test("A picture replaced, removed or deleted between two chunks is never mixed: the next read throws")
    func changeBetweenChunksThrows() async throws {
        let first = PictureBytes.make(PictureBytes.png, count: 3000)
        let second = PictureBytes.make(PictureBytes.jpeg, count: 3000)
        let changes: [@Sendable (CoffeeStore) async throws -> Void] = [
            { try await $0.setPicture(id: 1, from: .data(second)) },
            { try await $0.removePicture(id: 1) },
            { _ = try await $0.delete(id: 1) },
        ]
        for change in changes {
            if try await store.coffee(id: 1) == nil { try await store.add(CoffeeDraft(name: "Espresso", price: 2)) }
            try await store.setPicture(id: 1, from: .data(first))
            let picture = try await store.openPicture(id: 1)
            #expect(try await picture.read(at: 0, count: 1000) == first.prefix(1000))
            try await change(store)
            await #expect(throws: PictureError(.changed(coffeeID: 1), subject: nil)) {
                try await picture.read(at: 1000, count: 1000)
            }
        }
    }

    @Test("Pictures replaced over and over while being read: every complete read is one whole picture")
    func concurrentReplaceNeverMixes() async throws {
        let pictures = [
            PictureBytes.make(PictureBytes.png, count: 600_000), PictureBytes.make(PictureBytes.webp, count: 600_000),
        ]
        try await store.setPicture(id: 1, from: .data(pictures[0]))
        let store = self.store
        let done = Flag()
        let writer = Task {
            defer { done.set() }
            for round in 1...40 { try await store.setPicture(id: 1, from: .data(pictures[round % 2])) }
        }
        var complete = 0
        var interrupted = 0
        while !done.isSet || complete == 0 {
            do {
                let picture = try await store.openPicture(id: 1)
                let bytes = try await readAll(picture, count: 100_000)
                #expect(pictures.contains(bytes), "a read mixed two pictures")
                complete += 1
            } catch let error as PictureError where error.reason == .changed(coffeeID: 1) {
                interrupted += 1
            }
            if complete + interrupted > 2000 { break }
        }
        try await writer.value
        #expect(complete > 0)
    }

    @Test("Coffees stored before versions existed get one each from the migration")
    func migrationVersionsExistingCoffees() async throws {
        let url = dir.fileURL("older.sqlite")
        do {
            let db = try Database(path: url.path, configuration: AppDatabase.configuration(debugLog: nil))
            try AppDatabase.migrator.migrate(db, upTo: "coffee.searchIndex")
            try db.execute(
                """
                INSERT INTO coffee (coffeeID, coffeeName, priceMicros, pictureType, picture) VALUES
                    (3, 'Espresso', 2000000, 'image/png', x'89504E470D0A1A0A00'),
                    (7, 'Mocha', 3000000, 'image/jpeg', x'FFD8FFE0')
                """)
            db.close()
        }
        let database = try AppDatabase(url: url, template: nil)
        defer { database.close() }
        let store = CoffeeStore(database: database)
        let espresso = try await store.openPicture(id: 3)
        let mocha = try await store.openPicture(id: 7)
        #expect(espresso.entityTag != nil && mocha.entityTag != nil)
        #expect(espresso.entityTag != mocha.entityTag)
        #expect(try await readAll(mocha, count: 2) == Data([0xFF, 0xD8, 0xFF, 0xE0]))
        // New versions come after the migration's.
        try await store.setPicture(id: 3, from: .data(PictureBytes.make(count: 20)))
        let replaced = try await store.openPicture(id: 3)
        #expect(try #require(replaced.version) > max(try #require(espresso.version), try #require(mocha.version)))
    }
}
