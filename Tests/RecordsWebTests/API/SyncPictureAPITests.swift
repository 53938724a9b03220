import Foundation
import HTTPServer
import SQLiteStore
import SQLiteStoreSync
import Testing

@testable import RecordsApp
@testable import RecordsWeb

/// Coffee pictures sync through `POST /api/v1/sync/chunks/upload` and
/// `/sync/chunks/download`: in pieces, only when they changed, and whole
/// on the other device.
@Suite struct SyncPictureAPITests {
    /// Counts what goes to the server, by path, as a device's transport
    /// would send it.
    final class CountingTransport: SyncTransport {
        let inner: InProcessSyncTransport
        let sent = Locked<[(path: String, bytes: Int)]>([])

        init(site: APISite) { inner = InProcessSyncTransport(site: site, token: site.writer) }

        private func note(_ path: String, _ body: Data) { sent.withLock { $0.append((path, body.count)) } }

        func push(_ request: PushRequest) async throws -> PushResponse {
            let body = SyncWire.encode(request)
            note("push", body)
            return try SyncWire.pushResponse(try await inner.send("/api/v1/sync/push", body))
        }

        func pull(_ request: PullRequest) async throws -> PullResponse {
            let body = SyncWire.encode(request)
            note("pull", body)
            return try SyncWire.pullResponse(try await inner.send("/api/v1/sync/pull", body))
        }

        func uploadChunk(_ request: ChunkUpload) async throws -> ChunkUploadResponse {
            let body = SyncWire.encode(request)
            note("upload", body)
            return try SyncWire.chunkUploadResponse(try await inner.send("/api/v1/sync/chunks/upload", body))
        }

        func downloadChunk(_ request: ChunkDownload) async throws -> ChunkDownloadResponse {
            let body = SyncWire.encode(request)
            note("download", body)
            return try SyncWire.chunkDownloadResponse(try await inner.send("/api/v1/sync/chunks/download", body))
        }

        func reset() { sent.withLock { $0 = [] } }
        func bytes(to path: String) -> Int { sent.withLock { $0.filter { $0.path == path }.map(\.bytes).reduce(0, +) } }
        func count(to path: String) -> Int { sent.withLock { $0.filter { $0.path == path }.count } }
    }

    /// A PNG signature followed by `size - 8` bytes of a pattern that no
    /// piece repeats at the same offset of another.
    static func picture(size: Int) -> Data {
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        bytes.reserveCapacity(size)
        var state: UInt32 = 0x1234_5678
        while bytes.count < size {
            state = state &* 1_664_525 &+ 1_013_904_223
            bytes.append(UInt8(truncatingIfNeeded: state >> 24))
        }
        return Data(bytes)
    }

    @Test func aPictureGoesUpInPiecesAndComesDownWholeAndANameEditSendsNoneOfIt() async throws {
        let site = try await APISite()
        let first = try AppDatabase.inMemory()
        let second = try AppDatabase.inMemory()
        let transport = CountingTransport(site: site)
        let picture = Self.picture(size: 5 << 20 + 123)
        let made = try await CoffeeStore(database: first).add(CoffeeDraft(name: "Cortado", price: 2.5))
        try await CoffeeStore(database: first).setPicture(id: made.id, from: .data(picture))

        let sent = try await first.syncClient().sync(over: transport, chunkSize: 1 << 20)
        #expect(sent.largeBytesSent == Int64(picture.count))
        #expect(transport.count(to: "upload") >= 6, "5 MiB in pieces of 1 MiB, after asking where to start")
        #expect(transport.bytes(to: "push") < 300, "the push carries the picture's reference, not its bytes")

        let received = try await second.syncClient().sync(over: transport, chunkSize: 1 << 20)
        #expect(received.largeBytesReceived == Int64(picture.count))
        let listed = try #require(try await CoffeeStore(database: second).all(prices: .any).first)
        let there = try #require(try await CoffeeStore(database: second).coffee(id: listed.id))
        #expect(there.name == "Cortado")
        #expect(there.picture?.size == picture.count)
        #expect(there.picture?.format == .png)
        let reader = try await CoffeeStore(database: second).openPicture(id: there.id)
        #expect(try await reader.read(at: 0, count: picture.count) == picture)
        let onServerListed = try #require(try await CoffeeStore(database: site.database).all(prices: .any).first)
        let onServer = try #require(try await CoffeeStore(database: site.database).coffee(id: onServerListed.id))
        #expect(onServer.picture?.size == picture.count)

        // A name edit travels without the picture.
        transport.reset()
        _ = try await CoffeeStore(database: first).update(id: made.id, with: CoffeeChanges(name: "Cortado doble"))
        _ = try await first.syncClient().sync(over: transport)
        #expect(transport.count(to: "upload") == 0)
        #expect(transport.bytes(to: "push") < 200, "a name edit, whatever the picture's size")
        transport.reset()
        _ = try await second.syncClient().sync(over: transport)
        #expect(transport.count(to: "download") == 0)
        let renamed = try #require(try await CoffeeStore(database: second).coffee(id: there.id))
        #expect(renamed.name == "Cortado doble")
        #expect(renamed.picture?.size == picture.count)
    }

    @Test func aBrokenPieceIsRefusedAsAProblemAndTheUploadResumesWhereItStood() async throws {
        let site = try await APISite()
        let transport = InProcessSyncTransport(site: site, token: site.writer)
        let bytes = Self.picture(size: 300_000)
        let reference = LargeValueReference(of: bytes)
        let piece = bytes.prefix(100_000)
        let first = try SyncWire.chunkUploadResponse(
            try await transport.send(
                "/api/v1/sync/chunks/upload",
                SyncWire.encode(ChunkUpload(reference: reference, offset: 0, bytes: piece))
            ))
        #expect(first.received == 100_000)
        // A piece that skips ahead is refused with where to resume.
        await #expect {
            _ = try await transport.send(
                "/api/v1/sync/chunks/upload",
                SyncWire.encode(ChunkUpload(reference: reference, offset: 200_000, bytes: bytes.suffix(100_000))))
        } throws: { error in
            guard let error = error as? SyncError, case .chunkOutOfOrder(let expected) = error.kind else {
                return false
            }
            return expected == 100_000
        }
        // A message cut short is refused whole.
        let cut = SyncWire.encode(ChunkDownload(reference: reference, offset: 0)).dropLast(2)
        await #expect {
            _ = try await transport.send("/api/v1/sync/chunks/download", Data(cut))
        } throws: { error in
            guard let error = error as? SyncError, case .malformedBatch = error.kind else { return false }
            return true
        }
        // A piece of a value no record holds: the device is told which.
        await #expect {
            _ = try await transport.downloadChunk(ChunkDownload(reference: reference, offset: 0))
        } throws: { error in
            guard let error = error as? SyncError, case .unknownLargeValue(let missing) = error.kind else {
                return false
            }
            return missing == reference
        }
        // Asking with no bytes tells where the server's copy stands.
        let standing = try SyncWire.chunkUploadResponse(
            try await transport.send(
                "/api/v1/sync/chunks/upload",
                SyncWire.encode(ChunkUpload(reference: reference, offset: 0, bytes: Data()))))
        #expect(standing.received == 100_000)
    }

    @Test func aPieceTheServersFullDiskCannotKeepIsA507ProblemAndThePictureGoesOnceThereIsRoom() async throws {
        let site = try await APISite()
        let device = try AppDatabase.inMemory()
        let transport = InProcessSyncTransport(site: site, token: site.writer)
        let picture = Self.picture(size: 300_000)
        let reference = LargeValueReference(of: picture)
        let made = try await CoffeeStore(database: device).add(CoffeeDraft(name: "Flat white", price: 3))
        try await CoffeeStore(database: device).setPicture(id: made.id, from: .data(picture))
        try site.fillDisk()

        let piece = SyncWire.encode(ChunkUpload(reference: reference, offset: 0, bytes: picture.prefix(100_000)))
        let answer = await transport.answer("/api/v1/sync/chunks/upload", piece)
        #expect(
            isFullDiskProblem(answer, detail: "The server's disk is full: the piece of the large value sha256:"),
            "\(answer.status) \(answer.text)")
        let held = try await transport.uploadChunk(ChunkUpload(reference: reference, offset: 0, bytes: Data()))
        #expect(held.received == 0, "nothing of the piece was kept")
        await #expect {
            _ = try await device.syncClient().sync(over: transport, chunkSize: 64 << 10)
        } throws: { ($0 as? SyncError)?.kind == .storageFull }
        #expect(try await CoffeeStore(database: site.database).all(prices: .any).isEmpty)

        try site.makeRoom()
        let report = try await device.syncClient().sync(over: transport, chunkSize: 64 << 10)
        #expect(report.largeBytesSent == Int64(picture.count))
        let listed = try #require(try await CoffeeStore(database: site.database).all(prices: .any).first)
        let reader = try await CoffeeStore(database: site.database).openPicture(id: listed.id)
        #expect(try await reader.read(at: 0, count: picture.count) == picture)
        let staged = try await site.database.writer.read { db in
            try db.fetchOne(Int.self, "SELECT COUNT(*) FROM sqlitestore_sync_staging")
        }
        #expect(staged == 0)
    }

    @Test func aReadOnlyTokenCannotUploadAPiece() async throws {
        let site = try await APISite()
        let transport = InProcessSyncTransport(site: site, token: site.reader)
        let bytes = Self.picture(size: 1_000)
        await #expect(throws: (any Error).self) {
            _ = try await transport.send(
                "/api/v1/sync/chunks/upload",
                SyncWire.encode(ChunkUpload(reference: LargeValueReference(of: bytes), offset: 0, bytes: bytes)))
        }
    }

    @Test func aPictureOverTheServersLimitIsRefusedBeforeAnyOfItIsKept() async throws {
        let site = try await APISite { $0.pictureSizeLimit = 4_000 }
        let bytes = Self.picture(size: 5_000)
        let reference = LargeValueReference(of: bytes)
        await #expect {
            _ = try await InProcessSyncTransport(site: site, token: site.writer).uploadChunk(
                ChunkUpload(reference: reference, offset: 0, bytes: bytes.prefix(1_000)))
        } throws: { error in
            (error as? HTTPSyncError)?.status == 413 && "\(error)".contains("takes pictures of at most")
        }
        let server = site.database.syncServer()
        #expect(try server.uploadChunk(ChunkUpload(reference: reference, offset: 0, bytes: Data())).received == 0)
    }

    @Test func theWireFormsOfPiecesAndCatchUpPullsRoundTrip() throws {
        let reference = LargeValueReference(of: Data("a picture".utf8))
        #expect(LargeValueReference(hexDigest: reference.hexDigest, size: reference.size) == reference)
        #expect(LargeValueReference(hexDigest: String(reference.hexDigest.dropLast()) + "g", size: 9) == nil)
        #expect(LargeValueReference(hexDigest: "abc", size: 9) == nil)
        let upload = ChunkUpload(reference: reference, offset: 4, bytes: Data("ture".utf8))
        #expect(try SyncWire.chunkUpload(SyncWire.encode(upload)) == upload)
        let download = ChunkDownload(reference: reference, offset: 2, maximumLength: 5)
        #expect(try SyncWire.chunkDownload(SyncWire.encode(download)) == download)
        #expect(try SyncWire.chunkUploadResponse(SyncWire.encode(ChunkUploadResponse(received: 9))).received == 9)
        let piece = ChunkDownloadResponse(bytes: Data("pic".utf8))
        #expect(try SyncWire.chunkDownloadResponse(SyncWire.encode(piece)) == piece)
        let replica = UUID()
        let catchUp = PullRequest(
            replica: replica, after: 10, until: 99,
            columns: ["coffee": ["pictureType", "picture"], "people": ["age"]],
            limit: 500)
        #expect(try SyncWire.pullRequest(SyncWire.encode(catchUp)) == catchUp)
        let plain = PullRequest(replica: replica, after: 3, limit: 7)
        #expect(try SyncWire.pullRequest(SyncWire.encode(plain)) == plain)
    }
}
