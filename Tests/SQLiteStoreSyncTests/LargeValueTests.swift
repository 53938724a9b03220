import Foundation
import SQLiteStore
import Testing

@testable import SQLiteStoreSync

/// The in-process transport, counting what crosses it: the encoded
/// batches and the bytes of chunks.
final class CountingTransport: SyncTransport, @unchecked Sendable {
    let inner: InProcessTransport
    private let lock = NSLock()
    private var batchBytes = 0
    private var chunkBytes = 0

    init(server: SyncServer) { inner = InProcessTransport(server: server) }

    /// Bytes of batches and of chunks since the last reset.
    var counts: (batches: Int, chunks: Int) { lock.withLock { (batchBytes, chunkBytes) } }

    func reset() { lock.withLock { (batchBytes, chunkBytes) = (0, 0) } }

    private func count(batch: ChangeBatch = ChangeBatch(), chunk: Int = 0) {
        let size = batch.isEmpty ? 0 : batch.encoded().count
        lock.withLock {
            batchBytes += size
            chunkBytes += chunk
        }
    }

    func push(_ request: PushRequest) async throws -> PushResponse {
        count(batch: request.changes)
        return try await inner.push(request)
    }

    func pull(_ request: PullRequest) async throws -> PullResponse {
        let response = try await inner.pull(request)
        count(batch: response.changes)
        return response
    }

    func uploadChunk(_ request: ChunkUpload) async throws -> ChunkUploadResponse {
        count(chunk: request.bytes.count)
        return try await inner.uploadChunk(request)
    }

    func downloadChunk(_ request: ChunkDownload) async throws -> ChunkDownloadResponse {
        let response = try await inner.downloadChunk(request)
        count(chunk: response.bytes.count)
        return response
    }
}

struct LargeValueTests {
    /// Bytes that differ along their length, so that a chunk in the wrong
    /// place shows.
    static func picture(size: Int, seed: UInt8 = 1) -> Data {
        Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }

    private func picture(on device: Device, row: Int64) throws -> Data? {
        try device.queue.read { db in try db.fetchOne(Data.self, "SELECT picture FROM people WHERE id = \(row)") }
    }

    @Test func aPictureTravelsInChunksByReferenceAndANameEditResendsNothingOfIt() async throws {
        let world = try SyncWorld()
        let (a, b) = (try Device(), try Device())
        let bytes = Self.picture(size: 5 << 20)
        try a.execute("INSERT INTO people (first, picture) VALUES (\("Ada"), \(bytes))")
        let transport = CountingTransport(server: world.server)

        let sent = try await a.client.sync(over: transport, chunkSize: 256 << 10)
        #expect(sent.largeBytesSent == Int64(bytes.count))
        #expect(transport.counts.chunks == bytes.count)
        #expect(transport.counts.batches < 200)  // the batch holds the reference, not the bytes
        transport.reset()
        let received = try await b.client.sync(over: transport, chunkSize: 256 << 10)
        #expect(received.largeBytesReceived == Int64(bytes.count))
        #expect(try picture(on: b, row: 1) == bytes)
        #expect(try SyncWorld.dump(b.queue) == SyncWorld.dump(a.queue))

        // A name edit: under 200 bytes each way, no byte of the picture.
        try a.execute("UPDATE people SET first = \("Augusta") WHERE id = 1")
        transport.reset()
        _ = try await a.client.sync(over: transport)
        #expect(transport.counts.batches < 200)
        #expect(transport.counts.chunks == 0)
        transport.reset()
        _ = try await b.client.sync(over: transport)
        #expect(transport.counts.batches < 200)
        #expect(transport.counts.chunks == 0)
        let first = try await b.queue.read { db in try db.fetchOne(String.self, "SELECT first FROM people") }
        #expect(first == "Augusta")
        #expect(try picture(on: b, row: 1) == bytes)
        // Nothing left staged on either side.
        for queue in [world.serverQueue, a.queue, b.queue] {
            let staged = try await queue.read { db in
                try db.fetchOne(Int.self, "SELECT COUNT(*) FROM sqlitestore_sync_staging")
            }
            #expect(staged == 0)
        }
    }

    @Test func aPictureWrittenInChunksWithWriteBlobIsCapturedAndSynced() async throws {
        let world = try SyncWorld()
        let (a, b) = (try Device(), try Device())
        let bytes = Self.picture(size: 300_000, seed: 7)
        try a.execute("INSERT INTO people (first) VALUES (\("Grace"))")
        _ = try await a.queue.write { db in
            try db.writeBlob(from: .data(bytes), table: "people", column: "picture", rowID: 1, chunkSize: 4096)
        }
        let transport = InProcessTransport(server: world.server)
        _ = try await a.client.sync(over: transport)
        _ = try await b.client.sync(over: transport)
        #expect(try picture(on: b, row: 1) == bytes)
    }

    @Test func aBrokenUploadResumesWhereTheServerStandsAndThePushWaitsForIt() throws {
        let world = try SyncWorld()
        let device = try Device()
        let bytes = Self.picture(size: 100)
        try device.execute("INSERT INTO people (first, picture) VALUES (\("Ada"), \(bytes))")
        let request = try #require(try device.client.makePush())
        let reference = LargeValueReference(of: bytes)
        #expect(try world.upload(request, from: device, chunkSize: 10, breakAfter: 3) == false)
        let status = try world.server.uploadChunk(ChunkUpload(reference: reference, offset: 0, bytes: Data()))
        #expect(status.received == 30)

        // The push cannot apply before its picture is whole: refused, nothing applied.
        #expect {
            try world.server.push(request)
        } throws: { ($0 as? SyncError)?.kind == .largeValueMissing(reference) }
        #expect(try world.count(world.serverQueue) == 0)

        // The rest: 7 chunks, not 10.
        var offset = status.received
        var chunks = 0
        while offset < reference.size {
            let chunk = try device.client.readChunk(of: reference, at: offset, maximumLength: 10)
            offset = try world.server.uploadChunk(ChunkUpload(reference: reference, offset: offset, bytes: chunk))
                .received
            chunks += 1
        }
        #expect(chunks == 7)
        try device.client.acknowledge(try world.server.push(request), for: request)
        #expect(
            try world.serverQueue.read { db in try db.fetchOne(Data.self, "SELECT picture FROM people") } == bytes)
    }

    @Test func aRowWaitsForItsPictureWhileTheDownloadIsBrokenAndResumes() throws {
        let world = try SyncWorld()
        let (a, b) = (try Device(), try Device())
        let bytes = Self.picture(size: 100, seed: 3)
        try a.execute("INSERT INTO people (first, picture) VALUES (\("Ada"), \(bytes))")
        try world.sync(a)

        let request = try b.client.makePull()
        let response = try world.server.pull(request)
        #expect(try world.download(response, to: b, chunkSize: 10, breakAfter: 4) == false)
        // Not applied: no half picture, no row without its picture.
        #expect {
            try b.client.apply(response, for: request)
        } throws: { ($0 as? SyncError)?.kind == .largeValueMissing(LargeValueReference(of: bytes)) }
        #expect(try world.count(b.queue) == 0)
        #expect(try b.client.makePull() == request)

        // Another client over the same database (as after a restart) resumes at byte 40.
        let restarted = Device(reopened: b.queue)
        let missing = try restarted.client.missingLargeValues(in: response)
        #expect(missing == [LargeValueProgress(reference: LargeValueReference(of: bytes), received: 40)])
        #expect(try world.download(response, to: restarted, chunkSize: 10))
        try restarted.client.apply(response, for: request)
        #expect(try picture(on: b, row: 1) == bytes)
        #expect(try SyncWorld.dump(b.queue) == SyncWorld.dump(a.queue))
    }

    @Test func badChunksAreRefusedWithNothingStored() throws {
        let world = try SyncWorld()
        let bytes = Self.picture(size: 20)
        let reference = LargeValueReference(of: bytes)
        func received() throws -> Int64 {
            try world.server.uploadChunk(ChunkUpload(reference: reference, offset: 0, bytes: Data())).received
        }
        _ = try world.server.uploadChunk(ChunkUpload(reference: reference, offset: 0, bytes: bytes.prefix(8)))

        // An offset other than where the transfer stands.
        #expect {
            try world.server.uploadChunk(ChunkUpload(reference: reference, offset: 4, bytes: bytes[4..<12]))
        } throws: { ($0 as? SyncError)?.kind == .chunkOutOfOrder(expectedOffset: 8) }
        // More bytes than the value has left.
        #expect {
            try world.server.uploadChunk(ChunkUpload(reference: reference, offset: 8, bytes: bytes[8...] + Data([0])))
        } throws: { ($0 as? SyncError)?.kind == .malformedChunk }
        // A reference that is not a SHA-256.
        #expect {
            try world.server.uploadChunk(
                ChunkUpload(reference: LargeValueReference(sha256: Data([1, 2]), size: 4), offset: 0, bytes: Data([1])))
        } throws: { ($0 as? SyncError)?.kind == .malformedChunk }
        #expect(try received() == 8)

        // The right size, the wrong bytes: discarded once complete.
        var wrong = Data(bytes[8...])
        wrong[wrong.startIndex] ^= 0xFF
        #expect {
            try world.server.uploadChunk(ChunkUpload(reference: reference, offset: 8, bytes: wrong))
        } throws: { ($0 as? SyncError)?.kind == .largeValueMismatch(reference) }
        #expect(try received() == 0)

        // Sent again, right: complete.
        _ = try world.server.uploadChunk(ChunkUpload(reference: reference, offset: 0, bytes: bytes))
        #expect(try received() == 20)
    }

    @Test func aBatchReferencingAValueThatNeverArrivesIsRefusedWhole() throws {
        let world = try SyncWorld()
        let device = try Device()
        try device.execute("INSERT INTO people (first) VALUES (\("Grace"))")
        try device.execute("INSERT INTO people (first, picture) VALUES (\("Ada"), \(Self.picture(size: 50)))")
        let request = try #require(try device.client.makePush())
        #expect {
            try world.server.push(request)
        } throws: {
            ($0 as? SyncError)?.kind == .largeValueMissing(LargeValueReference(of: Self.picture(size: 50)))
        }
        #expect(try world.count(world.serverQueue) == 0)
        #expect(try world.server.position() == 0)
        // Once sent, the same push goes through.
        #expect(try world.upload(request, from: device))
        try device.client.acknowledge(try world.server.push(request), for: request)
        #expect(try world.count(world.serverQueue) == 2)
    }

    @Test func aPictureReplacedOnTheServerSinceThePullIsAskedAgain() async throws {
        let world = try SyncWorld()
        let (a, b) = (try Device(), try Device())
        let first = Self.picture(size: 64, seed: 1)
        let second = Self.picture(size: 64, seed: 2)
        try a.execute("INSERT INTO people (first, picture) VALUES (\("Ada"), \(first))")
        try world.sync(a)
        let request = try b.client.makePull()
        let stale = try world.server.pull(request)
        try a.execute("UPDATE people SET picture = \(second) WHERE id = 1")
        try world.sync(a)
        #expect {
            try world.server.downloadChunk(ChunkDownload(reference: LargeValueReference(of: first), offset: 0))
        } throws: { ($0 as? SyncError)?.kind == .unknownLargeValue(LargeValueReference(of: first)) }
        #expect(try b.client.missingLargeValues(in: stale).count == 1)
        // The whole sync asks again and gets the current picture.
        _ = try await b.client.sync(over: InProcessTransport(server: world.server))
        #expect(try picture(on: b, row: 1) == second)
    }

    @Test func aPictureThatLostIsLoggedByReference() throws {
        let world = try SyncWorld()
        let (a, b) = (try Device(), try Device())
        try a.execute("INSERT INTO people (first) VALUES (\("Ada"))")
        try world.sync(a)
        try world.sync(b)
        let older = Self.picture(size: 40, seed: 5)
        let newer = Self.picture(size: 40, seed: 6)
        try a.execute("UPDATE people SET picture = \(older) WHERE id = 1")
        try b.advanceClock(by: 1_000)
        try b.execute("UPDATE people SET picture = \(newer) WHERE id = 1")
        try world.sync(b)
        try world.sync(a)  // a pushes its picture, which loses to b's, then pulls b's
        try world.sync(b)
        let conflict = try #require(try world.conflicts().first)
        #expect(conflict.column == "picture")
        #expect(conflict.losingValue == .text(LargeValueReference(of: older).description))
        #expect(conflict.winningValue == .text(LargeValueReference(of: newer).description))
        #expect(try picture(on: a, row: 1) == newer)
        #expect(try SyncWorld.dump(a.queue) == SyncWorld.dump(b.queue))
    }

    @Test func theContentHashIsSHA256() {
        #expect(
            LargeValueReference(of: Data("abc".utf8)).description
                == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad (3 bytes)")
        #expect(
            LargeValueReference(of: Data()).description
                == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 (0 bytes)")
        var hasher = ContentHasher()
        let long = Self.picture(size: 1000)
        for start in stride(from: 0, to: 1000, by: 77) { hasher.update(long[start..<min(start + 77, 1000)]) }
        #expect(hasher.finish() == ContentHasher.digest(long))
        #expect(
            ContentHasher.digest(Data(repeating: 0x61, count: 1_000_000)).map { String(format: "%02x", $0) }.joined()
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
