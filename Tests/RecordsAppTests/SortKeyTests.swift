import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

/// The IDs of a list read one row a page (so that an unreadable row keeps
/// its place among the others), until the last page.
private func idsByPage(_ page: (Int) async throws -> RecordPage<Int64>) async throws -> [Int64] {
    var ids: [Int64] = []
    var number = 1
    while true {
        let page = try await page(number)
        ids += page.items + page.unreadable.map(\.id)
        guard page.hasNext else { return ids }
        number += 1
    }
}

/// An app database in a file, and a second connection to it set up as
/// another program's would be: no `records_fold`, foreign keys off, as in
/// the `sqlite3` shell.
struct TwoWriters {
    let directory: TemporaryDirectory
    let database: AppDatabase
    let plain: DatabaseQueue

    init() throws {
        directory = try TemporaryDirectory()
        database = try AppDatabase(url: directory.fileURL("records.sqlite"), start: .empty)
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        plain = try DatabaseQueue(path: directory.path("records.sqlite"), configuration: configuration)
    }
}

/// Names that fold alike, differ in case or accents only, are NULL, empty,
/// tie, or hold a NUL: the order has to be today's for all of them.
private let mixedPeople: [(first: String?, last: String?)] = [
    ("Ada", "Lovelace"), ("ada", "lovelace"), ("ADA", "LOVELACE"), ("Åda", "Lovélace"), ("Zoë", "Åkesson"),
    ("zoe", "akesson"), ("Zoe", "Akesson"), (nil, "Akesson"), ("Ann", nil), (nil, nil), (nil, nil), ("", ""),
    ("", nil), (nil, ""), ("Bob", "0"), ("Bob", "10"), ("Bob", "9"), ("Émile", "Zola"), ("emile", "zola"),
    ("Ｓｅáｎ", "Ｏ'Ｂｒｉｅｎ"), ("Sean", "O'Brien"), ("Ingrid", "Straße"), ("Ingrid", "Strasse"), ("A", "a\u{0}b"),
    ("A", "a"), ("Ab", "a\u{0}"), ("Björn", "Ångström"), ("Bjorn", "Angstrom"), ("Ĳ", "ĳssel"), ("Li", "李"),
    ("Mary", " Lovelace"), ("Mary", "Lovelace "), ("Ζωή", "Άλφα"), ("zoe", "alpha"),
]

/// Inserts the mixed people through `db`, which may be any connection.
private func insertMixedPeople(_ db: Database) throws {
    for person in mixedPeople {
        try db.execute("INSERT INTO peopleInfo (firstname, lastname, age) VALUES (\(person.first), \(person.last), 30)")
    }
}

/// Today's order, folding every name as it sorts (on the app's connection).
private func formerOrder(_ database: AppDatabase, _ sort: PersonSort) throws -> [Int64] {
    try database.read { db in
        try db.fetchAll(
            Int64.self,
            "SELECT peopleInfoID FROM peopleInfo ORDER BY \(PeopleStore.orderBy(sort, sort.defaultDirection))")
    }
}

private func peopleIDs(_ store: PeopleStore, _ sort: PersonSort? = nil) async throws -> [Int64] {
    try await idsByPage { number in
        let page = try await store.page(sortedBy: sort, number: number, size: 1)
        return RecordPage(
            items: page.items.map(\.id), unreadable: page.unreadable, number: number, size: 1, hasNext: page.hasNext)
    }
}

private func contactIDs(_ store: ContactsStore) async throws -> [Int64] {
    try await idsByPage { number in
        let page = try await store.page(number: number, size: 1)
        return RecordPage(
            items: page.items.map(\.id), unreadable: page.unreadable, number: number, size: 1, hasNext: page.hasNext)
    }
}

private func staleKeyCount(_ db: Database, _ keys: SortKeyTable) throws -> Int {
    try db.fetchOne(
        Int.self, "SELECT count(*) FROM \(identifier: keys.name) WHERE \(identifier: keys.keys[0].key) IS NULL")
        ?? -1
}

@Suite("Sort keys: People")
struct PeopleSortKeyTests {
    @Test("Pages by name give exactly the former fold-sorted order on mixed names, whatever the page size")
    func byNameMatchesFormerOrder() async throws {
        let database = try emptyDatabase()
        try database.write { db in try insertMixedPeople(db) }
        let store = PeopleStore(database: database)
        let former = try formerOrder(database, .name)
        #expect(former.count == mixedPeople.count)
        #expect(try await peopleIDs(store, .name) == former)
        for size in [2, 7, 20, 40] {
            var ids: [Int64] = []
            var number = 1
            while true {
                let page = try await store.page(sortedBy: .name, number: number, size: size)
                #expect(page.unreadable.isEmpty && page.items.count <= size)
                ids += page.items.map(\.id)
                guard page.hasNext else { break }
                #expect(page.items.count == size)
                number += 1
            }
            #expect(ids == former, "page size \(size)")
        }
    }

    @Test("Pages by age give exactly the former order: age, then the folded names")
    func byAgeMatchesFormerOrder() async throws {
        let database = try emptyDatabase()
        try database.write { db in
            try insertMixedPeople(db)
            try db.execute(
                "UPDATE peopleInfo SET age = CASE WHEN peopleInfoID % 3 = 0 THEN NULL ELSE peopleInfoID % 4 END")
        }
        let ids = try await peopleIDs(PeopleStore(database: database), .age)
        #expect(ids == (try formerOrder(database, .age)))
    }

    @Test("Names that are numbers or blobs, written by another program, keep their former place")
    func numbersAndBlobsKeepTheirPlace() async throws {
        let database = try emptyDatabase()
        try database.write { db in
            try insertMixedPeople(db)
            try db.execute(
                """
                INSERT INTO peopleInfo (firstname, lastname) VALUES (7, 10), (1.5, 'a'), (x'41C3A9', 'Ab'),
                    ('x', x'ff41'), ('y', CAST(x'5A' AS TEXT)), ('z', CAST(x'C328' AS TEXT))
                """)
        }
        let ids = try await peopleIDs(PeopleStore(database: database))
        #expect(ids.count == mixedPeople.count + 6)
        #expect(ids == (try formerOrder(database, .name)))
    }

    @Test("A stored key is records_fold of its name, text, number or blob alike; a NULL name's key is 0")
    func keyEqualsRecordsFold() throws {
        let database = try emptyDatabase()
        try database.write { db in
            try db.execute(
                """
                INSERT INTO peopleInfo (firstname, lastname)
                SELECT 'first', v FROM (SELECT 'ÅKE' AS v UNION ALL SELECT 'a' || char(0) || 'B'
                UNION ALL SELECT 42 UNION ALL SELECT -1.25 UNION ALL SELECT x'C3A9' UNION ALL SELECT x'FF'
                UNION ALL SELECT CAST(x'FF41' AS TEXT) UNION ALL SELECT '' UNION ALL SELECT NULL)
                """)
            #expect(try PeopleSchema.sortKeys.fill(db) == 9)
        }
        try database.read { db in
            let rows = try db.fetchAll(
                """
                SELECT records_fold(p.lastname), k.lastKey, k.firstKey
                FROM peopleInfo AS p JOIN peopleInfo_sortKey AS k USING (peopleInfoID)
                """)
            #expect(rows.count == 9)
            for row in rows {
                let values = row.values
                let expected: SQLiteValue = values[0] == .null ? .integer(0) : values[0]
                #expect(values[1] == expected, "\(row)")
                #expect(values[2] == .text("first"), "\(row)")
            }
            #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM peopleInfo_sortKey WHERE lastKey = 0") == 1)
        }
    }

    @Test("The migration computes the keys of the people already there, before any read")
    func migrationFillsExistingRows() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("tutorial.sqlite")
        do {
            // The original tutorial's table, filled by another program.
            let plain = try DatabaseQueue(path: path)
            try plain.write { db in
                try db.execute(
                    """
                    CREATE TABLE peopleInfo (peopleInfoID INTEGER PRIMARY KEY AUTOINCREMENT, firstname TEXT,
                        lastname TEXT, age INTEGER)
                    """)
                try insertMixedPeople(db)
            }
            try plain.close()
        }
        let database = try AppDatabase(url: URL(fileURLWithPath: path), start: .empty)
        let keys = PeopleSchema.sortKeys
        let former = try formerOrder(database, .name)
        try database.read { db in
            #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM \(identifier: keys.name)") == mixedPeople.count)
            #expect(try staleKeyCount(db, keys) == 0)
            let walked = try db.fetchAll(
                Int64.self, "SELECT peopleInfoID FROM \(keys.joined) ORDER BY \(keys.order(.ascending))")
            #expect(walked == former)
        }
    }

    @Test("The original tutorial's table keeps its columns; the keys are beside it")
    func tutorialTableUnchanged() throws {
        let database = try emptyDatabase()
        try database.read { db in
            let columns = try db.fetchAll(String.self, "SELECT name FROM pragma_table_info('peopleInfo')")
            #expect(columns == ["peopleInfoID", "firstname", "lastname", "age"])
            let keyColumns = try db.fetchAll(String.self, "SELECT name FROM pragma_table_info('peopleInfo_sortKey')")
            #expect(keyColumns == ["peopleInfoID", "lastKey", "firstKey"])
        }
    }

    @Test("People inserted by another program, without the fold function, sort right at the next page")
    func plainInsertsSortAtNextRead() async throws {
        let writers = try TwoWriters()
        let store = PeopleStore(database: writers.database)
        try await store.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        _ = try await store.page(number: 1, size: 20)
        try await writers.plain.write { db in try insertMixedPeople(db) }
        let stale = try await writers.plain.read { db in try staleKeyCount(db, PeopleSchema.sortKeys) }
        #expect(stale == mixedPeople.count)
        let ids = try await peopleIDs(store)
        #expect(ids.count == mixedPeople.count + 1)
        #expect(ids == (try formerOrder(writers.database, .name)))
        let staleAfter = try await writers.plain.read { db in try staleKeyCount(db, PeopleSchema.sortKeys) }
        #expect(staleAfter == 0)
    }

    @Test("A rename by another program moves the person to the new name's place")
    func plainRenameResorts() async throws {
        let writers = try TwoWriters()
        let store = PeopleStore(database: writers.database)
        try writers.database.write { db in try insertMixedPeople(db) }
        let before = try await peopleIDs(store)
        try await writers.plain.write { db in
            try db.execute("UPDATE peopleInfo SET lastname = 'Zzz' WHERE peopleInfoID = \(before[0])")
            try db.execute("UPDATE peopleInfo SET firstname = 'AAA', lastname = 'A' WHERE peopleInfoID = \(before[5])")
        }
        let after = try await peopleIDs(store)
        #expect(after.firstIndex(of: before[0]) != 0)
        #expect(after != before)
        #expect(after == (try formerOrder(writers.database, .name)))
    }

    @Test("Deletes and ID changes by another program leave one key row per person")
    func plainDeleteAndIDChange() async throws {
        let writers = try TwoWriters()
        let store = PeopleStore(database: writers.database)
        try writers.database.write { db in try insertMixedPeople(db) }
        _ = try await peopleIDs(store)
        try await writers.plain.write { db in
            try db.execute("DELETE FROM peopleInfo WHERE peopleInfoID IN (1, 2, 3)")
            try db.execute("UPDATE peopleInfo SET peopleInfoID = 1000 WHERE peopleInfoID = 4")
        }
        let ids = try await peopleIDs(store)
        #expect(ids.count == mixedPeople.count - 3)
        #expect(ids.contains(1000) && !ids.contains(4))
        #expect(ids == (try formerOrder(writers.database, .name)))
        let keys = PeopleSchema.sortKeys
        let orphans = try await writers.plain.read { db in
            try db.fetchOne(
                Int.self,
                """
                SELECT count(*) FROM \(identifier: keys.name)
                WHERE peopleInfoID NOT IN (SELECT peopleInfoID FROM peopleInfo)
                """)
        }
        #expect(orphans == 0)
    }

    @Test("REPLACE by another program, which deletes without a trigger, re-sorts the replaced person")
    func plainReplaceResorts() async throws {
        let writers = try TwoWriters()
        let store = PeopleStore(database: writers.database)
        try writers.database.write { db in try insertMixedPeople(db) }
        let before = try await peopleIDs(store)
        try await writers.plain.write { db in
            try db.execute("REPLACE INTO peopleInfo (peopleInfoID, firstname, lastname) VALUES (1, 'Zed', 'Zzz')")
            try db.execute("INSERT OR REPLACE INTO peopleInfo (peopleInfoID, firstname, lastname) VALUES (2, 'A', 'A')")
            try db.execute("UPDATE OR REPLACE peopleInfo SET peopleInfoID = 3 WHERE peopleInfoID = 5")
        }
        let ids = try await peopleIDs(store)
        #expect(ids.firstIndex(of: 1) != before.firstIndex(of: 1))
        #expect(ids.count == mixedPeople.count - 1)
        #expect(ids == (try formerOrder(writers.database, .name)))
    }

    @Test("A key row left without its person is dropped, not filled forever")
    func orphanKeyDropped() async throws {
        let writers = try TwoWriters()
        let store = PeopleStore(database: writers.database)
        try await store.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        try await writers.plain.write { db in
            try db.execute("INSERT INTO peopleInfo_sortKey (peopleInfoID) VALUES (999)")
        }
        let page = try await store.page(number: 1, size: 20)
        #expect(page.items.map(\.lastName) == ["Lovelace"])
        let keyRows = try await writers.plain.read { db in
            try db.fetchOne(Int.self, "SELECT count(*) FROM peopleInfo_sortKey")
        }
        #expect(keyRows == 1)
    }

    /// The details of the plan of a page by name.
    private func namePagePlan(number: Int, direction: SortDirection = .ascending) throws -> [String] {
        let database = try emptyDatabase()
        let sql = try RecordTable<Person>.pageSQL(
            keyedBy: PeopleSchema.sortKeys, orderBy: PeopleStore.keyedOrder(.name), direction: direction,
            number: number,
            size: 20)
        return try database.read { db in
            try db.fetchAll("EXPLAIN QUERY PLAN \(sql)").map { try $0["detail"] as String }
        }
    }

    @Test("Page 1 by name walks the sort-key index from its start: no sort, no scan of the people")
    func firstPageUsesIndex() throws {
        let plan = try namePagePlan(number: 1)
        #expect(plan.first == "SCAN peopleInfo_sortKey USING COVERING INDEX peopleInfo_sortKey_order", "\(plan)")
        #expect(plan.contains { $0.hasPrefix("SEARCH peopleInfo USING INTEGER PRIMARY KEY") })
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
    }

    @Test("A later page by name seeks its first row in the index, looking up only its own people; no sort")
    func laterPageSeeksInIndex() throws {
        let plan = try namePagePlan(number: 2500)
        let first = try #require(plan.first)
        #expect(first.hasPrefix("SEARCH peopleInfo_sortKey USING COVERING INDEX peopleInfo_sortKey_order ("), "\(plan)")
        // The row to start from is found in the index alone.
        #expect(plan.contains("SCAN peopleInfo_sortKey USING COVERING INDEX peopleInfo_sortKey_order"), "\(plan)")
        #expect(plan.filter { $0.contains("SEARCH peopleInfo USING INTEGER PRIMARY KEY") }.count == 1)
        #expect(!plan.contains { $0.contains("TEMP B-TREE") || $0.hasPrefix("SCAN peopleInfo ") }, "\(plan)")
    }
}

@Suite("Sort keys: Contacts")
struct ContactsSortKeyTests {
    private func formerOrder(_ database: AppDatabase) throws -> [Int64] {
        try database.read { db in
            try db.fetchAll(Int64.self, "SELECT ID FROM CONTACTS ORDER BY \(ContactsStore.orderBy(.name, .ascending))")
        }
    }

    @Test("Pages by name give exactly the former fold-sorted order, whoever wrote the names")
    func byNameMatchesFormerOrder() async throws {
        let writers = try TwoWriters()
        let store = ContactsStore(database: writers.database)
        let names = mixedPeople.map(\.last) + mixedPeople.map(\.first)
        try writers.database.write { db in
            for name in names.prefix(30) { try db.execute("INSERT INTO CONTACTS (NAME) VALUES (\(name))") }
        }
        let before = try await contactIDs(store)
        #expect(before == (try formerOrder(writers.database)))
        try await writers.plain.write { db in
            for name in names.dropFirst(30) { try db.execute("INSERT INTO CONTACTS (NAME) VALUES (\(name))") }
            try db.execute("UPDATE CONTACTS SET NAME = 'zzz' WHERE ID = 1")
            try db.execute("DELETE FROM CONTACTS WHERE ID = 2")
        }
        let ids = try await contactIDs(store)
        #expect(ids.count == names.count - 1)
        #expect(ids.firstIndex(of: 1) != before.firstIndex(of: 1))
        #expect(ids == (try formerOrder(writers.database)))
    }

    @Test("The page by name walks the sort-key index: no sort")
    func pageUsesIndex() throws {
        let database = try emptyDatabase()
        let keys = ContactsSchema.sortKeys
        let sql = try RecordTable<Contact>.pageSQL(
            keyedBy: keys, orderBy: nil, direction: .ascending, number: 2, size: 20)
        let plan = try database.read { db in
            try db.fetchAll("EXPLAIN QUERY PLAN \(sql)").map { try $0["detail"] as String }
        }
        #expect(plan.contains { $0.contains("CONTACTS_sortKey USING COVERING INDEX CONTACTS_sortKey_order") })
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
    }

    @Test("The original tutorial's CONTACTS table keeps its columns")
    func tutorialTableUnchanged() throws {
        let database = try emptyDatabase()
        let columns = try database.read { db in
            try db.fetchAll(String.self, "SELECT name FROM pragma_table_info('CONTACTS')")
        }
        #expect(columns == ["ID", "NAME", "ADDRESS", "CONTACT"])
    }
}
