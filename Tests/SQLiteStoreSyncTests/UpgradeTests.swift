import Foundation
import SQLiteStore
import Testing

@testable import SQLiteStoreSync

/// Replicas whose bookkeeping was made before rows had numbers (when cells
/// were keyed by the 16-byte global identity) upgrade when the schema is
/// installed again, and keep syncing with nothing lost.
///
/// The fixtures are SQL dumps of a server and two devices made by that
/// version of the engine (`swift test` of it, then `sqlite3 .dump`): device
/// A has pushed Ada (with a picture), Grace and Bob, then edited Ada and
/// Grace and added Alan without pushing; device B pulled them, deleted Bob
/// and edited Grace's last name and pushed that, then added Edsger without
/// pushing; the server added Katherine itself.
struct UpgradeTests {
    /// A replica loaded from the fixture `name`, as the old engine left it.
    private func fixture(_ name: String) throws -> DatabaseQueue {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/before-row-numbers-\(name).sql")
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in try db.execute(sql: try String(contentsOf: url, encoding: .utf8)) }
        return queue
    }

    /// The cells of every row, by identity: what the upgrade must keep.
    private func versions(_ queue: DatabaseQueue, oldLayout: Bool) throws -> [String] {
        let join = oldLayout ? "c.tbl = r.tbl AND c.gid = r.gid" : "c.row = r.id"
        return try queue.read { db in
            try db.fetchAll(
                sql: """
                    SELECT hex(r.gid), r.local_id, r.deleted, r.created, c.col, c.clock, c.replica, c.position
                    FROM sqlitestore_sync_rows AS r JOIN sqlitestore_sync_cells AS c ON \(join)
                    ORDER BY r.tbl, r.gid, c.col
                    """
            ).map { row in row.values.map(\.description).joined(separator: "|") }
        }
    }

    /// Each person, text quoted, with the length of the picture.
    private func people(_ queue: DatabaseQueue) throws -> [String] {
        try queue.read { db in
            try db.fetchAll("SELECT first, last, age, length(picture) FROM people ORDER BY first").map { row in
                row.values.map(\.description).joined(separator: "|")
            }
        }
    }

    private func upgrade(_ queue: DatabaseQueue) throws {
        try queue.write { db in try People.schema.install(in: db) }
    }

    @Test func theUpgradeNumbersTheRowsAndKeepsEveryVersion() throws {
        for name in ["server", "a", "b"] {
            let queue = try fixture(name)
            let before = try versions(queue, oldLayout: true)
            let outbox = try queue.read { db in try db.fetchAll("SELECT * FROM sqlitestore_sync_outbox ORDER BY seq") }
            #expect(!before.isEmpty)
            try upgrade(queue)
            #expect(try versions(queue, oldLayout: false) == before)
            try queue.read { db in
                #expect(try db.columns(in: "sqlitestore_sync_cells").map(\.name).contains("row"))
                #expect(try !db.columns(in: "sqlitestore_sync_cells").map(\.name).contains("gid"))
                #expect(
                    try db.fetchAll("SELECT * FROM sqlitestore_sync_outbox ORDER BY seq").map(\.values)
                        == outbox.map(\.values))
                // Every row numbered, in the order of the identities.
                let gids = try db.fetchAll(Data.self, "SELECT gid FROM sqlitestore_sync_rows ORDER BY id")
                #expect(gids == gids.sorted { $0.lexicographicallyPrecedes($1) })
            }
            // A second install finds nothing to upgrade and changes nothing.
            try upgrade(queue)
            #expect(try versions(queue, oldLayout: false) == before)
        }
    }

    @Test func aReplicaNotUpgradedYetIsToldToInstallAgainAndKeepsItsChanges() throws {
        let queue = try fixture("a")
        let client = SyncClient(writer: queue, schema: People.schema)
        let pending = try queue.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM sqlitestore_sync_outbox") }
        #expect {
            try client.makePush()
        } throws: { error in
            guard let error = error as? SyncError, case .notInstalled = error.kind else { return false }
            return error.message.contains("install again")
        }
        // Its triggers still capture writes until the upgrade.
        try queue.write { db in try db.execute(sql: "UPDATE people SET age = 50 WHERE first = 'Grace'") }
        try upgrade(queue)
        let after = try queue.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM sqlitestore_sync_outbox") }
        #expect(after == (pending ?? 0) + 1)
        #expect(try client.makePush()?.changes.changeCount == after)
    }

    @Test func upgradedReplicasSyncWhatWasPendingAndWhatComesAfter() throws {
        let serverQueue = try fixture("server")
        let aQueue = try fixture("a")
        let bQueue = try fixture("b")
        for queue in [serverQueue, aQueue, bQueue] { try upgrade(queue) }
        let world = SyncWorld(queue: serverQueue, schema: People.schema)
        let a = Device(queue: aQueue, schema: People.schema)
        let b = Device(queue: bQueue, schema: People.schema)
        /// Syncs A, B, then A again, and checks that the three replicas hold `expected`.
        func syncAll(expecting expected: [String]) throws {
            try world.sync(a)
            try world.sync(b)
            try world.sync(a)
            for queue in [aQueue, bQueue, serverQueue] {
                let found = try people(queue)
                #expect(found == expected)
            }
            #expect(try SyncWorld.dump(aQueue) == SyncWorld.dump(bQueue))
            #expect(try SyncWorld.dump(serverQueue) == SyncWorld.dump(aQueue))
        }
        // A's edits made before the upgrade go up (its later edit of Grace
        // beats B's), B's delete and insert reach A, the server's row both.
        try syncAll(expecting: [
            "'Ada'|'Lovelace'|37|3000", "'Alan'|'Turing'|41|NULL", "'Edsger'|'Dijkstra'|72|NULL",
            "'Grace'|'Hopper (A)'|85|NULL", "'Katherine'|'Johnson'|101|NULL",
        ])
        #expect(try world.conflicts().contains { $0.column == "last" && $0.losingValue == .text("Hopper-Murray") })

        // Edits after the upgrade: an update, a delete, an insert, a new picture.
        try b.execute("UPDATE people SET age = \(86) WHERE first = \("Grace")")
        try a.execute("DELETE FROM people WHERE first = \("Alan")")
        try a.execute("INSERT INTO people (first, last) VALUES (\("Barbara"), \("Liskov"))")
        try a.execute("UPDATE people SET picture = \(Data(repeating: 9, count: 5000)) WHERE first = \("Ada")")
        try syncAll(expecting: [
            "'Ada'|'Lovelace'|37|5000", "'Barbara'|'Liskov'|NULL|NULL", "'Edsger'|'Dijkstra'|72|NULL",
            "'Grace'|'Hopper (A)'|86|NULL", "'Katherine'|'Johnson'|101|NULL",
        ])
        #expect(
            try bQueue.read { db in try db.fetchOne(Data.self, "SELECT picture FROM people WHERE first = 'Ada'") }
                == Data(repeating: 9, count: 5000))
    }
}
