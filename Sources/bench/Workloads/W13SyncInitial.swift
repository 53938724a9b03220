import Foundation
import SQLiteStore
import SQLiteStoreSync

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// W13's schema: W12's people table.
private let initialSchema = SyncSchema(tables: [SyncedTable("people", columns: ["first", "last", "age", "picture"])])
private let initialPeopleTable =
    "CREATE TABLE people (id INTEGER PRIMARY KEY, first TEXT, last TEXT, age INTEGER, picture BLOB)"

/// The server W13's device syncs from, built once by the template and
/// kept in memory across runs.
private final class InitialSyncServer {
    var server: SyncServer?
}

extension Workloads {
    /// W13: initial sync of `--rows` people (100,000 by default) to an
    /// empty device (the goal: at most 5 s), through the server's
    /// pull and the device's apply, in pages of 10,000, in-process. Raw:
    /// the same rows inserted on the C API with the capture triggers off,
    /// the floor of any apply.
    static var w13SyncInitial: Workload {
        let prepared = InitialSyncServer()
        return Workload(
            id: "W13", title: "sync: initial sync to an empty device", target: .none,
            template: { path, rows in
                let queue = try DatabaseQueue.inMemory()
                try queue.write { db in
                    try db.execute(sql: initialPeopleTable)
                    try initialSchema.install(in: db)
                    let insert = try db.makeStatement(sql: "INSERT INTO people (first, last, age) VALUES (?, ?, ?)")
                    for row in 0..<rows { try insert.execute(values: "First \(row)", "Last \(row)", row) }
                }
                let server = SyncServer(writer: queue, schema: initialSchema)
                _ = try server.position()  // the server's own writes take their positions once
                prepared.server = server
                let device = try DatabaseQueue(path: path)
                try device.write { db in
                    try db.execute(sql: initialPeopleTable)
                    try initialSchema.install(in: db)
                }
                try device.close()
            },
            raw: { run in
                let connection = try RawConnection(path: run.path)
                let statement = try connection.prepare("INSERT INTO people (first, last, age) VALUES (?, ?, ?)")
                defer { sqlite3_finalize(statement) }
                try run.measure {
                    try connection.execute("BEGIN IMMEDIATE")
                    try connection.execute("UPDATE sqlitestore_sync_state SET applying = 1")
                    for row in 0..<run.rows {
                        try connection.check(sqlite3_bind_text(statement, 1, "First \(row)", -1, transient), "bind")
                        try connection.check(sqlite3_bind_text(statement, 2, "Last \(row)", -1, transient), "bind")
                        try connection.check(sqlite3_bind_int64(statement, 3, Int64(row)), "bind")
                        try connection.check(sqlite3_step(statement), "insert", expected: SQLITE_DONE)
                        try connection.check(sqlite3_reset(statement), "reset")
                    }
                    try connection.execute("UPDATE sqlitestore_sync_state SET applying = 0")
                    try connection.execute("COMMIT")
                }
                return try initialOutcome(path: run.path)
            },
            store: { run in
                guard let server = prepared.server else { throw BenchError("W13: no prepared server") }
                let device = try DatabaseQueue(path: run.path)
                let client = SyncClient(writer: device, schema: initialSchema)
                try run.measure {
                    while true {
                        let request = try client.makePull(limit: 10_000)
                        let response = try server.pull(request)
                        try client.apply(response, for: request)
                        if !response.hasMore { break }
                    }
                }
                try device.close()
                return try initialOutcome(path: run.path)
            })
    }
}

private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

private func initialOutcome(path: String) throws -> Outcome {
    let connection = try RawConnection(path: path)
    let figures = try connection.integers("SELECT COUNT(*), SUM(age) FROM people")
    return Outcome(count: figures[0], sum: figures[1])
}
