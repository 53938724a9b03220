import Foundation
import SQLiteStore
import Testing

@testable import SQLiteStoreSync

/// Bad batches and requests: each refused whole with a clear error, nothing
/// applied, and the device able to sync once the cause is fixed.
struct BadInputTests {
    private func pendingPush() throws -> (SyncWorld, Device, PushRequest) {
        let world = try SyncWorld()
        let device = try Device()
        try device.execute("INSERT INTO people (first, age) VALUES (\("Ada"), \(36))")
        try device.execute("INSERT INTO people (first, age) VALUES (\("Grace"), \(85))")
        return (world, device, try #require(try device.client.makePush()))
    }

    private func expectNothingApplied(_ world: SyncWorld) throws {
        #expect(try world.count(world.serverQueue) == 0)
        #expect(try world.server.position() == 0)
    }

    @Test func aTruncatedBatchIsRefused() throws {
        let (_, _, request) = try pendingPush()
        let bytes = request.changes.encoded()
        for length in [0, 4, bytes.count / 2, bytes.count - 1] {
            #expect {
                try ChangeBatch(encoded: bytes.prefix(length))
            } throws: { ($0 as? SyncError)?.kind == .malformedBatch }
        }
        #expect(try ChangeBatch(encoded: bytes) == request.changes)
    }

    @Test func aGarbledBatchIsRefused() throws {
        let (_, _, request) = try pendingPush()
        let bytes = request.changes.encoded()
        for index in [0, 20, bytes.count / 2, bytes.count - 1] {
            var garbled = bytes
            garbled[index] ^= 0x40
            #expect {
                try ChangeBatch(encoded: garbled)
            } throws: { ($0 as? SyncError)?.kind == .malformedBatch }
        }
    }

    @Test func aGarbledPushMessageIsRefusedBeforeReachingTheServer() throws {
        let (_, _, request) = try pendingPush()
        var json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(request)) as! [String: Any]
        let encoded = try #require(json["changes"] as? String)
        json["changes"] = String(encoded.dropLast(8)) + "AAAAAAA="
        let data = try JSONSerialization.data(withJSONObject: json)
        #expect(throws: SyncError.self) { try JSONDecoder().decode(PushRequest.self, from: data) }
    }

    @Test func aPushForATableTheServerDoesNotSyncIsRefusedWhole() throws {
        let pets = SyncedTable("pets", columns: ["name"])
        let schema = SyncSchema(tables: [People.table, pets])
        let world = try SyncWorld()
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(sql: People.create)
            try db.execute("CREATE TABLE pets (id INTEGER PRIMARY KEY, name TEXT)")
            try schema.install(in: db)
            try db.execute("INSERT INTO people (first) VALUES (\("Ada"))")
            try db.execute("INSERT INTO pets (name) VALUES (\("Rex"))")
        }
        let request = try #require(try SyncClient(writer: queue, schema: schema).makePush())
        #expect {
            try world.server.push(request)
        } throws: { ($0 as? SyncError)?.kind == .unknownTable("pets") }
        try expectNothingApplied(world)
    }

    @Test func aPushForAColumnTheServerDoesNotSyncIsRefusedWhole() throws {
        let narrow = SyncSchema(tables: [SyncedTable("people", columns: ["first", "last", "age"])])
        let world = try SyncWorld(schema: narrow)
        let (_, _, request) = try pendingPush()
        #expect {
            try world.server.push(request)
        } throws: { ($0 as? SyncError)?.kind == .unknownColumn(table: "people", column: "picture") }
        try expectNothingApplied(world)
    }

    @Test func aChangeFromBeyondTheClockSkewBoundIsRefusedAndTheDeviceCanResync() throws {
        let (_, device, _) = try pendingPush()
        // A server whose clock is an hour behind the device's.
        let behind = try SyncWorld(now: { Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000 })
        let request = try #require(try device.client.makePush())
        #expect {
            try behind.server.push(request)
        } throws: { ($0 as? SyncError)?.kind == .clockSkew }
        try expectNothingApplied(behind)
        #expect(try device.client.makePush() == request)  // nothing lost on the device
        // With the clocks agreeing, the same changes go through.
        let agreeing = SyncServer(writer: behind.serverQueue, schema: People.schema)
        _ = try agreeing.push(request)
        #expect(try behind.count(behind.serverQueue) == 2)
    }

    @Test func aPushStartingAfterAnUnacknowledgedPositionIsRefused() throws {
        let (world, _, request) = try pendingPush()
        var skipping = request
        skipping.after = request.after + 1
        #expect {
            try world.server.push(skipping)
        } throws: { ($0 as? SyncError)?.kind == .pushOutOfOrder(acknowledgedThrough: 0) }
        try expectNothingApplied(world)
    }

    @Test func aPushCarryingAnotherDevicesChangesIsRefused() throws {
        let (world, _, request) = try pendingPush()
        var impostor = request
        impostor.replica = UUID()
        #expect {
            try world.server.push(impostor)
        } throws: { ($0 as? SyncError)?.kind == .foreignChanges }
        try expectNothingApplied(world)
    }
}
