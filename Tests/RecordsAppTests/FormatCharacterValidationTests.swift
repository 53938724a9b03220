import Foundation
import Testing

@testable import RecordsApp

/// Format characters (Unicode general category Cf) that show nothing:
/// right-to-left override, zero-width space, left-to-right isolate, byte
/// order mark.
private let invisibleCharacters: [Character] = ["\u{202E}", "\u{200B}", "\u{2066}", "\u{FEFF}"]

/// Values that show nothing: one format character alone, and mixed with
/// spaces and the other format characters.
private func invisibleValues(_ character: Character) -> [String] {
    [String(character), " \(character)\u{2069} \u{FEFF}", String(repeating: character, count: 3)]
}

@Suite("Text fields: a value of format characters alone is empty")
struct FormatCharacterValidationTests {
    @Test("People: a first or last name of format characters is refused as empty", arguments: invisibleCharacters)
    func people(character: Character) throws {
        for value in invisibleValues(character) {
            let draft = try #require(throws: ValidationError.self) {
                try PersonDraft.parse(firstName: value, lastName: value, age: "36")
            }
            #expect(draft.message(for: "first name") == "First name is required.")
            #expect(draft.message(for: "last name") == "Last name is required.")
            let changes = try #require(throws: ValidationError.self) {
                try PersonChanges(firstName: value).validated()
            }
            #expect(changes.message(for: "first name") == "First name is required.")
        }
    }

    @Test("People: an age of format characters is no age, as a blank one is", arguments: invisibleCharacters)
    func peopleAge(character: Character) throws {
        #expect(try PersonDraft.parse(firstName: "Ada", lastName: "Lovelace", age: String(character)).age == nil)
    }

    @Test(
        "Contacts: a name, address or contact of format characters is refused as empty", arguments: invisibleCharacters)
    func contacts(character: Character) throws {
        for value in invisibleValues(character) {
            let error = try #require(throws: ValidationError.self) {
                try ContactDraft(name: value, address: value, contact: value).validated()
            }
            #expect(error.message(for: "name") == "Name is required.")
            #expect(error.message(for: "address") == "Address is required.")
            #expect(error.message(for: "contact") == "Phone, email or web address is required.")
            let changes = try #require(throws: ValidationError.self) {
                try ContactChanges(address: value).validated()
            }
            #expect(changes.message(for: "address") == "Address is required.")
        }
    }

    @Test("Coffee: a name of format characters is refused as empty", arguments: invisibleCharacters)
    func coffee(character: Character) throws {
        for value in invisibleValues(character) {
            let draft = try #require(throws: ValidationError.self) { try CoffeeDraft.parse(name: value, price: "3.50") }
            #expect(draft.message(for: "name") == "Name is required.")
            let changes = try #require(throws: ValidationError.self) {
                try CoffeeChanges.parse(name: value, price: nil)
            }
            #expect(changes.message(for: "name") == "Name is required.")
        }
    }

    @Test(
        "Users: a required field of format characters is refused as empty; an optional one is blank",
        arguments: invisibleCharacters)
    func users(character: Character) throws {
        for value in invisibleValues(character) {
            var form = validForm(email: value)
            form.firstName = value
            form.lastName = value
            form.mobile = value
            form.state = value
            form.city = value
            form.pincode = value
            form.address = value
            form.imageName = value
            let error = try #require(throws: ValidationError.self) { try form.validated(today: testToday) }
            #expect(error.problems.map(\.field) == ["first name", "last name", "email"])
            #expect(error.message(for: "first name") == "First name is required.")
            #expect(error.message(for: "email") == "Email is required.")
            form.firstName = "Ada"
            form.lastName = "Lovelace"
            form.email = "ada@example.com"
            let profile = try form.validated(today: testToday)
            #expect(
                [profile.mobile, profile.state, profile.city, profile.pincode, profile.address] == ["", "", "", "", ""])
            #expect(profile.imageName.isEmpty)
            let changes = try #require(throws: ValidationError.self) {
                try ProfileChanges(firstName: value, city: value).validated(today: testToday)
            }
            #expect(changes.problems.map(\.field) == ["first name"])
            #expect(changes.message(for: "first name") == "First name is required.")
        }
    }

    @Test("Format characters inside real text are kept as typed")
    func formatCharactersInTextAreKept() throws {
        // An isolated right-to-left name, and an emoji joined by U+200D.
        let names = ["\u{2067}عائشة\u{2069}", "Ada 👩\u{200D}💻"]
        for name in names {
            #expect(try PersonDraft.parse(firstName: name, lastName: "X", age: nil).firstName == name)
            #expect(try ContactDraft(name: name, address: "a", contact: "c").validated().name == name)
            #expect(try CoffeeDraft.parse(name: name, price: "1").name == name)
        }
    }
}
