import SQLiteStore
#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

extension Workloads {
    /// W4, first variant: rows decoded into a struct of ten `Int`s by a
    /// hand-written `init(row:)` that reads by column index.
    static var w4RecordsByIndex: Workload {
        fetchTenRecords(id: "W4a", title: "fetch records, init(row:) by index", target: 1.15) { db, run in
            try run.measure { try db.fetchAll(TenByIndex.self, sql: tenIntegersSelect) }.map(\.ten)
        }
    }

    /// W4, second variant: `init(row:)` reading by column name.
    static var w4RecordsByName: Workload {
        fetchTenRecords(id: "W4b", title: "fetch records, init(row:) by name", target: 1.5) { db, run in
            try run.measure { try db.fetchAll(TenByName.self, sql: tenIntegersSelect) }.map(\.ten)
        }
    }

    /// W4, third variant: a `Decodable` struct with no decoding code.
    static var w4RecordsDecodable: Workload {
        fetchTenRecords(id: "W4c", title: "fetch records, Decodable", target: 2.0) { db, run in
            try run.measure { try db.fetchAll(TenCodable.self, sql: tenIntegersSelect) }.map(\.ten)
        }
    }

    /// The baseline of W4: step, read the ten integers by index into a
    /// struct, append it to an array. Only the fetch is timed on both sides:
    /// `store` times it, then maps the records to `Ten` for the check.
    private static func fetchTenRecords(
        id: String, title: String, target: Double, store: @escaping (Database, Run) throws -> [Ten]
    ) -> Workload {
        Workload(
            id: id, title: title, target: .ratio(target),
            template: makeTenIntegersTable,
            raw: { run in
                let connection = try RawConnection(path: run.path)
                let statement = try connection.prepare(tenIntegersSelect)
                defer { sqlite3_finalize(statement) }
                let rows = try run.measure {
                    var rows: [Ten] = []
                    try connection.forEachRow(statement) {
                        rows.append(
                            Ten(
                                i0: Int(sqlite3_column_int64(statement, 0)),
                                i1: Int(sqlite3_column_int64(statement, 1)),
                                i2: Int(sqlite3_column_int64(statement, 2)),
                                i3: Int(sqlite3_column_int64(statement, 3)),
                                i4: Int(sqlite3_column_int64(statement, 4)),
                                i5: Int(sqlite3_column_int64(statement, 5)),
                                i6: Int(sqlite3_column_int64(statement, 6)),
                                i7: Int(sqlite3_column_int64(statement, 7)),
                                i8: Int(sqlite3_column_int64(statement, 8)), i9: Int(sqlite3_column_int64(statement, 9))
                            ))
                    }
                    return rows
                }
                return outcome(rows)
            },
            store: { run in
                let db = try openStore(run.path)
                return outcome(try store(db, run))
            })
    }
}

/// W4's record with `init(row:)` reading by index.
struct TenByIndex: FetchableRecord {
    var i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int

    init(row: Row) throws {
        i0 = try row[0]
        i1 = try row[1]
        i2 = try row[2]
        i3 = try row[3]
        i4 = try row[4]
        i5 = try row[5]
        i6 = try row[6]
        i7 = try row[7]
        i8 = try row[8]
        i9 = try row[9]
    }

    var ten: Ten { Ten(i0: i0, i1: i1, i2: i2, i3: i3, i4: i4, i5: i5, i6: i6, i7: i7, i8: i8, i9: i9) }
}

/// W4's record with `init(row:)` reading by name.
struct TenByName: FetchableRecord {
    var i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int

    init(row: Row) throws {
        i0 = try row["i0"]
        i1 = try row["i1"]
        i2 = try row["i2"]
        i3 = try row["i3"]
        i4 = try row["i4"]
        i5 = try row["i5"]
        i6 = try row["i6"]
        i7 = try row["i7"]
        i8 = try row["i8"]
        i9 = try row["i9"]
    }

    var ten: Ten { Ten(i0: i0, i1: i1, i2: i2, i3: i3, i4: i4, i5: i5, i6: i6, i7: i7, i8: i8, i9: i9) }
}

/// W4's and W5's `Codable` record: no decoding or encoding code.
struct TenCodable: Codable, FetchableRecord, PersistableRecord {
    static let tableName = "t"
    var i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int

    init(_ ten: Ten) {
        (i0, i1, i2, i3, i4) = (ten.i0, ten.i1, ten.i2, ten.i3, ten.i4)
        (i5, i6, i7, i8, i9) = (ten.i5, ten.i6, ten.i7, ten.i8, ten.i9)
    }

    var ten: Ten { Ten(i0: i0, i1: i1, i2: i2, i3: i3, i4: i4, i5: i5, i6: i6, i7: i7, i8: i8, i9: i9) }
}
