import Foundation
import SQLiteStore
import Testing

@testable import SQLiteStoreSync

/// The merge rules, each in both orders of arrival.
struct MergeTests {
    /// A server and two devices that share one row, Ada, age 36.
    private func sharedRow() throws -> (SyncWorld, Device, Device) {
        let world = try SyncWorld()
        let (a, b) = (try Device(), try Device())
        try a.execute("INSERT INTO people (first, last, age) VALUES (\("Ada"), \("Lovelace"), \(36))")
        try world.sync(a)
        try world.sync(b)
        return (world, a, b)
    }

    private func converged(_ world: SyncWorld, _ devices: Device...) throws -> [String] {
        for device in devices { try world.sync(device) }
        for device in devices { try world.sync(device) }
        let dump = try SyncWorld.dump(world.serverQueue)
        for device in devices { #expect(try SyncWorld.dump(device.queue) == dump) }
        return dump
    }

    @Test func concurrentEditsOfDifferentColumnsBothSurvive() throws {
        for aFirst in [true, false] {
            let (world, a, b) = try sharedRow()
            try a.execute("UPDATE people SET first = \("Augusta")")
            try b.execute("UPDATE people SET age = \(37)")
            try world.sync(aFirst ? a : b)
            let dump = try converged(world, aFirst ? b : a, aFirst ? a : b)
            #expect(dump.count == 1)
            #expect(dump[0].hasSuffix("|'Augusta'|'Lovelace'|37|NULL"))
            #expect(try world.conflicts().isEmpty)
        }
    }

    @Test func theLaterVersionOfAColumnWinsAndTheEarlierIsLogged() throws {
        for laterFirst in [true, false] {
            let (world, a, b) = try sharedRow()
            try a.execute("UPDATE people SET first = \("Augusta")")
            try b.advanceClock(by: 1_000)
            try b.execute("UPDATE people SET first = \("Ada Augusta")")
            try world.sync(laterFirst ? b : a)
            let dump = try converged(world, laterFirst ? a : b, laterFirst ? b : a)
            #expect(dump[0].contains("|'Ada Augusta'|"))
            let conflicts = try world.conflicts()
            #expect(conflicts.count == 1)
            let conflict = try #require(conflicts.first)
            #expect(conflict.column == "first")
            #expect(conflict.losingValue == .text("Augusta"))
            #expect(conflict.losingVersion.replica == a.id)
            #expect(conflict.winningValue == .text("Ada Augusta"))
            #expect(conflict.winningVersion.replica == b.id)
            #expect(conflict.winningVersion > conflict.losingVersion)
            #expect(!conflict.winnerIsDelete)
            #expect(conflict.globalID == (try a.globalID(ofRow: 1)))
        }
    }

    @Test func equalClocksAreDecidedByReplicaIdentity() throws {
        let (world, a, b) = try sharedRow()
        let clock = (Int64(Date().timeIntervalSince1970 * 1000) + 1_000) << 16
        for device in [a, b] { try device.execute("UPDATE sqlitestore_sync_state SET clock = \(clock - 1)") }
        try a.execute("UPDATE people SET first = \("A")")
        try b.execute("UPDATE people SET first = \("B")")
        let dump = try converged(world, a, b)
        let winner = Version(clock: clock, replica: a.id) > Version(clock: clock, replica: b.id) ? "A" : "B"
        #expect(dump[0].contains("|'\(winner)'|"))
        #expect(try world.conflicts().count == 1)
    }

    @Test func anEditMadeAfterSeeingAnotherIsNoConflict() throws {
        let (world, a, b) = try sharedRow()
        try a.execute("UPDATE people SET first = \("Augusta")")
        try world.sync(a)
        try world.sync(b)
        try b.execute("UPDATE people SET first = \("Ada")")
        let dump = try converged(world, a, b)
        #expect(dump[0].contains("|'Ada'|"))
        #expect(try world.conflicts().isEmpty)
    }

    /// The declared rule: a delete wins over every concurrent update of the
    /// row, earlier or later, in either order of arrival; the update's
    /// value is kept in the conflict log.
    @Test(arguments: [(true, true), (true, false), (false, true), (false, false)])
    func deleteWinsOverAConcurrentUpdate(updateIsLater: Bool, updateArrivesFirst: Bool) throws {
        let (world, a, b) = try sharedRow()
        try a.execute("DELETE FROM people")
        if updateIsLater { try b.advanceClock(by: 1_000) } else { try a.advanceClock(by: 1_000) }
        try b.execute("UPDATE people SET age = \(37)")
        try world.sync(updateArrivesFirst ? b : a)
        let dump = try converged(world, updateArrivesFirst ? a : b, updateArrivesFirst ? b : a)
        #expect(dump.isEmpty)
        let conflicts = try world.conflicts()
        #expect(conflicts.count == 1)
        let conflict = try #require(conflicts.first)
        #expect(conflict.winnerIsDelete)
        #expect(conflict.column == "age")
        #expect(conflict.losingValue == .integer(37))
        #expect(conflict.losingVersion.replica == b.id)
        #expect(conflict.winningVersion.replica == a.id)
    }

    @Test func aRowDeletedOnTwoDevicesIsDeletedOnceWithNoConflict() throws {
        let (world, a, b) = try sharedRow()
        try a.execute("DELETE FROM people")
        try b.execute("DELETE FROM people")
        #expect(try converged(world, a, b).isEmpty)
        #expect(try world.conflicts().isEmpty)
    }

    @Test func rowsCreatedOfflineOnTwoDevicesStayTwoRows() throws {
        let world = try SyncWorld()
        let (a, b) = (try Device(), try Device())
        try a.execute("INSERT INTO people (id, first) VALUES (1, \("Ada"))")
        try b.execute("INSERT INTO people (id, first) VALUES (1, \("Ada"))")
        #expect(try converged(world, a, b).count == 2)
    }
}

/// The server's own writes merge like a device's.
struct ServerWriteMergeTests {
    @Test(arguments: [true, false])
    func aDeviceDeleteWinsOverAConcurrentServerEdit(serverEditsToNull: Bool) throws {
        let world = try SyncWorld()
        let a = try Device()
        try a.execute("INSERT INTO people (first, age) VALUES (\("Ada"), \(36))")
        try world.sync(a)
        let value: Int? = serverEditsToNull ? nil : 37
        try world.serverQueue.write { db in try db.execute("UPDATE people SET age = \(value)") }
        try a.execute("DELETE FROM people")
        try world.sync(a)
        #expect(try world.count(world.serverQueue) == 0)
        let conflicts = try world.conflicts()
        #expect(conflicts.map(\.losingValue) == [value.map { .integer(Int64($0)) } ?? .null])
    }

    @Test func aServerDeleteWinsOverAConcurrentDeviceEdit() throws {
        let world = try SyncWorld()
        let a = try Device()
        try a.execute("INSERT INTO people (first, age) VALUES (\("Ada"), \(36))")
        try world.sync(a)
        try world.serverQueue.write { db in try db.execute("DELETE FROM people") }
        try a.execute("UPDATE people SET age = NULL")
        try world.sync(a)
        try world.sync(a)
        #expect(try world.count(a.queue) == 0)
        #expect(try world.conflicts().map(\.losingValue) == [.null])
    }
}
