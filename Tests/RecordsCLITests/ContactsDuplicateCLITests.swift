import Foundation
import TestSupport
import Testing

/// `records contacts add` refuses a name another contact has (ignoring
/// case, accents and spaces) unless `--allow-duplicate`. The sandbox's
/// sample database has "Jane Doe" as contact 1.
@Suite("records: contacts add and names that exist")
struct ContactsDuplicateCLITests {
    /// The contacts' names, through the command.
    private func names(_ sandbox: Sandbox) async throws -> [String] {
        let list = try #require(try await sandbox.run("contacts", "list", "--json").json() as? [[String: Any]])
        return list.compactMap { $0["name"] as? String }
    }

    @Test(
        "A name that exists, even in another case or with other spaces or accents, is refused with status 1",
        arguments: ["Jane Doe", "jane doe", "  JANE   doe ", "Jáne Doe"])
    func refused(name: String) async throws {
        let sandbox = try Sandbox()
        let before = try await names(sandbox)
        let run = try await sandbox.run("contacts", "add", "--name", name, "--address", "1 High St", "--contact", "5")
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.isEmpty)
        let shown = name.trimmingCharacters(in: .whitespaces)
        #expect(
            run.stderr
                == "records: error: a contact named \"\(shown)\" already exists (ID 1); nothing was added. "
                + "To add a second one, run the command again with --allow-duplicate.\n")
        #expect(try await names(sandbox) == before)
    }

    @Test("--allow-duplicate adds the second contact, in text and JSON")
    func allowed() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.run(
            "contacts", "add", "--name", "jane  doe", "--address", "1 High St", "--contact", "5", "--allow-duplicate")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == "Added “jane  doe” (ID 4).\n")
        let json = try await sandbox.run(
            "contacts", "add", "--allow-duplicate", "--name", "Jane Doe", "--address", "2 High St", "--contact", "6",
            "--json")
        #expect((try json.json() as? [String: Any])?["id"] as? Int == 5)
        let found = try #require(
            try await sandbox.run("contacts", "find", "JANE DOE", "--json").json() as? [[String: Any]])
        #expect(found.compactMap { $0["id"] as? Int } == [1, 4, 5])
    }

    @Test("A new name needs no flag, and the refusal does not block a different name")
    func newName() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.run("contacts", "add", "--name", "Jane Doe Jr", "--address", "a", "--contact", "c")
        #expect(run.status == 0, "\(run)")
    }

    @Test("A misspelled flag is a usage error that suggests --allow-duplicate, and adds nothing")
    func misspelledFlag() async throws {
        let sandbox = try Sandbox()
        let before = try await names(sandbox)
        for flag in ["--allow-duplicates", "--allow-dup"] {
            let run = try await sandbox.run(
                "contacts", "add", "--name", "Jane Doe", "--address", "a", "--contact", "c", flag)
            #expect(run.status == 2, "\(run)")
            #expect(run.stderr.contains("unknown option '\(flag)'"), "\(run)")
        }
        let valued = try await sandbox.run(
            "contacts", "add", "--name", "Jane Doe", "--address", "a", "--contact", "c", "--allow-duplicate=yes")
        #expect(valued.status == 2, "\(valued)")
        #expect(try await names(sandbox) == before)
    }

    @Test("Validation comes first: an invalid contact with a name that exists says what is invalid")
    func validationFirst() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.run("contacts", "add", "--name", "Jane Doe", "--address", " ", "--contact", "c")
        #expect(run.status == 2)
        #expect(run.stderr == "records: error: Address is required.\n")
    }

    @Test("Help, the completion scripts and the manual page list --allow-duplicate")
    func documented() async throws {
        let sandbox = try Sandbox()
        let help = try await sandbox.run("contacts", "add", "--help")
        #expect(help.stdout.contains("--allow-duplicate"), "\(help)")
        #expect(help.stdout.contains("ignoring case"), "\(help)")
        for shell in ["bash", "zsh", "fish"] {
            let script = try await sandbox.run("completion", shell)
            #expect(script.stdout.contains("allow-duplicate"), "\(shell)")
        }
        let manual = try await sandbox.run("man")
        #expect(manual.stdout.contains("allow\\-duplicate") || manual.stdout.contains("allow-duplicate"))
    }
}
