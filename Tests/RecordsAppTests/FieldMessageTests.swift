import Foundation
import Testing

@testable import RecordsApp

/// The one problem `body` throws: its field and message.
private func problem(_ body: () throws -> some Any) throws -> ValidationError.Problem {
    let error = try #require(throws: ValidationError.self) { _ = try body() }
    #expect(error.problems.count == 1, "\(error.problems)")
    return try #require(error.problems.first)
}

@Suite("Validation messages: sentences that name the field by its label")
struct FieldMessageTests {
    @Test("Each app's fields have the labels its forms show")
    func labels() {
        #expect(PersonField.allCases.map(\.label) == ["First name", "Last name", "Age"])
        #expect(ContactField.allCases.map(\.label) == ["Name", "Address", "Phone, email or web address"])
        #expect(CoffeeField.allCases.map(\.label) == ["Name", "Price", "Minimum price", "Maximum price"])
        // The names problems carry, which pages and the API map to inputs, stay as they were.
        #expect(PersonField.allCases.map(\.rawValue) == ["first name", "last name", "age"])
        #expect(ContactField.allCases.map(\.rawValue) == ["name", "address", "contact"])
        #expect(CoffeeField.allCases.map(\.rawValue) == ["name", "price", "minimum price", "maximum price"])
    }

    @Test("People: every rule's message, exactly")
    func people() throws {
        let long = String(repeating: "x", count: 101)
        let cases: [(ValidationError.Problem, String, String)] = [
            (
                try problem { try PersonDraft.parse(firstName: " ", lastName: "L", age: "3") }, "first name",
                "First name is required."
            ),
            (
                try problem { try PersonDraft.parse(firstName: "F", lastName: "", age: nil) }, "last name",
                "Last name is required."
            ),
            (
                try problem { try PersonDraft.parse(firstName: long, lastName: "L", age: nil) }, "first name",
                "First name must be at most 100 characters (it has 101)."
            ),
            (
                try problem { try PersonDraft.parse(firstName: "F", lastName: "a\u{7}b", age: nil) }, "last name",
                "Last name must be a single line without control characters."
            ),
            (
                try problem { try PersonDraft.parse(firstName: "F", lastName: "L", age: "forty") }, "age",
                "Age must be a whole number from 0 to 150."
            ),
            (
                try problem { try PersonDraft(firstName: "F", lastName: "L", age: 151).validated() }, "age",
                "Age must be a whole number from 0 to 150."
            ),
            (try problem { try PersonRules.age(fromText: "-1") }, "age", "Age must be a whole number from 0 to 150."),
            (
                try problem { try PersonChanges(age: 3, clearsAge: true).validated() }, "age",
                "Age must be given or cleared, not both."
            ),
            (
                try problem { try PersonChanges().validated() }, "changes",
                "Nothing to change: give a first name, last name or age."
            ),
        ]
        for (found, field, message) in cases {
            #expect(found == ValidationError.Problem(field: field, message: message))
        }
    }

    @Test("The limits in the messages are the rules' own")
    func limitsComeFromTheRules() throws {
        let ages = PersonRules.ages
        let age = try problem { try PersonRules.age(fromText: String(ages.upperBound + 1)) }
        #expect(age.message == "Age must be a whole number from \(ages.lowerBound) to \(ages.upperBound).")
        let long = String(repeating: "x", count: ContactRules.maxContactLength + 1)
        let contact = try problem { try ContactDraft(name: "N", address: "A", contact: long).validated() }
        #expect(
            contact.message
                == "Phone, email or web address must be at most \(ContactRules.maxContactLength) characters "
                + "(it has \(ContactRules.maxContactLength + 1)).")
    }

    @Test("Contacts: every rule's message, exactly")
    func contacts() throws {
        let cases: [(ValidationError.Problem, String, String)] = [
            (
                try problem { try ContactDraft(name: "", address: "A", contact: "C").validated() }, "name",
                "Name is required."
            ),
            (
                try problem { try ContactDraft(name: "N", address: " ", contact: "C").validated() }, "address",
                "Address is required."
            ),
            (
                try problem { try ContactDraft(name: "N", address: "A", contact: "").validated() }, "contact",
                "Phone, email or web address is required."
            ),
            (
                try problem {
                    try ContactDraft(name: "N", address: String(repeating: "a", count: 201), contact: "C").validated()
                },
                "address", "Address must be at most 200 characters (it has 201)."
            ),
            (
                try problem { try ContactChanges().validated() }, "changes",
                "Nothing to change: give a name, address or contact."
            ),
        ]
        for (found, field, message) in cases {
            #expect(found == ValidationError.Problem(field: field, message: message))
        }
    }

    @Test(
        "Coffee: every price rule's message, exactly",
        arguments: [
            ("abc", "Price must be a number such as 3.50 (digits, with a point for the decimals)."),
            ("3,50", "Price must be a number such as 3.50, with a point for the decimals, not a comma."),
            ("-1", "Price must be 0 or more."),
            ("1000000000", "Price must be less than 1000000000."),
            ("0.0000001", "Price must have at most 6 digits after the point."),
        ])
    func coffeePrice(text: String, message: String) throws {
        #expect(
            try problem { try CoffeeDraft.parse(name: "Mocha", price: text) } == .init(field: "price", message: message)
        )
    }

    @Test("Coffee: the name, a checked price, a cleared one, the range and no change")
    func coffee() throws {
        #expect(
            try problem { try CoffeeDraft.parse(name: " ", price: "3") }
                == .init(field: "name", message: "Name is required."))
        #expect(
            try problem { try CoffeeDraft(name: "Mocha", price: -1).validated() }
                == .init(field: "price", message: "Price must be 0 or more."))
        #expect(
            try problem { try CoffeePriceRange.parse(minimum: "x", maximum: nil) }
                == .init(
                    field: "minimum price",
                    message: "Minimum price must be a number such as 3.50 (digits, with a point for the decimals)."))
        #expect(
            try problem { try CoffeePriceRange.parse(minimum: "4", maximum: "3") }
                == .init(field: "minimum price", message: "Minimum price must not be above the maximum price."))
        #expect(
            try problem { try CoffeeChanges.parse(name: nil, price: nil) }
                == .init(field: "changes", message: "Nothing to change: give a name or a price."))
    }

    @Test("A price with too many decimals is one problem, not the same one twice")
    func oneProblemPerFault() async throws {
        let store = CoffeeStore(database: try emptyDatabase())
        let added = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
        let error = try await #require(throws: ValidationError.self) {
            try await store.update(id: added.id, with: CoffeeChanges(price: Decimal(string: "1.0000001")))
        }
        #expect(error.problems == [.init(field: "price", message: "Price must have at most 6 digits after the point.")])
    }

    @Test("Several problems read as sentences one after the other")
    func description() throws {
        let error = try #require(throws: ValidationError.self) {
            try PersonDraft.parse(firstName: "", lastName: "", age: "200")
        }
        #expect(
            error.description
                == "First name is required. Last name is required. Age must be a whole number from 0 to 150.")
    }

    @Test("The Users app's messages use the same wording for a required field")
    func users() throws {
        let error = try #require(throws: ValidationError.self) {
            try RegistrationForm(firstName: "", lastName: "L", email: "").validatedProfile(
                today: try #require(CalendarDate(iso: "2026-01-01")))
        }
        #expect(error.message(for: "first name") == "First name is required.")
        #expect(error.message(for: "email") == "Email is required.")
    }
}

@Suite("Success messages: one wording in every app and front end")
struct RecordMessageTests {
    @Test("The verb, the name in quotes and a full stop")
    func plain() {
        #expect(RecordOutcome.added.message("Cortado") == "Added “Cortado”.")
        #expect(RecordOutcome.updated.message("Ada Lovelace") == "Updated “Ada Lovelace”.")
        #expect(RecordOutcome.deleted.message("Jane Doe") == "Deleted “Jane Doe”.")
    }

    @Test("Details follow the quoted name in parentheses, and more after it")
    func details() {
        let ada = RecordMention("Ada Lovelace", details: "ID 1, age 36")
        #expect(RecordOutcome.added.message(ada) == "Added “Ada Lovelace” (ID 1, age 36).")
        #expect(
            RecordOutcome.updated.message(RecordMention("Espresso", details: "ID 1"), more: ": price 2.50 → 2.70")
                == "Updated “Espresso” (ID 1): price 2.50 → 2.70.")
        #expect(
            RecordOutcome.unchanged(ada) == "Nothing changed: “Ada Lovelace” (ID 1, age 36) already has those values.")
    }

    @Test("A record without a name is not shown as an empty quotation")
    func noName() {
        #expect(RecordOutcome.deleted.message(RecordMention("", details: "ID 3")) == "Deleted (no name) (ID 3).")
        #expect(RecordMention("Ada", details: "").description == "“Ada”")
    }
}
