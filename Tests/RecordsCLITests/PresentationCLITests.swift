import Foundation
import TestSupport
import Testing

@testable import records

/// Terminal columns of `text` as a terminal shows it: two for the CJK
/// ideographs these tests use, one for anything else.
private func displayWidth(_ text: some StringProtocol) -> Int {
    text.reduce(0) { total, character in
        let value = character.unicodeScalars.first?.value ?? 0
        return total + ((0x4E00...0x9FFF).contains(value) ? 2 : 1)
    }
}

private let longAddress = "1 Extremely Long Street Name That Goes On, Springfield, Some County"

/// A sandbox whose contact 4 has a long name and address.
private func sandboxWithLongContact() async throws -> Sandbox {
    let sandbox = try Sandbox()
    let add = try await sandbox.run(
        "contacts", "add", "--name", "Bartholomew Montgomery-Fitzgerald", "--address", longAddress, "--contact",
        "https://example.com/a/very/long/path")
    try #require(add.status == 0, "\(add)")
    return sandbox
}

@Suite("records: output fits the terminal")
struct TerminalWidthCLITests {
    @Test("COLUMNS cuts table cells with … so that every line fits; IDs are never cut")
    func tableFitsColumns() async throws {
        let sandbox = try await sandboxWithLongContact()
        let run = try await sandbox.runRaw(
            ["--database", sandbox.database, "contacts", "list"], environment: ["COLUMNS": "40"])
        #expect(run.status == 0, "\(run)")
        for line in run.lines { #expect(displayWidth(line) <= 40, "too wide: \(line)") }
        let row = try #require(run.lines.first { $0.hasPrefix(" 4  ") }, "\(run)")
        #expect(row.contains("…"))
        #expect(!run.stdout.contains(longAddress))
        // The other rows keep their IDs too.
        #expect(run.lines.dropFirst().allSatisfy { $0.first == " " && $0.dropFirst().first?.isNumber == true })
    }

    @Test("The widest column shrinks first: a short column keeps its text")
    func widestColumnShrinksFirst() async throws {
        let sandbox = try Sandbox()
        #expect(
            try await sandbox.run(
                "people", "add", "--first", "Al", "--last", String(repeating: "x", count: 60),
                "--age", "5"
            ).status == 0)
        let run = try await sandbox.runRaw(
            ["--database", sandbox.database, "people", "list"], environment: ["COLUMNS": "50"])
        let row = try #require(run.lines.first { $0.contains("Al ") }, "\(run)")
        #expect(row.contains("xxx…"))
        #expect(row.hasSuffix("  5"))
        for line in run.lines { #expect(displayWidth(line) <= 50, "too wide: \(line)") }
    }

    @Test("Wide characters count as two columns when a cell is cut")
    func wideCharactersCountTwo() async throws {
        let sandbox = try Sandbox()
        let name = String(repeating: "東京", count: 20)
        #expect(try await sandbox.run("people", "add", "--first", name, "--last", "Tanaka", "--age", "30").status == 0)
        let run = try await sandbox.runRaw(
            ["--database", sandbox.database, "people", "list"], environment: ["COLUMNS": "45"])
        let row = try #require(run.lines.first { $0.contains("東") }, "\(run)")
        #expect(row.contains("…"))
        for line in run.lines { #expect(displayWidth(line) <= 45, "too wide: \(line)") }
    }

    @Test("--wide and --json print full values whatever COLUMNS says")
    func wideAndJSONAreFull() async throws {
        let sandbox = try await sandboxWithLongContact()
        for extra in [["--wide"], ["--json"]] {
            let run = try await sandbox.runRaw(
                ["--database", sandbox.database, "contacts", "list"] + extra, environment: ["COLUMNS": "40"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout.contains(longAddress), "\(extra)")
            #expect(!run.stdout.contains("…"))
        }
    }

    @Test("A pipe or file without COLUMNS gets the full table")
    func pipeGetsFullTable() async throws {
        let sandbox = try await sandboxWithLongContact()
        let run = try await sandbox.run("contacts", "list")
        #expect(run.stdout.contains(longAddress))
        #expect(!run.stdout.contains("…"))
    }

    @Test("On a terminal without COLUMNS, the terminal's own width (TIOCGWINSZ) is used")
    func terminalWidthFromTerminal() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return }
        let sandbox = try await sandboxWithLongContact()
        let records = try recordsBinary().path
        let run = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/script"),
            ["-qec", "stty cols 44 rows 30; '\(records)' --database '\(sandbox.database)' contacts list", "/dev/null"],
            environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "SHELL": "/bin/sh", "TERM": "dumb"])
        let text = run.output.replacingOccurrences(of: "\r", with: "")
        #expect(run.status == 0, "\(text)")
        let lines = text.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix(" 4  ") && $0.contains("…") }, "\(text)")
        for line in lines { #expect(displayWidth(line) <= 44, "too wide: \(line)") }
    }

    @Test("Help is wrapped to COLUMNS, and to 80 columns when the width is unknown")
    func helpIsWrapped() async throws {
        let sandbox = try Sandbox()
        for (columns, limit) in [("50", 50), (nil, 80)] as [(String?, Int)] {
            let environment = columns.map { ["COLUMNS": $0] } ?? [:]
            for words in [
                ["--help"], ["users", "--help"], ["users", "register", "--help"], ["coffee", "total", "--help"],
            ] {
                let run = try await sandbox.runRaw(words, environment: environment)
                #expect(run.status == 0, "\(run)")
                for line in run.stdout.split(separator: "\n") {
                    #expect(displayWidth(line) <= limit, "\(words) at \(limit): \(line)")
                }
            }
        }
    }

    @Test("A wrapped example is continued with a backslash outside its quotes")
    func wrappedExampleStaysOneCommand() async throws {
        let run = try await Sandbox().runRaw(["users", "register", "--help"], environment: ["COLUMNS": "60"])
        let examples = try #require(run.stdout.components(separatedBy: "Examples:\n").last)
        #expect(examples.contains(" \\\n"))
        #expect(examples.contains("\"12 St James's Sq\""))
    }

    @Test("A table laid out in advance renders later rows with the same widths")
    func incrementalLayout() {
        var table = Table(
            [.init(title: "ID", alignment: .right), .init(title: "NAME")], maximumWidth: nil)
        table.append(["1", "Ada"])
        let layout = table.layout()
        #expect(layout.header() == "ID  NAME")
        #expect(layout.line(["2", "Bob"]) == " 2  Bob")
        #expect(table.render() == "ID  NAME\n 1  Ada")
        let cut = TableLayout(table.columns, contentWidths: [2, 20], maximumWidth: 10)
        #expect(cut.widths == [2, 6])
        #expect(cut.line(["12", "Bartholomew"]) == "12  Barth…")
    }
}

@Suite("records: global options anywhere")
struct GlobalOptionsCLITests {
    @Test("--json is accepted before the app, after it, and after the command, with the same output")
    func jsonAnywhere() async throws {
        let sandbox = try Sandbox()
        let before = try await sandbox.run("--json", "people", "list")
        let middle = try await sandbox.run("people", "--json", "list")
        let after = try await sandbox.run("people", "list", "--json")
        #expect(before.status == 0, "\(before)")
        #expect(before.stdout == middle.stdout)
        #expect(before.stdout == after.stdout)
        #expect(try before.json() is [Any])
    }

    @Test("--database and --wide are accepted after the command")
    func databaseAfterCommand() async throws {
        let sandbox = try Sandbox()
        let other = sandbox.path("other.sqlite")
        let run = try await sandbox.runRaw([
            "people", "add", "--first", "A", "--last", "B", "--age", "1", "--database", other,
        ])
        #expect(run.status == 0, "\(run)")
        let list = try await sandbox.runRaw(["people", "list", "--wide", "--database=\(other)"])
        #expect(list.stdout.contains(" A  "), "\(list)")
        #expect(FileManager.default.fileExists(atPath: other))
    }

    @Test("The word after an option that takes a value is its value, even --version")
    func versionAsValue() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.run("contacts", "add", "--name", "--version", "--address", "a", "--contact", "c")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == "Added “--version” (ID 4).\n")
        let show = try #require(try await sandbox.run("contacts", "show", "4", "--json").json() as? [String: Any])
        #expect(show["name"] as? String == "--version")
    }

    @Test("--version where an option may stand prints the version, even after a command")
    func versionAfterCommand() async throws {
        let sandbox = try Sandbox()
        for words in [["people", "--version"], ["people", "list", "--version"], ["contacts", "add", "--version"]] {
            let run = try await sandbox.run(words)
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout.hasPrefix("records "), "\(words)")
        }
        #expect(!FileManager.default.fileExists(atPath: sandbox.database))
    }

    @Test("--json on a command without JSON output is a usage error")
    func jsonWithoutJSONOutput() async throws {
        let run = try await Sandbox().run("--json", "coffee", "picture", "remove", "1")
        #expect(run.status == 2)
        #expect(run.stderr.contains("has no JSON output"))
    }

    @Test("An unknown option before the app is named as an option")
    func unknownLeadingOption() async throws {
        let run = try await Sandbox().runRaw(["--jsn", "people", "list"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("unknown option '--jsn'"))
    }
}

@Suite("records: JSON and confirmations")
struct JSONOutputCLITests {
    @Test("JSON is one compact line: {\"id\":1,...}, and [] for an empty result")
    func compactJSON() async throws {
        let sandbox = try Sandbox()
        let show = try await sandbox.run("people", "show", "1", "--json")
        // The version, for `edit --if-version`, is the stored row's: 16 hexadecimal digits.
        #expect(
            show.stdout.wholeMatch(
                of: /\{"age":36,"firstName":"Ada","id":1,"lastName":"Lovelace","version":"[0-9a-f]{16}"\}\n/) != nil,
            "\(show.stdout)")
        let list = try await sandbox.run("people", "list", "--json")
        #expect(list.lines.count == 1)
        for words in [["people", "search", "zzz"], ["coffee", "search", "zzz"]] {
            let empty = try await sandbox.run(words + ["--json"])
            #expect(empty.status == 0, "\(empty)")
            #expect(empty.stdout == "[]\n")
        }
    }

    @Test(
        "add, edit and delete confirm alike in People, Contacts and Coffee, in text and as one JSON object",
        arguments: [
            (["people", "add", "--first", "Alan", "--last", "Turing", "--age", "41"], ["--age", "42"], "Alan Turing"),
            (
                ["contacts", "add", "--name", "Alan Turing", "--address", "a", "--contact", "c"], ["--address", "b"],
                "Alan Turing"
            ),
            (["coffee", "add", "--name", "Alan Turing", "--price", "3"], ["--price", "4"], "Alan Turing"),
        ])
    func uniformConfirmations(add: [String], edit: [String], name: String) async throws {
        let sandbox = try Sandbox()
        let app = add[0]
        let added = try await sandbox.run(add)
        #expect(added.status == 0, "\(added)")
        #expect(added.stdout.hasPrefix("Added “\(name)” (ID "), "\(added)")
        let id = try #require(added.stdout.split(separator: "ID ").last?.prefix { $0.isNumber }).description
        let edited = try await sandbox.run([app, "edit", id] + edit)
        #expect(edited.stdout.hasPrefix("Updated “\(name)” (ID \(id)"), "\(edited)")
        let deleted = try await sandbox.run(app, "delete", id, "--yes")
        #expect(deleted.stdout.hasPrefix("Deleted “\(name)” (ID \(id)"), "\(deleted)")
        let json = try await sandbox.run(add + ["--json"])
        let object = try #require(try json.json() as? [String: Any])
        let newID = try #require(object["id"] as? Int)
        #expect(json.lines.count == 1)
        let editedJSON = try #require(
            try await sandbox.run([app, "edit", String(newID)] + edit + ["--json"]).json()
                as? [String: Any])
        #expect(editedJSON["id"] as? Int == newID)
        let deletedJSON = try #require(
            try await sandbox.run(app, "delete", String(newID), "--json", "--yes").json()
                as? [String: Any])
        #expect(deletedJSON["id"] as? Int == newID)
    }

    @Test("Users confirm registration, edit and deletion in the same shape")
    func usersConfirmations() async throws {
        let sandbox = try Sandbox()
        let registered = try await sandbox.run(input: "password1\npassword1\n", userRegistration + ["--password-stdin"])
        #expect(registered.stdout == "Registered “Ada Lovelace” (ID 1, ada@example.com).\n", "\(registered)")
        let edited = try await sandbox.run(
            input: "password1\n", "users", "edit", "1", "--city", "Cambridge", "--password-stdin")
        #expect(edited.stdout == "Updated “Ada Lovelace” (ID 1, ada@example.com).\n", "\(edited)")
        let deleted = try await sandbox.run(
            input: "password1\n", "users", "delete", "1", "--json", "--yes", "--password-stdin")
        #expect((try deleted.json() as? [String: Any])?["id"] as? Int == 1, "\(deleted)")
    }
}

/// `users register` with every field valid but the password.
let userRegistration = [
    "users", "register", "--first", "Ada", "--last", "Lovelace", "--email", "ada@example.com", "--mobile",
    "9876543210", "--state", "Surrey", "--city", "London", "--pincode", "110001", "--address", "12 Sq",
    "--gender", "female", "--dob", "1990-12-10", "--image", "ada.png",
]

@Suite("records: exit statuses as the README gives them")
struct ExitStatusCLITests {
    @Test(
        "Each app: 0 on success or no hits, 1 for a missing record or no find match, 2 for invalid input",
        arguments: [
            (["people", "search", "zzz"], 0), (["people", "show", "99"], 1),
            (
                [
                    "people", "add", "--first", "A",
                    "--last", "B", "--age", "old",
                ], 2
            ), (["people", "show", "x"], 2),
            (["contacts", "find", "Nobody Here"], 1), (["contacts", "show", "99"], 1),
            (["contacts", "delete", "0"], 2), (["contacts", "list"], 0),
            (["coffee", "search", "zzz"], 0), (["coffee", "show", "99"], 1),
            (["coffee", "add", "--name", "X", "--price", "cheap"], 2), (["coffee", "edit", "-1", "--price", "2"], 2),
            (["users", "list"], 0), (["users", "show", "99"], 1), (["users", "delete", "abc"], 2),
        ] as [([String], Int32)])
    func exitStatus(words: [String], status: Int32) async throws {
        let run = try await Sandbox().run(words)
        #expect(run.status == status, "\(run)")
        #expect(status == 0 ? run.stderr.isEmpty : run.stderr.hasPrefix("records: error: "), "\(run)")
    }

    @Test("A date of birth that is no real date is invalid input: status 2, nothing saved")
    func badDateIsUsage() async throws {
        let sandbox = try Sandbox()
        var words = userRegistration
        words[words.firstIndex(of: "1990-12-10")!] = "1990-02-30"
        let run = try await sandbox.run(input: "password1\npassword1\n", words + ["--password-stdin"])
        #expect(run.status == 2, "\(run)")
        #expect(try await sandbox.run("users", "list", "--json").stdout == "[]\n")
    }

    @Test("A file that is not a picture is invalid input: status 2")
    func nonImagePictureIsUsage() async throws {
        let sandbox = try Sandbox()
        let text = sandbox.path("notes.png")
        try Data("just text".utf8).write(to: URL(fileURLWithPath: text))
        let run = try await sandbox.run("coffee", "picture", "set", "1", text)
        #expect(run.status == 2, "\(run)")
    }
}

@Suite("records: picture get keeps existing files")
struct PictureOverwriteCLITests {
    @Test("picture get refuses to replace an existing file: status 1, the file unchanged")
    func refusesExistingFile() async throws {
        let sandbox = try Sandbox()
        let file = sandbox.path("keep.png")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: file))
        let run = try await sandbox.run("coffee", "picture", "get", "1", file)
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr == "records: error: \(file) already exists; use --force to replace it\n")
        #expect(run.stdout.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data("precious".utf8))
    }

    @Test("picture get --force replaces an existing file with the picture")
    func forceReplaces() async throws {
        let sandbox = try Sandbox()
        let file = sandbox.path("replace.png")
        try Data("old".utf8).write(to: URL(fileURLWithPath: file))
        let run = try await sandbox.run("coffee", "picture", "get", "1", file, "--force")
        #expect(run.status == 0, "\(run)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)).starts(with: [0x89, 0x50, 0x4E, 0x47]))
    }
}
