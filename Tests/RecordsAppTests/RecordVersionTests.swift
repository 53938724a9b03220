import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

@Suite("Record versions: their text")
struct RecordVersionTextTests {
    @Test("A version is 16 lowercase hex characters and reads back from them")
    func roundTrip() throws {
        let version = RecordVersion(value: 0x0012_3456_789a_bcde)
        #expect(version.description == "00123456789abcde")
        #expect(RecordVersion("00123456789abcde") == version)
    }

    @Test(
        "Anything but exactly 16 lowercase hex characters is no version",
        arguments: [
            "", "0123456789abcde", "0123456789abcdef0", "0123456789ABCDEF", "\"0123456789abcdef\"",
            " 0123456789abcdef", "0123456789abcdeg", "０123456789abcdef",
        ])
    func refusesOtherText(_ text: String) {
        #expect(RecordVersion(text) == nil)
    }

    @Test("A version encodes as its text, and text that is no version does not decode")
    func codable() throws {
        let version = try #require(RecordVersion("fedcba9876543210"))
        let data = try JSONEncoder().encode([version])
        #expect(String(decoding: data, as: UTF8.self) == #"["fedcba9876543210"]"#)
        #expect(try JSONDecoder().decode([RecordVersion].self, from: data) == [version])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([RecordVersion].self, from: Data(#"["FEDCBA9876543210"]"#.utf8))
        }
    }

    @Test("The version hashes each value with its storage class: 1, 1.0, '1', NULL and '' all differ")
    func typedValues() {
        let values: [SQLiteValue] = [.integer(1), .real(1), .text("1"), .null, .text(""), .blob(Data())]
        let versions = values.map { RecordVersion.of(kind: "person", values: [$0]) }
        #expect(Set(versions).count == values.count)
        #expect(
            RecordVersion.of(kind: "person", values: [.text("ab"), .text("")])
                != RecordVersion.of(kind: "person", values: [.text("a"), .text("b")]))
        #expect(
            RecordVersion.of(kind: "person", values: [.integer(1)])
                != RecordVersion.of(kind: "contact", values: [.integer(1)]))
    }
}

@Suite("Record versions: what changes them")
struct RecordVersionTests {
    let file: FileDatabase

    init() throws { file = try FileDatabase() }

    @Test("A person's version from add, from a read and from the same fields in memory is one")
    func personVersionIsTheStoredRows() async throws {
        let store = PeopleStore(database: file.database)
        let ada = try await store.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        let read = try #require(try await store.person(id: ada.id))
        #expect(read.version == ada.version)
        #expect(Person(id: ada.id, firstName: "Ada", lastName: "Lovelace", age: 36).version == ada.version)
        #expect(try await store.all().first?.version == ada.version)
    }

    @Test("Changing any stored value changes the version; writing the same values keeps it")
    func personVersionFollowsTheValues() async throws {
        let store = PeopleStore(database: file.database)
        let ada = try await store.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        let same = try await store.update(id: ada.id, with: PersonChanges(age: 36))
        #expect(same.version == ada.version)
        let older = try await store.update(id: ada.id, with: PersonChanges(age: 37))
        #expect(older.version != ada.version)
        let noAge = try await store.update(id: ada.id, with: PersonChanges(clearsAge: true))
        #expect(Set([ada.version, older.version, noAge.version]).count == 3)
    }

    @Test("Another program's write changes the version, even one the model cannot see (NULL for empty)")
    func anotherProgramsWriteChangesTheVersion() async throws {
        let store = PeopleStore(database: file.database)
        try file.database.write { db in
            try db.execute("INSERT INTO peopleInfo (peopleInfoID, firstname, lastname, age) VALUES (1, '', 'X', 3)")
        }
        let before = try #require(try await store.person(id: 1))
        guard try await runSQLite3(file.url.path, "UPDATE peopleInfo SET firstname = NULL WHERE peopleInfoID = 1")
        else { return }
        let after = try #require(try await store.person(id: 1))
        #expect(after.firstName == before.firstName)
        #expect(after.version != before.version)
    }

    @Test("A contact's version changes with each of its fields")
    func contactVersion() async throws {
        let store = ContactsStore(database: file.database)
        let jane = try await store.add(ContactDraft(name: "Jane", address: "1 Main St", contact: "+1 555"))
        #expect(try await store.contact(id: jane.id)?.version == jane.version)
        var seen: Set<RecordVersion> = [jane.version]
        for changes in [
            ContactChanges(name: "Janet"), ContactChanges(address: "2 Main St"), ContactChanges(contact: "+1 556"),
        ] {
            seen.insert(try await store.update(id: jane.id, with: changes).version)
        }
        #expect(seen.count == 4)
    }

    @Test("A user's version follows the profile and the email, not the password")
    func userVersion() async throws {
        let store = usersStore(file.database)
        let ada = try await store.register(validForm())
        #expect(try await store.user(id: ada.id)?.version == ada.version)
        try await store.changePassword(
            id: ada.id, current: "correct horse", new: "battery staple", confirmation: "battery staple")
        #expect(try await store.user(id: ada.id)?.version == ada.version)
        let moved = try await store.updateProfile(id: ada.id, with: ProfileChanges(city: "Paris"))
        #expect(moved.version != ada.version)
        let renamed = try await store.updateProfile(id: ada.id, with: ProfileChanges(email: "ADA@example.com"))
        #expect(renamed.version != moved.version)
    }

    @Test("A coffee of the list has no version; its detail has one, from add, read and save alike")
    func coffeeVersionIsTheDetails() async throws {
        let store = CoffeeStore(database: file.database)
        let latte = try await store.add(CoffeeDraft(name: "Latte", price: 3.5))
        let added = try #require(latte.version)
        #expect(try await store.all().first?.version == nil)
        var listed = try #require(try await store.all().first)
        try await store.hydrate(&listed)
        #expect(listed.version == added)
        listed.price = 4
        try await store.save(&listed)
        #expect(listed.version != added)
        #expect(try await store.coffee(id: latte.id)?.version == listed.version)
    }

    @Test("Storing a picture changes the coffee's version, even of the same size and type, and so does removing it")
    func coffeePictureChangesTheVersion() async throws {
        let store = CoffeeStore(database: file.database)
        let latte = try await store.add(CoffeeDraft(name: "Latte", price: 3.5))
        var versions: [RecordVersion?] = [latte.version]
        for seed in [1, 2] {
            var bytes = PictureBytes.make(count: 64)
            bytes[40] = UInt8(seed)
            try await store.setPicture(id: latte.id, from: .data(bytes))
            versions.append(try await store.coffee(id: latte.id)?.version)
        }
        try await store.removePicture(id: latte.id)
        versions.append(try await store.coffee(id: latte.id)?.version)
        #expect(Set(versions.compactMap { $0 }).count == 4)
    }
}

/// A record read from a row whose values are of its fields' own types is
/// hashed from the fields read, not by reading the row again; these pin
/// that this gives what hashing the stored values gives, for the common
/// rows and the odd ones (NULL, numbers in text, text that is not UTF-8).
@Suite("Record versions: from the fields read, as from the stored values")
struct RecordVersionFromFieldsTests {
    /// Each row read live from a statement, as a list reads it, then as a
    /// copy: the record's version and that of its stored values (those of
    /// `versionColumns`, by name).
    func versions<Record: AppRecord>(
        of _: Record.Type, table: String, columns: [String], versionColumns: [String], rows: [String]
    ) throws -> [(record: RecordVersion?, stored: RecordVersion)] {
        let db = try Database.inMemory()
        // No column types: every value stays as it was written.
        try db.execute(sql: "CREATE TABLE \(table) (\(columns.joined(separator: ", ")))")
        for row in rows { try db.execute(sql: "INSERT INTO \(table) VALUES (\(row))") }
        func pair(_ row: Row) throws -> (record: RecordVersion?, stored: RecordVersion) {
            (
                try Record(row: row, strict: false).recordVersion,
                try RecordVersion.of(kind: Record.kind, row: row, columns: versionColumns)
            )
        }
        var pairs: [(record: RecordVersion?, stored: RecordVersion)] = []
        let cursor = try db.fetchCursor(sql: "SELECT * FROM \(table) ORDER BY rowid")
        while let row = try cursor.next() { pairs.append(try pair(row)) }
        for row in try db.fetchAll(sql: "SELECT * FROM \(table) ORDER BY rowid") { pairs.append(try pair(row)) }
        return pairs
    }

    @Test("A person's version is what it was: pinned for a person made in memory")
    func pinnedPersonVersion() {
        // The typed encoding hashed with FNV-1a and mixed, worked out apart
        // from the app: a change here changes every stored ETag.
        #expect(
            Person(id: 1, firstName: "Ada", lastName: "Lovelace", age: 36).version.description == "febdf7439db16b52")
        // Large and negative numbers (no leading zero bytes), long text, zero.
        #expect(
            Person(id: 0x0102_0304_0506_0708, firstName: "a", lastName: "b", age: -1).version.description
                == "04ecca5f61c27cb5")
        #expect(
            Person(id: 0x1234, firstName: "", lastName: String(repeating: "x", count: 300), age: 0).version.description
                == "4a38c081c04917a1")
    }

    @Test("Editing a person made in memory keeps the version its fields made, whether read before or not")
    func editingInMemoryKeepsTheVersion() {
        let original = Person(id: 1, firstName: "Ada", lastName: "Lovelace", age: 36).version
        var unread = Person(id: 1, firstName: "Ada", lastName: "Lovelace", age: 36)
        unread.firstName = "Augusta"
        unread.age = nil
        #expect(unread.version == original)
        var read = Person(id: 1, firstName: "Ada", lastName: "Lovelace", age: 36)
        #expect(read.version == original)
        read.lastName += " King"
        #expect(read.version == original)
        #expect(Person(id: 1, firstName: "Augusta", lastName: "Lovelace", age: nil).version != original)
    }

    @Test("An inserted person's version is that of the row it made, even after edits in memory")
    func insertedPersonHasTheRowsVersion() throws {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE peopleInfo (peopleInfoID INTEGER PRIMARY KEY, firstname, lastname, age)")
        var person = Person(id: 0, firstName: "Ada", lastName: "Lovelace", age: 36)
        person.firstName = "Augusta"
        var row = NewRow(record: person)
        _ = try row.insert(db)
        person = row.record
        #expect(person.id == 1)
        let stored = try #require(try db.fetchAll(sql: "SELECT * FROM peopleInfo").first)
        #expect(person.version == (try Person(row: stored).version))
        #expect(person.version == Person(id: 1, firstName: "Augusta", lastName: "Lovelace", age: 36).version)
    }

    @Test("A person read from any stored values has their version: NULL, empty, numbers, blobs, bad UTF-8")
    func personFromFieldsIsFromValues() throws {
        let pairs = try versions(
            of: Person.self, table: "peopleInfo", columns: Person.versionColumns, versionColumns: Person.versionColumns,
            rows: [
                "1, 'Ada', 'Lovelace', 36", "1, NULL, 'Lovelace', NULL", "1, '', '', 0",
                "1, CAST(X'FFFE' AS TEXT), 'Lovelace', 36.0", "1, 7, 'L', '36'", "1, X'00', 'L', 36.5",
                "1.0, 'Ada', 'Lovelace', 36",
            ])
        #expect(pairs.count == 14)
        for pair in pairs { #expect(pair.record == pair.stored) }
        #expect(pairs[0].stored.description == "febdf7439db16b52")
        #expect(pairs[1].stored.description == "14bf82c2ffda24c2")
        #expect(pairs[3].stored.description == "2a97d634fbf3a19e")
        #expect(Set(pairs.prefix(7).map(\.stored)).count == 7)
    }

    @Test("A contact read from any stored values has their version")
    func contactFromFieldsIsFromValues() throws {
        let pairs = try versions(
            of: Contact.self, table: "CONTACTS", columns: Contact.versionColumns,
            versionColumns: Contact.versionColumns,
            rows: [
                "1, 'Jane', '1 Main St', '+1 555'", "1, NULL, '', NULL", "1, CAST(X'FF' AS TEXT), 2, X'01'",
            ])
        for pair in pairs { #expect(pair.record == pair.stored) }
        #expect(pairs[0].record == Contact(id: 1, name: "Jane", address: "1 Main St", contact: "+1 555").version)
        #expect(Set(pairs.map(\.stored)).count == 3)
    }

    @Test("A user read from any stored values has their version, the password hash left out")
    func userFromFieldsIsFromValues() throws {
        func read(_ rows: [String]) throws -> [(record: RecordVersion?, stored: RecordVersion)] {
            try versions(
                of: User.self, table: "User_Master", columns: User.Columns.allCases.map(\.rawValue),
                versionColumns: User.versionColumns, rows: rows)
        }
        let pairs = try read([
            "1, 'a.png', 'Ada', 'Lovelace', 'ada@example.com', 'hash', '123', 'S', 'C', '1', 'A', 2, '1815-12-10'",
            "1, NULL, 'Ada', NULL, 'ada@example.com', 'hash', '123', 'S', 'C', '1', 'A', NULL, 18151210",
            "1, 'a.png', 'Ada', 'Lovelace', 'ada@example.com', 'hash', '123', 'S', 'C', '1', 'A', 9, 'x'",
            "1, 'a.png', 'Ada', 'Lovelace', 'ada@example.com', 'hash', '123', 'S', 'C', '1', 'A', 2.0, 'x'",
        ])
        for pair in pairs { #expect(pair.record == pair.stored) }
        #expect(Set(pairs.map(\.stored)).count == 4)
        let user = User(
            id: 1, firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", mobile: "123", state: "S",
            city: "C", pincode: "1", address: "A", gender: .female, dateOfBirth: "1815-12-10", imageName: "a.png")
        #expect(pairs[0].record == user.version)
        let otherPassword = try read([
            "1, 'a.png', 'Ada', 'Lovelace', 'ada@example.com', 'other', '123', 'S', 'C', '1', 'A', 2, '1815-12-10'"
        ])
        #expect(otherPassword[0].record == user.version)
    }
}

@Suite("Conditional writes: ifVersion")
struct ConditionalWriteTests {
    let database: AppDatabase

    init() throws { database = try emptyDatabase() }

    @Test("An update at the version read writes; one at an older version throws and writes nothing")
    func peopleUpdate() async throws {
        let store = PeopleStore(database: database)
        let ada = try await store.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        let older = try await store.update(id: ada.id, with: PersonChanges(age: 37), ifVersion: ada.version)
        let error = try await #require(throws: VersionConflictError.self) {
            try await store.update(id: ada.id, with: PersonChanges(age: 99), ifVersion: ada.version)
        }
        #expect(
            error == VersionConflictError(kind: "person", id: ada.id, expected: ada.version, current: older.version))
        #expect(try await store.person(id: ada.id) == older)
        #expect(error.description.hasPrefix("person \(ada.id) was changed since version \(ada.version) was read"))
    }

    @Test("A conditional update of a record that is gone is not found, not a conflict")
    func missingRecord() async throws {
        let store = PeopleStore(database: database)
        let ada = try await store.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        try await store.delete(id: ada.id)
        await #expect(throws: RecordNotFoundError(kind: "person", id: ada.id)) {
            try await store.update(id: ada.id, with: PersonChanges(age: 37), ifVersion: ada.version)
        }
    }

    @Test("A contact's update is conditional too")
    func contactsUpdate() async throws {
        let store = ContactsStore(database: database)
        let jane = try await store.add(ContactDraft(name: "Jane", address: "1 Main St", contact: "+1 555"))
        let moved = try await store.update(id: jane.id, with: ContactChanges(address: "2 Main St"))
        await #expect(throws: VersionConflictError.self) {
            try await store.update(id: jane.id, with: ContactChanges(name: "Janet"), ifVersion: jane.version)
        }
        #expect(
            try await store.update(id: jane.id, with: ContactChanges(name: "Janet"), ifVersion: moved.version).name
                == "Janet")
    }

    @Test("A coffee's save and update are conditional; a refused save leaves the coffee dirty")
    func coffeeSaveAndUpdate() async throws {
        let store = CoffeeStore(database: database)
        let latte = try await store.add(CoffeeDraft(name: "Latte", price: 3.5))
        let stale = try #require(latte.version)
        let updated = try await store.update(id: latte.id, with: CoffeeChanges(price: 4), ifVersion: stale)
        #expect(updated.price == 4)
        var edited = latte
        edited.name = "Flat white"
        await #expect(throws: VersionConflictError.self) { try await store.save(&edited, ifVersion: stale) }
        #expect(edited.isDirty)
        #expect(try await store.coffee(id: latte.id)?.name == "Latte")
        #expect(try await store.save(&edited, ifVersion: updated.version))
        #expect(try await store.coffee(id: latte.id)?.name == "Flat white")
    }

    @Test("A coffee's update refuses no change and an invalid price, writing nothing")
    func coffeeUpdateValidates() async throws {
        let store = CoffeeStore(database: database)
        let latte = try await store.add(CoffeeDraft(name: "Latte", price: 3.5))
        await #expect(throws: ValidationError.self) { try await store.update(id: latte.id, with: CoffeeChanges()) }
        await #expect(throws: ValidationError.self) {
            try await store.update(id: latte.id, with: CoffeeChanges(price: -1))
        }
        #expect(try await store.coffee(id: latte.id)?.version == latte.version)
    }

    @Test("Storing a picture at an older version is refused and keeps the old picture")
    func coffeePicture() async throws {
        let store = CoffeeStore(database: database)
        let latte = try await store.add(CoffeeDraft(name: "Latte", price: 3.5))
        let stale = try #require(latte.version)
        try await store.setPicture(id: latte.id, from: .data(PictureBytes.make(count: 32)), ifVersion: stale)
        await #expect(throws: VersionConflictError.self) {
            try await store.setPicture(id: latte.id, from: .data(PictureBytes.make(count: 48)), ifVersion: stale)
        }
        #expect(try await store.coffee(id: latte.id)?.picture?.size == 32)
        await #expect(throws: VersionConflictError.self) {
            try await store.removePicture(id: latte.id, ifVersion: stale)
        }
    }

    @Test("A user's profile update is conditional, with or without the password")
    func usersProfile() async throws {
        let store = usersStore(database)
        let ada = try await store.register(validForm())
        let moved = try await store.updateProfile(
            id: ada.id, with: ProfileChanges(city: "Paris"), ifVersion: ada.version)
        await #expect(throws: VersionConflictError.self) {
            try await store.updateProfile(id: ada.id, with: ProfileChanges(city: "Rome"), ifVersion: ada.version)
        }
        await #expect(throws: VersionConflictError.self) {
            try await store.updateProfile(
                id: ada.id, with: ProfileChanges(city: "Rome"), password: nil, ifVersion: ada.version)
        }
        #expect(try await store.user(id: ada.id) == moved)
    }

    @Test("A delete at an older version throws and keeps the record; at the current one it deletes")
    func conditionalDelete() async throws {
        let store = PeopleStore(database: database)
        let ada = try await store.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        let older = try await store.update(id: ada.id, with: PersonChanges(age: 37))
        await #expect(throws: VersionConflictError.self) { try await store.delete(id: ada.id, ifVersion: ada.version) }
        #expect(try await store.person(id: ada.id) != nil)
        #expect(try await store.delete(id: ada.id, ifVersion: older.version) == older)
        #expect(try await store.person(id: ada.id) == nil)
    }

    @Test("Every store's delete takes the version: a coffee's is its detail's")
    func coffeeDelete() async throws {
        let store = CoffeeStore(database: database)
        let latte = try await store.add(CoffeeDraft(name: "Latte", price: 3.5))
        try await store.setPicture(id: latte.id, from: .data(PictureBytes.make(count: 32)))
        await #expect(throws: VersionConflictError.self) {
            try await store.delete(id: latte.id, ifVersion: latte.version)
        }
        let current = try #require(try await store.coffee(id: latte.id)?.version)
        try await store.delete(id: latte.id, ifVersion: current)
        #expect(try await store.count() == 0)
    }
}
