import Foundation
import SQLiteStore
import Synchronization
import Testing

@testable import SQLiteStoreSync

/// A clock the test moves by hand (milliseconds since 1970).
final class ManualClock: Sendable {
    private let milliseconds = Mutex<Int64>(1_800_000_000_000)

    var now: Int64 { milliseconds.withLock { $0 } }
    var closure: @Sendable () -> Int64 { { self.now } }

    func advance(by duration: Duration) { milliseconds.withLock { $0 += duration.milliseconds } }
}

/// The staged chunks of transfers that never finish do not stay: the
/// server removes uploads untouched for its declared age when another
/// upload starts; a device removes downloads of values that are no longer
/// wanted once it has caught up.
struct AbandonedTransferTests {
    /// Sends the first `count` bytes of `bytes`, as an upload that stops.
    private static func startUpload(_ bytes: Data, count: Int, to server: SyncServer) throws {
        let reference = LargeValueReference(of: bytes)
        _ = try server.uploadChunk(ChunkUpload(reference: reference, offset: 0, bytes: bytes.prefix(count)))
    }

    private static func held(_ bytes: Data, on server: SyncServer) throws -> Int64 {
        try server.uploadChunk(ChunkUpload(reference: LargeValueReference(of: bytes), offset: 0, bytes: Data()))
            .received
    }

    @Test func anUploadUntouchedForADayIsRemovedWhenAnotherUploadStarts() throws {
        let clock = ManualClock()
        let world = try SyncWorld(now: clock.closure)
        #expect(world.server.abandonedUploadAge == .seconds(24 * 60 * 60))
        let (first, second, third) = (
            LargeValueTests.picture(size: 100, seed: 1), LargeValueTests.picture(size: 100, seed: 2),
            LargeValueTests.picture(size: 100, seed: 3)
        )
        try Self.startUpload(first, count: 30, to: world.server)
        clock.advance(by: .seconds(23 * 3600))
        try Self.startUpload(second, count: 40, to: world.server)
        #expect(try Self.held(first, on: world.server) == 30, "23 hours: kept")

        clock.advance(by: .seconds(3600) + .milliseconds(1))
        try Self.startUpload(third, count: 50, to: world.server)
        #expect(try Self.held(first, on: world.server) == 0, "a day and a millisecond: removed")
        #expect(try Self.held(second, on: world.server) == 40)
        #expect(try Self.held(third, on: world.server) == 50)
        #expect(try FullDiskTests.staged(world.serverQueue) == 2)
    }

    @Test func eachPieceKeepsItsUploadAliveAndOnlyANewUploadSweeps() throws {
        let clock = ManualClock()
        let world = try SyncWorld(now: clock.closure)
        let (slow, other) = (LargeValueTests.picture(size: 100, seed: 4), LargeValueTests.picture(size: 100, seed: 5))
        let reference = LargeValueReference(of: slow)
        try Self.startUpload(slow, count: 10, to: world.server)
        clock.advance(by: .seconds(20 * 3600))
        _ = try world.server.uploadChunk(ChunkUpload(reference: reference, offset: 10, bytes: slow[10..<20]))
        clock.advance(by: .seconds(10 * 3600))
        // Asking how far an upload stands, or continuing one, removes nothing.
        #expect(try Self.held(other, on: world.server) == 0)
        try Self.startUpload(other, count: 10, to: world.server)
        #expect(try Self.held(slow, on: world.server) == 20, "touched 10 hours ago")
    }

    @Test func theAgeIsTheServersToChooseAndADeviceThatComesBackSendsItsPictureAgain() async throws {
        let clock = ManualClock()
        let world = try SyncWorld(now: clock.closure)
        let server = SyncServer(
            writer: world.serverQueue, schema: People.schema, now: clock.closure, abandonedUploadAge: .seconds(60))
        let device = try Device()
        let bytes = LargeValueTests.picture(size: 100, seed: 6)
        try device.execute("INSERT INTO people (first, picture) VALUES (\("Ada"), \(bytes))")
        let request = try #require(try device.client.makePush())
        // The device sends 3 pieces, then is gone for 61 seconds.
        #expect(
            try SyncWorld(queue: world.serverQueue, schema: People.schema).upload(
                request, from: device, chunkSize: 10, breakAfter: 3) == false)
        clock.advance(by: .seconds(61))
        try Self.startUpload(LargeValueTests.picture(size: 100, seed: 7), count: 10, to: server)
        #expect(try Self.held(bytes, on: server) == 0)

        // Resuming from byte 30 is refused with where the server stands; the
        // client starts over by itself and the push goes through.
        #expect {
            try server.uploadChunk(
                ChunkUpload(reference: LargeValueReference(of: bytes), offset: 30, bytes: bytes[30..<40]))
        } throws: { ($0 as? SyncError)?.kind == .chunkOutOfOrder(expectedOffset: 0) }
        let report = try await device.client.sync(over: InProcessTransport(server: server), chunkSize: 10)
        #expect(report.largeBytesSent == 100)
        #expect(try FullDiskTests.picture(world.serverQueue) == bytes)
    }

    @Test func aDownloadOfAPictureReplacedOnTheServerIsRemovedOnceTheDeviceCatchesUp() async throws {
        let world = try SyncWorld()
        let (a, b) = (try Device(), try Device())
        let old = LargeValueTests.picture(size: 100, seed: 8)
        let new = LargeValueTests.picture(size: 120, seed: 9)
        try a.execute("INSERT INTO people (first, picture) VALUES (\("Ada"), \(old))")
        try world.sync(a)
        let response = try world.server.pull(try b.client.makePull())
        #expect(try world.download(response, to: b, chunkSize: 10, breakAfter: 4) == false)
        #expect(try FullDiskTests.staged(b.queue) == 1)

        try a.execute("UPDATE people SET picture = \(new) WHERE id = 1")
        try world.sync(a)
        _ = try await b.client.sync(over: InProcessTransport(server: world.server))
        #expect(try FullDiskTests.picture(b.queue) == new)
        #expect(try FullDiskTests.staged(b.queue) == 0)
    }

    @Test func aDownloadForARowDeletedOnTheServerIsRemovedOnceTheDeviceCatchesUp() async throws {
        let world = try SyncWorld()
        let (a, b) = (try Device(), try Device())
        let bytes = LargeValueTests.picture(size: 100, seed: 10)
        try a.execute("INSERT INTO people (first, picture) VALUES (\("Ada"), \(bytes))")
        try a.execute("INSERT INTO people (first) VALUES (\("Grace"))")
        try world.sync(a)
        let response = try world.server.pull(try b.client.makePull())
        #expect(try world.download(response, to: b, chunkSize: 10, breakAfter: 2) == false)

        try a.execute("DELETE FROM people WHERE id = 1")
        try world.sync(a)
        _ = try await b.client.sync(over: InProcessTransport(server: world.server))
        #expect(try SyncWorld.dump(b.queue) == SyncWorld.dump(a.queue))
        #expect(try world.count(b.queue) == 1)
        #expect(try FullDiskTests.staged(b.queue) == 0)
    }

    @Test func aDownloadInProgressIsKeptWhileTheDeviceHasNotCaughtUp() throws {
        let world = try SyncWorld()
        let (a, b) = (try Device(), try Device())
        let bytes = LargeValueTests.picture(size: 100, seed: 11)
        let progress = LargeValueProgress(reference: LargeValueReference(of: bytes), received: 40)
        try FullDiskTests.addPeople(a, count: 3)
        try a.execute("INSERT INTO people (first, picture) VALUES (\("Ada"), \(bytes))")
        try world.sync(a)
        let whole = try world.server.pull(try b.client.makePull())
        #expect(try world.download(whole, to: b, chunkSize: 10, breakAfter: 4) == false)

        // Pulled again in smaller pages: the first ones, which do not
        // reach the picture, leave its pieces where they are.
        let request = try b.client.makePull(limit: 4)
        let page = try world.server.pull(request)
        #expect(page.hasMore)
        #expect(try b.client.missingLargeValues(in: page).isEmpty)
        try b.client.apply(page, for: request)
        #expect(try b.client.missingLargeValues(in: whole) == [progress])

        let rest = try b.client.makePull()
        let answer = try world.server.pull(rest)
        #expect(try b.client.missingLargeValues(in: answer) == [progress])
        #expect(try world.download(answer, to: b, chunkSize: 10))
        try b.client.apply(answer, for: rest)
        #expect(try FullDiskTests.staged(b.queue) == 0)
        #expect(try SyncWorld.dump(b.queue) == SyncWorld.dump(a.queue))
    }

    @Test func aStagingTableFromBeforeTransfersHadATimeIsUpgradedKeepingItsPieces() throws {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(sql: People.create)
            try People.schema.install(in: db)
            // The table as the engine made it before.
            try db.execute(sql: "DROP TABLE sqlitestore_sync_staging")
            try db.execute(
                sql: """
                    CREATE TABLE sqlitestore_sync_staging (
                        id INTEGER PRIMARY KEY, hash BLOB NOT NULL UNIQUE, size INTEGER NOT NULL,
                        received INTEGER NOT NULL, bytes BLOB)
                    """)
            try db.execute(
                "INSERT INTO sqlitestore_sync_staging (hash, size, received, bytes) VALUES (\(LargeValueReference(of: Data([1, 2, 3, 4])).sha256), 4, 2, \(Data([1, 2, 0, 0])))"
            )
        }
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        try queue.write { db in try People.schema.install(in: db) }
        try queue.read { db in
            #expect(
                try db.columns(in: "sqlitestore_sync_staging").map(\.name)
                    == ["id", "hash", "size", "received", "touched"])
            let row = try #require(
                try db.fetchOne(
                    """
                    SELECT s.received, s.touched, b.bytes FROM sqlitestore_sync_staging AS s
                    JOIN sqlitestore_sync_staged_bytes AS b USING (id)
                    """))
            #expect(try row.decode(Int64.self, at: 0) == 2)
            // SQLite's clock, from a julian day: close to `before`, not to
            // the millisecond.
            let touched = try row.decode(Int64.self, at: 1)
            #expect(abs(touched - before) < 60_000, "touched \(touched), before \(before)")
            #expect(try row.decode(Data.self, at: 2) == Data([1, 2, 0, 0]))
        }
        // The upload goes on from there.
        let server = SyncServer(writer: queue, schema: People.schema)
        let reference = LargeValueReference(of: Data([1, 2, 3, 4]))
        #expect(try server.uploadChunk(ChunkUpload(reference: reference, offset: 0, bytes: Data())).received == 2)
        #expect(
            try server.uploadChunk(ChunkUpload(reference: reference, offset: 2, bytes: Data([3, 4]))).received == 4)
    }
}
