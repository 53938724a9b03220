import SQLiteStore

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// The registry of workloads, in the order they run and print. Each one is
/// defined in its own file as a `static var` in an extension.
enum Workloads {
    static var all: [Workload] {
        [
            w1Insert,
            w1bInsertArrayLiteral,
            w2FetchByIndex,
            w3FetchByName,
            w3bFetchByNameReversed,
            w4RecordsByIndex,
            w4RecordsByName,
            w4RecordsDecodable,
            w5InsertRecords,
            w5InsertEncodable,
            w6People,
            w6PeopleCodable,
            w7Streaming,
        ] + w8ConcurrentReads
            + w9Observation
            + [w10Search, w10InsertIndexed]
            + w11SortedPage
            + [w12SyncApply, w13SyncInitial]
    }
}

// MARK: - The ten-integer table shared by W1 to W5

/// `t(i0..i9 INTEGER)`.
let tenIntegersSchema =
    "CREATE TABLE t (i0 INTEGER, i1 INTEGER, i2 INTEGER, i3 INTEGER, i4 INTEGER, "
    + "i5 INTEGER, i6 INTEGER, i7 INTEGER, i8 INTEGER, i9 INTEGER)"
let tenIntegersInsert = "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
let tenIntegersSelect = "SELECT i0, i1, i2, i3, i4, i5, i6, i7, i8, i9 FROM t"
let tenColumnNames = ["i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8", "i9"]

/// The value of column `column` in row `row`.
@inline(__always) func tenValue(_ row: Int, _ column: Int) -> Int { row &* 10 &+ column }

/// Builds `t` with `rows` rows on the C API.
func makeTenIntegersTable(path: String, rows: Int) throws {
    let connection = try RawConnection(path: path)
    try connection.execute(tenIntegersSchema)
    try rawInsertTen(connection, rows: rows)
}

/// W1's baseline: one transaction, one prepared statement, ten integers
/// bound per row.
func rawInsertTen(_ connection: RawConnection, rows: Int) throws {
    let statement = try connection.prepare(tenIntegersInsert)
    defer { sqlite3_finalize(statement) }
    try connection.execute("BEGIN")
    for row in 0..<rows {
        for column in 0..<10 {
            try connection.check(
                sqlite3_bind_int64(statement, Int32(column + 1), Int64(tenValue(row, column))), "bind")
        }
        try connection.check(sqlite3_step(statement), "insert", expected: SQLITE_DONE)
        try connection.check(sqlite3_reset(statement), "reset")
    }
    try connection.execute("COMMIT")
}

/// The count and sum of `t`, read on the C API: the check of every insert
/// workload.
func tenIntegersOutcome(path: String) throws -> Outcome {
    let connection = try RawConnection(path: path)
    let figures = try connection.integers("SELECT COUNT(*), SUM(i0+i1+i2+i3+i4+i5+i6+i7+i8+i9) FROM t")
    return Outcome(count: figures[0], sum: figures[1])
}

/// A row of `t` as a struct, as the records workloads decode it.
struct Ten {
    var i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int

    init(i0: Int, i1: Int, i2: Int, i3: Int, i4: Int, i5: Int, i6: Int, i7: Int, i8: Int, i9: Int) {
        (self.i0, self.i1, self.i2, self.i3, self.i4) = (i0, i1, i2, i3, i4)
        (self.i5, self.i6, self.i7, self.i8, self.i9) = (i5, i6, i7, i8, i9)
    }

    init(row: Int) {
        self.init(
            i0: tenValue(row, 0), i1: tenValue(row, 1), i2: tenValue(row, 2), i3: tenValue(row, 3),
            i4: tenValue(row, 4), i5: tenValue(row, 5), i6: tenValue(row, 6), i7: tenValue(row, 7),
            i8: tenValue(row, 8), i9: tenValue(row, 9))
    }

    var sum: Int { i0 &+ i1 &+ i2 &+ i3 &+ i4 &+ i5 &+ i6 &+ i7 &+ i8 &+ i9 }
}

/// The outcome of a list of rows of `t`.
func outcome(_ rows: [Ten]) -> Outcome {
    Outcome(count: rows.count, sum: rows.reduce(0) { $0 &+ $1.sum })
}
