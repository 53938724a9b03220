import Foundation
import SQLiteStore
import TestSupport
import Testing

/// The command-line features that rest on the stores: lists that stream by
/// page, contacts search, unknown ages, users' passwords for edit and delete.
@Suite("records: streamed lists, contacts search, unknown ages, users' passwords")
struct StoreBackedCLITests {
    /// A sandbox whose database has `count` more people, named `Pnnnnnn`.
    private func manyPeople(_ count: Int) async throws -> Sandbox {
        let sandbox = try Sandbox()
        #expect(try await sandbox.run("people", "list").status == 0)
        // Seconds of inserts in a debug build: on a thread of their own, not
        // a cooperative one that other tests need.
        let path = sandbox.database
        try await onOwnThread {
            let db = try Database(path: path)
            try db.transaction { db in
                let insert = try db.makeStatement("INSERT INTO peopleInfo (firstname, lastname, age) VALUES (?, ?, ?)")
                for index in 0..<count {
                    try insert.execute(arguments: ["P\(index)", "Zz\(String(format: "%06d", index))", index % 100])
                }
            }
            db.close()
        }
        return sandbox
    }

    private func json(_ run: RecordsRun) throws -> [[String: Any]] {
        try #require(try run.json() as? [[String: Any]], "\(run)")
    }

    // MARK: - Pages and streaming

    @Test("--limit 1 on 200,000 people prints the header and one row")
    func limitOnALargeList() async throws {
        let sandbox = try await manyPeople(200_000)
        let run = try await sandbox.run("people", "list", "--sort", "newest", "--limit", "1")
        #expect(run.status == 0, "\(run)")
        #expect(run.lines.count == 2)
        #expect(run.lines.last?.contains("Zz199999") == true, "\(run)")
    }

    @Test("A reader that stops after the first line ends a list of 200,000 people early")
    func closedPipe() async throws {
        let sandbox = try await manyPeople(200_000)
        let process = Process()
        process.executableURL = try recordsBinary()
        process.arguments = ["--database", sandbox.database, "people", "list"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        let child = try ChildProcess(starting: process)
        let reading = pipe.fileHandleForReading
        // Blocking reads, on a thread of their own.
        let first = try await onOwnThread {
            var first = Data()
            while !first.contains(UInt8(ascii: "\n")) {
                let byte = reading.readData(ofLength: 1)
                if byte.isEmpty { break }
                first.append(byte)
            }
            try reading.close()
            return first
        }
        await child.exited()
        #expect(String(decoding: first, as: UTF8.self).hasPrefix(" ID"), "\(String(decoding: first, as: UTF8.self))")
        // SIGPIPE's status: the list stopped at the closed pipe.
        #expect(child.terminationStatus == 141)
    }

    @Test("--offset skips rows and --limit caps them, in list and search, text and JSON")
    func pages() async throws {
        let sandbox = try await manyPeople(5)
        let all = try json(try await sandbox.run("people", "list", "--sort", "newest", "--json"))
        let page = try json(
            try await sandbox.run("people", "list", "--sort", "newest", "--offset", "1", "--limit", "2", "--json"))
        #expect(page.map { $0["id"] as? Int } == all[1...2].map { $0["id"] as? Int })
        let found = try json(try await sandbox.run("people", "search", "zz", "--offset", "3", "--json"))
        #expect(found.map { $0["lastName"] as? String } == ["Zz000003", "Zz000004"])
        let none = try await sandbox.run("people", "list", "--offset", "1000")
        #expect(none.status == 0)
        #expect(none.stdout.isEmpty)
        #expect(none.stderr == "No people at offset 1000; there are \(all.count).\n")
    }

    @Test("A --limit or --offset that is not a whole number from 0 is a usage error", arguments: ["-1", "x", ""])
    func badPage(value: String) async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.run("people", "list", "--limit", value)
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.contains("option '--limit' needs a whole number from 0"))
    }

    // MARK: - Searches without hits

    @Test("A search with no hits exits 0: a message, or [] with --json", arguments: ["people", "coffee", "contacts"])
    func emptySearch(app: String) async throws {
        let sandbox = try Sandbox()
        let text = try await sandbox.run(app, "search", "qqqq")
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout.contains("qqqq"))
        let json = try await sandbox.run(app, "search", "qqqq", "--json")
        #expect(json.status == 0)
        #expect(json.stdout == "[]\n")
    }

    // MARK: - Contacts

    @Test("contacts search matches the start of the name or of a word, ignoring case, accents and spaces")
    func contactsSearch() async throws {
        let sandbox = try Sandbox()
        #expect(
            try await sandbox.run("contacts", "add", "--name", "Élise  Dubois", "--address", "A", "--contact", "1")
                .status
                == 0)
        #expect(
            try await sandbox.run("contacts", "add", "--name", "Bob Qxroe", "--address", "B", "--contact", "2").status
                == 0)
        func names(_ text: String) async throws -> [String] {
            try json(try await sandbox.run("contacts", "search", text, "--json")).compactMap { $0["name"] as? String }
        }
        #expect(try await names("eli") == ["Élise  Dubois"])
        #expect(try await names("DUB") == ["Élise  Dubois"])
        #expect(try await names("elise   du") == ["Élise  Dubois"])
        #expect(try await names("ois").isEmpty, "not the middle of a word")
        #expect(try await names("qxr") == ["Bob Qxroe"])
    }

    @Test("contacts find keeps its exact match, now ignoring repeated spaces; no match is status 1")
    func contactsFind() async throws {
        let sandbox = try Sandbox()
        #expect(
            try await sandbox.run(
                "contacts", "add", "--name", "Jane   Doe", "--address", "A", "--contact", "1", "--allow-duplicate"
            ).status
                == 0)
        let found = try await sandbox.run("contacts", "find", "jane", "doe")
        #expect(found.status == 0, "\(found)")
        #expect(found.lines.first == "Match found")
        let partial = try await sandbox.run("contacts", "find", "jane")
        #expect(partial.status == 1)
        #expect(partial.stderr.contains("Match not found"))
    }

    // MARK: - People's ages

    @Test("people add without --age stores an unknown age; edit --age none clears one")
    func unknownAge() async throws {
        let sandbox = try Sandbox()
        let added = try #require(
            try await sandbox.run("people", "add", "--first", "No", "--last", "Age", "--json").json() as? [String: Any])
        #expect(added["age"] is NSNull)
        let id = try #require(added["id"] as? Int)
        #expect(try await sandbox.run("people", "edit", String(id), "--age", "40").status == 0)
        let cleared = try #require(
            try await sandbox.run("people", "edit", String(id), "--age", "none", "--json").json() as? [String: Any])
        #expect(cleared["age"] is NSNull)
        #expect(cleared["firstName"] as? String == "No")
        let bad = try await sandbox.run("people", "edit", String(id), "--age", "nobody")
        #expect(bad.status == 2)
    }

    // MARK: - Users' passwords

    @Test("users edit and delete need the user's password; a wrong or missing one changes nothing")
    func usersPassword() async throws {
        let sandbox = try Sandbox()
        let registered = try await sandbox.run(
            input: "correct horse\ncorrect horse\n", "users", "register", "--first", "Ada", "--last", "Lovelace",
            "--email", "ada@example.com", "--mobile", "9876543210", "--state", "Surrey", "--city", "London",
            "--pincode", "110001", "--address", "12 St James's Sq", "--gender", "female", "--dob", "1990-12-10",
            "--image", "ada.png", "--password-stdin")
        #expect(registered.status == 0, "\(registered)")
        // Standard input is not a terminal and no --password-stdin: refused.
        let unasked = try await sandbox.run("users", "edit", "1", "--city", "Oxford")
        #expect(unasked.status == 2, "\(unasked)")
        let wrongEdit = try await sandbox.run(
            input: "wrong\n", "users", "edit", "1", "--city", "Oxford", "--password-stdin")
        #expect(wrongEdit.status == 1)
        let wrongDelete = try await sandbox.run(input: "wrong\n", "users", "delete", "1", "--yes", "--password-stdin")
        #expect(wrongDelete.status == 1)
        #expect(wrongDelete.stderr == "records: error: the password is wrong\n")
        let shown = try #require(try await sandbox.run("users", "show", "1", "--json").json() as? [String: Any])
        #expect(shown["city"] as? String == "London")
        let deleted = try await sandbox.run(
            input: "correct horse\n", "users", "delete", "1", "--yes", "--password-stdin")
        #expect(deleted.status == 0, "\(deleted)")
    }
}
