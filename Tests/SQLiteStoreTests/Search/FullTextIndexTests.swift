import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

@Suite("Full-text index")
struct FullTextIndexTests {
    @Test("A table name with a quote and a combining mark stays whole in the index's SQL")
    func quoteWithCombiningMarkInTableName() throws {
        // `'` U+0301 is one Character: doubling quotes by Character left the
        // quote of `content='...'` single, and the CREATE failed.
        let db = try Database(path: ":memory:")
        let table = "o'\u{301}notes"
        try db.execute(
            SQL(unsafeLiteral: "CREATE TABLE \(quotedIdentifier(table)) (id INTEGER PRIMARY KEY, body TEXT)"))
        try db.execute(SQL(unsafeLiteral: "INSERT INTO \(quotedIdentifier(table)) (body) VALUES ('kept words')"))
        let index = FullTextIndex(
            "notes_search", on: table, columns: ["body"], rowID: "id",
            tokenizer: FullTextTokenizer(["unicode61", "separators", "'\u{301}"]))
        try db.create(index)
        let pattern = try #require(SearchPattern(typed: "kept"))
        #expect(try db.searchCount(in: index, matching: pattern) == 1)
    }

    @Test("Creating an index over a table that holds rows indexes them")
    func createIndexesExistingRows() throws {
        let db = try makePeopleDatabase()
        try db.create(peopleSearch)
        #expect(try db.searchIDs("hopper") == [1])
        #expect(try db.searchCount(in: peopleSearch, matching: #require(SearchPattern(typed: "kept"))) == 2)
    }

    @Test("An inserted row is found")
    func insertIsIndexed() throws {
        let db = try makeSearchablePeople()
        try db.execute("INSERT INTO people (firstname, lastname) VALUES ('Katherine', 'Johnson')")
        #expect(try db.searchIDs("johns") == [6])
    }

    @Test("An updated row is found by its new text only")
    func updateIsIndexed() throws {
        let db = try makeSearchablePeople()
        try db.execute("UPDATE people SET lastname = 'Hopper-Murray' WHERE id = 3")
        #expect(try db.searchIDs("lovelace") == [])
        #expect(try db.searchIDs("murray") == [3])
        #expect(try db.searchIDs("ada") == [3])
    }

    @Test("Updating a column that is not indexed leaves the index right")
    func updateOfOtherColumn() throws {
        let db = try makePeopleDatabase()
        try db.execute("ALTER TABLE people ADD COLUMN age INTEGER")
        try db.create(peopleSearch)
        try db.execute("UPDATE people SET age = 36 WHERE id = 1")
        #expect(try db.searchIDs("grace hopper") == [1])
        try db.execute("INSERT INTO people_search(people_search) VALUES ('integrity-check')")
    }

    @Test("Changing a row's id moves its index entry")
    func rowIDChange() throws {
        let db = try makeSearchablePeople()
        try db.execute("UPDATE people SET id = 100 WHERE id = 1")
        #expect(try db.searchIDs("hopper") == [100])
        try db.execute("INSERT INTO people_search(people_search) VALUES ('integrity-check')")
    }

    @Test("A deleted row is no longer found")
    func deleteIsIndexed() throws {
        let db = try makeSearchablePeople()
        try db.execute("DELETE FROM people WHERE id = 1")
        #expect(try db.searchIDs("hopper") == [])
        #expect(Set(try db.searchIDs("gra") ?? []) == [4])
    }

    @Test("The index stays consistent with its table after inserts, updates and deletes")
    func integrityAfterChanges() throws {
        let db = try makeSearchablePeople()
        try db.execute("INSERT INTO people (firstname, lastname, notes) VALUES ('A', NULL, 'x y')")
        try db.execute("UPDATE people SET notes = NULL WHERE id = 2")
        try db.execute("UPDATE people SET firstname = 'Ann' WHERE id = 6")
        try db.execute("DELETE FROM people WHERE id = 3")
        // FTS5 compares the index with the content table and throws on any difference.
        try db.execute("INSERT INTO people_search(people_search, rank) VALUES ('integrity-check', 1)")
        #expect(try db.searchIDs("ann") == [6])
    }

    @Test("A rolled-back transaction leaves the index as it was")
    func rollback() throws {
        let db = try makeSearchablePeople()
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try db.transaction { db in
                try db.execute("INSERT INTO people (firstname) VALUES ('Katherine')")
                try db.execute("UPDATE people SET lastname = 'Byron' WHERE id = 3")
                try db.execute("DELETE FROM people WHERE id = 1")
                #expect(try db.searchIDs("katherine") == [6])
                throw Abort()
            }
        }
        #expect(try db.searchIDs("katherine") == [])
        #expect(try db.searchIDs("byron") == [])
        #expect(try db.searchIDs("lovelace") == [3])
        #expect(try db.searchIDs("hopper") == [1])
        try db.execute("INSERT INTO people_search(people_search, rank) VALUES ('integrity-check', 1)")
    }

    @Test("An index created in a migration indexes an old database's rows; a new migration changes it")
    func migrationOnOldDatabase() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("old.sqlite")
        var migrator = Migrator()
        migrator.registerMigration("createPeople") { db in
            try db.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, firstname TEXT, lastname TEXT, notes TEXT)")
        }
        do {
            let db = try Database(path: path)
            try migrator.migrate(db)
            try db.execute("INSERT INTO people (firstname, lastname) VALUES ('Åsa', 'Åkesson')")
        }
        migrator.registerMigration("searchPeople") { db in try db.create(peopleSearch) }
        let narrower = FullTextIndex(peopleSearch.name, on: "people", columns: ["lastname"], rowID: "id")
        migrator.registerMigration("searchLastNamesOnly") { db in
            try db.dropFullTextIndex(named: peopleSearch.name)
            try db.create(narrower)
        }
        let db = try Database(path: path)
        try migrator.migrate(db, upTo: "searchPeople")
        #expect(try db.searchIDs("asa akess") == [1])
        try migrator.migrate(db)
        let asa = try #require(SearchPattern(typed: "asa"))
        #expect(try db.search(SearchPerson.self, in: narrower, matching: asa).isEmpty)
        let akesson = try #require(SearchPattern(typed: "akesson"))
        #expect(try db.search(SearchPerson.self, in: narrower, matching: akesson).map(\.record.id) == [1])
    }

    @Test("Rebuilding indexes rows written while the triggers were missing")
    func rebuild() throws {
        let db = try makeSearchablePeople()
        for trigger in peopleSearch.triggerNames { try db.execute("DROP TRIGGER \(identifier: trigger)") }
        try db.execute("INSERT INTO people (firstname) VALUES ('Katherine')")
        #expect(try db.searchIDs("katherine") == [])
        try db.rebuild(peopleSearch)
        #expect(try db.searchIDs("katherine") == [6])
    }

    @Test("A bulk change with the index rebuilt afterwards is searchable and keeps the triggers")
    func bulkChangeRebuilds() throws {
        let db = try makeSearchablePeople()
        let count = try db.rebuilding(peopleSearch) { db in
            for number in 1...50 {
                try db.execute("INSERT INTO people (firstname, lastname) VALUES (\("Imported\(number)"), 'Bulk')")
            }
            try db.execute("DELETE FROM people WHERE id = 1")
            return 50
        }
        #expect(count == 50)
        #expect(try db.searchCount(in: peopleSearch, matching: #require(SearchPattern(typed: "bulk"))) == 50)
        #expect(try db.searchIDs("hopper") == [])
        try db.execute("INSERT INTO people (firstname) VALUES ('Katherine')")
        #expect(try db.searchIDs("katherine") == [56])
        try db.execute("INSERT INTO people_search(people_search, rank) VALUES ('integrity-check', 1)")
    }

    @Test("A bulk change that throws leaves the rows, the index and its triggers as they were")
    func bulkChangeFailure() throws {
        let db = try makeSearchablePeople()
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try db.rebuilding(peopleSearch) { db in
                try db.execute("INSERT INTO people (firstname) VALUES ('Imported')")
                throw Abort()
            }
        }
        #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM people") == 5)
        try db.execute("INSERT INTO people (firstname) VALUES ('Katherine')")
        #expect(try db.searchIDs("katherine") == [6])
        #expect(try db.searchIDs("imported") == [])
    }

    @Test("Dropping an index removes its table and triggers and keeps the rows")
    func drop() throws {
        let db = try makeSearchablePeople()
        try db.dropFullTextIndex(named: peopleSearch.name)
        let left = try db.fetchAll(
            String.self, "SELECT name FROM sqlite_master WHERE name LIKE 'people_search%' ORDER BY name")
        #expect(left.isEmpty)
        try db.execute("INSERT INTO people (firstname) VALUES ('Katherine')")
        #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM people") == 6)
        try db.dropFullTextIndex(named: peopleSearch.name)  // a second time does nothing
    }

    @Test("Dropping an ordinary table as a full-text index is refused and the table kept")
    func dropRefusesOrdinaryTable() throws {
        let db = try makeSearchablePeople()
        let error = try #require(throws: FullTextSearchError.self) { try db.dropFullTextIndex(named: "PEOPLE") }
        #expect(error.kind == .invalidIndex)
        #expect(error.message.contains("not a full-text index"))
        #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM people") == 5)
        #expect(try db.searchIDs("hopper") == [1])
    }

    @Test("Names with quotes and spaces are quoted everywhere")
    func oddNames() throws {
        let db = try Database.inMemory()
        try db.execute(#"CREATE TABLE "we'i""rd t" ("my'i""d" INTEGER PRIMARY KEY, "fi'rst"" name" TEXT)"#)
        try db.execute(#"INSERT INTO "we'i""rd t" ("fi'rst"" name") VALUES ('Grace')"#)
        let index = FullTextIndex(#"s'e""arch"#, on: #"we'i"rd t"#, columns: [#"fi'rst" name"#], rowID: #"my'i"d"#)
        try db.create(index)
        try db.execute(#"INSERT INTO "we'i""rd t" ("fi'rst"" name") VALUES ('Gracey')"#)
        try db.execute(#"UPDATE "we'i""rd t" SET "fi'rst"" name" = 'Ada' WHERE "my'i""d" = 1"#)
        let pattern = try #require(SearchPattern(typed: "gra"))
        let rows = try db.search(
            KeptRow.self, in: index, matching: pattern, snippet: .highlight(column: #"fi'rst" name"#))
        #expect(rows.map(\.snippet?.text) == ["Gracey"])
        #expect(try db.searchCount(in: index, matching: #require(SearchPattern(typed: "ada"))) == 1)
    }

    @Test("A table without an INTEGER PRIMARY KEY is indexed by its rowid")
    func implicitRowID() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE notes (body TEXT)")
        try db.execute("INSERT INTO notes VALUES ('kept gardens'), ('open gates')")
        let index = FullTextIndex("notes_search", on: "notes", columns: ["body"])
        try db.create(index)
        try db.execute("UPDATE notes SET body = 'closed gates' WHERE rowid = 2")
        let pattern = try #require(SearchPattern(typed: "gates"))
        let found = try db.search(KeptRow.self, in: index, matching: pattern)
        #expect(try found.map { try $0.record.row.decode(String.self, named: "body") } == ["closed gates"])
    }

    @Test("The tokenizer is settable: with tokenchars a hyphenated word is one word")
    func customTokenizer() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE codes (code TEXT)")
        try db.execute("INSERT INTO codes VALUES ('x-ray'), ('x ray')")
        let plain = FullTextIndex("plain", on: "codes", columns: ["code"])
        let hyphenated = FullTextIndex(
            "hyphen", on: "codes", columns: ["code"], tokenizer: .unicode61(tokenCharacters: "-'"))
        try db.create(plain)
        try db.create(hyphenated)
        let pattern = try #require(SearchPattern(typed: "x-ray", prefix: .none))
        #expect(try db.searchCount(in: plain, matching: pattern) == 2)
        #expect(try db.searchCount(in: hyphenated, matching: pattern) == 1)
        #expect(
            try db.fetchOne(String.self, "SELECT sql FROM sqlite_master WHERE name = 'hyphen'")?
                .contains("tokenchars") == true)
    }

    @Test("Without diacritic removal Åkesson is not found by akesson")
    func diacriticsKept() throws {
        let db = try makePeopleDatabase()
        let index = FullTextIndex(
            "strict", on: "people", columns: ["lastname"], rowID: "id", tokenizer: .unicode61(removeDiacritics: 0))
        try db.create(index)
        #expect(try db.searchCount(in: index, matching: #require(SearchPattern(typed: "akesson"))) == 0)
        #expect(try db.searchCount(in: index, matching: #require(SearchPattern(typed: "åkesson"))) == 1)
    }

    @Test("Prefix lengths are passed to FTS5 and prefix searches still work")
    func prefixIndexes() throws {
        let db = try makePeopleDatabase()
        let index = FullTextIndex("fast", on: "people", columns: ["lastname"], rowID: "id", prefixLengths: [2, 3])
        try db.create(index)
        #expect(try db.searchCount(in: index, matching: #require(SearchPattern(typed: "ho"))) == 1)
    }

    @Test(
        "A declaration that does not fit the table is refused with a clear error and creates nothing",
        arguments: [
            (FullTextIndex("s", on: "nobody", columns: ["firstname"]), "no table named \"nobody\""),
            (FullTextIndex("s", on: "people", columns: ["age"], rowID: "id"), "no column \"age\""),
            (FullTextIndex("s", on: "people", columns: [], rowID: "id"), "no column to index"),
            (FullTextIndex("s", on: "people", columns: ["firstname", "FIRSTNAME"], rowID: "id"), "listed twice"),
            (FullTextIndex("s", on: "people", columns: ["firstname"], rowID: "key"), "no column \"key\" for rowID"),
            (FullTextIndex("s", on: "people", columns: ["firstname"], prefixLengths: [0]), "prefix length 0"),
            (FullTextIndex("", on: "people", columns: ["firstname"]), "needs a name"),
            (
                FullTextIndex("s", on: "people", columns: ["rank"], rowID: "id"),
                "FTS5 reserves the column name \"rank\""
            ),
            (
                FullTextIndex("s", on: "people", columns: ["ROWID"], rowID: "id"),
                "FTS5 reserves the column name \"ROWID\""
            ),
            (FullTextIndex("s", on: "people", columns: ["s"], rowID: "id"), "FTS5 reserves the column name \"s\""),
            (FullTextIndex("s", on: "people", columns: ["firstname"], tokenizer: FullTextTokenizer([])), "tokenizer"),
        ])
    func invalidDeclaration(_ index: FullTextIndex, _ expected: String) throws {
        let db = try makePeopleDatabase()
        let error = try #require(throws: FullTextSearchError.self) { try db.create(index) }
        #expect(error.kind == .invalidIndex)
        #expect(error.message.contains(expected), "\(error.message)")
        #expect(
            try db.fetchOne(Int.self, "SELECT count(*) FROM sqlite_master WHERE type != 'table' OR name != 'people'")
                == 0)
    }

    @Test("An unknown tokenizer fails in SQLite and leaves nothing behind")
    func unknownTokenizer() throws {
        let db = try makePeopleDatabase()
        let index = FullTextIndex(
            "s", on: "people", columns: ["firstname"], rowID: "id", tokenizer: FullTextTokenizer(["nope"]))
        #expect(throws: SQLiteError.self) { try db.create(index) }
        #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM sqlite_master WHERE name != 'people'") == 0)
    }

    @Test("Creating an index twice fails and keeps the first one working")
    func createTwice() throws {
        let db = try makeSearchablePeople()
        #expect(throws: SQLiteError.self) { try db.create(peopleSearch) }
        #expect(try db.searchIDs("hopper") == [1])
        try db.execute("INSERT INTO people (firstname) VALUES ('Katherine')")
        #expect(try db.searchIDs("katherine") == [6])
    }
}
