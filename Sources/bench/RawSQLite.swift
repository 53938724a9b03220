import SQLiteStore

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// A connection used through the SQLite C API only: the baselines, and the
/// building and checking of databases, which should not depend on the
/// library under test.
final class RawConnection {
    let handle: OpaquePointer

    init(path: String) throws {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let handle else {
            sqlite3_close_v2(handle)
            throw BenchError("cannot open \(path): SQLite code \(code)")
        }
        self.handle = handle
        try execute(benchPragmas)
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs SQL without arguments.
    func execute(_ sql: String) throws {
        try check(sqlite3_exec(handle, sql, nil, nil, nil), sql)
    }

    /// Prepares one statement; the caller finalizes it.
    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(handle, sql, -1, &statement, nil), sql)
        guard let statement else { throw BenchError("no statement in: \(sql)") }
        return statement
    }

    /// Throws unless `code` is `expected`.
    ///
    /// Inlined, with the failure out of line, as C code checks a result:
    /// one comparison and a branch a row, not a call, so that the baselines
    /// spend nothing raw C would not.
    @inline(__always)
    func check(_ code: Int32, _ context: @autoclosure () -> String, expected: Int32 = SQLITE_OK) throws {
        if _slowPath(code != expected) { try fail(code, context()) }
    }

    @inline(never)
    private func fail(_ code: Int32, _ context: String) throws -> Never {
        throw BenchError("SQLite code \(code) (\(String(cString: sqlite3_errmsg(handle)))) in: \(context)")
    }

    /// Steps through all rows of a statement, calling `body` at each, then
    /// resets it. Inlined, so the baselines pay no closure call.
    @inline(__always)
    func forEachRow(_ statement: OpaquePointer, _ body: () throws -> Void) throws {
        while true {
            let code = sqlite3_step(statement)
            guard code == SQLITE_ROW else {
                try check(code, "step", expected: SQLITE_DONE)
                break
            }
            try body()
        }
        sqlite3_reset(statement)
    }

    /// The integers of the first row of a query.
    func integers(_ sql: String) throws -> [Int] {
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        try check(sqlite3_step(statement), sql, expected: SQLITE_ROW)
        return (0..<sqlite3_column_count(statement)).map { Int(sqlite3_column_int64(statement, $0)) }
    }
}

/// Set on both sides of every workload: no disk flushes, which cost the
/// same on both sides and would only blur the ratio of library overhead.
let benchPragmas = "PRAGMA synchronous = OFF"

/// Opens a SQLiteStore connection set up like the raw ones.
func openStore(_ path: String) throws -> Database {
    let db = try Database(path: path)
    try db.execute(sql: benchPragmas)
    return db
}
