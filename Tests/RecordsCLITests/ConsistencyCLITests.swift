import Foundation
import TestSupport
import Testing

/// The rules every app's commands share (issue 25, item 7): lists paged
/// past their end, deleting several records and asking first, the
/// version command, the unknown-command message, "Nothing changed", and
/// sizes in binary units.
@Suite("records: the same behaviour in every app")
struct ConsistencyCLITests {
    /// The apps whose records the sample database holds, with the noun
    /// their messages use.
    static let sampleApps = [("people", "people"), ("contacts", "contacts"), ("coffee", "coffees")]

    /// How many records `app list` lists.
    func count(_ sandbox: Sandbox, _ app: String) async throws -> Int {
        try #require(try await sandbox.run(app, "list", "--json").json() as? [Any]).count
    }

    // MARK: - Lists paged past their end

    @Test("An offset past the end says so on standard error, with the count, and exits 0", arguments: sampleApps)
    func offsetPastTheEnd(app: String, noun: String) async throws {
        let sandbox = try Sandbox()
        let total = try await count(sandbox, app)
        #expect(total > 1)
        let run = try await sandbox.run(app, "list", "--offset", "100")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.isEmpty)
        #expect(run.stderr == "No \(noun) at offset 100; there are \(total).\n")
    }

    @Test("--limit 0 says none were asked for, with the count, and exits 0", arguments: sampleApps)
    func limitZero(app: String, noun: String) async throws {
        let sandbox = try Sandbox()
        let total = try await count(sandbox, app)
        let run = try await sandbox.run(app, "list", "--limit", "0")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.isEmpty)
        #expect(run.stderr == "No \(noun) shown, as --limit 0 asks for none; there are \(total).\n")
    }

    @Test("An offset past the end of the users says so too")
    func usersOffsetPastTheEnd() async throws {
        let sandbox = try Sandbox()
        try await sandbox.register()
        let run = try await sandbox.run("users", "list", "--offset", "1")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.isEmpty)
        #expect(run.stderr == "No users at offset 1; there is 1.\n")
    }

    @Test("An offset past the end of a price range counts that range")
    func coffeePriceRangeOffset() async throws {
        let sandbox = try Sandbox()
        let inRange = try #require(
            try await sandbox.run("coffee", "list", "--min-price", "3", "--json").json() as? [Any])
        let run = try await sandbox.run("coffee", "list", "--min-price", "3", "--offset", "50")
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr == "No coffees in that price range at offset 50; there are \(inRange.count).\n")
    }

    @Test("An empty table paged past its end still gets the hint to add one")
    func emptyTableKeepsTheHint() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.run("users", "list", "--offset", "5")
        #expect(run.status == 0)
        #expect(run.stdout.hasPrefix("No users yet."))
        #expect(run.stderr.isEmpty)
    }

    @Test("JSON past the end is an empty array with nothing on standard error")
    func jsonPastTheEnd() async throws {
        let run = try await Sandbox().run("people", "list", "--offset", "100", "--json")
        #expect(run.status == 0)
        #expect(run.stdout == "[]\n")
        #expect(run.stderr.isEmpty)
    }

    @Test("A page within the list prints no message")
    func pageWithinTheList() async throws {
        let run = try await Sandbox().run("people", "list", "--offset", "1", "--limit", "1")
        #expect(run.status == 0)
        #expect(run.lines.count == 2)
        #expect(run.stderr.isEmpty)
    }

    // MARK: - delete

    @Test(
        "delete without --yes, standard input not a terminal, refuses with status 2 and deletes nothing",
        arguments: ["people", "contacts", "coffee"])
    func deleteRefusesWithoutATerminal(app: String) async throws {
        let sandbox = try Sandbox()
        let before = try await count(sandbox, app)
        let run = try await sandbox.run(app, "delete", "1", "2")
        #expect(run.status == 2, "\(run)")
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("standard input is not a terminal"))
        #expect(run.stderr.contains("add --yes"))
        #expect(try await count(sandbox, app) == before)
    }

    /// Runs `records --database <sandbox db> arguments` on a pseudo-terminal
    /// (`script`), typing `typed` as its input; what the terminal showed.
    func runOnTerminal(_ sandbox: Sandbox, _ arguments: [String], typing typed: String) async throws -> (
        status: Int32, output: String
    ) {
        let command = ([try recordsBinary().path, "--database", sandbox.database] + arguments)
            .map { "'\($0)'" }.joined(separator: " ")
        let run = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"],
            environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "dumb", "HOME": sandbox.path("home")],
            input: Data(typed.utf8))
        return (run.status, run.output.replacingOccurrences(of: "\r", with: ""))
    }

    @Test("On a terminal, delete lists what it would delete and asks; no keeps them")
    func terminalAnswerNoKeepsThem() async throws {
        let sandbox = try Sandbox()
        let before = try await count(sandbox, "people")
        let run = try await runOnTerminal(sandbox, ["people", "delete", "1", "2"], typing: "n\n")
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("About to delete:\n  "))
        #expect(run.output.contains("(ID 1") && run.output.contains("(ID 2"))
        #expect(run.output.contains("Delete these 2 people? [y/N] "))
        #expect(run.output.contains("records: error: nothing was deleted, as the answer was not yes"))
        #expect(try await count(sandbox, "people") == before)
    }

    @Test("On a terminal, answering yes deletes")
    func terminalAnswerYesDeletes() async throws {
        let sandbox = try Sandbox()
        let before = try await count(sandbox, "contacts")
        let run = try await runOnTerminal(sandbox, ["contacts", "delete", "1"], typing: "yes\n")
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("Delete it? [y/N] "))
        #expect(run.output.contains("Deleted "))
        #expect(try await count(sandbox, "contacts") == before - 1)
    }

    @Test("users delete without --yes refuses before reading the password")
    func usersDeleteRefusesWithoutATerminal() async throws {
        let sandbox = try Sandbox()
        try await sandbox.register()
        let run = try await sandbox.run(input: "correct horse\n", "users", "delete", "1", "--password-stdin")
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.contains("add --yes"))
        #expect(try await sandbox.run("users", "show", "1").status == 0)
    }

    @Test(
        "delete with several IDs and --yes deletes each, saying so line by line",
        arguments: ["people", "contacts", "coffee"])
    func deleteSeveral(app: String) async throws {
        let sandbox = try Sandbox()
        let before = try await count(sandbox, app)
        let run = try await sandbox.run(app, "delete", "1", "2", "--yes")
        #expect(run.status == 0, "\(run)")
        #expect(run.lines.count == 2)
        #expect(run.lines[0].hasPrefix("Deleted ") && run.lines[0].contains("(ID 1"))
        #expect(run.lines[1].hasPrefix("Deleted ") && run.lines[1].contains("(ID 2"))
        #expect(try await count(sandbox, app) == before - 2)
        #expect(try await sandbox.run(app, "show", "1").status == 1)
    }

    @Test("delete with a missing ID among several names the missing ones and deletes none")
    func deleteWithMissingIDsDeletesNone() async throws {
        let sandbox = try Sandbox()
        let before = try await count(sandbox, "people")
        let run = try await sandbox.run("people", "delete", "1", "98", "2", "99", "--yes")
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.isEmpty)
        #expect(run.stderr == "records: error: no person with ID 98 or 99; nothing was deleted\n")
        #expect(try await count(sandbox, "people") == before)
    }

    @Test("delete with one missing ID says there is none, as before")
    func deleteOneMissingID() async throws {
        let run = try await Sandbox().run("contacts", "delete", "99", "--yes")
        #expect(run.status == 1)
        #expect(run.stderr == "records: error: no contact with ID 99\n")
    }

    @Test("delete with a malformed ID among several is a usage error and deletes none")
    func deleteWithMalformedID() async throws {
        let sandbox = try Sandbox()
        let before = try await count(sandbox, "coffee")
        let run = try await sandbox.run("coffee", "delete", "1", "x", "--yes")
        #expect(run.status == 2)
        #expect(run.stderr.contains("ID must be a positive whole number, not 'x'"))
        #expect(try await count(sandbox, "coffee") == before)
    }

    @Test("delete with several IDs and --json prints one array of what was deleted")
    func deleteSeveralAsJSON() async throws {
        let run = try await Sandbox().run("people", "delete", "1", "2", "1", "--yes", "--json")
        #expect(run.status == 0, "\(run)")
        let deleted = try #require(try run.json() as? [[String: Any]])
        #expect(deleted.compactMap { $0["id"] as? Int } == [1, 2])
    }

    // MARK: - The words after records

    @Test("records version prints what --version prints")
    func versionCommand() async throws {
        let sandbox = try Sandbox()
        let command = try await sandbox.runRaw(["version"])
        #expect(command.status == 0)
        #expect(command.stdout.hasPrefix("records "))
        #expect(command.stdout == (try await sandbox.runRaw(["--version"])).stdout)
    }

    @Test("An unknown first word lists every app and command")
    func unknownCommandListsEverything() async throws {
        let run = try await Sandbox().runRaw(["frobnicate"])
        #expect(run.status == 2)
        let choices = try #require(run.stderr.firstMatch(of: /choose ([^\n]*)\n/)).1
        #expect(
            choices.split(separator: ", ").map(String.init) == [
                "people", "contacts", "coffee", "users", "token", "remote", "backup", "restore", "serve", "sync",
                "conflicts", "completion", "man", "version", "help",
            ])
    }

    @Test("A typo of a top-level command is suggested")
    func typoOfACommandIsSuggested() async throws {
        let run = try await Sandbox().runRaw(["bakup"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("did you mean 'backup'?"))
    }

    // MARK: - edit, sizes

    @Test(
        "edit with the values already stored says nothing changed",
        arguments: [
            ["people", "edit", "1", "--age", "40"], ["contacts", "edit", "1", "--address", "1 Same St"],
            ["coffee", "edit", "1", "--price", "2.75"],
        ])
    func editWithoutChange(arguments: [String]) async throws {
        let sandbox = try Sandbox()
        let first = try await sandbox.run(arguments)
        #expect(first.stdout.hasPrefix("Updated "), "\(first)")
        let again = try await sandbox.run(arguments)
        #expect(again.status == 0)
        #expect(again.stdout.hasPrefix("Nothing changed: "), "\(again)")
        #expect(again.stdout.hasSuffix(" already has those values.\n"))
    }

    @Test("users edit with the values already stored says nothing changed")
    func usersEditWithoutChange() async throws {
        let sandbox = try Sandbox()
        try await sandbox.register()
        let run = try await sandbox.run(
            input: "correct horse\n", "users", "edit", "1", "--city", "London", "--password-stdin")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == "Nothing changed: “Ada Lovelace” (ID 1, ada@example.com) already has those values.\n")
    }

    @Test("A backup's size is in binary units, as a picture's is")
    func backupSizeInBinaryUnits() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.run("backup", sandbox.path("copy.sqlite"))
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains(/\d+\.\d (KiB|MiB) \([\d,]+ bytes\)/))
        #expect(!run.stdout.contains(" KB") && !run.stdout.contains(" MB"))
    }
}
