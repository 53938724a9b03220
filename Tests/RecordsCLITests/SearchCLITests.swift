import Foundation
import SQLiteStore
import Testing

@Suite("records search: the apps' full-text indexes")
struct SearchCLITests {
    @Test("people search --json gives each match's fields, rank and marked snippet, best first")
    func peopleJSON() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.run("people", "add", "--first", "Ada", "--last", "Ada", "--age", "1").status == 0)
        let found = try #require(try await sandbox.run("people", "search", "ada", "--json").json() as? [[String: Any]])
        #expect(found.compactMap { $0["lastName"] as? String } == ["Ada", "Lovelace"])
        #expect(found.map { $0["snippet"] as? String } == ["**Ada** **Ada**", "**Ada** Lovelace"])
        let ranks = found.compactMap { $0["rank"] as? Double }
        #expect(ranks.count == 2 && ranks[0] < ranks[1])
        #expect(Set(found[1].keys) == ["id", "firstName", "lastName", "age", "rank", "snippet"])
    }

    @Test("Every word must start a name, in any order, ignoring case and accents")
    func peopleMatching() async throws {
        let sandbox = try Sandbox()
        func names(_ words: String...) async throws -> [String] {
            let run = try await sandbox.run(["people", "search", "--json"] + words)
            #expect(run.status == 0, "\(run)")
            return (try run.json() as? [[String: Any]] ?? []).compactMap { $0["lastName"] as? String }
        }
        #expect(try await names("akesson") == ["Åkesson"])
        #expect(try await names("GRA", "hop") == ["Hopper"])
        #expect(try await names("hop", "gra") == ["Hopper"])
        #expect(try await names("grace", "turing") == [])
        #expect(try await names("race") == [])
    }

    @Test("No match prints the message, or [] with --json, and exits 0")
    func noMatch() async throws {
        let sandbox = try Sandbox()
        let text = try await sandbox.run("people", "search", "nobody")
        #expect(text.status == 0 && text.stdout == "No one matches \"nobody\".\n")
        let json = try await sandbox.run("contacts", "search", "nobody", "--json")
        #expect(json.status == 0 && json.stdout == "[]\n")
    }

    @Test("Hostile text never fails: quotes, operators, parentheses, emoji, 10,000 characters")
    func hostileInput() async throws {
        let sandbox = try Sandbox()
        let texts = [
            "\"", "kept AND \"", "*", "NEAR(", "NEAR(ada lovelace)", "AND", "OR", "NOT", "-", "-ada", ":",
            "lastname:ada", "(", ")", "(ada)", "😀", "ada 😀", "^", "'", String(repeating: "x", count: 10_000),
            String(repeating: "ab ", count: 3_334),
        ]
        for app in ["people", "contacts", "coffee"] {
            for text in texts {
                let run = try await sandbox.run(app, "search", "--json", "--", text)
                #expect(run.status == 0, "\(app) search \(text.prefix(20)): \(run.stderr)")
                #expect(run.stderr.isEmpty)
                #expect(try run.json() is [Any])
            }
        }
        // Operators are words to find.
        #expect(try await sandbox.run("people", "add", "--first", "And", "--last", "Near", "--age", "1").status == 0)
        let near = try await sandbox.run("people", "search", "--json", "--", "AND", "NEAR(")
        #expect((try near.json() as? [[String: Any]])?.compactMap { $0["lastName"] as? String } == ["Near"])
    }

    @Test("Blank TEXT is a usage error (status 2); punctuation only finds nothing (status 0)")
    func blankText() async throws {
        let sandbox = try Sandbox()
        for app in ["people", "contacts", "coffee"] {
            let blank = try await sandbox.run(app, "search", "   ")
            #expect(blank.status == 2 && blank.stderr.contains("search TEXT must not be empty"), "\(blank)")
            let punctuation = try await sandbox.run(app, "search", "--json", "--", "*", "\"", "-")
            #expect(punctuation.status == 0 && punctuation.stdout == "[]\n", "\(punctuation)")
        }
    }

    @Test("contacts search ranks a match in the name first and gives an excerpt of the column that matched")
    func contacts() async throws {
        let sandbox = try Sandbox()
        let added = try await sandbox.run(
            "contacts", "add", "--name", "Milano Tours Agency Europe", "--address", "1 High St", "--contact", "x")
        #expect(added.status == 0)
        let found = try #require(
            try await sandbox.run("contacts", "search", "mil", "--json").json() as? [[String: Any]])
        #expect(found.compactMap { $0["name"] as? String } == ["Milano Tours Agency Europe", "Marco Rossi"])
        #expect(found.map { $0["snippet"] as? String } == ["**Milano** Tours Agency Europe", "Via Roma 1, **Milano**"])
        let table = try await sandbox.run("contacts", "search", "main", "spring")
        #expect(
            table.lines == [
                "ID  NAME      ADDRESS | CONTACT", " 1  Jane Doe  12 Main Street, Springfield | +1 555 0100",
            ])
        // find keeps its exact name match.
        let find = try await sandbox.run("contacts", "find", "jane")
        #expect(find.status == 1 && find.stderr.contains("Match not found"))
        #expect(try await sandbox.run("contacts", "find", "JANE", "doe").stdout.hasPrefix("Match found\n"))
    }

    @Test("coffee search finds words' starts ignoring accents, marks the name, and gives the price")
    func coffee() async throws {
        let sandbox = try Sandbox()
        let found = try #require(
            try await sandbox.run("coffee", "search", "caffe", "lat", "--json").json() as? [[String: Any]])
        #expect(found.count == 1)
        #expect(found.first?["name"] as? String == "Caffè Latte")
        #expect(found.first?["snippet"] as? String == "**Caffè** **Latte**")
        #expect(found.first?["price"] as? String == "3.45")
    }

    @Test("--limit and --offset page through the matches; bad values are usage errors")
    func paging() async throws {
        let sandbox = try Sandbox()
        func ids(_ options: String...) async throws -> [Int] {
            let run = try await sandbox.run(["people", "search", "a", "--json"] + options)
            return (try run.json() as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
        }
        let all = try await ids()
        #expect(all.count == 3)
        #expect(try await ids("--limit", "2") == Array(all.prefix(2)))
        #expect(try await ids("--limit", "2", "--offset", "2") == [all[2]])
        #expect(try await ids("--offset", "1") == Array(all.dropFirst()))
        for (option, value) in [("--limit", "-1"), ("--offset", "x"), ("--limit", "1.5")] {
            let run = try await sandbox.run("people", "search", "a", option, value)
            #expect(run.status == 2 && run.stderr.contains("must be a whole number"), "\(run)")
        }
    }

    @Test("Control characters in a stored name are escaped in the snippet and the table")
    func escaping() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.run("people", "list").status == 0)
        do {
            let db = try Database(path: sandbox.database)
            try db.execute(
                "INSERT INTO peopleInfo (firstname, lastname, age) VALUES (?, 'Evil', 1)",
                arguments: ["Bad\u{1B}[2Jname"])
        }
        let json = try await sandbox.run("people", "search", "evil", "--json")
        #expect(!json.stdout.contains("\u{1B}"))
        let match = try #require((try json.json() as? [[String: Any]])?.first)
        #expect(match["snippet"] as? String == "Bad\\u{1B}[2Jname **Evil**")
        let table = try await sandbox.run("people", "search", "evil")
        #expect(table.status == 0 && !table.stdout.contains("\u{1B}") && table.stdout.contains("Bad\\u{1B}[2Jname"))
    }
}
