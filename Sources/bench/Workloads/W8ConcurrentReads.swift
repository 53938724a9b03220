import Foundation
import SQLiteStore
#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

extension Workloads {
    /// W8: W2's full-table fetch run by 1, 2 and 4 readers at once, on a
    /// `DatabasePool` against one connection per reader thread on the C API.
    /// The table holds `--rows` rows and each reader reads all of them, so a
    /// run reads `rows` x readers rows (its outcome's count, which the rates
    /// divide by); throughput per reader count is printed after the table.
    /// Both sides use WAL, as the pool does.
    static var w8ConcurrentReads: [Workload] { [1, 2, 4].map(w8ConcurrentReads(readers:)) }

    static func w8ConcurrentReads(readers: Int) -> Workload {
        Workload(
            id: "W8", title: "concurrent reads, \(readers) reader\(readers == 1 ? "" : "s")", target: .ratio(1.15),
            template: makeTenIntegersTable,
            raw: { run in try rawConcurrentReads(run, readers: readers) },
            store: { run in try poolConcurrentReads(run, readers: readers) })
    }
}

/// W8's baseline: one connection and statement per reader thread.
private func rawConcurrentReads(_ run: Run, readers: Int) throws -> Outcome {
    // WAL first, then the readers, each waiting out the brief locks of a
    // reader that is setting up the WAL index (as the pool's connections do).
    try RawConnection(path: run.path).execute("PRAGMA journal_mode = WAL")
    let connections = try (0..<readers).map { _ in try RawConnection(path: run.path) }
    for connection in connections { sqlite3_busy_timeout(connection.handle, 5000) }
    let statements = try connections.map { try $0.prepare(tenIntegersSelect) }
    defer { statements.forEach { sqlite3_finalize($0) } }
    let readAll: (Int) throws -> Outcome = { reader in
        var outcome = Outcome(count: 0, sum: 0)
        let statement = statements[reader]
        try connections[reader].forEachRow(statement) {
            for column: Int32 in 0..<10 {
                outcome.sum &+= Int(sqlite3_column_int64(statement, column))
            }
            outcome.count += 1
        }
        return outcome
    }
    return try run.measure { try onThreads(readers, readAll) }
}

/// W8 through SQLiteStore: each reader thread runs `pool.read`.
private func poolConcurrentReads(_ run: Run, readers: Int) throws -> Outcome {
    let pool = try DatabasePool(path: run.path, maximumReaderCount: readers)
    defer { try? pool.close() }
    let readAll: (Int) throws -> Outcome = { _ in
        try pool.read { db in
            var outcome = Outcome(count: 0, sum: 0)
            let cursor = try db.fetchCursor(sql: tenIntegersSelect)
            while let row = try cursor.next() {
                for column in 0..<10 {
                    outcome.sum &+= try row[column] as Int
                }
                outcome.count += 1
            }
            return outcome
        }
    }
    // The pool opens its reader connections on first use: open them all
    // before timing, as the raw side does.
    _ = try onThreads(readers) { _ in
        _ = try pool.read { db in try db.fetchOne(Int.self, "SELECT 1") }
        return Outcome(count: 0, sum: 0)
    }
    return try run.measure { try onThreads(readers, readAll) }
}

/// Runs `body(0..<count)` on `count` threads at once, waits for all of them,
/// and adds up their outcomes; the first error is rethrown.
private func onThreads(_ count: Int, _ body: @escaping (Int) throws -> Outcome) throws -> Outcome {
    let shared = ThreadShared(body: body, count: count)
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            shared.run(index)
            group.leave()
        }.start()
    }
    group.wait()
    var total = Outcome(count: 0, sum: 0)
    for result in shared.results {
        let outcome = try result.get()
        total.count += outcome.count
        total.sum &+= outcome.sum
    }
    return total
}

/// What the reader threads share.
///
/// `@unchecked Sendable` is safe here: each thread calls `body` with its own
/// index (the raw side's closure touches only that index's connection and
/// statement; the store side's only the Sendable pool) and writes only its
/// own slot of `results`, which was allocated before the threads started
/// and is read only after `DispatchGroup.wait()` has ordered every write
/// before the read.
private final class ThreadShared: @unchecked Sendable {
    let body: (Int) throws -> Outcome
    private let slots: UnsafeMutableBufferPointer<Swift.Result<Outcome, any Error>>

    init(body: @escaping (Int) throws -> Outcome, count: Int) {
        self.body = body
        slots = .allocate(capacity: count)
        slots.initialize(repeating: .success(Outcome(count: 0, sum: 0)))
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    func run(_ index: Int) { slots[index] = Swift.Result { try body(index) } }

    var results: [Swift.Result<Outcome, any Error>] { Array(slots) }
}
