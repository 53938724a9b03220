import SQLiteStore
#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

extension Workloads {
    /// W2: read all rows of W1's table, the ten integers by column index,
    /// and sum them.
    static var w2FetchByIndex: Workload {
        Workload(
            id: "W2", title: "fetch rows, 10 ints by index", target: .ratio(1.10),
            template: makeTenIntegersTable,
            raw: { run in
                let connection = try RawConnection(path: run.path)
                let statement = try connection.prepare(tenIntegersSelect)
                defer { sqlite3_finalize(statement) }
                return try run.measure {
                    var outcome = Outcome(count: 0, sum: 0)
                    try connection.forEachRow(statement) {
                        for column: Int32 in 0..<10 {
                            outcome.sum &+= Int(sqlite3_column_int64(statement, column))
                        }
                        outcome.count += 1
                    }
                    return outcome
                }
            },
            store: { run in
                let db = try openStore(run.path)
                return try run.measure {
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
            })
    }
}
