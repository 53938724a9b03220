import Foundation
import SQLiteStore
import Testing

@testable import SQLiteStoreSync

/// Replicas on different migrations: a device one behind keeps syncing and
/// gets the values it skipped once it upgrades; a server behind refuses
/// what it cannot keep, and takes it once upgraded.
struct SchemaSkewTests {
    /// The people table before `age` was added, and its declaration.
    static let oldTable = SyncedTable("people", columns: ["first", "last", "picture"], largeColumns: ["picture"])
    static let oldSchema = SyncSchema(tables: [oldTable])

    private func oldDevice() throws -> Device {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE people (id INTEGER PRIMARY KEY, first TEXT, last TEXT, picture BLOB)")
            try Self.oldSchema.install(in: db)
        }
        return Device(queue: queue, schema: Self.oldSchema)
    }

    /// The migration that adds `age`, then the sync schema's re-install.
    private func upgrade(_ device: Device, to schema: SyncSchema = People.schema) throws -> Device {
        try device.queue.write { db in
            try db.execute(sql: "ALTER TABLE people ADD COLUMN age INTEGER")
            try schema.install(in: db)
        }
        return Device(queue: device.queue, schema: schema)
    }

    @Test func aDeviceAMigrationBehindKeepsSyncingAndGetsTheNewColumnAfterItUpgrades() throws {
        let world = try SyncWorld()
        let current = try Device()
        let behind = try oldDevice()
        try current.execute("INSERT INTO people (first, age) VALUES (\("Ada"), \(36))")
        try behind.execute("INSERT INTO people (first) VALUES (\("Grace"))")
        try world.sync(current)
        try world.sync(behind)  // pulls Ada without her age
        try current.execute("UPDATE people SET age = \(37), last = \("Lovelace") WHERE first = \("Ada")")
        try behind.execute("UPDATE people SET last = \("Hopper") WHERE first = \("Grace")")
        try world.sync(behind)
        try world.sync(current)
        try world.sync(behind)
        #expect(
            try behind.queue.read { db in try db.fetchAll(String.self, "SELECT last FROM people ORDER BY first") }
                == ["Lovelace", "Hopper"])

        let upgraded = try upgrade(behind)
        #expect(try upgraded.client.makePull().columns == ["people": ["age"]])
        try world.sync(upgraded)
        try world.sync(current)
        #expect(try SyncWorld.dump(upgraded.queue) == SyncWorld.dump(current.queue))
        #expect(
            try upgraded.queue.read { db in try db.fetchOne(Int.self, "SELECT age FROM people WHERE first = 'Ada'") }
                == 37)
        // The catch-up is done once; later pulls are the ordinary ones.
        #expect(try upgraded.client.makePull().columns == nil)
        try current.execute("UPDATE people SET age = \(38) WHERE first = \("Ada")")
        try world.sync(current)
        try world.sync(upgraded)
        #expect(try SyncWorld.dump(upgraded.queue) == SyncWorld.dump(current.queue))
    }

    @Test func theCatchUpComesInPagesAndAnEditMadeAfterTheUpgradeWins() throws {
        let world = try SyncWorld()
        let current = try Device()
        let behind = try oldDevice()
        try current.queue.write { db in
            for row in 0..<25 { try db.execute("INSERT INTO people (first, age) VALUES (\("P\(row)"), \(row))") }
        }
        try world.sync(current)
        try world.sync(behind)
        let upgraded = try upgrade(behind)
        try upgraded.advanceClock(by: 1_000)
        try upgraded.execute("UPDATE people SET age = \(100) WHERE first = \("P3")")
        try world.push(upgraded)
        try world.pull(upgraded, limit: 4)
        try world.sync(current)
        #expect(try SyncWorld.dump(upgraded.queue) == SyncWorld.dump(current.queue))
        #expect(
            try current.queue.read { db in try db.fetchOne(Int.self, "SELECT age FROM people WHERE first = 'P3'") }
                == 100)
    }

    @Test func rowsOfATableTheDeviceDoesNotSyncYetArriveAfterItUpgrades() throws {
        let pets = SyncedTable("pets", columns: ["name"])
        let schema = SyncSchema(tables: [People.table, pets])
        func replica(_ schema: SyncSchema, pets: Bool) throws -> DatabaseQueue {
            let queue = try DatabaseQueue.inMemory()
            try queue.write { db in
                try db.execute(sql: People.create)
                if pets { try db.execute("CREATE TABLE pets (id INTEGER PRIMARY KEY, name TEXT)") }
                try schema.install(in: db)
            }
            return queue
        }
        let world = SyncWorld(queue: try replica(schema, pets: true), schema: schema)
        let current = Device(queue: try replica(schema, pets: true), schema: schema)
        let behind = Device(queue: try replica(People.schema, pets: false), schema: People.schema)
        try current.execute("INSERT INTO people (first) VALUES (\("Ada"))")
        try current.execute("INSERT INTO pets (name) VALUES (\("Rex"))")
        try world.sync(current)
        try world.sync(behind)
        #expect(try world.count(behind.queue) == 1)

        try behind.queue.write { db in
            try db.execute("CREATE TABLE pets (id INTEGER PRIMARY KEY, name TEXT)")
            try schema.install(in: db)
        }
        let upgraded = Device(queue: behind.queue, schema: schema)
        try world.sync(upgraded)
        #expect(try upgraded.queue.read { db in try db.fetchAll(String.self, "SELECT name FROM pets") } == ["Rex"])
    }

    @Test func aServerBehindRefusesANewColumnClearlyAndTakesItOnceUpgraded() throws {
        let world = try SyncWorld(schema: Self.oldSchema)
        let device = try Device()
        try device.execute("INSERT INTO people (first, age) VALUES (\("Ada"), \(36))")
        let request = try #require(try device.client.makePush())
        #expect {
            try world.server.push(request)
        } throws: { ($0 as? SyncError)?.kind == .unknownColumn(table: "people", column: "age") }
        #expect(try world.count(world.serverQueue) == 0)
        #expect(try device.client.makePush() == request)  // kept, to send again

        let upgraded = SyncServer(writer: world.serverQueue, schema: People.schema)
        try world.serverQueue.write { db in try People.schema.install(in: db) }
        try device.client.acknowledge(try upgraded.push(request), for: request)
        #expect(
            try world.serverQueue.read { db in try db.fetchOne(Int.self, "SELECT age FROM people") } == 36)
    }
}

extension Device {
    /// A device over `queue` syncing `schema`.
    init(queue: DatabaseQueue, schema: SyncSchema) {
        self.queue = queue
        client = SyncClient(writer: queue, schema: schema)
        id = (try? client.replicaID()) ?? UUID()
    }
}
