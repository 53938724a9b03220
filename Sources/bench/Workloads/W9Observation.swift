import Foundation
import SQLiteStore

extension Workloads {
    /// W9: what value observation costs the writes. W1's ten-integer rows,
    /// 10,000 of them (fewer with a smaller `--rows`), each inserted by its
    /// own `DatabaseQueue.write` (one transaction per row, WAL), while 1, 10
    /// or 100 value observations are active, either of another table or of
    /// the written one.
    ///
    /// The "raw" column is the same inserts with no observation at all, so
    /// the ratio is the cost of the observations, and
    /// `(SQLiteStore - raw) / rows` the added time per transaction. The
    /// observations of another table must cost under 5%: their only work is
    /// SQLite's update and commit hooks seeing a table nobody watches. The
    /// observations of the written table refetch after every commit (on the
    /// queue, inside the write), so their cost is that of the fetches, shown
    /// without a target.
    static var w9Observation: [Workload] {
        [false, true].flatMap { isWrittenTable in
            [1, 10, 100].map { count in w9Observation(count: count, ofWrittenTable: isWrittenTable) }
        }
    }

    static func w9Observation(count: Int, ofWrittenTable: Bool) -> Workload {
        let observed = ofWrittenTable ? "the written table" : "another table"
        return Workload(
            id: "W9",
            title: "1 txn per insert, \(count) observation\(count == 1 ? "" : "s") of \(observed) (raw: none)",
            target: ofWrittenTable ? .none : .ratio(1.05),
            rowCount: { min($0, 10_000) },
            raw: { run in try observedInserts(run, observations: 0, ofWrittenTable: ofWrittenTable) },
            store: { run in try observedInserts(run, observations: count, ofWrittenTable: ofWrittenTable) })
    }
}

/// Inserts `run.rows` rows into `t`, one write access each, with
/// `observations` value observations running.
private func observedInserts(_ run: Run, observations: Int, ofWrittenTable: Bool) throws -> Outcome {
    var configuration = Configuration()
    configuration.journalMode = .wal
    configuration.prepareDatabase = { db in try db.execute(sql: benchPragmas) }
    let queue = try DatabaseQueue(path: run.path, configuration: configuration)
    defer { try? queue.close() }
    try queue.write { db in
        try db.execute(sql: tenIntegersSchema)
        try db.execute("CREATE TABLE other (x INTEGER)")
    }
    // Cheap fetches, so that the written-table figures show the
    // observation machinery more than SQLite's scans.
    let sql = ofWrittenTable ? "SELECT MAX(rowid) FROM t" : "SELECT COUNT(*) FROM other"
    let started = DispatchGroup()
    var tokens: [ObservationToken] = []
    for _ in 0..<observations {
        started.enter()
        let first = FirstValue(started)
        tokens.append(
            queue.observe { db in
                try db.fetchOne(Int.self, sql: sql)
            } onError: { _ in
                first.signal()
            } onChange: { _ in
                first.signal()
            })
    }
    started.wait()
    try run.measure {
        if observations == 0 {
            try insertRowsUnobserved(queue, rows: run.rows)
        } else {
            try insertRowsObserved(queue, rows: run.rows)
        }
    }
    for token in tokens { token.cancel() }
    try queue.close()
    return try tenIntegersOutcome(path: run.path)
}

/// Leaves a dispatch group once, at an observation's first value.
///
/// `@unchecked Sendable`: `isFirst` is only read and written with `lock`
/// held.
private final class FirstValue: @unchecked Sendable {
    private let group: DispatchGroup
    private let lock = NSLock()
    private var isFirst = true

    init(_ group: DispatchGroup) { self.group = group }

    func signal() {
        lock.lock()
        let leave = isFirst
        isFirst = false
        lock.unlock()
        if leave { group.leave() }
    }
}

// Two functions doing the same, so that an instruction count tells the
// sides apart (`valgrind --tool=callgrind`, inclusive cost of each), which
// wall-clock medians on a busy machine cannot do for a few percent.

// Each ends with a different call, so that the compiler neither merges
// them nor makes them tail calls (which a call graph would not show).
@inline(never)
private func insertRowsUnobserved(_ queue: DatabaseQueue, rows: Int) throws {
    try insertRows(queue, rows: rows)
    keep(rows)
}

@inline(never)
private func insertRowsObserved(_ queue: DatabaseQueue, rows: Int) throws {
    try insertRows(queue, rows: rows)
    keep(-rows)
}

@inline(never)
private func keep(_ value: Int) {
    if value == .min { print(value) }
}

@inline(never)
private func insertRows(_ queue: DatabaseQueue, rows: Int) throws {
    for row in 0..<rows {
        try queue.write { db in
            try db.cachedStatement(sql: tenIntegersInsert).execute(
                values: tenValue(row, 0), tenValue(row, 1), tenValue(row, 2), tenValue(row, 3), tenValue(row, 4),
                tenValue(row, 5), tenValue(row, 6), tenValue(row, 7), tenValue(row, 8), tenValue(row, 9))
        }
    }
}
