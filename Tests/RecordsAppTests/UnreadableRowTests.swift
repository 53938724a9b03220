import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

/// One stored value the app cannot read never blocks a
/// list, an app or the other apps; it is named by row and column, and can
/// be mended or deleted through the app.
@Suite("Unreadable rows: People")
struct PeopleUnreadableRowTests {
    let dir: TemporaryDirectory
    let database: AppDatabase
    let store: PeopleStore

    /// Ada and Alan as usual, and two rows another tool wrote: text in the
    /// age (ID 2), a blob in the first name (ID 3).
    init() throws {
        dir = try TemporaryDirectory()
        database = try AppDatabase(url: dir.fileURL("records.sqlite"), template: nil)
        store = PeopleStore(database: database)
        try database.write { db in
            try db.execute(
                """
                INSERT INTO peopleInfo (peopleInfoID, firstname, lastname, age) VALUES
                    (1, 'Ada', 'Lovelace', 36), (2, 'Bad', 'Age', 'abc'), (3, X'00FF', 'Blob', 7),
                    (4, 'Alan', 'Turing', 41)
                """)
        }
    }

    static let badAge = UnreadableRowError(
        kind: "person", id: 2,
        values: [
            UnreadableValue(
                field: "age", column: "peopleInfo.age", stored: "the text 'abc'", expected: "a whole number")
        ])
    static let blobName = UnreadableRowError(
        kind: "person", id: 3,
        values: [
            UnreadableValue(
                field: "first name", column: "peopleInfo.firstname", stored: "a blob of 2 bytes", expected: "text")
        ])

    @Test("The list shows every readable person and names each row it cannot read")
    func listShowsTheOthers() async throws {
        let listed = try await store.list(sortedBy: .name)
        #expect(listed.records.map(\.id) == [1, 4])
        #expect(listed.unreadable == [Self.badAge, Self.blobName])
        #expect(
            Self.badAge.description
                == "person 2 cannot be read: its age (peopleInfo.age) is the text 'abc', not a whole number; "
                + "give it a new value, or delete the person")
    }

    @Test("all() and a search's get() fail naming the row and column instead of a bare conversion error")
    func strictReadsNameTheRow() async throws {
        await #expect(throws: Self.badAge) { try await store.all() }
        await #expect(throws: Self.blobName) { try await store.fullTextSearch("blob").get() }
        await #expect(throws: Self.badAge) { try await store.person(id: 2) }
        #expect(try await store.fullTextSearch("love").get().map(\.id) == [1])
        let searched = try await store.fullTextSearch("a")
        #expect(searched.records.map(\.id).sorted() == [1, 4])
        #expect(searched.unreadable.map(\.id) == [2])
    }

    @Test("Editing the unreadable field mends the row; editing another refuses, naming it, and writes nothing")
    func editMends() async throws {
        await #expect(throws: Self.blobName) { try await store.update(id: 3, with: PersonChanges(lastName: "Other")) }
        let lastName = try database.read { db in
            try db.fetchOne(String.self, "SELECT lastname FROM peopleInfo WHERE peopleInfoID = 3")
        }
        #expect(lastName == "Blob")
        let mended = try await store.update(id: 2, with: PersonChanges(age: 40))
        #expect(mended == Person(id: 2, firstName: "Bad", lastName: "Age", age: 40))
        #expect(try await store.list().unreadable == [Self.blobName])
        await #expect(throws: RecordNotFoundError.self) { try await store.update(id: 99, with: PersonChanges(age: 1)) }
    }

    @Test("An unreadable row can be deleted")
    func deleteUnreadable() async throws {
        let deleted = try await store.delete(id: 3)
        #expect(deleted == Person(id: 3, firstName: "", lastName: "Blob", age: 7))
        #expect(try await store.list().unreadable == [Self.badAge])
    }

    @Test("Values other tools may store that still fit are read: a whole REAL age, NULLs")
    func fittingValuesRead() async throws {
        try database.write { db in
            try db.execute("INSERT INTO peopleInfo VALUES (5, NULL, 'Real', 30.0), (6, 'Half', 'Age', 30.5)")
        }
        #expect(try await store.person(id: 5) == Person(id: 5, firstName: "", lastName: "Real", age: 30))
        let error = try await #require(throws: UnreadableRowError.self) { try await store.person(id: 6) }
        #expect(error.values.map(\.stored) == ["the real number 30.5"])
    }

    @Test("The view model shows the other people and names the unreadable rows")
    @MainActor
    func viewModel() async throws {
        let model = PeopleViewModel(store: store)
        await model.load()
        #expect(model.people.map(\.id) == [1, 4])
        #expect(model.unreadableRows == [Self.badAge, Self.blobName])
        #expect(model.errorMessage == nil)
        try await model.update(id: 2, with: PersonChanges(age: 40))
        #expect(model.people.map(\.id) == [2, 1, 4])
        #expect(model.unreadableRows == [Self.blobName])
    }

    @Test("Stored text in a message is shortened and its control characters escaped")
    func storedTextEscaped() {
        #expect(UnreadableValue.describe(.text("a\u{1B}[2J\nb\u{202E}")) == "the text 'a\\u{1B}[2J\\u{A}b\\u{202E}'")
        let long = UnreadableValue.describe(.text(String(repeating: "x", count: 100)))
        #expect(long == "the text '" + String(repeating: "x", count: 40) + "...'")
        #expect(UnreadableValue.describe(.real(1e300)) == "the real number 1e+300")
        #expect(UnreadableValue.describe(.integer(-3)) == "the integer -3")
    }
}

@Suite("Unreadable rows: Contacts")
struct ContactsUnreadableRowTests {
    let dir: TemporaryDirectory
    let database: AppDatabase
    let store: ContactsStore

    /// Jane Doe, and a row whose name is the bytes of "Jane Doe" as a blob.
    init() throws {
        dir = try TemporaryDirectory()
        database = try AppDatabase(url: dir.fileURL("records.sqlite"), template: nil)
        store = ContactsStore(database: database)
        try database.write { db in
            try db.execute(
                """
                INSERT INTO CONTACTS (ID, NAME, ADDRESS, CONTACT) VALUES
                    (1, 'Jane Doe', '12 Main St', '555 0100'), (2, CAST('Jane Doe' AS BLOB), '1 High St', 7),
                    (3, 'Marco', 'Via Roma 1', 'marco@example.com')
                """)
        }
    }

    static let blobName = UnreadableRowError(
        kind: "contact", id: 2,
        values: [UnreadableValue(field: "name", column: "CONTACTS.NAME", stored: "a blob of 8 bytes", expected: "text")]
    )

    @Test("The list and find show the readable contacts and name the unreadable row")
    func listAndFind() async throws {
        #expect(try await store.list().records.map(\.id) == [1, 3])
        #expect(try await store.list().unreadable == [Self.blobName])
        let found = try await store.list(named: "jane doe")
        #expect(found.records.map(\.id) == [1])
        #expect(found.unreadable == [Self.blobName])
        await #expect(throws: Self.blobName) { try await store.find(name: "Jane Doe") }
        await #expect(throws: Self.blobName) { try await store.contact(id: 2) }
        await #expect(throws: Self.blobName) { try await store.all() }
    }

    @Test("Editing the name mends the row, and it can be deleted")
    func mendAndDelete() async throws {
        await #expect(throws: Self.blobName) {
            try await store.update(id: 2, with: ContactChanges(address: "2 High St"))
        }
        let mended = try await store.update(id: 2, with: ContactChanges(name: "Jane Roe"))
        #expect(mended == Contact(id: 2, name: "Jane Roe", address: "1 High St", contact: "7"))
        try database.write { db in try db.execute("UPDATE CONTACTS SET ADDRESS = X'01' WHERE ID = 3") }
        let deleted = try await store.delete(id: 3)
        #expect(deleted == Contact(id: 3, name: "Marco", address: "", contact: "marco@example.com"))
        #expect(try await store.all().map(\.id) == [1, 2])
    }

    @Test("The view model's find counts the unreadable match as found and names it")
    @MainActor
    func viewModelFind() async throws {
        let model = ContactsViewModel(store: store)
        await model.load()
        #expect(model.contacts.map(\.id) == [1, 3])
        #expect(model.unreadableRows == [Self.blobName])
        try database.write { db in try db.execute("DELETE FROM CONTACTS WHERE ID = 1") }
        #expect(await model.find(name: "jane doe").isEmpty)
        #expect(model.status == .matchFound)
        #expect(model.errorMessage == Self.blobName.description)
    }
}

@Suite("Unreadable rows: Coffee")
struct CoffeeUnreadableRowTests {
    /// A database as the original Coffee tutorial left it, with prices no
    /// decimal holds, and the People tutorial's table beside it.
    func tutorialDatabase(_ dir: TemporaryDirectory) throws -> URL {
        let url = dir.fileURL("SQL.sqlite")
        let db = try Database(path: url.path)
        try db.execute(
            """
            CREATE TABLE coffee (coffeeID INTEGER PRIMARY KEY, coffeeName TEXT, price REAL);
            INSERT INTO coffee VALUES (1, 'Fine', 2.5), (2, 'Huge', 1e300), (3, 'Word', 'cheap'),
                (4, 'Endless', 9e999), (5, 'Bytes', X'0102'), (6, 'Tiny', 1e-300), (7, 'Free', NULL);
            CREATE TABLE peopleInfo (peopleInfoID INTEGER PRIMARY KEY AUTOINCREMENT, firstname TEXT, lastname TEXT,
                age INTEGER);
            INSERT INTO peopleInfo (firstname, lastname, age) VALUES ('Ada', 'Lovelace', 36);
            """)
        db.close()
        return url
    }

    @Test("The migration keeps every price no decimal holds, as it was, and blocks no app")
    func migrationKeepsOddPrices() async throws {
        let dir = try TemporaryDirectory()
        let database = try AppDatabase(url: try tutorialDatabase(dir), template: nil)
        #expect(try await PeopleStore(database: database).all().map(\.firstName) == ["Ada"])
        #expect(try await usersStore(database).count() == 0)
        let store = CoffeeStore(database: database)
        #expect(try await store.all(sortedBy: .newest).map(\.id) == [7, 6, 5, 4, 3, 2, 1])
        let stored = try database.read { db in
            try db.fetchAll(
                String.self, "SELECT typeof(priceMicros) || ' ' || quote(priceMicros) FROM coffee ORDER BY coffeeID")
        }
        #expect(
            stored == [
                "integer 2500000", "text '1e+300'", "text 'cheap'", "text 'inf'", "blob X'0102'", "text '1e-300'",
                "null NULL",
            ])
        var flagged: [[String]] = []
        for id in 1...7 { flagged.append(try #require(try await store.coffee(id: Int64(id))).unreadable.map(\.stored)) }
        #expect(
            flagged == [
                [], ["the text '1e+300'"], ["the text 'cheap'"], ["the text 'inf'"], ["a blob of 2 bytes"],
                ["the text '1e-300'"], [],
            ])
        #expect(try await store.coffee(id: 1)?.price == decimal("2.5"))
    }

    @Test("Saving a new price mends the coffee; saving only its name keeps the stored price as it was")
    func editMendsPrice() async throws {
        let dir = try TemporaryDirectory()
        let database = try AppDatabase(url: try tutorialDatabase(dir), template: nil)
        let store = CoffeeStore(database: database)
        var huge = try #require(try await store.coffee(id: 2))
        #expect(huge.price == nil && !huge.isDirty)
        huge.name = "Huge Mug"
        #expect(try await store.save(&huge))
        #expect(huge.unreadable.map(\.field) == ["price"])
        let kept = try database.read { db in
            try db.fetchOne(String.self, "SELECT priceMicros FROM coffee WHERE coffeeID = 2")
        }
        #expect(kept == "1e+300")
        huge.price = decimal("3.10")
        #expect(try await store.save(&huge))
        #expect(huge.unreadable.isEmpty)
        #expect(try await store.coffee(id: 2)?.price == decimal("3.10"))
        #expect(try await store.coffee(id: 2)?.unreadable == [])
    }

    @Test("A coffee's JSON names its unreadable fields")
    func json() async throws {
        let dir = try TemporaryDirectory()
        let database = try AppDatabase(url: try tutorialDatabase(dir), template: nil)
        let store = CoffeeStore(database: database)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let huge = String(decoding: try encoder.encode(try #require(try await store.coffee(id: 2))), as: UTF8.self)
        #expect(huge == #"{"id":2,"name":"Huge","picture":null,"price":null,"unreadable":["price"]}"#)
        let fine = String(decoding: try encoder.encode(try #require(try await store.coffee(id: 1))), as: UTF8.self)
        #expect(fine == #"{"id":1,"name":"Fine","picture":null,"price":"2.50"}"#)
    }

    @Test("A name that is not text: the list names the row; the detail flags it and a new name mends it")
    func blobName() async throws {
        let database = try emptyDatabase()
        let store = CoffeeStore(database: database)
        try await store.add(CoffeeDraft(name: "Mocha", price: decimal("3.95")))
        try database.write { db in
            try db.execute("INSERT INTO coffee (coffeeID, coffeeName, priceMicros) VALUES (9, X'FF', 1000000)")
        }
        let listed = try await store.list()
        #expect(listed.records.map(\.name) == ["Mocha"])
        #expect(listed.unreadable.map(\.id) == [9])
        #expect(listed.unreadable.first?.values.map(\.column) == ["coffee.coffeeName"])
        #expect(try await store.fullTextSearch("m").records.map(\.name) == ["Mocha"])
        var odd = try #require(try await store.coffee(id: 9))
        #expect(odd.name == "" && odd.price == decimal("1.00"))
        #expect(odd.unreadable.map(\.field) == ["name"])
        odd.name = "Mended"
        try await store.save(&odd)
        #expect(try await store.list().records.map(\.name) == ["Mended", "Mocha"])
    }

    @Test("The list view model shows the other coffees and names the unreadable row")
    @MainActor
    func viewModel() async throws {
        let database = try emptyDatabase()
        let store = CoffeeStore(database: database)
        try await store.add(CoffeeDraft(name: "Mocha", price: decimal("3.95")))
        try database.write { db in try db.execute("INSERT INTO coffee (coffeeID, coffeeName) VALUES (9, X'FF')") }
        let model = CoffeeListViewModel(store: store)
        await model.load()
        #expect(model.coffees.map(\.name) == ["Mocha"])
        #expect(model.unreadableRows.map(\.id) == [9])
    }
}

@Suite("Unreadable rows: Users")
struct UsersUnreadableRowTests {
    @Test("The list shows the readable users and names the row; editing the field mends it; deleting works")
    func listEditDelete() async throws {
        let database = try emptyDatabase()
        let store = usersStore(database)
        let ada = try await store.register(validForm())
        let grace = try await store.register(validForm(email: "grace@example.com"))
        try database.write { db in
            try db.execute(
                "UPDATE User_Master SET USER_FNAME = X'4164', USER_DOB = 19901210 WHERE UID = ?",
                arguments: [grace.id])
        }
        let listed = try await store.list()
        #expect(listed.records.map(\.id) == [ada.id])
        let problem = UnreadableRowError(
            kind: "user", id: grace.id,
            values: [
                UnreadableValue(
                    field: "first name", column: "User_Master.USER_FNAME", stored: "a blob of 2 bytes", expected: "text"
                )
            ])
        #expect(listed.unreadable == [problem])
        await #expect(throws: problem) { try await store.user(id: grace.id) }
        await #expect(throws: problem) { try await store.user(email: "grace@example.com") }
        await #expect(throws: problem) {
            try await store.updateProfile(id: grace.id, with: ProfileChanges(city: "Paris"))
        }
        let mended = try await store.updateProfile(id: grace.id, with: ProfileChanges(firstName: "Grace"))
        #expect(mended.firstName == "Grace")
        // A date of birth another tool stored as a number is shown as its text.
        #expect(mended.dateOfBirth == "19901210")
        try database.write { db in
            try db.execute("UPDATE User_Master SET USER_CITY = X'00' WHERE UID = ?", arguments: [ada.id])
        }
        #expect(try await store.delete(id: ada.id).city == "")
        #expect(try await store.all().map(\.id) == [grace.id])
    }

    @Test("Registering an address whose owner's row cannot be read still says the address is taken")
    func registerTakenByUnreadableRow() async throws {
        let database = try emptyDatabase()
        let store = usersStore(database)
        let ada = try await store.register(validForm())
        try database.write { db in
            try db.execute("UPDATE User_Master SET USER_STATE = X'00' WHERE UID = ?", arguments: [ada.id])
        }
        let error = try await #require(throws: ValidationError.self) { try await store.register(validForm()) }
        #expect(error.description == "Email is already registered.")
    }

    @Test("A user imported from the original tutorial with a value that is not text is listed by ID, not lost")
    func importedOddRow() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.fileURL("myDb")
        try makeSeedDatabase(at: url, users: seedUsers)
        do {
            let db = try Database(path: url.path)
            try db.execute("UPDATE User_Master SET USER_LNAME = X'52616F' WHERE UID = 1")
            var migrator = Migrator()
            migrator.register(UsersSchema.migrations(hasher: cheapHasher))
            try migrator.migrate(db)
            db.close()
        }
        let database = try AppDatabase(url: url, template: nil)
        let listed = try await usersStore(database).list()
        #expect(listed.records.map(\.id) == [3, 2])
        #expect(listed.unreadable.map(\.id) == [1])
        #expect(listed.unreadable.first?.values.map(\.column) == ["User_Master.USER_LNAME"])
        #expect(try await PeopleStore(database: database).count() == 0)
    }
}
