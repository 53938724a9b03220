import Foundation
import PasswordHashing
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

@Suite("Users: store")
struct UsersStoreTests {
    // MARK: - Registering

    @Test("Registering saves every field and returns the user")
    func register() async throws {
        let store = usersStore(try emptyDatabase())
        let user = try await store.register(validForm())
        #expect(
            user
                == User(
                    id: 1, firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", mobile: "9876543210",
                    state: "Surrey", city: "London", pincode: "110001", address: "12 St James's Sq", gender: .female,
                    dateOfBirth: "1990-12-10", imageName: "ada.png"))
        #expect(try await store.user(id: 1) == user)
        #expect(try await store.count() == 1)
    }

    @Test("A mobile number and postal code keep their leading zero and +")
    func digitStringsStayText() async throws {
        let store = usersStore(try emptyDatabase())
        var form = validForm()
        form.mobile = "+0441234567"
        form.pincode = "0123"
        let user = try await store.register(form)
        #expect(try await store.user(id: user.id)?.mobile == "+0441234567")
        #expect(try await store.user(id: user.id)?.pincode == "0123")
    }

    @Test("The stored value is a scrypt PHC hash that verifies, not the password")
    func storedHashVerifies() async throws {
        let database = try emptyDatabase()
        let user = try await usersStore(database).register(validForm(password: "correct horse"))
        let stored = try #require(try storedHash(database, id: user.id))
        #expect(stored != "correct horse")
        #expect(!stored.contains("correct horse"))
        #expect(stored.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        #expect(try cheapHasher.verify("correct horse", against: stored))
        #expect(try !cheapHasher.verify("correct horsE", against: stored))
        // Nothing else in the row holds it either.
        let values = try database.read { db in
            try db.fetchOne("SELECT * FROM User_Master WHERE UID = ?", arguments: [user.id])?.values ?? []
        }
        #expect(values.count == 13)
        #expect(!values.contains(.text("correct horse")))
    }

    @Test("Two users with the same password get different hashes (fresh salts)")
    func saltedHashes() async throws {
        let database = try emptyDatabase()
        let store = usersStore(database)
        let ada = try await store.register(validForm(email: "ada@example.com", password: "same password"))
        let bob = try await store.register(validForm(email: "bob@example.com", password: "same password"))
        let adaHash = try #require(try storedHash(database, id: ada.id))
        let bobHash = try #require(try storedHash(database, id: bob.id))
        #expect(adaHash != bobHash)
        #expect(try cheapHasher.verify("same password", against: adaHash))
        #expect(try cheapHasher.verify("same password", against: bobHash))
    }

    @Test("The default hasher is scrypt at OWASP's minimum cost")
    func defaultCost() async throws {
        let database = try emptyDatabase()
        let store = UsersStore(database: database, today: { testToday })
        let user = try await store.register(validForm())
        #expect(try #require(try storedHash(database, id: user.id)).hasPrefix("$scrypt$ln=17,r=8,p=1$"))
    }

    @Test(
        "An email registered in any case is taken, after the same hashing as a free one; nothing is written",
        arguments: ["ada@example.com", "ADA@EXAMPLE.COM", "Ada@Example.Com", "  ada@example.com "])
    func duplicateEmail(_ email: String) async throws {
        let hasher = RecordingHasher()
        let store = usersStore(try emptyDatabase(), hasher: hasher)
        try await store.register(validForm(email: "ada@example.com"))
        hasher.reset()
        let error = try await #require(throws: ValidationError.self) {
            try await store.register(validForm(email: email))
        }
        #expect(error.problems == [ValidationError.Problem(field: "email", message: "Email is already registered.")])
        #expect(try await store.count() == 1)
        #expect(hasher.calls == [.hash], "a taken email costs the hash a free one does")
    }

    @Test("The table itself refuses a second email differing only in case")
    func uniqueIndex() async throws {
        let database = try emptyDatabase()
        let store = usersStore(database)
        try await store.register(validForm(email: "ada@example.com"))
        let hash = try cheapHasher.hash("whatever1")
        let error = try #require(throws: SQLiteError.self) {
            try database.write { db in
                try db.execute(
                    """
                    INSERT INTO User_Master (USER_IMAGENAME, USER_FNAME, USER_LNAME, USER_EMAIL, USER_PASS, USER_MOBILE,
                        USER_STATE, USER_CITY, USER_PINCODE, USER_ADDRESS, USER_GENDER, USER_DOB)
                    VALUES ('i', 'A', 'B', 'ADA@example.COM', ?, '1234567', 's', 'c', '123', 'a', 0, '2000-01-01')
                    """, arguments: [hash])
            }
        }
        #expect(error.extendedCode == .constraintUnique)
    }

    @Test("The table refuses a plain password and a gender outside the set")
    func tableChecks() throws {
        let database = try emptyDatabase()
        func insert(password: String, gender: Int) throws {
            try database.write { db in
                try db.execute(
                    """
                    INSERT INTO User_Master (USER_IMAGENAME, USER_FNAME, USER_LNAME, USER_EMAIL, USER_PASS, USER_MOBILE,
                        USER_STATE, USER_CITY, USER_PINCODE, USER_ADDRESS, USER_GENDER, USER_DOB)
                    VALUES ('i', 'A', 'B', 'a@example.com', ?, '1234567', 's', 'c', '123', 'a', ?, '2000-01-01')
                    """, arguments: [password, gender])
            }
        }
        let plain = try #require(throws: SQLiteError.self) { try insert(password: "hunter22", gender: 1) }
        #expect(plain.extendedCode == .constraintCheck)
        let gender = try #require(throws: SQLiteError.self) {
            try insert(password: try cheapHasher.hash("hunter22"), gender: 4)
        }
        #expect(gender.extendedCode == .constraintCheck)
        try insert(password: try cheapHasher.hash("hunter22"), gender: 3)
    }

    @Test("An invalid form writes nothing and hashes nothing")
    func invalidFormWritesNothing() async throws {
        let hasher = RecordingHasher()
        let store = usersStore(try emptyDatabase(), hasher: hasher)
        var form = validForm()
        form.pincode = "12"
        await #expect(throws: ValidationError.self) { try await store.register(form) }
        form = validForm()
        form.passwordConfirmation = "something else"
        await #expect(throws: ValidationError.self) { try await store.register(form) }
        #expect(try await store.count() == 0)
        #expect(hasher.calls.isEmpty)
    }

    @Test("Dates of birth are checked against the store's today")
    func storeToday() async throws {
        var form = validForm()
        form.dateOfBirth = "2026-03-14"
        let database = try emptyDatabase()
        try await usersStore(database).register(form)
        form.email = "later@example.com"
        let earlier = UsersStore(
            database: database, hasher: cheapHasher, today: { CalendarDate(year: 2026, month: 3, day: 14)! })
        let error = try await #require(throws: ValidationError.self) { try await earlier.register(form) }
        #expect(error.message(for: "date of birth") == "Date of birth must be in the past.")
    }

    // MARK: - Logging in

    @Test("Logging in takes the email in any case and the exact password")
    func login() async throws {
        let store = usersStore(try emptyDatabase())
        let ada = try await store.register(validForm(email: "Ada@Example.com", password: "correct horse"))
        #expect(try await store.authenticate(email: "ada@example.com", password: "correct horse") == ada)
        #expect(try await store.authenticate(email: " ADA@EXAMPLE.COM ", password: "correct horse") == ada)
        for wrong in ["correct horse ", "Correct horse", "correct", ""] {
            await #expect(throws: AuthenticationError.invalidCredentials) {
                try await store.authenticate(email: "ada@example.com", password: wrong)
            }
        }
    }

    @Test("A password typed in another Unicode form still matches (NFC)")
    func unicodeNormalisation() async throws {
        let store = usersStore(try emptyDatabase())
        try await store.register(validForm(password: "p\u{E4}sswort!"))
        #expect(
            try await store.authenticate(email: "ada@example.com", password: "pa\u{308}sswort!").email
                == "ada@example.com")
    }

    @Test("An unknown email fails as a wrong password does, after a dummy verification of the password")
    func unknownEmailRunsDummyVerification() async throws {
        let hasher = RecordingHasher()
        let database = try emptyDatabase()
        let store = usersStore(database, hasher: hasher)
        let ada = try await store.register(validForm(password: "correct horse"))
        let stored = try #require(try storedHash(database, id: ada.id))

        hasher.reset()
        let unknown = try await #require(throws: AuthenticationError.self) {
            try await store.authenticate(email: "nobody@example.com", password: "guess one")
        }
        #expect(hasher.calls == [.dummyVerification(password: "guess one")])

        hasher.reset()
        let wrong = try await #require(throws: AuthenticationError.self) {
            try await store.authenticate(email: "ada@example.com", password: "guess one")
        }
        #expect(hasher.calls == [.verify(storedHash: stored)])

        // The same error, hence the same message and exit status.
        #expect(unknown == wrong)
        #expect(unknown.description == "invalid email or password")
    }

    @Test("The dummy verification costs what a real one does: same parameters as stored hashes")
    func dummyCostMatches() async throws {
        let database = try emptyDatabase()
        let store = usersStore(database)
        let user = try await store.register(validForm())
        let stored = try ScryptPasswordHash(phcString: try #require(try storedHash(database, id: user.id)))
        #expect(stored.parameters == cheapHasher.parameters)
        #expect(try !cheapHasher.needsRehash(try #require(try storedHash(database, id: user.id))))
    }

    @Test("A hash made at an older cost is replaced on a successful login, not on a failed one")
    func rehashOnLogin() async throws {
        let database = try emptyDatabase()
        let old = try PasswordHasher(parameters: ScryptParameters(logN: 8, blockSize: 8, parallelism: 1))
        let user = try await usersStore(database, hasher: old).register(validForm(password: "correct horse"))
        let oldHash = try #require(try storedHash(database, id: user.id))

        let store = usersStore(database)
        await #expect(throws: AuthenticationError.invalidCredentials) {
            try await store.authenticate(email: "ada@example.com", password: "wrong horse")
        }
        #expect(try storedHash(database, id: user.id) == oldHash)

        _ = try await store.authenticate(email: "ada@example.com", password: "correct horse")
        let newHash = try #require(try storedHash(database, id: user.id))
        #expect(newHash != oldHash)
        #expect(newHash.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        #expect(try await store.authenticate(email: "ada@example.com", password: "correct horse").id == user.id)
    }

    @Test("A damaged stored hash is an error, not a silent success or failure")
    func damagedHash() async throws {
        let database = try emptyDatabase()
        let store = usersStore(database)
        let user = try await store.register(validForm())
        try database.write { db in
            try db.execute("UPDATE User_Master SET USER_PASS = '$scrypt$broken' WHERE UID = ?", arguments: [user.id])
        }
        await #expect(throws: PasswordHashingError.self) {
            try await store.authenticate(email: "ada@example.com", password: "correct horse")
        }
    }

    // MARK: - Changing the password

    @Test("Changing the password needs the current one; then only the new one works")
    func changePassword() async throws {
        let database = try emptyDatabase()
        let store = usersStore(database)
        let ada = try await store.register(validForm(password: "correct horse"))
        try await store.changePassword(
            id: ada.id, current: "correct horse", new: "battery staple", confirmation: "battery staple")
        #expect(try await store.authenticate(email: "ada@example.com", password: "battery staple").id == ada.id)
        await #expect(throws: AuthenticationError.invalidCredentials) {
            try await store.authenticate(email: "ada@example.com", password: "correct horse")
        }
    }

    @Test("A wrong current password changes nothing")
    func wrongCurrentPassword() async throws {
        let database = try emptyDatabase()
        let store = usersStore(database)
        let ada = try await store.register(validForm(password: "correct horse"))
        let before = try storedHash(database, id: ada.id)
        await #expect(throws: AuthenticationError.wrongCurrentPassword) {
            try await store.changePassword(
                id: ada.id, current: "wrong horse", new: "battery staple", confirmation: "battery staple")
        }
        #expect(try storedHash(database, id: ada.id) == before)
    }

    @Test("An invalid new password is refused before the current one is even checked")
    func invalidNewPassword() async throws {
        let hasher = RecordingHasher()
        let database = try emptyDatabase()
        let store = usersStore(database, hasher: hasher)
        let ada = try await store.register(validForm(password: "correct horse"))
        let before = try storedHash(database, id: ada.id)
        hasher.reset()
        let short = try await #require(throws: ValidationError.self) {
            try await store.changePassword(id: ada.id, current: "correct horse", new: "short", confirmation: "short")
        }
        #expect(short.problems.map(\.field) == ["password"])
        let mismatch = try await #require(throws: ValidationError.self) {
            try await store.changePassword(
                id: ada.id, current: "correct horse", new: "battery staple", confirmation: "battery")
        }
        #expect(mismatch.problems.map(\.field) == ["password confirmation"])
        #expect(hasher.calls.isEmpty)
        #expect(try storedHash(database, id: ada.id) == before)
    }

    @Test("Changing the password of an unknown user is a not-found error")
    func changePasswordUnknownUser() async throws {
        let store = usersStore(try emptyDatabase())
        await #expect(throws: RecordNotFoundError(kind: "user", id: 9)) {
            try await store.changePassword(
                id: 9, current: "whatever1", new: "battery staple", confirmation: "battery staple")
        }
    }

    // MARK: - Editing, listing, deleting

    @Test("Editing changes the given fields only, and never the password")
    func updateProfile() async throws {
        let database = try emptyDatabase()
        let store = usersStore(database)
        let ada = try await store.register(validForm())
        let hash = try storedHash(database, id: ada.id)
        let updated = try await store.updateProfile(
            id: ada.id, with: ProfileChanges(city: " Cambridge ", gender: "other", dateOfBirth: "1991-01-02"))
        var expected = ada
        expected.city = "Cambridge"
        expected.gender = .other
        expected.dateOfBirth = "1991-01-02"
        #expect(updated == expected)
        #expect(try await store.user(id: ada.id) == expected)
        #expect(try storedHash(database, id: ada.id) == hash)
    }

    @Test("A user may change the case of their own email, not take another's")
    func updateEmail() async throws {
        let store = usersStore(try emptyDatabase())
        let ada = try await store.register(validForm(email: "ada@example.com"))
        let bob = try await store.register(validForm(email: "bob@example.com"))
        #expect(
            try await store.updateProfile(id: ada.id, with: ProfileChanges(email: "ADA@example.com")).email
                == "ADA@example.com")
        let error = try await #require(throws: ValidationError.self) {
            try await store.updateProfile(id: bob.id, with: ProfileChanges(email: "ada@EXAMPLE.com"))
        }
        #expect(error.description == "Email is already registered.")
        #expect(try await store.user(id: bob.id)?.email == "bob@example.com")
    }

    @Test("An invalid edit, an empty one, or one of an unknown user writes nothing")
    func badEdits() async throws {
        let store = usersStore(try emptyDatabase())
        let ada = try await store.register(validForm())
        await #expect(throws: ValidationError.self) {
            try await store.updateProfile(id: ada.id, with: ProfileChanges(city: "Oxford", pincode: "x"))
        }
        await #expect(throws: ValidationError.self) {
            try await store.updateProfile(id: ada.id, with: ProfileChanges())
        }
        await #expect(throws: RecordNotFoundError(kind: "user", id: 42)) {
            try await store.updateProfile(id: 42, with: ProfileChanges(city: "Oxford"))
        }
        #expect(try await store.user(id: ada.id) == ada)
    }

    @Test(
        "Without the password a session cannot change the email or the mobile number; nothing is written",
        arguments: [
            ProfileChanges(email: "mallory@example.com"), ProfileChanges(email: "ADA@example.com"),
            ProfileChanges(mobile: "5550001111", city: "Oxford"),
        ])
    func identifyingFieldsNeedThePassword(_ changes: ProfileChanges) async throws {
        let hasher = RecordingHasher()
        let store = usersStore(try emptyDatabase(), hasher: hasher)
        let ada = try await store.register(validForm(email: "ada@example.com"))
        hasher.reset()
        await #expect(throws: AuthenticationError.passwordRequired) {
            try await store.updateProfile(id: ada.id, with: changes, password: nil)
        }
        #expect(try await store.user(id: ada.id) == ada)
        #expect(hasher.calls.isEmpty)
    }

    @Test("Without the password the other fields change, and the identifying ones may be given unchanged")
    func otherFieldsWithoutThePassword() async throws {
        let store = usersStore(try emptyDatabase())
        let ada = try await store.register(validForm(email: "ada@example.com"))
        let updated = try await store.updateProfile(
            id: ada.id, with: ProfileChanges(email: " ada@example.com ", mobile: ada.mobile, city: "Oxford"),
            password: nil)
        #expect(updated.city == "Oxford")
        #expect(updated.email == "ada@example.com")
    }

    @Test("With the password the email changes; a wrong one changes nothing")
    func identifyingFieldsWithThePassword() async throws {
        let store = usersStore(try emptyDatabase())
        let ada = try await store.register(validForm(email: "ada@example.com", password: "correct horse"))
        await #expect(throws: AuthenticationError.wrongPassword) {
            try await store.updateProfile(
                id: ada.id, with: ProfileChanges(email: "mallory@example.com"), password: "wrong horse")
        }
        #expect(try await store.user(id: ada.id) == ada)
        let updated = try await store.updateProfile(
            id: ada.id, with: ProfileChanges(email: "ada@lovelace.example"), password: "correct horse")
        #expect(updated.email == "ada@lovelace.example")
    }

    @Test("Users list by name or newest first; deleting removes one")
    func listAndDelete() async throws {
        let store = usersStore(try emptyDatabase())
        var form = validForm(email: "a@example.com")
        form.lastName = "Åkesson"
        let akesson = try await store.register(form)
        form = validForm(email: "z@example.com")
        form.lastName = "Zuse"
        let zuse = try await store.register(form)
        form = validForm(email: "b@example.com")
        form.lastName = "Babbage"
        let babbage = try await store.register(form)
        #expect(try await store.all().map(\.id) == [akesson.id, babbage.id, zuse.id])
        #expect(try await store.all(sortedBy: .newest).map(\.id) == [babbage.id, zuse.id, akesson.id])
        #expect(try await store.delete(id: zuse.id) == zuse)
        #expect(try await store.all() == [akesson, babbage])
        await #expect(throws: RecordNotFoundError(kind: "user", id: zuse.id)) { try await store.delete(id: zuse.id) }
        #expect(try await store.user(email: "A@EXAMPLE.COM") == akesson)
        #expect(try await store.user(email: "z@example.com") == nil)
    }

    @Test("A user's JSON has the profile and no password hash")
    func json() async throws {
        let database = try emptyDatabase()
        let ada = try await usersStore(database).register(validForm())
        let json = String(decoding: try JSONEncoder().encode(ada), as: UTF8.self)
        #expect(json.contains("\"gender\":\"female\""))
        #expect(!json.contains("scrypt"))
        #expect(!json.contains(try #require(try storedHash(database, id: ada.id)).split(separator: "$").last ?? "-"))
    }
}
