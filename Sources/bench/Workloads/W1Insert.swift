import SQLiteStore

extension Workloads {
    /// W1: insert rows of ten integers in one transaction with one prepared
    /// statement, ten values bound per row.
    static var w1Insert: Workload {
        Workload(
            id: "W1", title: "insert, 10 ints bound per row", target: .ratio(1.10),
            raw: { run in
                let connection = try RawConnection(path: run.path)
                try connection.execute(tenIntegersSchema)
                try run.measure { try rawInsertTen(connection, rows: run.rows) }
                return try tenIntegersOutcome(path: run.path)
            },
            store: { run in
                let db = try openStore(run.path)
                try db.execute(sql: tenIntegersSchema)
                let insert = try db.makeStatement(sql: tenIntegersInsert)
                try run.measure {
                    try db.transaction { _ in
                        for row in 0..<run.rows {
                            try insert.execute(
                                values: tenValue(row, 0), tenValue(row, 1), tenValue(row, 2), tenValue(row, 3),
                                tenValue(row, 4), tenValue(row, 5), tenValue(row, 6), tenValue(row, 7),
                                tenValue(row, 8), tenValue(row, 9))
                        }
                    }
                }
                return try tenIntegersOutcome(path: run.path)
            })
    }
}
