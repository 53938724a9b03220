import SQLiteStore
#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

extension Workloads {
    /// W7: a cursor over a million rows (ten times `--rows`) of people,
    /// decoded one at a time as records: resident memory must not grow with
    /// the number of rows.
    static var w7Streaming: Workload {
        Workload(
            id: "W7", title: "stream records through a cursor", target: .memoryGrowth(16 * 1_048_576),
            rowCount: { $0 * 10 },
            template: { path, rows in
                let connection = try RawConnection(path: path)
                try connection.execute(peopleSchema)
                let insert = try connection.prepare(peopleInsert)
                defer { sqlite3_finalize(insert) }
                try connection.execute("BEGIN")
                for person in makePeople(rows) { try rawInsert(person.fields, insert, connection) }
                try connection.execute("COMMIT")
            },
            raw: { run in
                let connection = try RawConnection(path: run.path)
                let statement = try connection.prepare(peopleSelect)
                defer { sqlite3_finalize(statement) }
                return try run.measure {
                    var outcome = Outcome(count: 0, sum: 0)
                    try connection.forEachRow(statement) {
                        outcome.add(rawPerson(statement), memory: run.memory)
                    }
                    return outcome
                }
            },
            store: { run in
                let db = try openStore(run.path)
                return try run.measure {
                    var outcome = Outcome(count: 0, sum: 0)
                    let cursor = try Person.fetchCursor(db)
                    while let person = try cursor.next() {
                        outcome.add(person.fields, memory: run.memory)
                    }
                    return outcome
                }
            })
    }
}

extension Outcome {
    /// Counts a streamed person, sampling memory every 65,536 rows.
    @inline(__always) mutating func add(_ person: PersonFields, memory: MemoryProbe) {
        sum &+= Int(person.id ?? -1) &+ person.age &+ person.firstname.utf8.count &+ person.lastname.utf8.count
        count += 1
        if count & 0xFFFF == 0 { memory.sample() }
    }
}
