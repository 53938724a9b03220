import Foundation
import SQLiteStore
import Testing

@testable import SQLiteStoreSync

/// SplitMix64: the same numbers for the same seed on every platform.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A seeded scenario: a server and three devices write offline, then sync
/// in a random order, some several times, some stopped half-way; then
/// every replica must hold the same rows, and every write must be either
/// present or in the conflict log beside the value that beat it.
///
/// `SYNC_SEEDS=10000` runs more seeds (from `SYNC_FIRST_SEED`), `SYNC_SEED=n` replays one,
/// `SYNC_CHANGES=n` sets the most changes a replica makes per round.
struct ConvergenceTests {
    private static let environment = ProcessInfo.processInfo.environment
    /// The first seed of a run of `SYNC_SEEDS` (`SYNC_FIRST_SEED`, 1 by
    /// default), so that a long run can be split.
    private static let first = environment["SYNC_FIRST_SEED"].flatMap(UInt64.init) ?? 1
    static let seeds: [UInt64] =
        if let seed = environment["SYNC_SEED"].flatMap(UInt64.init) {
            [seed]
        } else {
            Array(first..<first + UInt64(environment["SYNC_SEEDS"].flatMap(Int.init) ?? 200))
        }

    /// One case per seed, run in parallel; a failing case names its seed.
    @Test(arguments: seeds)
    func replicasConvergeAndNoWriteIsLostSilently(seed: UInt64) throws {
        let changes = Self.environment["SYNC_CHANGES"].flatMap(Int.init) ?? 30
        do {
            var scenario = try Scenario(seed: seed, maximumChanges: changes)
            try scenario.run()
        } catch {
            Issue.record("seed \(seed) failed (replay: SYNC_SEED=\(seed) SYNC_CHANGES=\(changes)): \(error)")
        }
    }
}

struct ScenarioFailure: Error, CustomStringConvertible {
    let description: String
}

private struct Scenario {
    static let columns = People.table.columns
    let maximumChanges: Int
    var random: SeededGenerator
    let world: SyncWorld
    let devices: [Device]
    /// The server's database, written by its own users too.
    let serverWriter: Device
    /// What happened, for the message of a failing seed.
    var events: [String] = []

    init(seed: UInt64, maximumChanges: Int) throws {
        self.maximumChanges = maximumChanges
        random = SeededGenerator(seed: seed)
        world = try SyncWorld()
        devices = try (0..<3).map { _ in try Device() }
        serverWriter = Device(reopened: world.serverQueue)
    }

    /// Each replica's last write of each cell this round: replica -> row -> column -> value.
    typealias Writes = [UUID: [String: [String: SQLiteValue]]]

    mutating func run() throws {
        for _ in 0..<(1 + Int.random(in: 0..<3, using: &random)) {
            var writes: Writes = [:]
            let start = try world.server.position()
            for device in devices {
                try write(on: device, count: Int.random(in: 0...maximumChanges, using: &random), into: &writes)
            }
            try write(on: serverWriter, count: Int.random(in: 0...maximumChanges / 4, using: &random), into: &writes)
            events.append("server is \(serverWriter.id)")
            try syncRandomly()
            // Then everyone syncs to the end, twice round.
            for _ in 0..<2 {
                for device in devices.shuffled(using: &random) { try world.sync(device) }
            }
            try check(writes, since: start)
        }
    }

    // MARK: Writing offline

    private mutating func value(of column: String) -> SQLiteValue {
        let pick = Int.random(in: 0..<10, using: &random)
        if pick == 0 { return .null }
        switch column {
        case "first": return .text(["Ada", "Grace", "Alan", "Edsger", "Barbara"][pick % 5] + String(pick))
        case "last": return .text(["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov"][pick % 5])
        case "age": return .integer(Int64(Int.random(in: 0..<100, using: &random)))
        default:
            // Pictures: a few chunks each, often the same bytes on several replicas.
            return .blob(Data((0..<Int.random(in: 0..<12, using: &random)).map { _ in UInt8(pick) }))
        }
    }

    private mutating func write(on replica: Device, count: Int, into writes: inout Writes) throws {
        for _ in 0..<count {
            let ids = try replica.queue.read { db in try db.fetchAll(Int64.self, "SELECT id FROM people ORDER BY id") }
            let choice = Int.random(in: 0..<100, using: &random)
            if ids.isEmpty || choice < 30 {
                var values: [String: SQLiteValue] = [:]
                for column in Self.columns { values[column] = value(of: column) }
                let id = try replica.queue.write { db in
                    try db.execute(
                        """
                        INSERT INTO people (first, last, age, picture)
                        VALUES (\(values["first"]!), \(values["last"]!), \(values["age"]!), \(values["picture"]!))
                        """)
                    return db.lastInsertedRowID
                }
                writes[replica.id, default: [:]][try gid(of: id, on: replica)] = values
                events.append("\(replica.id) inserts \(try gid(of: id, on: replica)) \(values)")
            } else if choice < 88 {
                let id = ids.randomElement(using: &random)!
                let row = try gid(of: id, on: replica)
                for column in Self.columns.shuffled(using: &random).prefix(Int.random(in: 1...3, using: &random)) {
                    let value = value(of: column)
                    let before = try replica.queue.write { db in
                        let before = try db.fetchOne("SELECT \(identifier: column) FROM people WHERE id = \(id)")
                        try db.execute("UPDATE people SET \(identifier: column) = \(value) WHERE id = \(id)")
                        return try before?[0]
                    }
                    // Writing the value a cell already holds changes nothing: no version, nothing to lose.
                    if before != value { writes[replica.id, default: [:]][row, default: [:]][column] = value }
                    events.append(
                        "\(replica.id) sets \(row) \(column) = \(value) (was \(before.map(\.description) ?? "?"))")
                }
            } else {
                let id = ids.randomElement(using: &random)!
                let row = try gid(of: id, on: replica)
                try replica.execute("DELETE FROM people WHERE id = \(id)")
                events.append("\(replica.id) deletes \(row)")
                // Its own delete supersedes the replica's edits of the row.
                writes[replica.id]?[row] = nil
            }
        }
    }

    private func gid(of id: Int64, on replica: Device) throws -> String {
        try replica.globalID(ofRow: id).uuidString
    }

    // MARK: Syncing

    private static func carried<Message: Codable>(_ message: Message) throws -> Message {
        try SyncWorld.carried(message)
    }

    private mutating func syncRandomly() throws {
        for _ in 0..<(devices.count * Int.random(in: 1...3, using: &random)) {
            let device = devices.randomElement(using: &random)!
            let action = Int.random(in: 0..<6, using: &random)
            events.append("\(device.id) sync action \(action)")
            switch action {
            case 0:
                try world.sync(device)
            case 1:
                // Stopped after the server applied the push, before the
                // acknowledgement was recorded.
                guard let request = try device.client.makePush() else { continue }
                _ = try world.upload(request, from: device)
                do {
                    _ = try world.server.push(try Self.carried(request))
                } catch let error as SyncError {
                    guard case .replayedPush(let acknowledged) = error.kind else { throw error }
                    try device.client.resume(after: acknowledged)
                }
            case 2:
                // Stopped after the server answered a pull, before it was applied.
                _ = try world.server.pull(try Self.carried(try device.client.makePull()))
            case 4:
                // The connection breaks during the upload of a picture, after a few chunks.
                guard let request = try device.client.makePush() else { continue }
                _ = try world.upload(request, from: device, breakAfter: Int.random(in: 0..<3, using: &random))
            case 5:
                // The connection breaks during the download of a picture.
                let request = try device.client.makePull()
                let response = try Self.carried(try world.server.pull(try Self.carried(request)))
                do {
                    if try world.download(response, to: device, breakAfter: Int.random(in: 0..<3, using: &random)) {
                        try device.client.apply(response, for: request)
                    }
                } catch let error as SyncError {
                    guard case .unknownLargeValue = error.kind else { throw error }
                }
            default:
                try world.push(device)
            }
        }
    }

    // MARK: Checking

    private func check(_ writes: Writes, since start: Int64) throws {
        let expected = try SyncWorld.dump(world.serverQueue)
        for (index, device) in devices.enumerated() {
            let dump = try SyncWorld.dump(device.queue)
            guard dump == expected else {
                throw ScenarioFailure(
                    description: "device \(index) differs from the server:\n\(dump.joined(separator: "\n"))\n"
                        + "server:\n\(expected.joined(separator: "\n"))")
            }
            guard try world.count(device.queue) == dump.count else {
                throw ScenarioFailure(description: "device \(index) has rows without a global identity")
            }
        }
        let identities = expected.map { $0.prefix(32) }
        guard Set(identities).count == identities.count, try world.count(world.serverQueue) == expected.count else {
            throw ScenarioFailure(description: "a record exists twice on the server")
        }

        let final = try finalValues()
        let allConflicts = try world.conflicts()
        let losers = Set(allConflicts.map { "\($0.globalID)|\($0.column)|\($0.losingVersion)" })
        guard losers.count == allConflicts.count else {
            throw ScenarioFailure(description: "a losing value is logged twice")
        }
        // This round's: earlier rounds' writes were checked then, and may
        // have been overwritten since by edits made after seeing them.
        let conflicts = allConflicts.filter { $0.position > start }
        for (replica, rows) in writes {
            for (row, columns) in rows {
                for (column, value) in columns where final[row]?[column] != value {
                    // Two concurrent writes of one value are no conflict: the log
                    // keeps that value once, under the version that survived longest.
                    let sameCell = conflicts.filter {
                        $0.globalID.uuidString == row && $0.column == column
                            && $0.losingValue == Self.logged(value, column)
                    }
                    let logged = sameCell.first { $0.losingVersion.replica == replica } ?? sameCell.first
                    guard let logged else {
                        throw ScenarioFailure(
                            description: "\(replica)'s write \(column) = \(value) of row \(row) is neither present "
                                + "(\(final[row]?[column].map(\.description) ?? "row gone")) nor in the conflict log; "
                                + "the log: \(conflicts.filter { $0.globalID.uuidString == row }); events:\n"
                                + events.filter { $0.contains(row) || $0.contains("sync") || $0.contains("server") }
                                .joined(separator: "\n"))
                    }
                    let winnerKnown =
                        logged.winnerIsDelete
                        ? final[row] == nil
                        : final[row]?[column].map { Self.logged($0, column) } == logged.winningValue
                            || conflicts.contains {
                                $0.globalID == logged.globalID && $0.column == column
                                    && $0.losingVersion == logged.winningVersion
                            }
                    guard winnerKnown, logged.winningVersion > logged.losingVersion || logged.winnerIsDelete else {
                        throw ScenarioFailure(
                            description: "the value that beat \(value) is not accounted for: \(logged)")
                    }
                }
            }
        }
    }

    /// A value as the conflict log records it: a picture (a large value) by
    /// its reference.
    static func logged(_ value: SQLiteValue, _ column: String) -> SQLiteValue {
        guard People.table.isLarge(column), case .blob(let bytes) = value else { return value }
        return .text(LargeValueReference(of: bytes).description)
    }

    /// The server's rows: identity -> column -> value.
    private func finalValues() throws -> [String: [String: SQLiteValue]] {
        try world.serverQueue.read { db in
            var values: [String: [String: SQLiteValue]] = [:]
            for row in try db.fetchAll(
                """
                SELECT r.gid, p.first, p.last, p.age, p.picture FROM people AS p
                JOIN sqlitestore_sync_rows AS r ON r.local_id = p.id AND r.tbl = 1
                """)
            {
                let gid = UUID(bytes: try row.decode(Data.self, at: 0))!.uuidString
                for (index, column) in Self.columns.enumerated() {
                    // Typed, so that NULL is stored as a value, not as a missing key.
                    let value: SQLiteValue = try row[index + 1]
                    values[gid, default: [:]][column] = value
                }
            }
            return values
        }
    }
}
