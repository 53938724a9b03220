import Foundation
import Testing

@testable import RecordsApp

/// One letter with 65,000 combining accents: a single character of
/// 130,001 bytes, which a limit in characters alone lets through.
private let blownUpLetter = "a" + String(repeating: "\u{301}", count: 65_000)

/// `count` characters, each a letter and `marks` combining marks.
private func markedText(characters count: Int, marks: Int) -> String {
    String(repeating: "e" + String(repeating: "\u{301}", count: marks), count: count)
}

/// The message a field gets for too many code points.
private func codePointMessage(_ field: String, limit: Int, count: Int) -> String {
    "\(field) must be at most \(limit) Unicode code points, accents and other combining marks included "
        + "(it has \(count))"
}

@Suite("Text fields: code point limits")
struct TextLimitValidationTests {
    @Test("The code point limit is four per character of a field's limit")
    func limitIsFourPerCharacter() {
        #expect(TextRules.maxCodePoints(characters: 100) == 400)
        #expect(TextRules.maxCodePoints(characters: 30) == 120)
    }

    @Test("Plain ASCII text is judged and trimmed exactly as any text is, by the byte-wise shortcut")
    func asciiShortcutAgreesWithTheGeneralCheck() {
        let samples = [
            "", " ", "   ", "a", " a", "a ", "Ada", "Ada Lovelace", "~!@#$%^&*()_+{}|:<>?",
            String(repeating: "x", count: 30),
            String(repeating: "x", count: 31), String(repeating: "y", count: 120), String(repeating: "z", count: 121),
            "  padded  ", "tab\tinside", "\tleading tab", "line\nbreak", "trailing newline\n", "\r\n", "caf\u{E9}",
            " \u{A0}nbsp\u{A0} ", "\u{200B}", "e\u{301}", String(repeating: "e\u{301}", count: 31),
        ]
        for text in samples {
            let general = text.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(Validator.trimmed(text) == general, "\(text.debugDescription)")
            for limit in [1, 30, 120] {
                #expect(
                    Validator.textProblem(general, maxLength: limit)
                        == Validator.generalTextProblem(general, maxLength: limit),
                    "\(general.debugDescription), limit \(limit)")
            }
        }
        #expect(Validator.textProblem("   ", maxLength: 10) == "is required")
        #expect(Validator.textProblem("abcd", maxLength: 3) == "must be at most 3 characters (it has 4)")
        #expect(Validator.textProblem("abc", maxLength: 3) == nil)
    }

    @Test("A field at exactly its code point limit is accepted; one more code point is refused")
    func boundaryIsInclusive() throws {
        // 100 characters of one letter and three marks each: 400 code points.
        let atLimit = markedText(characters: 100, marks: 3)
        let draft = try PersonDraft(firstName: atLimit, lastName: "Lovelace", age: 36).validated()
        #expect(draft.firstName == atLimit)
        let over = atLimit + "\u{301}"
        #expect(over.count == 100)
        let error = try #require(throws: ValidationError.self) {
            try PersonDraft(firstName: over, lastName: "Lovelace", age: 36).validated()
        }
        #expect(error.message(for: "first name") == codePointMessage("First name", limit: 400, count: 401) + ".")
    }

    @Test("Real text that is not one code point per character fits: Devanagari, decomposed accents, emoji")
    func realTextFits() throws {
        let names = [
            "सिद्धार्थ",  // conjuncts: 9 code points in 4 characters
            "Zoe\u{308} A\u{30A}kesson",  // decomposed accents
            "👩‍💻 Ada",  // an emoji sequence of 3 code points
        ]
        for name in names {
            #expect(try PersonDraft(firstName: name, lastName: "X", age: 1).validated().firstName == name)
        }
    }

    @Test("People: a 1-character name of 130 KB is refused and nothing is written")
    func people() async throws {
        let store = PeopleStore(database: try emptyDatabase())
        let error = try await #require(throws: ValidationError.self) {
            try await store.add(PersonDraft.parse(firstName: "Ada", lastName: blownUpLetter, age: "36"))
        }
        #expect(error.message(for: "last name") == codePointMessage("Last name", limit: 400, count: 65_001) + ".")
        #expect(try await store.all().isEmpty)
        let changes = try #require(throws: ValidationError.self) {
            try PersonChanges(firstName: blownUpLetter).validated()
        }
        #expect(changes.message(for: "first name") != nil)
    }

    @Test("Contacts: a name, address or contact of one blown-up character is refused")
    func contacts() throws {
        let error = try #require(throws: ValidationError.self) {
            try ContactDraft(name: blownUpLetter, address: blownUpLetter, contact: blownUpLetter).validated()
        }
        #expect(error.message(for: "name") == codePointMessage("Name", limit: 400, count: 65_001) + ".")
        #expect(error.message(for: "address") == codePointMessage("Address", limit: 800, count: 65_001) + ".")
        #expect(
            error.message(for: "contact") == codePointMessage("Phone, email or web address", limit: 800, count: 65_001)
                + ".")
        let changes = try #require(throws: ValidationError.self) {
            try ContactChanges(name: nil, address: blownUpLetter, contact: nil).validated()
        }
        #expect(changes.message(for: "address") != nil)
    }

    @Test("Coffee: a blown-up name is refused when added and when saved")
    func coffee() async throws {
        let error = try #require(throws: ValidationError.self) {
            try CoffeeDraft.parse(name: blownUpLetter, price: "3.50")
        }
        #expect(error.message(for: "name") == codePointMessage("Name", limit: 400, count: 65_001) + ".")
        let store = CoffeeStore(database: try emptyDatabase())
        var coffee = try await store.add(CoffeeDraft.parse(name: "Espresso", price: "2.50"))
        coffee.name = blownUpLetter
        await #expect(throws: ValidationError.self) { try await store.save(&coffee) }
        #expect(try await store.coffee(id: coffee.id)?.name == "Espresso")
    }

    @Test("Users: every free-text field of the form, and the password, has the limit")
    func users() throws {
        var form = validForm()
        form.firstName = blownUpLetter
        form.lastName = blownUpLetter
        form.state = blownUpLetter
        form.city = blownUpLetter
        form.address = blownUpLetter
        form.imageName = blownUpLetter
        let error = try #require(throws: ValidationError.self) { try form.validated(today: testToday) }
        #expect(error.message(for: "first name") == codePointMessage("First name", limit: 120, count: 65_001) + ".")
        #expect(error.message(for: "last name") == codePointMessage("Last name", limit: 120, count: 65_001) + ".")
        #expect(error.message(for: "state") == codePointMessage("State", limit: 400, count: 65_001) + ".")
        #expect(error.message(for: "city") == codePointMessage("City", limit: 400, count: 65_001) + ".")
        #expect(error.message(for: "address") == codePointMessage("Address", limit: 800, count: 65_001) + ".")
        #expect(error.message(for: "image name") == codePointMessage("Picture", limit: 1020, count: 65_001) + ".")
        let changes = try #require(throws: ValidationError.self) {
            try ProfileChanges(city: blownUpLetter).validated(today: testToday)
        }
        #expect(changes.message(for: "city") != nil)
    }

    @Test("Users: a password of 8 characters and 1,025 code points is refused")
    func password() throws {
        // 8 characters of 1 + 127 code points, and one mark more.
        let password = markedText(characters: 8, marks: 127) + "\u{301}"
        let form = validForm(password: password)
        let error = try #require(throws: ValidationError.self) { try form.validated(today: testToday) }
        #expect(error.message(for: "password") == codePointMessage("Password", limit: 1024, count: 1025) + ".")
    }
}
