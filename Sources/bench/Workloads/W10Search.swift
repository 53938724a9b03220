import Foundation
import SQLiteStore

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

extension Workloads {
    /// W10: the search bar. `--rows` generated people (100,000 by default;
    /// a million with `bench --filter W10 --rows 1000000`,
    /// where each scan takes seconds) searched for "grace hop", as a person
    /// types it.
    ///
    /// Unlike the other workloads, the two columns are two ways of
    /// searching, not the same job twice: "raw" is the People app's former
    /// search, a scan that folds every first and last name with a Swift
    /// function (the app's `records_fold` SQL, run on the C API), and
    /// "SQLiteStore" is the library's FTS5 search (`Database.search`,
    /// ranked, records decoded). The ratio is FTS5's time over the scan's.
    /// Both must find the same people.
    static var w10Search: Workload {
        Workload(
            id: "W10", title: "search people \"grace hop\": former fold scan (raw) vs FTS5", target: .none,
            template: { path, rows in
                let connection = try RawConnection(path: path)
                try connection.execute(peopleSchema)
                let insert = try connection.prepare(peopleInsert)
                defer { sqlite3_finalize(insert) }
                try connection.execute("BEGIN")
                for person in searchPeople(rows) { try rawInsert(person, insert, connection) }
                try connection.execute("COMMIT")
                let db = try openStore(path)
                try db.create(peopleSearchIndex)
            },
            raw: { run in
                let connection = try RawConnection(path: run.path)
                try registerRawFold(connection)
                let statement = try connection.prepare(formerPeopleSearch)
                defer { sqlite3_finalize(statement) }
                let needle = foldForSearch(searchQuery)
                return try run.measure {
                    try needle.withCString { needle in
                        for parameter in Int32(1)...3 {
                            try connection.check(sqlite3_bind_text(statement, parameter, needle, -1, nil), "bind")
                        }
                        var people: [PersonFields] = []
                        try connection.forEachRow(statement) { people.append(rawPerson(statement)) }
                        return outcome(people)
                    }
                }
            },
            store: { run in
                let db = try openStore(run.path)
                guard let pattern = SearchPattern(typed: searchQuery) else { throw BenchError("no pattern") }
                return try run.measure {
                    let matches = try db.search(Person.self, in: peopleSearchIndex, matching: pattern)
                    return outcome(matches.map(\.record.fields))
                }
            })
    }

    /// W10b: W6a (insert people as records in one transaction, then fetch
    /// them all) with a full-text index on their names on both sides: the
    /// cost the index's triggers add to inserts. Compare with W6a at the
    /// same row count (W10b runs a tenth of `--rows`). Most of
    /// it is FTS5's: a trigger runs in a statement savepoint, at which FTS5
    /// writes out what it holds in memory, so each row makes a small
    /// segment to merge (a plain insert into an FTS5 table costs about a
    /// third of it).
    static var w10InsertIndexed: Workload {
        Workload(
            id: "W10b", title: "people: insert + fetch all, FTS5 index on", target: .ratio(1.35),
            // A tenth of --rows: at ~75 µs a row, the default 100,000 would
            // add minutes to the default run.
            rowCount: { max(1, $0 / 10) },
            raw: { run in
                let people = makePeople(run.rows)
                let connection = try RawConnection(path: run.path)
                try connection.execute(peopleSchema)
                try connection.execute(rawPeopleSearchSchema)
                let insert = try connection.prepare(peopleInsert)
                defer { sqlite3_finalize(insert) }
                let select = try connection.prepare(peopleSelect)
                defer { sqlite3_finalize(select) }
                let fetched = try run.measure {
                    try connection.execute("BEGIN")
                    for person in people { try rawInsert(person.fields, insert, connection) }
                    try connection.execute("COMMIT")
                    return try rawFetchPeople(select, connection)
                }
                return outcome(fetched)
            },
            store: { run in
                let people = makePeople(run.rows)
                let db = try openStore(run.path)
                try db.execute(sql: peopleSchema)
                try db.create(peopleSearchIndex)
                let fetched = try run.measure {
                    try db.transaction { db in
                        for var person in people { try person.insert(db) }
                        return try Person.fetchAll(db)
                    }
                }
                return outcome(fetched.map(\.fields))
            })
    }
}

extension Report {
    /// W10's figures the other way round, which the ratio column (FTS5's
    /// time over the scan's) shows as 0.00x: how many times faster the
    /// index answers. Nil when W10 did not run.
    static func searchSpeedUp(_ results: [Result]) -> String? {
        guard let result = results.first(where: { $0.workload.id == "W10" }), result.storeMedian > 0 else {
            return nil
        }
        return String(
            format: "Search (W10, %d people): former fold scan %.2f ms, FTS5 %.2f ms: %.0fx faster", result.rows,
            result.rawMedian, result.storeMedian, result.rawMedian / result.storeMedian)
    }
}

// MARK: - Search

/// What the person typed.
private let searchQuery = "grace hop"

/// The index the People app declares over its names.
private let peopleSearchIndex = FullTextIndex(
    "peopleInfo_search", on: "peopleInfo", columns: ["firstname", "lastname"], rowID: "peopleInfoID")

/// The same index and triggers on the C API, as `Database.create` writes
/// them (checked by W10b's both sides agreeing on nothing but the rows:
/// the index itself is checked by the tests).
private let rawPeopleSearchSchema = """
    CREATE VIRTUAL TABLE peopleInfo_search USING fts5(firstname, lastname, content='peopleInfo',
        content_rowid='peopleInfoID', tokenize='''unicode61'' ''remove_diacritics'' ''2''');
    CREATE TRIGGER peopleInfo_search_after_insert AFTER INSERT ON peopleInfo BEGIN
        INSERT INTO peopleInfo_search(rowid, firstname, lastname)
        VALUES (new.peopleInfoID, new.firstname, new.lastname);
    END;
    CREATE TRIGGER peopleInfo_search_after_delete AFTER DELETE ON peopleInfo BEGIN
        INSERT INTO peopleInfo_search(peopleInfo_search, rowid, firstname, lastname)
        VALUES ('delete', old.peopleInfoID, old.firstname, old.lastname);
    END;
    CREATE TRIGGER peopleInfo_search_after_update AFTER UPDATE OF firstname, lastname, peopleInfoID
    ON peopleInfo BEGIN
        INSERT INTO peopleInfo_search(peopleInfo_search, rowid, firstname, lastname)
        VALUES ('delete', old.peopleInfoID, old.firstname, old.lastname);
        INSERT INTO peopleInfo_search(rowid, firstname, lastname)
        VALUES (new.peopleInfoID, new.firstname, new.lastname);
    END;
    """

/// The People app's former search (`PeopleStore.list(matching:)`, substring
/// mode, sorted by name), word for word.
private let formerPeopleSearch = """
    SELECT peopleInfoID, firstname, lastname, age FROM peopleInfo
    WHERE instr(records_fold(firstname), ?1) > 0
       OR instr(records_fold(lastname), ?2) > 0
       OR instr(records_fold(ifnull(firstname, '') || ' ' || ifnull(lastname, '')), ?3) > 0
    ORDER BY records_fold(lastname), records_fold(firstname), peopleInfoID
    """

/// The app's folding: case, diacritics and width.
private func foldForSearch(_ text: String) -> String {
    text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
}

/// `records_fold(text)` on the C API, folding as the app did.
private func registerRawFold(_ connection: RawConnection) throws {
    try connection.check(
        sqlite3_create_function_v2(
            connection.handle, "records_fold", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, _, arguments in
                guard let argument = arguments?[0], sqlite3_value_type(argument) != SQLITE_NULL,
                    let text = sqlite3_value_text(argument)
                else {
                    sqlite3_result_null(context)
                    return
                }
                let string = String(
                    decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(argument))),
                    as: UTF8.self)
                // SQLITE_TRANSIENT: SQLite copies the text before withCString ends.
                foldForSearch(string).withCString {
                    sqlite3_result_text(context, $0, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
                }
            }, nil, nil, nil), "records_fold")
}

/// `count` people with names from the lists below, drawn by a fixed
/// generator: first and last names share no word, so "grace" can only be
/// a first name and "hop..." only a last name, and the scan and the index
/// find the same people.
private func searchPeople(_ count: Int) -> [PersonFields] {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next() -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int(truncatingIfNeeded: state >> 33)
    }
    return (0..<count).map { index in
        let first = firstNames[next() % firstNames.count]
        let last = lastNameStarts[next() % lastNameStarts.count] + lastNameEnds[next() % lastNameEnds.count]
        return PersonFields(id: nil, firstname: first, lastname: last, age: index % 100)
    }
}

private let firstNames = [
    "Grace", "Ada", "Åsa", "Élise", "Björn", "Chloé", "Dmitri", "Emma", "François", "Greta", "Hanna", "Ines",
    "Jonas", "Karin", "Lars", "Léa", "Mats", "Nora", "Olof", "Pia", "Quentin", "Rosa", "Søren", "Tove", "Ulla",
    "Viktor", "Wanda", "Xavier", "Yusuf", "Zoë", "Alan", "Barbara", "Claude", "Donald", "Edsger", "Frances",
    "Guido", "Hedy", "Ivan", "John", "Katherine", "Linus", "Margaret", "Niklaus", "Ole", "Radia", "Sophie",
    "Tim", "Vint", "Whitfield",
]

private let lastNameStarts = [
    "Hop", "Åk", "Lov", "Berg", "Lind", "Ny", "Ström", "Dahl", "Holm", "Sand", "Fors", "Ek", "Sjö", "Wall", "Norr",
    "Kn", "Turn", "Back", "Ritch", "Thomp", "Dijk", "Wirth", "Hamm", "Kay", "Lamp", "Stroust", "Tor", "Gos",
]

private let lastNameEnds = [
    "per", "kins", "esson", "lace", "man", "gren", "qvist", "berg", "ström", "uth", "ing", "ie", "son", "stra",
    "ler", "lund",
]
