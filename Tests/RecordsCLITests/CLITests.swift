import Foundation
import SQLiteStore
import Testing

/// Runs the built `records` binary against temporary databases.
@Suite("records command line")
struct CLITests {
    // MARK: - Help and version

    @Test("--help describes every command of every app")
    func mainHelp() async throws {
        let run = try await Sandbox().runRaw(["--help"])
        #expect(run.status == 0, "\(run)")
        for command in [
            "people list", "people add", "people show", "people edit", "people delete", "people search",
            "contacts list", "contacts add", "contacts find", "contacts show", "contacts edit", "contacts delete",
        ] {
            #expect(run.stdout.contains(command), "missing \(command)")
        }
        #expect(run.stdout.contains("--database PATH"))
        #expect(run.stdout.contains("RECORDS_DATABASE"))
        #expect(run.stderr.isEmpty)
    }

    @Test("people --help gives each command's synopsis")
    func familyHelp() async throws {
        let run = try await Sandbox().runRaw(["people", "--help"])
        #expect(run.status == 0)
        #expect(run.stdout.contains("list [--sort name|age|newest] [--order asc|desc] [--limit N] [--offset N]"))
        #expect(run.stdout.contains("add --first NAME --last NAME [--age N] [--json]"))
        #expect(run.stdout.contains("search TEXT... [--limit N] [--offset N] [--json]"))
        let contacts = try await Sandbox().runRaw(["contacts", "--help"])
        #expect(contacts.stdout.contains("find NAME... [--json]"))
    }

    @Test("A command's help lists its options and examples; 'help' is the same")
    func commandHelp() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.runRaw(["people", "add", "--help"])
        #expect(run.status == 0)
        #expect(run.stdout.contains("--first NAME"))
        #expect(run.stdout.contains("Examples:"))
        #expect(try await sandbox.runRaw(["help", "people", "add"]).stdout == run.stdout)
        // Help never touches the database.
        #expect(!FileManager.default.fileExists(atPath: sandbox.defaultDatabase))
    }

    @Test("records alone prints help on stderr with status 2")
    func bareCommand() async throws {
        let run = try await Sandbox().runRaw([])
        #expect(run.status == 2)
        #expect(run.stderr.contains("Usage: records"))
        #expect(run.stderr.contains("records: error: missing app or command"))
    }

    @Test("--version prints the version and SQLite's")
    func version() async throws {
        let run = try await Sandbox().runRaw(["--version"])
        #expect(run.status == 0)
        #expect(run.stdout.hasPrefix("records "))
        #expect(run.stdout.contains("SQLite 3."))
    }

    // MARK: - Database location

    @Test("The first run installs the sample database in $XDG_DATA_HOME/records")
    func defaultLocation() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.runRaw(["people", "list"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("Lovelace"))
        #expect(FileManager.default.fileExists(atPath: sandbox.defaultDatabase))
    }

    @Test("RECORDS_DATABASE chooses the database; --database overrides it")
    func overrides() async throws {
        let sandbox = try Sandbox()
        let fromEnvironment = try await sandbox.runRaw(
            ["people", "add", "--first", "Env", "--last", "Var", "--age", "1"],
            environment: ["RECORDS_DATABASE": sandbox.path("env.sqlite")])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment)")
        #expect(FileManager.default.fileExists(atPath: sandbox.path("env.sqlite")))
        let option = try await sandbox.runRaw(
            ["--database", sandbox.path("option.sqlite"), "people", "list", "--json"],
            environment: ["RECORDS_DATABASE": sandbox.path("env.sqlite")])
        #expect(option.status == 0)
        #expect(!option.stdout.contains("Env"))
        #expect(FileManager.default.fileExists(atPath: sandbox.path("option.sqlite")))
        #expect(!FileManager.default.fileExists(atPath: sandbox.defaultDatabase))
    }

    @Test("--database may also come after the command, and as --database=PATH")
    func databaseOptionAnywhere() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.runRaw(["people", "list", "--database=\(sandbox.database)"])
        #expect(run.status == 0)
        #expect(FileManager.default.fileExists(atPath: sandbox.database))
    }

    @Test("A database in a missing directory, or a file that is not one, is a runtime error")
    func unusableDatabase() async throws {
        let sandbox = try Sandbox()
        let missing = try await sandbox.runRaw(["--database", sandbox.path("no/such/dir/x.sqlite"), "people", "list"])
        #expect(missing.status == 1)
        #expect(missing.stderr.hasPrefix("records: error: "))
        #expect(missing.stderr.contains("does not exist"))
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: sandbox.path("text.txt")))
        let notDatabase = try await sandbox.runRaw(["--database", sandbox.path("text.txt"), "people", "list"])
        #expect(notDatabase.status == 1)
        #expect(notDatabase.stderr.contains("not a database"))
    }

    @Test("An empty file left at the location gets the sample installed over it")
    func emptyFileAtLocation() async throws {
        let sandbox = try Sandbox()
        #expect(FileManager.default.createFile(atPath: sandbox.database, contents: Data()))
        let run = try await sandbox.run("people", "list")
        #expect(run.status == 0)
        #expect(run.stdout.contains("Lovelace"))
    }

    @Test("A binary without its sample fails cleanly on a fresh location, yet opens an existing database")
    func missingSample() async throws {
        let sandbox = try Sandbox()
        // A copy of the binary alone, without the resource bundle beside it.
        let lonely = URL(fileURLWithPath: sandbox.path("bin/records"))
        try FileManager.default.createDirectory(
            at: lonely.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: try recordsBinary(), to: lonely)
        // Another test's child forked while the copy was still open for
        // writing holds that descriptor until it execs: starting the copy
        // then fails with "Text file busy" for a moment.
        var attempt = 0
        func runLonely(_ arguments: [String]) async throws -> RecordsRun {
            while true {
                do {
                    return try await sandbox.runRaw(arguments, binary: lonely)
                } catch let error as POSIXError where error.code == .ETXTBSY && attempt < 50 {
                    attempt += 1
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }
        let fresh = try await runLonely(["people", "list"])
        #expect(fresh.status == 1)
        #expect(fresh.stderr.contains("sample database that ships with records is missing"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.defaultDatabase))
        #expect(try await sandbox.run("people", "list").status == 0)
        let existing = try await runLonely(["--database", sandbox.database, "people", "list", "--json"])
        #expect(existing.status == 0, "\(existing)")
        #expect((try existing.json() as? [Any])?.count == 6)
    }

    // MARK: - People

    @Test("people list prints an aligned table of the sample people")
    func peopleTable() async throws {
        let run = try await Sandbox().run("people", "list")
        #expect(run.status == 0)
        let lines = run.lines
        #expect(lines.first?.hasPrefix("ID  FIRST NAME") == true)
        #expect(lines.count == 7)
        // The AGE column is right-aligned, so every line ends at the same column.
        #expect(Set(lines.map(\.count)).count == 1, "\(lines)")
        #expect(lines.contains { $0.contains("Zoë") && $0.hasSuffix("-") })
    }

    @Test("people list --json is parseable, with null for an unknown age")
    func peopleJSON() async throws {
        let run = try await Sandbox().run("people", "list", "--json")
        let people = try #require(try run.json() as? [[String: Any]])
        #expect(people.count == 6)
        #expect(people.first?["lastName"] as? String == "Åkesson")
        #expect(people.first?["age"] is NSNull)
        #expect(people.last?["age"] as? Int == 41)
    }

    @Test("people list sorts by age and newest; a bad sort is a usage error")
    func peopleSort() async throws {
        let sandbox = try Sandbox()
        let byAge = try #require(
            try await sandbox.run("people", "list", "--sort", "age", "--json").json() as? [[String: Any]])
        #expect(byAge.compactMap { $0["age"] as? Int } == [29, 36, 41, 85, 101])
        let newest = try #require(
            try await sandbox.run("people", "list", "--sort=newest", "--json").json() as? [[String: Any]])
        #expect(newest.compactMap { $0["id"] as? Int } == [6, 5, 4, 3, 2, 1])
        let bad = try await sandbox.run("people", "list", "--sort", "height")
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("choose name, age, newest"))
    }

    @Test("people list --order desc reverses the sort, unknown ages still last; a bad order is a usage error")
    func peopleSortDirection() async throws {
        let sandbox = try Sandbox()
        let byAge = try #require(
            try await sandbox.run("people", "list", "--sort", "age", "--order", "desc", "--json").json()
                as? [[String: Any]])
        #expect(byAge.map { $0["age"] as? Int } == [101, 85, 41, 36, 29, nil])
        let oldest = try await sandbox.run("people", "list", "--sort=newest", "--order=asc", "--limit", "2", "--json")
        #expect((try oldest.json() as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [1, 2])
        let byName = try #require(
            try await sandbox.run("people", "list", "--order", "desc", "--json").json() as? [[String: Any]])
        let names = try #require(
            try await sandbox.run("people", "list", "--json").json() as? [[String: Any]])
        #expect(byName.compactMap { $0["id"] as? Int } == names.compactMap { $0["id"] as? Int }.reversed())
        let bad = try await sandbox.run("people", "list", "--sort", "age", "--order", "down")
        #expect(bad.status == 2)
        #expect(bad.stdout.isEmpty)
        #expect(bad.stderr.contains("invalid value 'down' for --order: choose asc, desc"))
        let help = try await sandbox.run("people", "list", "--help")
        #expect(help.stdout.contains("--order asc|desc"))
    }

    @Test("people add, show, edit, delete: the seed's whole flow")
    func peopleFlow() async throws {
        let sandbox = try Sandbox()
        let add = try await sandbox.run("people", "add", "--first", "Grace", "--last", "O'Hopper", "--age", "85")
        #expect(add.status == 0, "\(add)")
        #expect(add.stdout == "Added “Grace O'Hopper” (ID 7, age 85).\n")
        let shown = try #require(try await sandbox.run("people", "show", "7", "--json").json() as? [String: Any])
        #expect(shown["lastName"] as? String == "O'Hopper")
        let text = try await sandbox.run("people", "show", "7")
        #expect(text.stdout.contains("Last name:   O'Hopper"))
        let edit = try await sandbox.run("people", "edit", "7", "--age", "86", "--json")
        #expect(try (edit.json() as? [String: Any])?["age"] as? Int == 86)
        let delete = try await sandbox.run("people", "delete", "7", "--yes")
        #expect(delete.status == 0)
        #expect(delete.stdout.contains("Deleted “Grace O'Hopper” (ID 7, age 86)."))
        let gone = try await sandbox.run("people", "show", "7")
        #expect(gone.status == 1)
        #expect(gone.stderr == "records: error: no person with ID 7\n")
    }

    @Test("Invalid people are refused with every problem, status 2, and nothing written")
    func peopleValidation() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.runRaw(["people", "add", "--first", " ", "--last", "", "--age", "151"])
        #expect(run.status == 2)
        #expect(
            run.stderr
                == "records: error: 3 values are not valid:\n  - First name is required.\n"
                + "  - Last name is required.\n  - Age must be a whole number from 0 to 150.\n"
        )
        // Not even the database was created.
        #expect(!FileManager.default.fileExists(atPath: sandbox.defaultDatabase))
        let age = try await sandbox.run("people", "add", "--first", "A", "--last", "B", "--age", "forty")
        #expect(age.status == 2)
        let long = try await sandbox.run(
            "people", "add", "--first", String(repeating: "x", count: 101), "--last", "B", "--age", "4")
        #expect(long.stderr.contains("at most 100 characters"))
        #expect((try await sandbox.run("people", "list", "--json").json() as? [Any])?.count == 6)
    }

    @Test("people edit needs an existing ID and at least one change")
    func peopleEditErrors() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.run("people", "edit", "1").status == 2)
        #expect(try await sandbox.run("people", "edit", "99", "--age", "3").status == 1)
        #expect(try await sandbox.run("people", "edit", "abc", "--age", "3").status == 2)
        #expect(try await sandbox.run("people", "edit", "-1", "--age", "3").stderr.contains("positive whole number"))
        #expect(try await sandbox.run("people", "edit", "1", "--first", "").status == 2)
        let unchanged = try #require(try await sandbox.run("people", "show", "1", "--json").json() as? [String: Any])
        #expect(unchanged["firstName"] as? String == "Ada")
    }

    @Test("people search matches the start of names, ignoring case and accents; no match is not an error")
    func peopleSearch() async throws {
        let sandbox = try Sandbox()
        let found = try #require(try await sandbox.run("people", "search", "O", "--json").json() as? [[String: Any]])
        #expect(found.compactMap { $0["firstName"] as? String } == ["Seán"])
        let accents = try await sandbox.run("people", "search", "sean", "o'brien")
        #expect(accents.status == 0)
        #expect(accents.stdout.contains("O'Brien"))
        let zoe = try #require(try await sandbox.run("people", "search", "ZOE", "--json").json() as? [[String: Any]])
        #expect(zoe.count == 1)
        let prefix = try #require(try await sandbox.run("people", "search", "a", "--json").json() as? [[String: Any]])
        #expect(Set(prefix.compactMap { $0["firstName"] as? String }) == ["Ada", "Alan", "Zoë"])
        let none = try await sandbox.run("people", "search", "nobody")
        #expect(none.status == 0)
        #expect(none.stdout.contains("No one matches"))
        #expect(try await sandbox.run("people", "search").status == 2)
    }

    // MARK: - Contacts

    @Test("contacts list shows name and \"address | contact\"")
    func contactsList() async throws {
        let run = try await Sandbox().run("contacts", "list")
        #expect(run.status == 0)
        #expect(run.lines.first == "ID  NAME                  ADDRESS | CONTACT")
        #expect(run.stdout.contains("Jane Doe              12 Main Street, Springfield | +1 555 0100"))
        let json = try #require(try await Sandbox().run("contacts", "list", "--json").json() as? [[String: Any]])
        #expect(json.count == 3)
    }

    @Test("contacts add says \"Added\"; find says \"Match found\" with the fields")
    func contactsAddAndFind() async throws {
        let sandbox = try Sandbox()
        let url = "http://example.com/a:b?c=d"
        let add = try await sandbox.run(
            "contacts", "add", "--name", "Bob O'Neil", "--address", "1 High St; Room 2", "--contact", url)
        #expect(add.status == 0, "\(add)")
        #expect(add.stdout == "Added “Bob O'Neil” (ID 4).\n")
        let find = try await sandbox.run("contacts", "find", "bob", "o'neil")
        #expect(find.status == 0)
        #expect(find.lines.first == "Match found")
        #expect(find.stdout.contains("\nPhone, email or web address:  \(url)\n"))
        let json = try #require(
            try await sandbox.run("contacts", "find", "BOB O'NEIL", "--json").json() as? [[String: Any]])
        #expect(json.first?["address"] as? String == "1 High St; Room 2")
    }

    @Test("contacts find with no match says \"Match not found\" and exits 1")
    func contactsNotFound() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.run("contacts", "find", "Nobody")
        #expect(run.status == 1)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("Match not found"))
        let json = try await sandbox.run("contacts", "find", "Nobody", "--json")
        #expect(json.status == 1)
        #expect((try json.json() as? [Any])?.isEmpty == true)
    }

    @Test("contacts show, edit and delete")
    func contactsShowEditDelete() async throws {
        let sandbox = try Sandbox()
        // Named as the form labels the fields, the values aligned after the longest label.
        #expect(
            try await sandbox.run("contacts", "show", "1").stdout.contains(
                "\nName:\(String(repeating: " ", count: 25))Jane Doe\nAddress:\(String(repeating: " ", count: 22))"))
        let edit = try await sandbox.run("contacts", "edit", "1", "--address", "14 Main St", "--json")
        #expect((try edit.json() as? [String: Any])?["address"] as? String == "14 Main St")
        #expect(try await sandbox.run("contacts", "edit", "1").status == 2)
        #expect(try await sandbox.run("contacts", "delete", "1", "--yes").stdout == "Deleted “Jane Doe” (ID 1).\n")
        #expect(try await sandbox.run("contacts", "show", "1").status == 1)
        #expect(try await sandbox.run("contacts", "delete", "1", "--yes").status == 1)
    }

    @Test("Invalid contacts are refused with status 2 and nothing written")
    func contactsValidation() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.run("contacts", "add", "--name", "", "--address", "a", "--contact", "c")
        #expect(run.status == 2)
        #expect(run.stderr == "records: error: Name is required.\n")
        let missing = try await sandbox.run("contacts", "add", "--name", "X", "--address", "a")
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("missing required option '--contact CONTACT'"))
        #expect((try await sandbox.run("contacts", "list", "--json").json() as? [Any])?.count == 3)
    }

    @Test("Control characters in stored data are shown escaped, never sent to the terminal")
    func controlCharactersEscaped() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.run("contacts", "list").status == 0)
        let db = try Database(path: sandbox.database)
        try db.execute(
            "INSERT INTO CONTACTS (NAME, ADDRESS, CONTACT) VALUES (?, ?, ?)",
            arguments: ["Evil\u{1B}[2J", "Two\nlines", "x"])
        db.close()
        let run = try await sandbox.run("contacts", "list")
        #expect(!run.stdout.contains("\u{1B}"))
        #expect(run.stdout.contains("Evil\\u{1B}[2J"))
        #expect(run.stdout.contains("Two\\nlines | x"))
    }

    // MARK: - Usage errors

    @Test(
        "Usage mistakes exit 2 with 'records: error:' and a pointer to help",
        arguments: [
            (["cofee", "list"], "unknown app or command 'cofee'"),
            (["people", "lst"], "did you mean 'list'?"),
            (["people"], "missing command"),
            (["people", "list", "--jsno"], "did you mean '--json'?"),
            (["people", "list", "--sort"], "needs a value"),
            (["people", "list", "--json", "--json"], "more than once"),
            (["people", "list", "extra"], "unexpected argument 'extra'"),
            (["people", "show"], "missing ID"),
            (["people", "show", "1", "2"], "unexpected argument '2'"),
            (["people", "list", "--json=yes"], "takes no value"),
            (["--database"], "needs a value"),
        ])
    func usageErrors(arguments: [String], message: String) async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.runRaw(arguments)
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.contains("records: error: "))
        #expect(run.stderr.contains(message), "\(run)")
        #expect(run.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: sandbox.defaultDatabase))
    }

    // MARK: - Debug log and concurrency

    @Test("--debug logs every statement to stderr, never the values")
    func debugLog() async throws {
        let run = try await Sandbox().run(
            "--debug", "people", "add", "--first", "Secret", "--last", "Name", "--age", "5")
        #expect(run.status == 0)
        #expect(run.stderr.contains(#"records: debug: SQL: INSERT INTO "peopleInfo""#), "\(run)")
        #expect(!run.stderr.contains("Secret"))
    }

    @Test("Several first runs at once install one database and all succeed")
    func concurrentFirstRuns() async throws {
        let sandbox = try Sandbox()
        let runs = try await withThrowingTaskGroup(of: (Int32, String).self) { group in
            for index in 0..<4 {
                group.addTask {
                    let run = try await sandbox.runRaw(
                        ["people", "add", "--first", "P\(index)", "--last", "Q", "--age", "\(index)"])
                    return (run.status, run.stderr)
                }
            }
            return try await group.reduce(into: [(Int32, String)]()) { $0.append($1) }
        }
        #expect(runs.map(\.0) == [0, 0, 0, 0], "\(runs.map(\.1))")
        let people = try #require(try await sandbox.runRaw(["people", "list", "--json"]).json() as? [[String: Any]])
        #expect(people.count == 10)
    }
}
