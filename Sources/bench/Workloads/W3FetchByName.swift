import Foundation
import SQLiteStore
#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

extension Workloads {
    /// W3: W2 with the columns read by name. The baseline resolves each name
    /// to its index once per statement, the fastest honest way in C.
    static var w3FetchByName: Workload {
        Workload(
            id: "W3", title: "fetch rows, 10 ints by name", target: .ratio(1.5),
            template: makeTenIntegersTable,
            raw: { run in
                let connection = try RawConnection(path: run.path)
                let statement = try connection.prepare(tenIntegersSelect)
                defer { sqlite3_finalize(statement) }
                return try run.measure {
                    let indexes = try rawColumnIndexes(statement, names: tenColumnNames)
                    var outcome = Outcome(count: 0, sum: 0)
                    try connection.forEachRow(statement) {
                        for index in indexes {
                            outcome.sum &+= Int(sqlite3_column_int64(statement, index))
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
                        // Names written out, as code reads columns.
                        let sum: Int =
                            try row["i0"] &+ row["i1"] &+ row["i2"] &+ row["i3"] &+ row["i4"] &+ row["i5"]
                            &+ row["i6"] &+ row["i7"] &+ row["i8"] &+ row["i9"]
                        outcome.sum &+= sum
                        outcome.count += 1
                    }
                    return outcome
                }
            })
    }
}

extension Workloads {
    /// W3b: W3 with the names read in reverse order (`i9` first), so that
    /// a lookup cannot count on columns being read in SELECT order. The
    /// baseline resolves the reversed names once per statement.
    static var w3bFetchByNameReversed: Workload {
        Workload(
            id: "W3b", title: "fetch rows, 10 ints by name, reverse order", target: .ratio(1.5),
            template: makeTenIntegersTable,
            raw: { run in
                let connection = try RawConnection(path: run.path)
                let statement = try connection.prepare(tenIntegersSelect)
                defer { sqlite3_finalize(statement) }
                return try run.measure {
                    let indexes = try rawColumnIndexes(statement, names: tenColumnNames.reversed())
                    var outcome = Outcome(count: 0, sum: 0)
                    try connection.forEachRow(statement) {
                        for index in indexes {
                            outcome.sum &+= Int(sqlite3_column_int64(statement, index))
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
                        let sum: Int =
                            try row["i9"] &+ row["i8"] &+ row["i7"] &+ row["i6"] &+ row["i5"] &+ row["i4"]
                            &+ row["i3"] &+ row["i2"] &+ row["i1"] &+ row["i0"]
                        outcome.sum &+= sum
                        outcome.count += 1
                    }
                    return outcome
                }
            })
    }
}

/// The index of each named column of a statement, found once (by `strcmp`
/// on `sqlite3_column_name`).
func rawColumnIndexes(_ statement: OpaquePointer, names: [String]) throws -> [Int32] {
    try names.map { name in
        for index in 0..<sqlite3_column_count(statement) {
            if let columnName = sqlite3_column_name(statement, index), strcmp(columnName, name) == 0 {
                return index
            }
        }
        throw BenchError("no column \(name)")
    }
}
