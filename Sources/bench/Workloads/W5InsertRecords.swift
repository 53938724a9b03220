import SQLiteStore
#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

extension Workloads {
    /// W5, first variant: insert structs of ten `Int`s with the persistence
    /// API, columns listed by hand, in one transaction.
    static var w5InsertRecords: Workload {
        insertTenRecords(id: "W5a", title: "insert records, encode(to:) by hand", target: 1.35) { db, records in
            for ten in records {
                var record = TenRecord(ten)
                try record.insert(db)
            }
        }
    }

    /// W5, second variant: the same with an `Encodable` struct and no
    /// encoding code.
    static var w5InsertEncodable: Workload {
        insertTenRecords(id: "W5b", title: "insert records, Encodable", target: 1.6) { db, records in
            for ten in records {
                var record = TenCodable(ten)
                try record.insert(db)
            }
        }
    }

    /// The baseline of W5: W1's loop, binding the fields of each struct.
    private static func insertTenRecords(
        id: String, title: String, target: Double, store: @escaping (Database, [Ten]) throws -> Void
    ) -> Workload {
        Workload(
            id: id, title: title, target: .ratio(target),
            raw: { run in
                let records = (0..<run.rows).map(Ten.init(row:))
                let connection = try RawConnection(path: run.path)
                try connection.execute(tenIntegersSchema)
                let statement = try connection.prepare(tenIntegersInsert)
                defer { sqlite3_finalize(statement) }
                try run.measure {
                    try connection.execute("BEGIN")
                    for ten in records {
                        try connection.check(sqlite3_bind_int64(statement, 1, Int64(ten.i0)), "bind")
                        try connection.check(sqlite3_bind_int64(statement, 2, Int64(ten.i1)), "bind")
                        try connection.check(sqlite3_bind_int64(statement, 3, Int64(ten.i2)), "bind")
                        try connection.check(sqlite3_bind_int64(statement, 4, Int64(ten.i3)), "bind")
                        try connection.check(sqlite3_bind_int64(statement, 5, Int64(ten.i4)), "bind")
                        try connection.check(sqlite3_bind_int64(statement, 6, Int64(ten.i5)), "bind")
                        try connection.check(sqlite3_bind_int64(statement, 7, Int64(ten.i6)), "bind")
                        try connection.check(sqlite3_bind_int64(statement, 8, Int64(ten.i7)), "bind")
                        try connection.check(sqlite3_bind_int64(statement, 9, Int64(ten.i8)), "bind")
                        try connection.check(sqlite3_bind_int64(statement, 10, Int64(ten.i9)), "bind")
                        try connection.check(sqlite3_step(statement), "insert", expected: SQLITE_DONE)
                        try connection.check(sqlite3_reset(statement), "reset")
                    }
                    try connection.execute("COMMIT")
                }
                return try tenIntegersOutcome(path: run.path)
            },
            store: { run in
                let records = (0..<run.rows).map(Ten.init(row:))
                let db = try openStore(run.path)
                try db.execute(sql: tenIntegersSchema)
                try run.measure {
                    try db.transaction { db in try store(db, records) }
                }
                return try tenIntegersOutcome(path: run.path)
            })
    }
}

/// W5's record with its columns listed by hand.
struct TenRecord: PersistableRecord {
    static let tableName = "t"
    var ten: Ten

    init(_ ten: Ten) { self.ten = ten }

    func encode(to columns: inout RecordColumns) {
        columns["i0"] = ten.i0
        columns["i1"] = ten.i1
        columns["i2"] = ten.i2
        columns["i3"] = ten.i3
        columns["i4"] = ten.i4
        columns["i5"] = ten.i5
        columns["i6"] = ten.i6
        columns["i7"] = ten.i7
        columns["i8"] = ten.i8
        columns["i9"] = ten.i9
    }
}
