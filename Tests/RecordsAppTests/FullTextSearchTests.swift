import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

/// The hostile texts every search must take without an error.
let hostileSearchTexts = [
    "\"", "\"\"", "ada\"", "*", "ada*", "NEAR(", "NEAR(ada lovelace)", "AND", "ada AND", "OR", "NOT ada", "-",
    "-ada", ":", "firstname:ada", "lastname : ada", "(", ")", "(ada)", "^ada", "+", "😀", "ada 😀",
    "'", "o'", "\u{0}", String(repeating: "a", count: 10_000), String(repeating: "ab ", count: 3_333),
]

@Suite("People: full-text search")
struct PeopleFullTextSearchTests {
    let database: AppDatabase
    let store: PeopleStore

    init() async throws {
        database = try emptyDatabase()
        store = PeopleStore(database: database)
        for (first, last) in [("Ada", "Lovelace"), ("Alan", "Turing"), ("Zoë", "Åkesson"), ("Grace", "Hopper")] {
            try await store.add(PersonDraft(firstName: first, lastName: last, age: 40))
        }
    }

    private func names(_ text: String) async throws -> [String] {
        try await store.fullTextSearch(text).records.map(\.fullName)
    }

    @Test("A word matches the start of a first or last name")
    func prefix() async throws {
        #expect(try await names("gra") == ["Grace Hopper"])
        #expect(try await names("hop") == ["Grace Hopper"])
        #expect(try await names("race") == [])
    }

    @Test("Diacritics are ignored: akesson finds Åkesson, zoe finds Zoë")
    func diacritics() async throws {
        #expect(try await names("akesson") == ["Zoë Åkesson"])
        #expect(try await names("zoe") == ["Zoë Åkesson"])
        #expect(try await names("ÅKESSON") == ["Zoë Åkesson"])
    }

    @Test("Case is ignored")
    func caseInsensitive() async throws {
        #expect(try await names("LOVELACE") == ["Ada Lovelace"])
        #expect(try await names("lOvE") == ["Ada Lovelace"])
    }

    @Test("Every word must match the start of a name, in any order")
    func severalWords() async throws {
        #expect(try await names("ada lov") == ["Ada Lovelace"])
        #expect(try await names("lov ada") == ["Ada Lovelace"])
        #expect(try await names("a") == ["Ada Lovelace", "Alan Turing", "Zoë Åkesson"])
        #expect(try await names("ada turing") == [])
    }

    @Test("No match is an empty result, not an error")
    func noMatch() async throws {
        let results = try await store.fullTextSearch("nobody")
        #expect(results.matches.isEmpty && results.unreadable.isEmpty)
    }

    @Test("Blank and punctuation-only text finds no one, without an error")
    func nothingToLookFor() async throws {
        for text in ["", "   ", "\n\t", "*", "\"", "-", "()", "…"] {
            #expect(try await store.fullTextSearch(text).matches.isEmpty, "\(text)")
        }
    }

    @Test("Hostile text is text to look for: no input makes the search fail")
    func hostileInput() async throws {
        for text in hostileSearchTexts {
            let results = try await store.fullTextSearch(text)
            #expect(results.unreadable.isEmpty)
        }
        // Operators are words: "ada AND" looks for the word "and" too.
        #expect(try await names("ada AND") == [])
        try await store.add(PersonDraft(firstName: "And", lastName: "Near", age: 1))
        #expect(try await names("AND NEAR(") == ["And Near"])
        #expect(try await names("\"and\" near*") == ["And Near"])
    }

    @Test("A name matching twice ranks above a name matching once")
    func ranking() async throws {
        try await store.add(PersonDraft(firstName: "Hopper", lastName: "Hopper", age: 1))
        let results = try await store.fullTextSearch("hopper")
        #expect(results.records.map(\.fullName) == ["Hopper Hopper", "Grace Hopper"])
        #expect(results.matches[0].rank < results.matches[1].rank)
    }

    @Test("The snippet is the full name with the matching words marked")
    func snippet() async throws {
        let match = try #require(try await store.fullTextSearch("gra hop").matches.first)
        #expect(match.snippet.marked(before: "[", after: "]") == "[Grace] [Hopper]")
        let zoe = try #require(try await store.fullTextSearch("akes").matches.first)
        #expect(zoe.snippet.segments == [.init(text: "Zoë ", isMatch: false), .init(text: "Åkesson", isMatch: true)])
    }

    @Test("limit and offset page through the ranked matches; negative ones are refused")
    func paging() async throws {
        let all = try await names("a")
        #expect(try await store.fullTextSearch("a", limit: 2).records.map(\.fullName) == Array(all.prefix(2)))
        #expect(try await store.fullTextSearch("a", limit: 2, offset: 2).records.map(\.fullName) == [all[2]])
        #expect(try await store.fullTextSearch("a", offset: 1).records.map(\.fullName) == Array(all.dropFirst()))
        #expect(try await store.fullTextSearch("a", limit: 0).matches.isEmpty)
        await #expect(throws: ValidationError.self) { try await store.fullTextSearch("a", limit: -1) }
        await #expect(throws: ValidationError.self) { try await store.fullTextSearch("a", offset: -1) }
    }

    @Test("The index follows add, edit and delete through the store")
    func inSync() async throws {
        let ken = try await store.add(PersonDraft(firstName: "Ken", lastName: "Thompson", age: 80))
        #expect(try await names("thom") == ["Ken Thompson"])
        try await store.update(id: ken.id, with: PersonChanges(lastName: "Ritchie"))
        #expect(try await names("thom") == [])
        #expect(try await names("ken rit") == ["Ken Ritchie"])
        try await store.update(id: ken.id, with: PersonChanges(age: 81))
        #expect(try await names("ken rit") == ["Ken Ritchie"])
        try await store.delete(id: ken.id)
        #expect(try await names("ken") == [])
    }

    @Test("A change rolled back leaves the index as it was")
    func rollback() async throws {
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try database.write { db in
                try db.execute("INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Temp', 'Orary', 1)")
                try db.execute("UPDATE peopleInfo SET lastname = 'Changed' WHERE firstname = 'Ada'")
                throw Abort()
            }
        }
        #expect(try await names("temp") == [])
        #expect(try await names("changed") == [])
        #expect(try await names("lovelace") == ["Ada Lovelace"])
    }

    @Test("A matching row that cannot be read is reported, the others found")
    func unreadableMatch() async throws {
        try database.write { db in
            try db.execute("INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Ada', 'Unread', 'old')")
        }
        let results = try await store.fullTextSearch("ada")
        #expect(results.records.map(\.fullName) == ["Ada Lovelace"])
        #expect(results.unreadable.map(\.id) == [5])
    }
}

@Suite("Contacts: full-text search")
struct ContactsFullTextSearchTests {
    let database: AppDatabase
    let store: ContactsStore

    init() async throws {
        database = try emptyDatabase()
        store = ContactsStore(database: database)
        try await store.add(ContactDraft(name: "Marco Rossi", address: "Via Roma 1, Milano", contact: "+39 02 1234"))
        try await store.add(ContactDraft(name: "Jane Doe", address: "12 Main Street", contact: "jane@example.com"))
        try await store.add(
            ContactDraft(name: "Viaggi Roma Centro Storico", address: "1 High Street", contact: "+44 20 0000"))
    }

    private func names(_ text: String) async throws -> [String] {
        try await store.fullTextSearch(text).records.map(\.name)
    }

    @Test("Words match the start of words of the name, address or contact, in any order")
    func matching() async throws {
        #expect(try await names("jane") == ["Jane Doe"])
        #expect(try await names("mil") == ["Marco Rossi"])
        #expect(try await names("exam") == ["Jane Doe"])
        #expect(try await names("street jane") == ["Jane Doe"])
        #expect(try await names("ROSSI milano") == ["Marco Rossi"])
        #expect(try await names("rossi main") == [])
    }

    @Test("A match in the name ranks above a match in the address")
    func nameRanksFirst() async throws {
        // Marco Rossi (ID 1) has "Roma" in a shorter address, Viaggi Roma
        // (ID 3) in a longer name: without the name's weight, Marco comes first.
        #expect(try await names("roma") == ["Viaggi Roma Centro Storico", "Marco Rossi"])
    }

    @Test("The snippet is an excerpt of the column that matched, the words marked")
    func snippet() async throws {
        let match = try #require(try await store.fullTextSearch("milano").matches.first)
        #expect(match.snippet.marked(before: "<", after: ">") == "Via Roma 1, <Milano>")
    }

    @Test("Hostile and blank text never fails")
    func hostileInput() async throws {
        for text in hostileSearchTexts + ["", "  ", "@", "+"] {
            _ = try await store.fullTextSearch(text)
        }
        #expect(try await names("+39") == ["Marco Rossi"])
    }

    @Test("The index follows add, edit and delete; find keeps its exact match")
    func inSync() async throws {
        let added = try await store.add(ContactDraft(name: "Ken Thompson", address: "Bell Labs", contact: "ken@bell"))
        #expect(try await names("bell") == ["Ken Thompson"])
        try await store.update(id: added.id, with: ContactChanges(address: "Murray Hill"))
        #expect(try await names("labs") == [])
        #expect(try await names("murray") == ["Ken Thompson"])
        #expect(try await store.find(name: "ken").isEmpty)
        #expect(try await store.find(name: "KEN  thompson").map(\.id) == [added.id])
        try await store.delete(id: added.id)
        #expect(try await names("murray") == [])
    }
}

@Suite("Coffee: full-text search")
struct CoffeeFullTextSearchTests {
    let database: AppDatabase
    let store: CoffeeStore

    init() async throws {
        database = try emptyDatabase()
        store = CoffeeStore(database: database)
        for name in ["Caffè Latte", "Café Mocha", "Espresso", "Latte Macchiato"] {
            try await store.add(CoffeeDraft(name: name, price: 3))
        }
    }

    private func names(_ text: String) async throws -> [String] {
        try await store.fullTextSearch(text).records.map(\.name)
    }

    @Test("Words match the start of words of the name, ignoring case and accents")
    func matching() async throws {
        #expect(try await names("caffe") == ["Caffè Latte"])
        #expect(try await names("CAF") == ["Caffè Latte", "Café Mocha"])
        #expect(try await names("lat caf") == ["Caffè Latte"])
        #expect(try await names("tea") == [])
        #expect(try await names("*") == [])
    }

    @Test("Matches are the list's coffees: ID and name, not hydrated; the snippet marks the name")
    func listColumnsOnly() async throws {
        let match = try #require(try await store.fullTextSearch("moch").matches.first)
        #expect(!match.record.isHydrated && match.record.price == nil)
        #expect(match.snippet.marked(before: "[", after: "]") == "Café [Mocha]")
    }

    @Test("The search never reads a picture, only the list's columns")
    func noPictureRead() async throws {
        let (found, columns) = try await columnsRead(database) { try await store.fullTextSearch("caf") }
        #expect(found.matches.count == 2)
        #expect(columns.contains("coffee.coffeeName"))
        #expect(!columns.contains("coffee.picture") && !columns.contains("coffee.priceMicros"), "\(columns)")
    }

    @Test("The index follows a rename saved through the store and a delete")
    func inSync() async throws {
        var espresso = try #require(try await store.fullTextSearch("espresso").records.first)
        espresso.name = "Ristretto"
        try await store.save(&espresso)
        #expect(try await names("espresso") == [])
        #expect(try await names("rist") == ["Ristretto"])
        try await store.delete(id: espresso.id)
        #expect(try await names("rist") == [])
    }

    @Test("Hostile text never fails")
    func hostileInput() async throws {
        for text in hostileSearchTexts { _ = try await store.fullTextSearch(text) }
    }
}

@Suite("Full-text indexes: migrations")
struct FullTextMigrationTests {
    @Test("A database made by the previous migrations gets its indexes, holding the rows it had")
    func oldDatabaseIndexed() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("old.sqlite")
        do {
            let db = try Database(path: url.path)
            var previous = Migrator()
            for group in AppDatabase.migrationGroups {
                // Nor the change log or the folded index, which came later still.
                previous.register(
                    group.migrations.filter {
                        !$0.identifier.hasSuffix(".searchIndex") && !$0.identifier.hasSuffix(".changeLog")
                            && !$0.identifier.hasSuffix(".foldedSearchIndex")
                            && !$0.identifier.hasSuffix(".searchIndexFoldedRowsOnly")
                    })
            }
            try previous.migrate(db)
            try db.execute(
                """
                INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Zoë', 'Åkesson', 29);
                INSERT INTO CONTACTS (NAME, ADDRESS, CONTACT) VALUES ('Jane Doe', '12 Main Street', '+1 555');
                INSERT INTO coffee (coffeeName, priceMicros) VALUES ('Caffè Latte', 3000000);
                """)
            #expect(try !db.tableExists("peopleInfo_search"))
        }
        let database = try AppDatabase(url: url, template: nil)
        #expect(try database.read { db in try AppDatabase.migrator.isUpToDate(db) })
        #expect(
            try await PeopleStore(database: database).fullTextSearch("akesson").records.map(\.lastName) == ["Åkesson"])
        #expect(try await ContactsStore(database: database).fullTextSearch("main").records.map(\.name) == ["Jane Doe"])
        #expect(
            try await CoffeeStore(database: database).fullTextSearch("caffe").records.map(\.name) == ["Caffè Latte"])
        // And keeps them in sync from then on.
        try await PeopleStore(database: database).add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        #expect(try await PeopleStore(database: database).fullTextSearch("love").records.map(\.firstName) == ["Ada"])
    }

    @Test("The installed sample database is searchable")
    func sampleIndexed() async throws {
        let dir = try TemporaryDirectory()
        let database = try AppDatabase(
            url: dir.fileURL("records.sqlite"), template: try AppDatabase.bundledTemplateURL())
        #expect(
            try await PeopleStore(database: database).fullTextSearch("sean o'bri").records.map(\.lastName) == [
                "O'Brien"
            ])
        #expect(try await CoffeeStore(database: database).fullTextSearch("caf").records.count == 2)
    }
}
