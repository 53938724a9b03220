import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

/// A name as written in its language, and the word a person types for one
/// of its words without the letters their keyboard lacks.
struct ForeignName: Sendable, CustomTestStringConvertible {
    let language: String
    let first: String
    let last: String
    /// The word of the name as typed without accents.
    let typed: String
    /// That word as written, which the snippet marks.
    let written: String

    var full: String { "\(first) \(last)" }
    var testDescription: String { "\(language): \(full)" }
    /// What a person types while typing: the first three letters.
    var prefix: String { String(typed.prefix(3)) }
}

/// Names from more than twenty languages, each found by a word typed
/// without its accents or special letters.
let foreignNames: [ForeignName] = [
    ForeignName(
        language: "Polish", first: "Maria", last: "Skłodowska-Curie", typed: "sklodowska", written: "Skłodowska"),
    ForeignName(language: "Polish", first: "Łukasz", last: "Żądło", typed: "lukasz", written: "Łukasz"),
    ForeignName(language: "Danish", first: "Søren", last: "Kierkegaard", typed: "soren", written: "Søren"),
    ForeignName(language: "Norwegian", first: "Bjørnstjerne", last: "Bjørnson", typed: "bjornson", written: "Bjørnson"),
    ForeignName(language: "German", first: "Carl Friedrich", last: "Gauß", typed: "gauss", written: "Gauß"),
    ForeignName(
        language: "Icelandic", first: "Þórbergur", last: "Þórðarson", typed: "thordarson", written: "Þórðarson"),
    ForeignName(language: "Faroese", first: "Rasmus", last: "Ðánjalsson", typed: "danjalsson", written: "Ðánjalsson"),
    ForeignName(language: "Croatian", first: "Đuro", last: "Đaković", typed: "dakovic", written: "Đaković"),
    ForeignName(language: "Turkish", first: "Ayşe", last: "Işıkoğlu", typed: "isikoglu", written: "Işıkoğlu"),
    ForeignName(language: "Vietnamese", first: "Nguyễn Thị", last: "Định", typed: "dinh", written: "Định"),
    ForeignName(language: "French", first: "Lætitia", last: "Cœurdevey", typed: "coeurdevey", written: "Cœurdevey"),
    ForeignName(language: "Spanish", first: "Begoña", last: "Núñez", typed: "nunez", written: "Núñez"),
    ForeignName(language: "Czech", first: "Antonín", last: "Dvořák", typed: "dvorak", written: "Dvořák"),
    ForeignName(language: "Hungarian", first: "Pál", last: "Erdős", typed: "erdos", written: "Erdős"),
    ForeignName(language: "Romanian", first: "Ștefan", last: "Țiriac", typed: "tiriac", written: "Țiriac"),
    ForeignName(language: "Latvian", first: "Krišjānis", last: "Barons", typed: "krisjanis", written: "Krišjānis"),
    ForeignName(
        language: "Lithuanian", first: "Mikalojus", last: "Čiurlionis", typed: "ciurlionis", written: "Čiurlionis"),
    ForeignName(language: "Maltese", first: "Ġużè", last: "Ħili", typed: "hili", written: "Ħili"),
    ForeignName(language: "Esperanto", first: "Eŭgeno", last: "Ĉeĥov", typed: "cehov", written: "Ĉeĥov"),
    ForeignName(language: "Welsh", first: "Llŷr", last: "Ŵynne", typed: "wynne", written: "Ŵynne"),
    ForeignName(language: "Swedish", first: "Åsa", last: "Öberg", typed: "oberg", written: "Öberg"),
    ForeignName(language: "Portuguese", first: "João", last: "Gonçalves", typed: "goncalves", written: "Gonçalves"),
    ForeignName(language: "Dutch", first: "Ĳsbrand", last: "Visser", typed: "ijsbrand", written: "Ĳsbrand"),
    ForeignName(language: "Northern Sami", first: "Áŋŋá", last: "Ŋuvttet", typed: "nuvttet", written: "Ŋuvttet"),
    ForeignName(language: "Azerbaijani", first: "Əli", last: "Əsgərov", typed: "esgerov", written: "Əsgərov"),
    ForeignName(language: "Slovak", first: "Ľudovít", last: "Štúr", typed: "ludovit", written: "Ľudovít"),
    ForeignName(language: "Estonian", first: "Õnne", last: "Pärt", typed: "onne", written: "Õnne"),
    ForeignName(language: "Hausa", first: "Ɗanjuma", last: "Ɓello", typed: "bello", written: "Ɓello"),
    ForeignName(language: "Old English", first: "Ælfrēd", last: "Wessex", typed: "aelfred", written: "Ælfrēd"),
    ForeignName(
        language: "Greenlandic", first: "ĸaalat", last: "ĸristiansen", typed: "qristiansen", written: "ĸristiansen"),
]

/// The names marked as a search's snippet marks them.
private func marked(_ snippet: Snippet) -> String { snippet.marked(before: "[", after: "]") }

@Suite("Folded search: every app finds names typed without their accents")
struct FoldedSearchTests {
    @Test("The names come from at least twenty languages")
    func twentyLanguages() {
        #expect(Set(foreignNames.map(\.language)).count >= 20)
    }

    @Test(
        "People: the unaccented word and its first letters find the person, marked as written", arguments: foreignNames)
    func people(name: ForeignName) async throws {
        let store = PeopleStore(database: try emptyDatabase())
        for other in foreignNames {
            try await store.add(PersonDraft(firstName: other.first, lastName: other.last, age: 40))
        }
        for typed in [name.typed, name.prefix, name.typed.uppercased()] {
            let matches = try await store.fullTextSearch(typed).matches
            #expect(matches.map(\.record.fullName).contains(name.full), "\(typed)")
            let match = try #require(matches.first { $0.record.fullName == name.full })
            #expect(marked(match.snippet).contains("[\(name.written)]"), "\(marked(match.snippet))")
        }
        #expect(try await store.fullTextSearch(name.typed).records.map(\.fullName) == [name.full])
    }

    @Test("Contacts: the unaccented word and its first letters find the contact", arguments: foreignNames)
    func contacts(name: ForeignName) async throws {
        let store = ContactsStore(database: try emptyDatabase())
        for other in foreignNames {
            try await store.add(ContactDraft(name: other.full, address: "1 Main Street", contact: "+1 555 0100"))
        }
        for typed in [name.typed, name.prefix] {
            let matches = try await store.fullTextSearch(typed).matches
            let match = try #require(matches.first { $0.record.name == name.full }, "\(typed)")
            #expect(marked(match.snippet).contains("[\(name.written)]"), "\(marked(match.snippet))")
        }
        #expect(try await store.fullTextSearch(name.typed).records.map(\.name) == [name.full])
    }

    @Test("Coffee: the unaccented word and its first letters find the coffee", arguments: foreignNames)
    func coffee(name: ForeignName) async throws {
        let store = CoffeeStore(database: try emptyDatabase())
        for other in foreignNames {
            try await store.add(CoffeeDraft(name: other.full, price: 3))
        }
        for typed in [name.typed, name.prefix] {
            let matches = try await store.fullTextSearch(typed).matches
            let match = try #require(matches.first { $0.record.name == name.full }, "\(typed)")
            #expect(marked(match.snippet).contains("[\(name.written)]"), "\(marked(match.snippet))")
        }
        #expect(try await store.fullTextSearch(name.typed).records.map(\.name) == [name.full])
    }

    @Test("People added at once, sharing transactions, are folded when their write returns: search finds each")
    func addedTogether() async throws {
        let database = try emptyDatabase()
        let store = PeopleStore(database: database)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for name in foreignNames {
                group.addTask { try await store.add(PersonDraft(firstName: name.first, lastName: name.last, age: 40)) }
            }
            try await group.waitForAll()
        }
        // Folded in the writes' own transactions, as a read replica (which
        // cannot fold) needs: no row is left for a read to fold.
        let unfolded = try await database.writer.read { db in
            (
                try db.fetchOne(Int.self, "SELECT COUNT(*) FROM peopleInfo_searchText WHERE isFolded = 0"),
                try db.fetchOne(Int.self, "SELECT COUNT(*) FROM peopleInfo_sortKey WHERE lastKey IS NULL")
            )
        }
        #expect(unfolded.0 == 0)
        #expect(unfolded.1 == 0)
        for name in foreignNames {
            #expect(
                try await store.fullTextSearch(name.typed).records.map(\.fullName).contains(name.full), "\(name.typed)")
        }
    }

    @Test("A name typed as written finds it too")
    func typedAsWritten() async throws {
        let store = PeopleStore(database: try emptyDatabase())
        try await store.add(PersonDraft(firstName: "Maria", lastName: "Skłodowska-Curie", age: 66))
        #expect(try await store.fullTextSearch("Skłodowska").records.count == 1)
        #expect(try await store.fullTextSearch("SKŁ").records.count == 1)
    }

    @Test("A letter that is only like another finds nothing: l does not find a name without one")
    func noFalseFriends() async throws {
        let store = PeopleStore(database: try emptyDatabase())
        try await store.add(PersonDraft(firstName: "Søren", lastName: "Kierkegaard", age: 42))
        #expect(try await store.fullTextSearch("sar").records.isEmpty)
        #expect(try await store.fullTextSearch("soa").records.isEmpty)
        #expect(try await store.fullTextSearch("sorenx").records.isEmpty)
    }
}

@Suite("Folded search: sorting folds the same letters")
struct FoldedSortTests {
    let lastNames = ["Mazur", "Łapiński", "Kowalski", "Lewandowski", "Ørsted", "Nielsen", "Þórsson", "Tómasson"]
    let expected = ["Kowalski", "Łapiński", "Lewandowski", "Mazur", "Nielsen", "Ørsted", "Þórsson", "Tómasson"]

    @Test("People by name: Łukasz sorts under L, Ørsted under O, Þórsson as Thorsson")
    func people() async throws {
        let store = PeopleStore(database: try emptyDatabase())
        for last in lastNames { try await store.add(PersonDraft(firstName: "A", lastName: last, age: 30)) }
        let page = try await store.page(sortedBy: .name, number: 1, size: 20)
        #expect(page.items.map(\.lastName) == expected)
    }

    @Test("Contacts by name fold the same letters")
    func contacts() async throws {
        let store = ContactsStore(database: try emptyDatabase())
        for last in lastNames {
            try await store.add(ContactDraft(name: last, address: "1 Main Street", contact: "+1 555 0100"))
        }
        let page = try await store.page(sortedBy: .name, number: 1, size: 20)
        #expect(page.items.map(\.name) == expected)
    }

    @Test("Coffee by name folds the same letters")
    func coffee() async throws {
        let store = CoffeeStore(database: try emptyDatabase())
        for last in lastNames { try await store.add(CoffeeDraft(name: last, price: 3)) }
        let page = try await store.page(sortedBy: .name, number: 1, size: 20)
        #expect(page.items.map(\.name) == expected)
    }
}

@Suite("Folded search: other programs and old databases")
struct FoldedSearchIndexTests {
    private func unfolded(_ db: Database, _ index: FoldedSearchIndex) throws -> Int {
        try db.fetchOne(Int.self, "SELECT count(*) FROM \(identifier: index.textTable) WHERE isFolded = 0") ?? -1
    }

    @Test("Another program, without the app's functions, inserts, renames and deletes; the next search is right")
    func otherProgramWrites() async throws {
        let writers = try TwoWriters()
        let store = PeopleStore(database: writers.database)
        try await store.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        _ = try await store.fullTextSearch("ada")
        try await writers.plain.write { db in
            try db.execute(
                """
                INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Søren', 'Kierkegaard', 42);
                INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Łukasz', 'Żądło', 30);
                """)
        }
        #expect(try await writers.plain.read { db in try unfolded(db, PeopleSchema.searchIndex) } == 2)
        #expect(try await store.fullTextSearch("soren").records.map(\.lastName) == ["Kierkegaard"])
        #expect(try await writers.plain.read { db in try unfolded(db, PeopleSchema.searchIndex) } == 0)
        try await writers.plain.write { db in
            try db.execute("UPDATE peopleInfo SET firstname = 'Bjørn' WHERE firstname = 'Søren'")
            try db.execute("DELETE FROM peopleInfo WHERE firstname = 'Łukasz'")
        }
        #expect(try await store.fullTextSearch("soren").records.isEmpty)
        #expect(try await store.fullTextSearch("bjorn").records.map(\.lastName) == ["Kierkegaard"])
        #expect(try await store.fullTextSearch("luk").records.isEmpty)
        #expect(try await store.fullTextSearch("ada").records.map(\.lastName) == ["Lovelace"])
    }

    @Test("A row another program replaces (INSERT OR REPLACE) loses the old words")
    func otherProgramReplaces() async throws {
        let writers = try TwoWriters()
        let store = PeopleStore(database: writers.database)
        let ada = try await store.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        _ = try await store.fullTextSearch("ada")
        try await writers.plain.write { db in
            try db.execute(
                "INSERT OR REPLACE INTO peopleInfo (peopleInfoID, firstname, lastname) VALUES (?, 'Þóra', 'Ølsen')",
                arguments: [ada.id])
        }
        #expect(try await store.fullTextSearch("ada").records.isEmpty)
        #expect(try await store.fullTextSearch("thora olsen").records.map(\.id) == [ada.id])
    }

    @Test("The index holds exactly the folded text: every row's words, no word of a row gone")
    func indexMatchesFoldedText() async throws {
        let writers = try TwoWriters()
        let store = PeopleStore(database: writers.database)
        for name in foreignNames.prefix(8) {
            try await store.add(PersonDraft(firstName: name.first, lastName: name.last, age: 40))
        }
        try await writers.plain.write { db in
            try db.execute("UPDATE peopleInfo SET lastname = 'Øster' WHERE peopleInfoID = 2")
            try db.execute("DELETE FROM peopleInfo WHERE peopleInfoID = 3")
        }
        _ = try await store.fullTextSearch("x")
        let index = PeopleSchema.searchIndex
        try await writers.plain.write { db in
            try db.execute(
                "CREATE VIRTUAL TABLE temp.indexed USING fts5vocab(main, \(identifier: index.name), 'instance')")
            let terms = try db.fetchAll(String.self, "SELECT DISTINCT term FROM temp.indexed ORDER BY term")
            #expect(terms.contains("oster") && terms.contains("bjornson") && terms.contains("sklodowska"))
            #expect(!terms.contains("soren") && !terms.contains("zadlo"), "the words of the deleted and renamed")
            #expect(terms.allSatisfy { $0.unicodeScalars.allSatisfy(\.isASCII) }, "\(terms)")
            // One entry for each word of each row's folded text, no more.
            let texts = try db.fetchAll(
                String.self, "SELECT firstname || ' ' || lastname FROM \(identifier: index.textTable)")
            let words = texts.flatMap { $0.split { !$0.isLetter && !$0.isNumber } }
            #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM temp.indexed") == words.count)
            #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM peopleInfo") == 7)
        }
    }

    @Test("A database made before the folded index gets it, folding the rows it had; its sort keys are refolded")
    func oldDatabaseUpgraded() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("old.sqlite")
        do {
            let db = try Database(path: url.path, configuration: AppDatabase.configuration(debugLog: nil))
            var previous = Migrator()
            for group in AppDatabase.migrationGroups {
                previous.register(
                    group.migrations.filter {
                        // Nor the change log, which came in the same release.
                        !$0.identifier.hasSuffix(".foldedSearchIndex") && !$0.identifier.hasSuffix(".refoldSortKeys")
                            && !$0.identifier.hasSuffix(".changeLog")
                            // Nor what came after it.
                            && !$0.identifier.hasSuffix(".searchIndexFoldedRowsOnly")
                    })
            }
            try previous.migrate(db)
            // The keys as the former fold computed them: it kept ł.
            try db.execute(
                """
                INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Søren', 'Kierkegaard', 42);
                INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Ada', 'Łapińska', 30);
                INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Ada', 'Mazur', 30);
                UPDATE peopleInfo_sortKey SET lastKey = (SELECT lower(lastname) FROM peopleInfo p
                    WHERE p.peopleInfoID = peopleInfo_sortKey.peopleInfoID), firstKey = 'ada';
                INSERT INTO CONTACTS (NAME, ADDRESS, CONTACT) VALUES ('Đuro Đaković', '12 Main Street', '+1 555');
                INSERT INTO coffee (coffeeName, priceMicros) VALUES ('Smørrebrød Roast', 3000000);
                """)
            // So Łapińska sorted after Mazur.
            let former = try db.fetchAll(
                String.self,
                "SELECT lastname FROM peopleInfo_sortKey JOIN peopleInfo USING (peopleInfoID) ORDER BY lastKey")
            #expect(former == ["Kierkegaard", "Mazur", "Łapińska"])
            #expect(
                try db.fetchOne(
                    Int.self, "SELECT count(*) FROM peopleInfo_search WHERE peopleInfo_search MATCH 'soren'") == 0)
            db.close()
        }
        let database = try AppDatabase(url: url, template: nil)
        #expect(try database.read { db in try AppDatabase.migrator.isUpToDate(db) })
        #expect(
            try await PeopleStore(database: database).fullTextSearch("soren").records.map(\.lastName) == ["Kierkegaard"]
        )
        #expect(try await ContactsStore(database: database).fullTextSearch("dakov").records.count == 1)
        #expect(try await CoffeeStore(database: database).fullTextSearch("smorre").records.count == 1)
        let page = try await PeopleStore(database: database).page(sortedBy: .name, number: 1, size: 20)
        #expect(page.items.map(\.lastName) == ["Kierkegaard", "Łapińska", "Mazur"])
    }

    @Test("A row waiting to be folded is not in the full-text index; the fold adds it, once")
    func waitingRowsStayOutOfTheIndex() throws {
        let database = try emptyDatabase()
        let documents: SQL = "SELECT count(*) FROM peopleInfo_search_docsize"
        try database.write { db in
            let before = try db.fetchOne(Int.self, documents)
            // As another program writes: the row waits for the app's fold.
            try db.execute("INSERT INTO peopleInfo (firstname, lastname) VALUES ('Søren', 'Kierkegaard')")
            #expect(try db.fetchOne(Int.self, documents) == before)
            #expect(try PeopleSchema.searchIndex.fill(db) == 1)
            #expect(try db.fetchOne(Int.self, documents) == (before ?? 0) + 1)
            #expect(
                try db.fetchOne(
                    Int.self, "SELECT count(*) FROM peopleInfo_search WHERE peopleInfo_search MATCH 'soren'")
                    == 1)
            // A change of a name takes the row out until it is folded again.
            try db.execute("UPDATE peopleInfo SET lastname = 'Kirkegård' WHERE lastname = 'Kierkegaard'")
            #expect(try db.fetchOne(Int.self, documents) == before)
            #expect(try PeopleSchema.searchIndex.fill(db) == 1)
            #expect(
                try db.fetchOne(
                    Int.self, "SELECT count(*) FROM peopleInfo_search WHERE peopleInfo_search MATCH 'kirkegard'")
                    == 1)
            #expect(
                try db.fetchOne(
                    Int.self, "SELECT count(*) FROM peopleInfo_search WHERE peopleInfo_search MATCH 'kierkegaard'")
                    == 0)
            // A waiting row deleted was never in the index: nothing to remove.
            try db.execute("INSERT INTO peopleInfo (firstname, lastname) VALUES ('Ada', 'Lovelace')")
            try db.execute("DELETE FROM peopleInfo WHERE lastname = 'Lovelace'")
            #expect(try db.fetchOne(Int.self, documents) == (before ?? 0) + 1)
            try db.execute("INSERT INTO peopleInfo_search (peopleInfo_search, rank) VALUES ('integrity-check', 0)")
        }
    }

    @Test("An index that held the waiting rows' empty text is upgraded: folded, then only folded rows indexed")
    func waitingRowsTakenOutOfAnOldIndex() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("old.sqlite")
        do {
            let db = try Database(path: url.path, configuration: AppDatabase.configuration(debugLog: nil))
            var previous = Migrator()
            previous.register(AppDatabase.sharedMigrations)
            for group in AppDatabase.migrationGroups {
                previous.register(group.migrations.filter { !$0.identifier.hasSuffix(".searchIndexFoldedRowsOnly") })
            }
            try previous.migrate(db)
            // The side table's triggers as they were: every row indexed,
            // a waiting one with no text.
            let index = PeopleSchema.searchIndex
            for name in index.triggerNames.suffix(3) { try db.execute("DROP TRIGGER \(identifier: name)") }
            try db.execute(
                """
                CREATE TRIGGER peopleInfo_search_folded_after_insert AFTER INSERT ON peopleInfo_searchText BEGIN
                    INSERT INTO peopleInfo_search (rowid, firstname, lastname)
                    VALUES (new.peopleInfoID, new.firstname, new.lastname); END;
                CREATE TRIGGER peopleInfo_search_folded_after_update AFTER UPDATE ON peopleInfo_searchText BEGIN
                    INSERT INTO peopleInfo_search (peopleInfo_search, rowid, firstname, lastname)
                    VALUES ('delete', old.peopleInfoID, old.firstname, old.lastname);
                    INSERT INTO peopleInfo_search (rowid, firstname, lastname)
                    VALUES (new.peopleInfoID, new.firstname, new.lastname); END;
                CREATE TRIGGER peopleInfo_search_folded_after_delete AFTER DELETE ON peopleInfo_searchText BEGIN
                    INSERT INTO peopleInfo_search (peopleInfo_search, rowid, firstname, lastname)
                    VALUES ('delete', old.peopleInfoID, old.firstname, old.lastname); END;
                INSERT INTO peopleInfo (firstname, lastname) VALUES ('Søren', 'Kierkegaard'), ('Ada', 'Łapińska');
                """)
            // Both waiting rows are in the old index, with no words.
            #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM peopleInfo_searchText WHERE isFolded = 0") == 2)
            #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM peopleInfo_search_docsize") == 2)
            db.close()
        }
        let database = try AppDatabase(url: url, template: nil)
        try database.read { db in
            #expect(try AppDatabase.migrator.isUpToDate(db))
            #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM peopleInfo_searchText WHERE isFolded = 0") == 0)
            // Each row indexed once, with its folded words.
            #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM peopleInfo_search_docsize") == 2)
            let trigger = try db.fetchOne(
                String.self, "SELECT sql FROM sqlite_schema WHERE name = 'peopleInfo_search_folded_after_insert'")
            #expect(trigger?.contains("WHEN new.isFolded") == true)
        }
        #expect(try await PeopleStore(database: database).fullTextSearch("lapinska").records.count == 1)
        #expect(try await PeopleStore(database: database).fullTextSearch("soren").records.count == 1)
    }

    @Test("The original tutorial's table keeps its columns; the folded text is beside it")
    func tutorialTableUnchanged() throws {
        let database = try emptyDatabase()
        try database.read { db in
            let columns = try db.fetchAll(String.self, "SELECT name FROM pragma_table_info('peopleInfo')")
            #expect(columns == ["peopleInfoID", "firstname", "lastname", "age"])
            let text = try db.fetchAll(String.self, "SELECT name FROM pragma_table_info('peopleInfo_searchText')")
            #expect(text == ["peopleInfoID", "isFolded", "firstname", "lastname"])
        }
    }
}
