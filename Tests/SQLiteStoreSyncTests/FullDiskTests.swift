import Foundation
import SQLiteStore
import Testing

@testable import SQLiteStoreSync

/// A full disk on either side: the step that cannot be kept is refused
/// with a clear error and nothing of it applied (data, positions,
/// acknowledgements, versions), and once there is room the next sync
/// completes with nothing lost and nothing twice.
///
/// The disk "fills" through `PRAGMA max_page_count` on the database's one
/// connection, as the library's own full-disk tests do: SQLite answers
/// `SQLITE_FULL` exactly as when the file system has no room.
struct FullDiskTests {
    /// Lets the database grow by at most `pages` pages from its size now.
    static func fill(_ queue: DatabaseQueue, leaving pages: Int = 0) throws {
        try queue.write { db in
            let count = try #require(try db.fetchOne(Int.self, "PRAGMA page_count"))
            _ = try db.fetchOne(Int.self, "PRAGMA max_page_count = \(unsafeLiteral: String(count + pages))")
        }
    }

    /// Room again.
    static func makeRoom(_ queue: DatabaseQueue) throws {
        try queue.write { db in _ = try db.fetchOne(Int.self, "PRAGMA max_page_count = 1000000000") }
    }

    /// Everything a replica holds that a sync could move: the people, and
    /// the engine's bookkeeping (positions, acknowledgements, versions,
    /// outbox, conflicts, remembered references, staged transfers).
    static func snapshot(_ queue: DatabaseQueue) throws -> [String] {
        try queue.read { db in
            var lines: [String] = []
            for table in [
                "people", "sqlitestore_sync_state", "sqlitestore_sync_replicas", "sqlitestore_sync_rows",
                "sqlitestore_sync_cells", "sqlitestore_sync_outbox", "sqlitestore_sync_conflicts",
                "sqlitestore_sync_large", "sqlitestore_sync_backfill",
            ] {
                lines += try db.fetchAll("SELECT * FROM \(identifier: table) ORDER BY 1, 2, 3").map { row in
                    table + ": " + row.values.map(\.description).joined(separator: "|")
                }
            }
            lines += try db.fetchAll("SELECT hex(hash), size, received FROM sqlitestore_sync_staging ORDER BY 1").map {
                "staging: " + $0.values.map(\.description).joined(separator: "|")
            }
            return lines
        }
    }

    /// Whether `error` is the engine's full-disk refusal, naming whose disk.
    static func isFull(_ error: any Error, _ whose: String) -> Bool {
        guard let error = error as? SyncError, error.kind == .storageFull else { return false }
        return error.message.hasPrefix(whose + "'s disk is full: ")
    }

    /// The picture of the one person on a replica.
    static func picture(_ queue: DatabaseQueue) throws -> Data? {
        try queue.read { db in try db.fetchOne(Data.self, "SELECT picture FROM people") }
    }

    /// How many transfers a replica has staged.
    static func staged(_ queue: DatabaseQueue) throws -> Int {
        try queue.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM sqlitestore_sync_staging") ?? 0 }
    }

    static func addPeople(_ device: Device, count: Int) throws {
        try device.queue.write { db in
            for index in 0..<count {
                try db.execute(
                    "INSERT INTO people (first, last, age) VALUES (\("First \(index)"), \("Last"), \(index % 90))")
            }
        }
    }

    /// Every person once on every replica, the same everywhere.
    static func expectConverged(_ queues: [DatabaseQueue], people: Int) throws {
        let first = try SyncWorld.dump(queues[0])
        #expect(first.count == people)
        #expect(Set(first.map { $0.prefix(32) }).count == people, "no person twice")
        for queue in queues.dropFirst() {
            #expect(try SyncWorld.dump(queue) == first)
            #expect(try queue.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM people") } == people)
        }
    }

    // MARK: The device's disk

    @Test func aDeviceWhoseDiskIsFullAppliesNothingOfAPullAndCatchesUpOnceItHasRoom() async throws {
        let world = try SyncWorld()
        let (a, b) = (try Device(), try Device())
        try Self.addPeople(a, count: 300)
        try b.execute("INSERT INTO people (first) VALUES (\("Local"))")
        try world.sync(a)
        try world.push(b)
        let before = try Self.snapshot(b.queue)
        try Self.fill(b.queue)

        let request = try b.client.makePull()
        let response = try world.server.pull(request)
        #expect {
            try b.client.apply(response, for: request)
        } throws: { Self.isFull($0, "this device") }
        #expect(try Self.snapshot(b.queue) == before)
        #expect(try b.client.makePull() == request, "the position did not move")

        // The whole sync says the same, and keeps nothing of the pull.
        let transport = InProcessTransport(server: world.server)
        await #expect {
            _ = try await b.client.sync(over: transport)
        } throws: { Self.isFull($0, "this device") }
        #expect(try Self.snapshot(b.queue) == before)

        try Self.makeRoom(b.queue)
        let report = try await b.client.sync(over: transport)
        #expect(report.received > 0)
        _ = try await a.client.sync(over: transport)
        try Self.expectConverged([world.serverQueue, a.queue, b.queue], people: 301)
    }

    @Test func aPictureWhosePiecesFindNoRoomOnTheDeviceIsNotStoredAndArrivesOnceThereIsRoom() async throws {
        let world = try SyncWorld()
        let (a, b) = (try Device(), try Device())
        let bytes = LargeValueTests.picture(size: 300_000, seed: 5)
        let reference = LargeValueReference(of: bytes)
        try a.execute("INSERT INTO people (first, picture) VALUES (\("Ada"), \(bytes))")
        _ = try await a.client.sync(over: InProcessTransport(server: world.server))
        let before = try Self.snapshot(b.queue)
        try Self.fill(b.queue)

        // The first piece finds no room: refused, nothing of it kept.
        let request = try b.client.makePull()
        let response = try world.server.pull(request)
        #expect {
            _ = try world.download(response, to: b, chunkSize: 64 << 10)
        } throws: { Self.isFull($0, "this device") }
        #expect(try Self.snapshot(b.queue) == before)
        #expect(
            try b.client.missingLargeValues(in: response) == [LargeValueProgress(reference: reference, received: 0)])

        // Room for the pieces but not for the row that would hold the
        // picture: every piece is kept, the row is not applied at all.
        try Self.makeRoom(b.queue)
        try Self.fill(b.queue, leaving: 100)
        #expect(try world.download(response, to: b, chunkSize: 64 << 10))
        #expect(try b.client.missingLargeValues(in: response).isEmpty)
        let staged = try Self.snapshot(b.queue)
        #expect {
            try b.client.apply(response, for: request)
        } throws: { Self.isFull($0, "this device") }
        #expect(try Self.snapshot(b.queue) == staged)
        #expect(try world.count(b.queue) == 0)

        // Room again: the sync applies it from the pieces already here.
        try Self.makeRoom(b.queue)
        let report = try await b.client.sync(over: InProcessTransport(server: world.server))
        #expect(report.largeBytesReceived == 0)
        #expect(try Self.picture(b.queue) == bytes)
        try Self.expectConverged([world.serverQueue, a.queue, b.queue], people: 1)
        #expect(try Self.staged(b.queue) == 0)
    }

    // MARK: The server's disk

    @Test func aServerWhoseDiskIsFullAcceptsNothingOfAPushAndTheDeviceResendsItOnceThereIsRoom() async throws {
        let world = try SyncWorld()
        let (a, b) = (try Device(), try Device())
        try Self.addPeople(a, count: 300)
        let transport = InProcessTransport(server: world.server)
        let serverBefore = try Self.snapshot(world.serverQueue)
        let deviceBefore = try Self.snapshot(a.queue)
        try Self.fill(world.serverQueue)

        await #expect {
            _ = try await a.client.sync(over: transport)
        } throws: { Self.isFull($0, "the server") }
        #expect(try Self.snapshot(world.serverQueue) == serverBefore)
        #expect(try Self.snapshot(a.queue) == deviceBefore, "the outbox and acknowledgement did not move")

        try Self.makeRoom(world.serverQueue)
        let report = try await a.client.sync(over: transport)
        #expect(report.sent == 300 * 4)
        _ = try await b.client.sync(over: transport)
        try Self.expectConverged([world.serverQueue, a.queue, b.queue], people: 300)
        #expect(try a.client.makePush() == nil)
    }

    @Test func aPictureThatFindsNoRoomOnTheServerIsNotKeptAndItsPushWaitsUntilThereIsRoom() async throws {
        let world = try SyncWorld()
        let (a, b) = (try Device(), try Device())
        let bytes = LargeValueTests.picture(size: 300_000, seed: 9)
        let reference = LargeValueReference(of: bytes)
        try a.execute("INSERT INTO people (first, picture) VALUES (\("Grace"), \(bytes))")
        let transport = InProcessTransport(server: world.server)
        let serverBefore = try Self.snapshot(world.serverQueue)
        let deviceBefore = try Self.snapshot(a.queue)
        try Self.fill(world.serverQueue)

        // No room for the first piece.
        await #expect {
            _ = try await a.client.sync(over: transport, chunkSize: 64 << 10)
        } throws: { Self.isFull($0, "the server") }
        #expect(try Self.snapshot(world.serverQueue) == serverBefore)
        #expect(try world.server.uploadChunk(ChunkUpload(reference: reference, offset: 0, bytes: Data())).received == 0)

        // Room for the picture's pieces, not for the row: the pieces stay,
        // the push is refused whole.
        try Self.makeRoom(world.serverQueue)
        try Self.fill(world.serverQueue, leaving: 100)
        await #expect {
            _ = try await a.client.sync(over: transport, chunkSize: 64 << 10)
        } throws: { Self.isFull($0, "the server") }
        #expect(
            try world.server.uploadChunk(ChunkUpload(reference: reference, offset: 0, bytes: Data())).received
                == 300_000)
        #expect(try world.count(world.serverQueue) == 0)
        #expect(
            try Self.snapshot(a.queue).filter { !$0.hasPrefix("sqlitestore_sync_large") }
                == deviceBefore.filter { !$0.hasPrefix("sqlitestore_sync_large") })
        #expect(try a.client.makePush() != nil, "the change still waits to be sent")

        // Room again: the push goes, without sending the picture again.
        try Self.makeRoom(world.serverQueue)
        let report = try await a.client.sync(over: transport, chunkSize: 64 << 10)
        #expect(report.largeBytesSent == 0)
        _ = try await b.client.sync(over: transport)
        #expect(try Self.picture(b.queue) == bytes)
        try Self.expectConverged([world.serverQueue, a.queue, b.queue], people: 1)
    }
}
