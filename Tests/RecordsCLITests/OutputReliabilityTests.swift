import Foundation
import SQLiteStore
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - Helpers

extension Sandbox {
    /// Runs `script` with `/bin/sh`: `$RECORDS` is the binary, `$DB` the
    /// sandbox's database and `$DIR` its folder, for redirections such as
    /// `2>&-` and arguments made with `printf`, which `Process` cannot pass.
    func shell(_ script: String, environment: [String: String] = [:]) async throws -> RecordsRun {
        var variables = ["RECORDS": try recordsBinary().path, "DB": database, "DIR": root.path]
        variables.merge(environment) { $1 }
        return try await runRaw(["-c", script], environment: variables, binary: URL(fileURLWithPath: "/bin/sh"))
    }

    /// Runs `script` like ``shell(_:environment:)`` with file descriptor 4
    /// open on a pipe that nobody reads: the script's commands can send
    /// output there (`>&4`) and get `EPIPE`. The pipe is a FIFO in the
    /// sandbox, opened for reading and writing and then closed for reading
    /// in the same shell, so no other process can hold its read end.
    func shellWithClosedPipe(_ script: String) async throws -> RecordsRun {
        try await shell(#"mkfifo "$DIR/pipe" && exec 3<>"$DIR/pipe" 4>"$DIR/pipe" 3<&- && "# + script)
    }

    /// The number of rows a JSON list command prints.
    func count(_ arguments: String...) async throws -> Int {
        let run = try await runRaw(["--database", database] + arguments + ["--json"])
        return (try run.json() as? [Any])?.count ?? -1
    }
}

/// A character device like `/dev/full` (every write fails with ENOSPC),
/// made only inside a test's own temporary folder. Making one needs root.
enum FullDevice {
    /// Makes the device at `path`; whether writing to it fails as it should.
    static func make(at path: String) -> Bool {
        #if os(Linux)
            // makedev(1, 7), /dev/full's numbers, in Linux's encoding.
            guard mknod(path, mode_t(S_IFCHR) | 0o666, dev_t(1 << 8 | 7)) == 0 else { return false }
            let descriptor = open(path, O_WRONLY)
            guard descriptor >= 0 else { return false }
            defer { _ = close(descriptor) }
            return write(descriptor, "x", 1) < 0 && errno == ENOSPC
        #else
            return false
        #endif
    }

    /// Whether this machine and user can make one (root, on a file system
    /// that allows devices).
    static let available: Bool = {
        guard let sandbox = try? Sandbox() else { return false }
        return make(at: sandbox.path("full"))
    }()
}

/// The characters that must never reach a terminal raw: C0 controls but the
/// line break, DEL, C1 controls, bidirectional overrides and isolates.
private func rawControls(_ text: String) -> [Unicode.Scalar] {
    text.unicodeScalars.filter { scalar in
        scalar != "\n"
            && (scalar.properties.generalCategory == .control || (0x202A...0x202E).contains(scalar.value)
                || (0x2066...0x2069).contains(scalar.value))
    }
}

/// A name that would clear the screen, set the window title, and reverse
/// the rest of the line, if printed raw.
private let hostileName = "Evil\u{1B}[2J\u{1B}]0;PWNED\u{07}\u{9B}31m\u{202E}desrever\u{7F}"

// MARK: - Tests

@Suite("records: output that fails, raw bytes, hostile text")
struct OutputReliabilityTests {
    // MARK: Standard error

    @Test("An error with standard error closed exits 1, not with a trap")
    func closedStandardError() async throws {
        let run = try await Sandbox().shell(#"exec "$RECORDS" --database "$DB" people show 999 2>&-"#)
        #expect(run.status == 1, "\(run)")
    }

    @Test("A usage error with standard error closed exits 2")
    func closedStandardErrorUsage() async throws {
        let run = try await Sandbox().shell(#"exec "$RECORDS" people frobnicate 2>&-"#)
        #expect(run.status == 2, "\(run)")
    }

    @Test("An error with standard error on a full device exits 1", .enabled(if: FullDevice.available))
    func fullStandardError() async throws {
        let sandbox = try Sandbox()
        #expect(FullDevice.make(at: sandbox.path("full")))
        let run = try await sandbox.shell(#"exec "$RECORDS" --database "$DB" people show 999 2>"$DIR/full""#)
        #expect(run.status == 1, "\(run)")
    }

    @Test("An error with standard error a closed pipe exits 1, not by SIGPIPE")
    func brokenPipeStandardError() async throws {
        let run = try await Sandbox().shellWithClosedPipe(
            #"{ "$RECORDS" --database "$DB" people show 999 2>&4; echo "status $?"; }"#)
        #expect(run.stdout == "status 1\n", "\(run)")
    }

    // MARK: Standard output

    @Test("An ID that cannot be written (standard output closed) is an error saying the coffee was added")
    func closedStandardOutputAfterAdd() async throws {
        let sandbox = try Sandbox()
        let before = try await sandbox.count("coffee", "list")
        let run = try await sandbox.shell(
            #"exec "$RECORDS" --database "$DB" coffee add --name Cortado --price 3.10 >&-"#)
        #expect(run.status == 1, "\(run)")
        let id = before + 1
        #expect(
            run.stderr
                == "records: error: coffee \(id) was added, but its ID could not be written to standard output: "
                + "Bad file descriptor\n")
        #expect(try await sandbox.run("coffee", "show", String(id)).stdout.contains("Cortado"))
    }

    @Test("An ID written to a full device is an error saying the coffee was added", .enabled(if: FullDevice.available))
    func fullStandardOutputAfterAdd() async throws {
        let sandbox = try Sandbox()
        #expect(FullDevice.make(at: sandbox.path("full")))
        let before = try await sandbox.count("coffee", "list")
        let run = try await sandbox.shell(
            #"exec "$RECORDS" --database "$DB" coffee add --name Cortado --price 3.10 >"$DIR/full""#)
        #expect(run.status == 1, "\(run)")
        #expect(
            run.stderr
                == "records: error: coffee \(before + 1) was added, but its ID could not be written to standard "
                + "output: No space left on device\n")
        #expect(try await sandbox.count("coffee", "list") == before + 1)
    }

    @Test("A listing written to a full device exits 1 with the reason", .enabled(if: FullDevice.available))
    func fullStandardOutputListing() async throws {
        let sandbox = try Sandbox()
        #expect(FullDevice.make(at: sandbox.path("full")))
        let run = try await sandbox.shell(#"exec "$RECORDS" --database "$DB" people list >"$DIR/full""#)
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr == "records: error: cannot write to standard output: No space left on device\n")
    }

    @Test("Help written to a closed standard output exits 1")
    func closedStandardOutputHelp() async throws {
        let run = try await Sandbox().shell(#"exec "$RECORDS" --help >&-"#)
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr == "records: error: cannot write to standard output: Bad file descriptor\n")
    }

    @Test("Edits and deletes whose confirmation is lost still say what they did")
    func closedStandardOutputAfterChanges() async throws {
        let sandbox = try Sandbox()
        let edit = try await sandbox.shell(#"exec "$RECORDS" --database "$DB" people edit 1 --age 37 >&-"#)
        #expect(edit.status == 1)
        #expect(edit.stderr.hasPrefix("records: error: person 1 was updated, but the confirmation could not be"))
        let delete = try await sandbox.shell(#"exec "$RECORDS" --database "$DB" contacts delete 1 --yes >&-"#)
        #expect(delete.status == 1)
        #expect(delete.stderr.hasPrefix("records: error: contact 1 was deleted, but the confirmation could not be"))
        #expect(try await sandbox.run("contacts", "show", "1").status == 1)
    }

    @Test("A listing into a closed pipe ends quietly with status 141, not by SIGPIPE")
    func brokenPipeListing() async throws {
        let run = try await Sandbox().shellWithClosedPipe(#"exec "$RECORDS" --database "$DB" people list >&4"#)
        // The shell execs records: ended by SIGPIPE, it would report signal
        // 13; 141 is its own exit status.
        #expect(run.status == 141, "\(run)")
        #expect(run.stderr.isEmpty, "\(run)")
    }

    @Test("An add into a closed pipe exits 141 and says the coffee was added")
    func brokenPipeAdd() async throws {
        let sandbox = try Sandbox()
        let before = try await sandbox.count("coffee", "list")
        let run = try await sandbox.shellWithClosedPipe(
            #"exec "$RECORDS" --database "$DB" coffee add --name Cortado --price 3.10 >&4"#)
        #expect(run.status == 141, "\(run)")
        #expect(
            run.stderr
                == "records: error: coffee \(before + 1) was added, but its ID could not be written to standard "
                + "output: Broken pipe\n")
    }

    @Test("A picture copied into a closed pipe ends quietly with status 141")
    func brokenPipePicture() async throws {
        let run = try await Sandbox().shellWithClosedPipe(
            #"exec "$RECORDS" --database "$DB" coffee picture get 1 - >&4"#)
        #expect(run.status == 141, "\(run)")
        #expect(run.stderr.isEmpty, "\(run)")
    }

    // MARK: Arguments and environment that are not UTF-8

    @Test("An option value that is not UTF-8 is refused with status 2, naming its position; nothing is added")
    func invalidUTF8OptionValue() async throws {
        let sandbox = try Sandbox()
        let before = try await sandbox.count("people", "list")
        let run = try await sandbox.shell(
            #"exec "$RECORDS" --database "$DB" people add --first "$(printf 'Ad\377a')" --last X --age 3"#)
        #expect(run.status == 2, "\(run)")
        #expect(
            run.stderr.hasPrefix(
                "records: error: argument 6 (after '--first') is not valid UTF-8 text; records takes only UTF-8 "
                    + "arguments\n"))
        #expect(!run.stderr.contains("\u{FFFD}"))
        #expect(try await sandbox.count("people", "list") == before)
    }

    @Test("An --option=VALUE that is not UTF-8 names the option")
    func invalidUTF8InlineValue() async throws {
        let run = try await Sandbox().shell(
            #"exec "$RECORDS" --database "$DB" coffee add --name="$(printf '\377')" --price 1"#)
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.hasPrefix("records: error: argument 5 (the value of '--name') is not valid UTF-8 text"))
    }

    @Test("A positional argument that is not UTF-8 is refused")
    func invalidUTF8Positional() async throws {
        let run = try await Sandbox().shell(#"exec "$RECORDS" --database "$DB" people search "$(printf 'l\351')""#)
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.hasPrefix("records: error: argument 5 is not valid UTF-8 text"))
    }

    @Test("A --database path that is not UTF-8 is refused and no file is made")
    func invalidUTF8DatabaseOption() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.shell(#"exec "$RECORDS" --database "$DIR/$(printf '\377').sqlite" people list"#)
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.hasPrefix("records: error: argument 2 (after '--database') is not valid UTF-8 text"))
        #expect(
            try !FileManager.default.contentsOfDirectory(atPath: sandbox.root.path).contains { $0.hasSuffix(".sqlite") }
        )
    }

    @Test("RECORDS_DATABASE that is not UTF-8 is refused and no file is made")
    func invalidUTF8DatabaseVariable() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.shell(
            #"RECORDS_DATABASE="$DIR/$(printf '\377').sqlite" exec "$RECORDS" people list"#)
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.hasPrefix("records: error: the environment variable RECORDS_DATABASE is not valid UTF-8"))
        #expect(
            try !FileManager.default.contentsOfDirectory(atPath: sandbox.root.path).contains { $0.hasSuffix(".sqlite") }
        )
        #expect(!FileManager.default.fileExists(atPath: sandbox.defaultDatabase))
    }

    @Test("XDG_DATA_HOME that is not UTF-8 is refused when it would choose the database")
    func invalidUTF8DataHome() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.shell(#"XDG_DATA_HOME="$DIR/$(printf '\377')" exec "$RECORDS" people list"#)
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.hasPrefix("records: error: the environment variable XDG_DATA_HOME is not valid UTF-8"))
        // Not consulted when --database chooses the file.
        let chosen = try await sandbox.shell(
            #"XDG_DATA_HOME="$DIR/$(printf '\377')" exec "$RECORDS" --database "$DB" people list"#)
        #expect(chosen.status == 0, "\(chosen)")
    }

    // MARK: Hostile text

    @Test("A hostile coffee name is escaped in tables, fields and messages")
    func hostileNameInText() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.run("coffee", "list").status == 0)
        let db = try Database(path: sandbox.database)
        try db.execute("UPDATE coffee SET coffeeName = ? WHERE coffeeID = 2", arguments: [hostileName])
        for arguments in [["coffee", "list"], ["coffee", "show", "2"], ["coffee", "edit", "2", "--price", "9"]] {
            let run = try await sandbox.runRaw(["--database", sandbox.database] + arguments)
            #expect(run.status == 0, "\(arguments): \(run)")
            #expect(rawControls(run.stdout + run.stderr).isEmpty, "\(arguments): \(run)")
            #expect(run.stdout.contains(#"Evil\u{1B}[2J"#), "\(arguments): \(run)")
        }
    }

    @Test("A hostile name is escaped in JSON, as JSON escapes that read back as the name")
    func hostileNameInJSON() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.run("coffee", "list").status == 0)
        let db = try Database(path: sandbox.database)
        try db.execute("UPDATE coffee SET coffeeName = ? WHERE coffeeID = 2", arguments: [hostileName])
        let run = try await sandbox.run("coffee", "show", "2", "--json")
        #expect(run.status == 0, "\(run)")
        #expect(rawControls(run.stdout).isEmpty, "\(run)")
        let object = try #require(try run.json() as? [String: Any])
        #expect(object["name"] as? String == hostileName)
    }

    @Test("A hostile price never reaches the terminal raw")
    func hostilePrice() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.run("coffee", "list").status == 0)
        let db = try Database(path: sandbox.database)
        try db.execute("UPDATE coffee SET priceMicros = ? WHERE coffeeID = 1", arguments: ["\u{1B}]0;PWNED\u{07}"])
        for arguments in [["coffee", "show", "1"], ["coffee", "show", "1", "--json"]] {
            let run = try await sandbox.runRaw(["--database", sandbox.database] + arguments)
            #expect(run.status != 0, "\(arguments): \(run)")
            #expect(rawControls(run.stdout + run.stderr).isEmpty, "\(arguments): \(run)")
        }
    }

    @Test("A hostile column name in SQLite's error message is escaped; nothing is added")
    func hostileColumnName() async throws {
        let sandbox = try Sandbox()
        let before = try await sandbox.count("people", "list")
        let db = try Database(path: sandbox.database)
        try db.execute(
            """
            CREATE TRIGGER hostile AFTER INSERT ON peopleInfo BEGIN
                UPDATE peopleInfo SET "x\u{1B}[2J\u{9B}\u{202E}" = 1;
            END
            """)
        let run = try await sandbox.run("people", "add", "--first", "Ada", "--last", "Lovelace", "--age", "36")
        #expect(run.status == 1, "\(run)")
        #expect(rawControls(run.stdout + run.stderr).isEmpty, "\(run)")
        #expect(run.stderr.contains(#"no such column: x\u{1B}[2J\u{9B}\u{202E}"#), "\(run)")
        try db.execute("DROP TRIGGER hostile")
        #expect(try await sandbox.count("people", "list") == before)
    }

    @Test("Search text with control characters is escaped in the no-match message")
    func hostileSearchText() async throws {
        let run = try await Sandbox().run("people", "search", "\u{1B}[2Jnobody")
        #expect(run.status == 0, "\(run)")
        #expect(rawControls(run.stdout + run.stderr).isEmpty, "\(run)")
    }

    // MARK: Exit statuses and database messages

    @Test("A bad price and a bad date of birth are invalid input: status 2")
    func invalidInputStatus() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.run("coffee", "add", "--name", "X", "--price", "3,50").status == 2)
        #expect(try await sandbox.run("coffee", "edit", "1", "--price", "-1").status == 2)
        #expect(try await sandbox.run("people", "add", "--first", "A", "--last", "B", "--age", "old").status == 2)
        let users = try await sandbox.run(
            input: "correct horse\ncorrect horse\n", "users", "register", "--first", "Ada", "--last", "Lovelace",
            "--email", "ada@example.com", "--mobile", "9876543210", "--state", "Surrey", "--city", "London",
            "--pincode", "110001", "--address", "12 St James's Sq", "--gender", "female", "--dob", "1990-02-30",
            "--image", "ada.png", "--password-stdin")
        #expect(users.status == 2, "\(users)")
        #expect(users.stderr.contains("Date of birth must be a real date"))
    }

    @Test("A database locked by another program is named in the message, with status 1")
    func lockedDatabase() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.run("people", "list").status == 0)
        let db = try Database(path: sandbox.database)
        try db.execute("BEGIN EXCLUSIVE")
        defer { try? db.execute("ROLLBACK") }
        // A write: in WAL mode reads go on beside another program's write.
        let run = try await sandbox.run("people", "add", "--first", "A", "--last", "B", "--age", "1")
        #expect(run.status == 1, "\(run)")
        #expect(
            run.stderr
                == "records: error: the database \(sandbox.database) is locked by another program (waited 60 s); "
                + "try again once it is done\n")
    }

    @Test("A damaged database is named in the message, with status 1")
    func damagedDatabase() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.run("people", "list").status == 0)
        var rootPage = 0
        var pageSize = 0
        do {
            let db = try Database(path: sandbox.database)
            rootPage = try #require(
                try db.fetchOne(Int.self, "SELECT rootpage FROM sqlite_master WHERE name = 'peopleInfo'"))
            pageSize = try #require(try db.fetchOne(Int.self, "PRAGMA page_size"))
        }
        // The table's first page: a leaf-table header whose cell count and
        // offsets point past the page.
        let handle = try #require(FileHandle(forUpdatingAtPath: sandbox.database))
        try handle.seek(toOffset: UInt64((rootPage - 1) * pageSize))
        try handle.write(contentsOf: Data([0x0D, 0xFF, 0xFF, 0xFF, 0xFF]) + Data(repeating: 0x41, count: 4000))
        try handle.close()
        let run = try await sandbox.run("people", "list")
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.hasPrefix("records: error: the database \(sandbox.database) is damaged (malformed): "))
    }
}
