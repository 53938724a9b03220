import Foundation
import RecordsApp
import SQLiteStore

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

extension Workloads {
    /// W11: the web app's People list, 20 people a page sorted by name, at
    /// `--rows` generated people (100,000 by default).
    ///
    /// W11a and W11b read page 1 and page 2,500 (or the last full page
    /// when `--rows` is smaller) 100 times a run: "raw" is the cheapest
    /// page SQLite can give, `ORDER BY rowid LIMIT 21 OFFSET n` on the C
    /// API, and "SQLiteStore" is `PeopleStore.page(sortedBy: .name, ...)`
    /// on an `AppDatabase`, awaited as the web app awaits it. The two read
    /// different people (rowid order against name order), so they agree on
    /// the rows read and the pages that say another follows. The app's side
    /// runs on the concurrency pool's threads, which
    /// `scripts/bench-callgrind.sh` does not count (as for W8): compare
    /// their times, not their instruction counts.
    ///
    /// W11c and W11d are the People app's former sorted pages 1 and 2,500,
    /// `ORDER BY records_fold(lastname), records_fold(firstname),
    /// peopleInfoID`, read once a run on the C API with two folding
    /// functions: "raw" Foundation's fold alone, "SQLiteStore" the app's
    /// `SearchFolding.fold` with its ASCII fast path. Both must read the
    /// same people.
    static var w11SortedPage: [Workload] {
        [
            w11Page(id: "W11a", title: "sorted page 1 by name: People app vs raw ORDER BY rowid", page: { _ in 1 }),
            w11Page(
                id: "W11b", title: "sorted page 2,500 by name: People app vs raw ORDER BY rowid",
                page: { rows in max(1, min(2500, rows / pageSize)) }),
            w11FormerPage(id: "W11c", page: 1),
            w11FormerPage(id: "W11d", page: 2500),
        ]
    }

    private static func w11FormerPage(id: String, page: Int) -> Workload {
        Workload(
            id: id, title: "former fold-sorted page \(page): Foundation fold (raw) vs app fold", target: .none,
            template: makeSortedPeople,
            raw: { run in try formerSortedPage(run, page: page, fold: foundationFold) },
            store: { run in try formerSortedPage(run, page: page, fold: SearchFolding.fold) })
    }

    private static func w11Page(id: String, title: String, page: @escaping (Int) -> Int) -> Workload {
        Workload(
            id: id, title: title, target: .none, template: makeSortedPeople,
            raw: { run in
                let connection = try RawConnection(path: run.path)
                let statement = try connection.prepare(
                    "SELECT peopleInfoID, firstname, lastname, age FROM peopleInfo ORDER BY rowid LIMIT ? OFFSET ?")
                defer { sqlite3_finalize(statement) }
                let offset = Int64((page(run.rows) - 1) * pageSize)
                return try run.measure {
                    var outcome = Outcome(count: 0, sum: 0)
                    for _ in 0..<readsPerRun {
                        try connection.check(sqlite3_bind_int64(statement, 1, Int64(pageSize + 1)), "bind")
                        try connection.check(sqlite3_bind_int64(statement, 2, offset), "bind")
                        var people: [PersonFields] = []
                        try connection.forEachRow(statement) { people.append(rawPerson(statement)) }
                        outcome.count += min(people.count, pageSize)
                        if people.count > pageSize { outcome.sum += 1 }
                    }
                    return outcome
                }
            },
            store: { run in
                let database = try AppDatabase(url: URL(fileURLWithPath: run.path), start: .empty)
                defer { database.close() }
                let store = PeopleStore(database: database)
                let number = page(run.rows)
                return try run.measure {
                    try waitFor {
                        var outcome = Outcome(count: 0, sum: 0)
                        for _ in 0..<readsPerRun {
                            let page = try await store.page(sortedBy: .name, number: number, size: pageSize)
                            outcome.count += page.items.count + page.unreadable.count
                            if page.hasNext { outcome.sum += 1 }
                        }
                        return outcome
                    }
                }
            })
    }
}

/// The web app's page size.
private let pageSize = 20

/// W11a and W11b read their page this many times a run.
private let readsPerRun = 100

/// The people table on the C API, with `rows` generated people, then opened
/// once by the app, so that its migrations (indexes, sort keys) are done
/// before any run.
private func makeSortedPeople(path: String, rows: Int) throws {
    do {
        let connection = try RawConnection(path: path)
        try connection.execute(peopleSchema)
        let insert = try connection.prepare(peopleInsert)
        defer { sqlite3_finalize(insert) }
        try connection.execute("BEGIN")
        for person in sortedPeople(rows) { try rawInsert(person, insert, connection) }
        try connection.execute("COMMIT")
    }
    let database = try AppDatabase(url: URL(fileURLWithPath: path), start: .empty)
    database.close()
}

/// The former query of page `page` (or the last full one when `--rows` is
/// smaller), read once, with `records_fold` folding as `fold`.
private func formerSortedPage(_ run: Run, page: Int, fold: @escaping @Sendable (String) -> String) throws -> Outcome {
    let connection = try RawConnection(path: run.path)
    let box = Unmanaged.passRetained(FoldBox(fold))
    defer { box.release() }
    try connection.check(
        sqlite3_create_function_v2(
            connection.handle, "records_fold", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, box.toOpaque(),
            { context, _, arguments in
                guard let argument = arguments?[0], sqlite3_value_type(argument) != SQLITE_NULL,
                    let text = sqlite3_value_text(argument)
                else {
                    sqlite3_result_null(context)
                    return
                }
                let fold = Unmanaged<FoldBox>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue().fold
                let string = String(
                    decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(argument))),
                    as: UTF8.self)
                // SQLITE_TRANSIENT: SQLite copies the text before withCString ends.
                fold(string).withCString {
                    sqlite3_result_text(context, $0, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
                }
            }, nil, nil, nil), "records_fold")
    let statement = try connection.prepare(
        """
        SELECT peopleInfoID, firstname, lastname, age FROM peopleInfo
        ORDER BY records_fold(lastname), records_fold(firstname), peopleInfoID LIMIT 21 OFFSET ?
        """)
    defer { sqlite3_finalize(statement) }
    let offset = (max(1, min(page, run.rows / pageSize)) - 1) * pageSize
    try connection.check(sqlite3_bind_int64(statement, 1, Int64(offset)), "bind")
    return try run.measure {
        var people: [PersonFields] = []
        try connection.forEachRow(statement) { people.append(rawPerson(statement)) }
        return outcome(people)
    }
}

/// A fold function, handed to SQLite as the function's user data.
private final class FoldBox {
    let fold: @Sendable (String) -> String
    init(_ fold: @escaping @Sendable (String) -> String) { self.fold = fold }
}

/// The app's fold before its ASCII fast path: Foundation's alone.
@Sendable private func foundationFold(_ text: String) -> String {
    text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
}

/// Runs `body` on the concurrency pool and waits for it: the workloads
/// are synchronous, the app's stores are not.
private func waitFor<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { result.value = .success(try await body()) } catch { result.value = .failure(error) }
        done.signal()
    }
    done.wait()
    return try result.value!.get()
}

/// What `waitFor`'s task hands back; written before the semaphore is
/// signalled and read after it is waited for.
private final class ResultBox<T>: @unchecked Sendable {
    var value: Swift.Result<T, any Error>?
}

/// `count` people with mostly ASCII names in mixed case, some accented, drawn by a fixed generator.
private func sortedPeople(_ count: Int) -> [PersonFields] {
    var state: UInt64 = 0xD1B5_4A32_D192_ED03
    func next() -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int(truncatingIfNeeded: state >> 33)
    }
    let firsts = [
        "Ada", "grace", "Alan", "Édith", "Barbara", "claude", "Donald", "Edsger", "Frances", "Guido", "Hedy", "ivan",
        "John", "Katherine", "Linus", "Margaret", "Niklaus", "Ole", "Radia", "Sophie", "Tim", "Vint", "Zoë", "Åsa",
    ]
    let lasts = [
        "Lovelace", "hopper", "Turing", "Liskov", "Shannon", "Knuth", "dijkstra", "Allen", "van Rossum", "Lamarr",
        "Sutherland", "Ritchie", "Johnson", "Torvalds", "Hamilton", "Wirth", "Dahl", "Perlman", "Wilson", "Cerf",
        "Åkesson", "Müller", "O'Brien", "DeMarco",
    ]
    return (0..<count).map { index in
        PersonFields(
            id: nil, firstname: firsts[next() % firsts.count],
            lastname: lasts[next() % lasts.count] + "\(next() % 1000)",
            age: index % 100)
    }
}
