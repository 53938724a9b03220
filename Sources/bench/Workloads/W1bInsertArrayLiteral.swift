import SQLiteStore

extension Workloads {
    /// W1b: W1 written the way most code binds values, with an array literal
    /// of arguments (`execute(arguments: [a, b, ...])`) rather than
    /// `execute(values:)`. Not a target of its own: it shows what the
    /// convenience costs (each value is boxed as an existential and two
    /// arrays are built per row).
    static var w1bInsertArrayLiteral: Workload {
        Workload(
            id: "W1b", title: "insert, 10 ints as an array literal", target: .none,
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
                            try insert.execute(arguments: [
                                tenValue(row, 0), tenValue(row, 1), tenValue(row, 2), tenValue(row, 3),
                                tenValue(row, 4), tenValue(row, 5), tenValue(row, 6), tenValue(row, 7),
                                tenValue(row, 8), tenValue(row, 9),
                            ])
                        }
                    }
                }
                return try tenIntegersOutcome(path: run.path)
            })
    }
}
