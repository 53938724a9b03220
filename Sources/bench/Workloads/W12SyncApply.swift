import Foundation
import SQLiteStore
import SQLiteStoreSync

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// The synced people table of W12.
private let syncSchema = SyncSchema(tables: [SyncedTable("people", columns: ["first", "last", "age", "picture"])])
private let syncedPeopleTable =
    "CREATE TABLE people (id INTEGER PRIMARY KEY, first TEXT, last TEXT, age INTEGER, picture BLOB)"

/// What the template prepared for the timed runs: the pull that brings
/// one changed column of every row, from the server.
private final class PreparedPull {
    var request: PullRequest?
    var response: Data?
}

/// A server with `rows` people, and a device at `path` that has pulled
/// them all; then the server changes every row's age, and the pull that
/// carries those changes is kept.
private func makeSyncedDevice(path: String, rows: Int, into prepared: PreparedPull) throws {
    let server = try DatabaseQueue.inMemory()
    try server.write { db in
        try db.execute(sql: syncedPeopleTable)
        try syncSchema.install(in: db)
        let insert = try db.makeStatement(sql: "INSERT INTO people (first, last, age) VALUES (?, ?, ?)")
        for row in 0..<rows { try insert.execute(values: "First \(row)", "Last \(row)", row) }
    }
    let syncServer = SyncServer(writer: server, schema: syncSchema)
    let device = try DatabaseQueue(path: path)
    try device.write { db in
        try db.execute(sql: syncedPeopleTable)
        try syncSchema.install(in: db)
    }
    let client = SyncClient(writer: device, schema: syncSchema)
    var request: PullRequest
    repeat {
        request = try client.makePull()
    } while try client.apply(try syncServer.pull(request), for: request) > 0
    try server.write { db in try db.execute(sql: "UPDATE people SET age = id + 1000") }
    request = try client.makePull(limit: rows + 1)
    let response = try syncServer.pull(request)
    guard response.changes.changeCount == rows else {
        throw BenchError("W12: the pull holds \(response.changes.changeCount) changes, not \(rows)")
    }
    prepared.request = request
    prepared.response = try JSONEncoder().encode(response)
    try device.close()
}

private func agesOutcome(path: String) throws -> Outcome {
    let connection = try RawConnection(path: path)
    let figures = try connection.integers("SELECT COUNT(*), SUM(age) FROM people")
    return Outcome(count: figures[0], sum: figures[1])
}

extension Workloads {
    /// W12: a device applies a pull of 10,000 remote one-column updates
    /// (the goal: at most 250 ms). Raw: the same 10,000 UPDATEs on
    /// the C API with the capture triggers off, the floor of any apply;
    /// SQLiteStore: `SyncClient.apply`, which also compares each column's
    /// version and records the new one.
    static var w12SyncApply: Workload {
        let prepared = PreparedPull()
        return Workload(
            id: "W12", title: "sync: apply remote 1-column updates", target: .none,
            rowCount: { min($0, 10_000) },
            template: { path, rows in try makeSyncedDevice(path: path, rows: rows, into: prepared) },
            raw: { run in
                let connection = try RawConnection(path: run.path)
                let statement = try connection.prepare("UPDATE people SET age = ? WHERE id = ?")
                defer { sqlite3_finalize(statement) }
                try run.measure {
                    try connection.execute("BEGIN IMMEDIATE")
                    try connection.execute("UPDATE sqlitestore_sync_state SET applying = 1")
                    for id in 1...run.rows {
                        try connection.check(sqlite3_bind_int64(statement, 1, Int64(id + 1000)), "bind")
                        try connection.check(sqlite3_bind_int64(statement, 2, Int64(id)), "bind")
                        try connection.check(sqlite3_step(statement), "update", expected: SQLITE_DONE)
                        try connection.check(sqlite3_reset(statement), "reset")
                    }
                    try connection.execute("UPDATE sqlitestore_sync_state SET applying = 0")
                    try connection.execute("COMMIT")
                }
                return try agesOutcome(path: run.path)
            },
            store: { run in
                guard let request = prepared.request, let data = prepared.response else {
                    throw BenchError("W12: no prepared pull")
                }
                let response = try JSONDecoder().decode(PullResponse.self, from: data)
                let device = try DatabaseQueue(path: run.path)
                let client = SyncClient(writer: device, schema: syncSchema)
                let applied = try run.measure { try client.apply(response, for: request) }
                try device.close()
                guard applied == run.rows else { throw BenchError("W12: applied \(applied) of \(run.rows)") }
                return try agesOutcome(path: run.path)
            })
    }

    /// Bytes on the wire per one-column update, in bulk (10,000 in one
    /// batch) and alone, before HTTP; the goals are 60 and 100.
    static func syncWireSizes() throws -> String {
        let server = try DatabaseQueue.inMemory()
        let device = try DatabaseQueue.inMemory()
        for queue in [server, device] {
            try queue.write { db in
                try db.execute(sql: syncedPeopleTable)
                try syncSchema.install(in: db)
            }
        }
        let syncServer = SyncServer(writer: server, schema: syncSchema)
        let client = SyncClient(writer: device, schema: syncSchema)
        try device.write { db in
            let insert = try db.makeStatement(sql: "INSERT INTO people (first, last, age) VALUES (?, ?, ?)")
            for row in 0..<10_000 { try insert.execute(values: "First \(row)", "Last \(row)", row) }
        }
        func pushedSize(_ update: String) throws -> (bytes: Int, changes: Int) {
            try device.write { db in try db.execute(sql: update) }
            guard let request = try client.makePush() else { throw BenchError("sync sizes: nothing to push") }
            try client.acknowledge(try syncServer.push(request), for: request)
            return (request.changes.encoded().count, request.changes.changeCount)
        }
        _ = try pushedSize("UPDATE people SET age = age WHERE 0")  // the inserts
        let bulk = try pushedSize("UPDATE people SET age = age + 1")
        let single = try pushedSize("UPDATE people SET age = age + 1 WHERE id = 5000")
        let perChange = Double(bulk.bytes) / Double(bulk.changes)
        // The goals: at most 60 bytes each in bulk, 100 alone.
        guard perChange <= 60, single.bytes <= 100 else {
            throw BenchError(
                "sync wire size over the goal: \(perChange) bytes per update in bulk (at most 60), "
                    + "\(single.bytes) alone (at most 100)")
        }
        return String(
            format: "sync wire size: %.1f bytes per one-column update in bulk (%d in %d bytes), %d for one alone "
                + "(goals: at most 60 and 100, met)",
            perChange, bulk.changes, bulk.bytes, single.bytes)
    }
}
