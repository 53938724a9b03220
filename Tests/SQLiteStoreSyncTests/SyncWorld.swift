import Foundation
import SQLiteStore
import Testing

@testable import SQLiteStoreSync

/// A device: its database and its client.
struct Device {
    let queue: DatabaseQueue
    let client: SyncClient
    let id: UUID

    init(schema: SyncSchema = People.schema) throws {
        queue = try People.replica(schema)
        client = SyncClient(writer: queue, schema: schema)
        id = try client.replicaID()
    }

    func execute(_ sql: SQL) throws {
        try queue.write { db in try db.execute(sql) }
    }

    /// Moves this replica's clock `milliseconds` ahead, so that its next
    /// edit is later than the others' whatever the wall clock says.
    func advanceClock(by milliseconds: Int64) throws {
        try execute("UPDATE sqlitestore_sync_state SET clock = clock + \(milliseconds << 16)")
    }

    func globalID(ofRow localID: Int64) throws -> UUID {
        try queue.read { db in try SyncConflict.globalID(ofRow: localID, in: "people", db)! }
    }
}

/// A server, and the steps of a sync driven one by one, with the messages
/// passed through their Codable form as a transport would.
struct SyncWorld {
    let serverQueue: DatabaseQueue
    let server: SyncServer

    init(schema: SyncSchema = People.schema, now: @escaping @Sendable () -> Int64 = SyncWorld.wallClock) throws {
        serverQueue = try People.replica(schema)
        server = SyncServer(writer: serverQueue, schema: schema, now: now)
    }

    init(queue: DatabaseQueue, schema: SyncSchema) {
        serverQueue = queue
        server = SyncServer(writer: queue, schema: schema)
    }

    static let wallClock: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Through JSON and back: what reaches the other side.
    static func carried<Message: Codable>(_ message: Message) throws -> Message {
        try JSONDecoder().decode(Message.self, from: JSONEncoder().encode(message))
    }

    /// Uploads the large values `request` references, `chunkSize` bytes at
    /// a time, resuming where the server stands; after `breakAfter` chunks
    /// the connection "breaks": returns false.
    func upload(
        _ request: PushRequest, from device: Device, chunkSize: Int = 3, breakAfter: Int? = nil
    ) throws -> Bool {
        var chunks = 0
        for reference in try device.client.largeValues(toUpload: request) {
            var offset = try Self.carried(
                try server.uploadChunk(Self.carried(ChunkUpload(reference: reference, offset: 0, bytes: Data())))
            ).received
            while offset < reference.size {
                if let breakAfter, chunks >= breakAfter { return false }
                let bytes = try device.client.readChunk(of: reference, at: offset, maximumLength: chunkSize)
                offset = try Self.carried(
                    try server.uploadChunk(
                        Self.carried(ChunkUpload(reference: reference, offset: offset, bytes: bytes)))
                ).received
                chunks += 1
            }
        }
        return true
    }

    /// Downloads the large values `response` references that the device
    /// lacks; false when the connection "breaks" after `breakAfter` chunks.
    func download(
        _ response: PullResponse, to device: Device, chunkSize: Int = 3, breakAfter: Int? = nil
    ) throws -> Bool {
        var chunks = 0
        for missing in try device.client.missingLargeValues(in: response) {
            var offset = missing.received
            while offset < missing.reference.size {
                if let breakAfter, chunks >= breakAfter { return false }
                let chunk = try Self.carried(
                    try server.downloadChunk(
                        Self.carried(
                            ChunkDownload(reference: missing.reference, offset: offset, maximumLength: chunkSize))))
                offset = try device.client.receiveChunk(chunk.bytes, of: missing.reference, at: offset)
                chunks += 1
            }
        }
        return true
    }

    /// Pushes until the outbox is empty. Returns how many pushes were sent.
    @discardableResult
    func push(_ device: Device) throws -> Int {
        var pushes = 0
        while let request = try device.client.makePush() {
            pushes += 1
            _ = try upload(request, from: device)
            do {
                let response = try Self.carried(try server.push(try Self.carried(request)))
                try device.client.acknowledge(response, for: request)
            } catch let error as SyncError {
                guard case .replayedPush(let acknowledged) = error.kind else { throw error }
                try device.client.resume(after: acknowledged)
            }
        }
        return pushes
    }

    /// Pulls until the server has nothing more.
    func pull(_ device: Device, limit: Int = 10_000) throws {
        while true {
            let request = try device.client.makePull(limit: limit)
            let response = try Self.carried(try server.pull(try Self.carried(request)))
            do {
                _ = try download(response, to: device)
            } catch let error as SyncError {
                // Replaced on the server since the answer: pull again.
                guard case .unknownLargeValue = error.kind else { throw error }
                continue
            }
            try device.client.apply(response, for: request)
            if !response.hasMore, request.columns == nil { return }
        }
    }

    func sync(_ device: Device) throws {
        try push(device)
        try pull(device)
    }

    /// Each replica's people, keyed by global identity, in one order.
    static func dump(_ queue: DatabaseQueue) throws -> [String] {
        try queue.read { db in
            try db.fetchAll(
                """
                SELECT hex(r.gid), p.first, p.last, p.age, p.picture FROM people AS p
                JOIN sqlitestore_sync_rows AS r ON r.local_id = p.id AND r.tbl = 1
                ORDER BY r.gid
                """
            ).map { row in row.values.map(\.description).joined(separator: "|") }
        }
    }

    func conflicts() throws -> [SyncConflict] {
        try serverQueue.read { db in try SyncConflict.fetchAll(db) }
    }

    func count(_ queue: DatabaseQueue) throws -> Int {
        try queue.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM people") ?? 0 }
    }
}
