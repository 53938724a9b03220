import Foundation
import TestSupport
import Testing

/// How the `records` command words what it did and what is wrong with its
/// input: the pages' wording (`Added “Cortado”.`, with the ID after it),
/// and each invalid value a sentence of its own on its own line, naming
/// the field by the label the web form shows.
@Suite("records: messages worded as the pages word them")
struct MessagesCLITests {
    @Test(
        "Several invalid values: one line each, each naming its field",
        arguments: [
            (
                ["contacts", "add", "--name", " ", "--address", "", "--contact", String(repeating: "c", count: 201)],
                [
                    "Name is required.", "Address is required.",
                    "Phone, email or web address must be at most 200 characters (it has 201).",
                ]
            ),
            (
                ["coffee", "add", "--name", "", "--price", "3,50"],
                [
                    "Name is required.",
                    "Price must be a number such as 3.50, with a point for the decimals, not a comma.",
                ]
            ),
            (
                ["people", "edit", "1", "--first", "", "--age", "-4"],
                ["First name is required.", "Age must be a whole number from 0 to 150."]
            ),
        ])
    func severalProblems(arguments: [String], messages: [String]) async throws {
        let sandbox = try Sandbox()
        let before = try await sandbox.run(arguments[0], "list", "--json").stdout
        let run = try await sandbox.run(arguments)
        #expect(run.status == 2, "\(run)")
        #expect(run.stdout.isEmpty)
        #expect(
            run.stderr
                == "records: error: \(messages.count) values are not valid:\n"
                + messages.map { "  - \($0)\n" }.joined())
        // Nothing was written.
        #expect(try await sandbox.run(arguments[0], "list", "--json").stdout == before)
    }

    @Test("One invalid value is one sentence on the error line")
    func oneProblem() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.run("coffee", "edit", "1", "--price", "-1")
        #expect(run.status == 2)
        #expect(run.stderr == "records: error: Price must be 0 or more.\n")
        let age = try await sandbox.run("people", "add", "--first", "A", "--last", "B", "--age", "forty")
        #expect(age.stderr == "records: error: Age must be a whole number from 0 to 150.\n")
    }

    @Test("add, edit and delete say what they did in the pages' quoted wording, with the ID")
    func quotedWording() async throws {
        let sandbox = try Sandbox()
        let added = try await sandbox.run(
            "contacts", "add", "--name", "Ann Lee", "--address", "1 Main St", "--contact", "x")
        #expect(added.stdout == "Added “Ann Lee” (ID 4).\n", "\(added)")
        let edited = try await sandbox.run("contacts", "edit", "4", "--address", "2 Main St")
        #expect(edited.stdout == "Updated “Ann Lee” (ID 4).\n", "\(edited)")
        let again = try await sandbox.run("contacts", "edit", "4", "--address", "2 Main St")
        #expect(again.stdout == "Nothing changed: “Ann Lee” (ID 4) already has those values.\n", "\(again)")
        let deleted = try await sandbox.run("contacts", "delete", "4", "--yes")
        #expect(deleted.stdout == "Deleted “Ann Lee” (ID 4).\n", "\(deleted)")
        let person = try await sandbox.run("people", "edit", "1", "--age", "37")
        #expect(person.stdout == "Updated “Ada Lovelace” (ID 1, age 37).\n", "\(person)")
    }

    @Test("A name's control characters and direction overrides are escaped inside the quotes")
    func cleanedName() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.run("coffee", "add", "--name", "Mo\u{202E}cha", "--price", "3")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == "Added “Mo\\u{202E}cha” (ID 7).\n")
    }
}
