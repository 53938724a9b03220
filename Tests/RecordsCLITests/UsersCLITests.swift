import Foundation
import SQLiteStore
import Testing

/// The profile options of a valid registration, with `changes` replacing
/// or adding some.
private func registration(email: String = "ada@example.com", _ changes: [String: String] = [:]) -> [String] {
    var options = [
        "first": "Ada", "last": "Lovelace", "email": email, "mobile": "9876543210", "state": "Surrey",
        "city": "London", "pincode": "110001", "address": "12 St James's Sq", "gender": "female",
        "dob": "1990-12-10", "image": "ada.png",
    ]
    options.merge(changes) { $1 }
    return ["users", "register"] + options.keys.sorted().flatMap { ["--\($0)", options[$0] ?? ""] }
}

extension Sandbox {
    /// Registers a user with `--password-stdin`.
    @discardableResult
    func register(
        email: String = "ada@example.com", password: String = "correct horse", _ changes: [String: String] = [:],
        extra: [String] = []
    ) async throws -> RecordsRun {
        try await runRaw(
            ["--database", database] + registration(email: email, changes) + ["--password-stdin"] + extra,
            input: Data("\(password)\n\(password)\n".utf8))
    }

    /// The rows of `User_Master`, read behind the app's back.
    func userRows() throws -> [Row] {
        let db = try Database(path: database)
        defer { db.close() }
        return try db.fetchAll("SELECT * FROM User_Master ORDER BY UID")
    }
}

/// Runs `records users ...` end to end; passwords always come from
/// standard input.
@Suite("records users")
struct UsersCLITests {
    @Test("Help lists the users commands with their options; no option takes a password")
    func help() async throws {
        let sandbox = try Sandbox()
        let main = try await sandbox.runRaw(["--help"])
        for command in ["users register", "users login", "users list", "users show", "users edit", "users delete"] {
            #expect(main.stdout.contains(command), "missing \(command)")
        }
        let register = try await sandbox.runRaw(["users", "register", "--help"])
        #expect(register.status == 0)
        for option in [
            "--first NAME", "--last NAME", "--email EMAIL", "--mobile NUMBER", "--state STATE", "--city CITY",
            "--pincode CODE", "--address ADDRESS", "--gender unspecified|male|female|other", "--dob YYYY-MM-DD",
            "--image NAME", "--password-stdin",
        ] {
            #expect(register.stdout.contains(option), "missing \(option)")
        }
        let password = try await sandbox.runRaw(registration() + ["--password", "hunter22"])
        #expect(password.status == 2)
        #expect(password.stderr.contains("unknown option '--password'; did you mean '--password-stdin'?"))
    }

    @Test("register with --password-stdin saves the user with a hashed password")
    func register() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.register(password: "correct horse")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == "Registered “Ada Lovelace” (ID 1, ada@example.com).\n")
        #expect(run.stderr.isEmpty)
        let rows = try sandbox.userRows()
        #expect(rows.count == 1)
        let hash: String = try rows[0]["USER_PASS"]
        #expect(hash.hasPrefix("$scrypt$ln=17,r=8,p=1$"))
        #expect(!hash.contains("correct horse"))
        #expect(!rows[0].hasColumn("USER_CPASS"))
    }

    @Test("Two users with the same password are stored with different hashes")
    func differentHashes() async throws {
        let sandbox = try Sandbox()
        try await sandbox.register(email: "ada@example.com", password: "same password")
        try await sandbox.register(email: "bob@example.com", password: "same password")
        let hashes = try sandbox.userRows().map { try $0["USER_PASS"] as String }
        #expect(hashes.count == 2)
        #expect(hashes[0] != hashes[1])
    }

    @Test("Lines may end in CRLF, and the last needs no newline")
    func lineEndings() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.runRaw(
            ["--database", sandbox.database] + registration() + ["--password-stdin"],
            input: Data("correct horse\r\ncorrect horse".utf8))
        #expect(run.status == 0, "\(run)")
        let login = try await sandbox.run(
            input: "correct horse", "users", "login", "ada@example.com", "--password-stdin")
        #expect(login.status == 0, "\(login)")
    }

    @Test("Every invalid field gets its message; nothing is written, not even a database file")
    func invalidFields() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.runRaw(
            ["--database", sandbox.database]
                + registration(
                    email: "ada@",
                    ["first": "", "mobile": "12ab", "pincode": "1", "gender": "robot", "dob": "2999-02-30"])
                + ["--password-stdin"],
            input: Data("short\nother\n".utf8))
        #expect(run.status == 2)
        #expect(
            run.stderr
                == "records: error: 8 values are not valid:\n"
                + "  - First name is required.\n"
                + "  - Email must be a well-formed address such as name@example.com.\n"
                + "  - Mobile must be 7 to 15 digits, optionally after a leading +.\n"
                + "  - Postal code must be 3 to 10 digits.\n"
                + "  - Gender must be one of unspecified, male, female, other.\n"
                + "  - Date of birth must be a real date written YYYY-MM-DD, such as 1990-12-31.\n"
                + "  - Password must be at least 8 characters (it has 5).\n"
                + "  - Password again does not match the password.\n")
        #expect(!FileManager.default.fileExists(atPath: sandbox.database))
    }

    @Test("register needs only the names and the email; the rest is optional and shown as not given")
    func minimalRegistration() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.runRaw(
            [
                "--database", sandbox.database, "users", "register", "--first", "Grace", "--last", "Hopper", "--email",
                "grace@example.com", "--password-stdin",
            ], input: Data("correct horse\ncorrect horse\n".utf8))
        #expect(run.status == 0, "\(run)")
        let shown = try #require(try await sandbox.run("users", "show", "1", "--json").json() as? [String: Any])
        #expect(shown["mobile"] as? String == "" && shown["dateOfBirth"] as? String == "")
        #expect(shown["gender"] as? String == "unspecified")
        // An ISO date is accepted and printed as it was given.
        let dated = try await sandbox.run(
            input: "correct horse\n", "users", "edit", "1", "--dob", "1906-12-09", "--password-stdin")
        #expect(dated.status == 0, "\(dated)")
        #expect(try await sandbox.run("users", "show", "1").stdout.contains("1906-12-09"))
        // A blank value clears an optional field.
        let cleared = try await sandbox.run(
            input: "correct horse\n", "users", "edit", "1", "--dob", "", "--password-stdin")
        #expect(cleared.status == 0, "\(cleared)")
        #expect(try sandbox.userRows()[0]["USER_DOB"] as String == "")
    }

    @Test("register without a name or email says which option is missing, and writes nothing")
    func missingRequiredOption() async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.runRaw(
            ["--database", sandbox.database, "users", "register", "--first", "Grace", "--password-stdin"],
            input: Data("correct horse\ncorrect horse\n".utf8))
        #expect(run.status == 2)
        #expect(run.stderr.contains("--last") && run.stderr.contains("--email"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.database))
    }

    @Test("A date not written YYYY-MM-DD is refused by its label", arguments: ["10/12/1990", "1990-12-1", "19901210"])
    func nonISODate(_ date: String) async throws {
        let sandbox = try Sandbox()
        let run = try await sandbox.register(["dob": date])
        #expect(run.status == 2)
        #expect(
            run.stderr == "records: error: Date of birth must be a real date written YYYY-MM-DD, such as 1990-12-31.\n")
        #expect(!FileManager.default.fileExists(atPath: sandbox.database))
    }

    @Test("A mismatched confirmation or a control character is refused")
    func passwordRules() async throws {
        let sandbox = try Sandbox()
        let mismatch = try await sandbox.runRaw(
            ["--database", sandbox.database] + registration() + ["--password-stdin"],
            input: Data("correct horse\ncorrect horsE\n".utf8))
        #expect(mismatch.status == 2)
        #expect(mismatch.stderr == "records: error: Password again does not match the password.\n")
        let tab = try await sandbox.register(password: "correct\thorse")
        #expect(tab.status == 2)
        #expect(tab.stderr.contains("Password must not contain control characters"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.database))
    }

    @Test("Too few lines, bad UTF-8 or no terminal: a usage error, nothing written")
    func passwordInputErrors() async throws {
        let sandbox = try Sandbox()
        let one = try await sandbox.runRaw(
            ["--database", sandbox.database] + registration() + ["--password-stdin"],
            input: Data("correct horse\n".utf8))
        #expect(one.status == 2)
        #expect(
            one.stderr.hasPrefix(
                "records: error: --password-stdin needs 2 lines on standard input (the password and the password confirmation); it had 1"
            ))
        let none = try await sandbox.runRaw(
            ["--database", sandbox.database] + registration() + ["--password-stdin"], input: Data())
        #expect(none.status == 2)
        #expect(none.stderr.contains("it had 0"))
        // Standard input is /dev/null here: there is no terminal to ask on.
        let noTerminal = try await sandbox.runRaw(["--database", sandbox.database] + registration())
        #expect(noTerminal.status == 2)
        #expect(noTerminal.stderr.contains("standard input is not a terminal to type the password on"))
        let login = try await sandbox.run("users", "login", "ada@example.com")
        #expect(login.status == 2)
        #expect(login.stderr.contains("--password-stdin"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.database))

        try await sandbox.register()
        let bad = try await sandbox.runRaw(
            ["--database", sandbox.database, "users", "login", "ada@example.com", "--password-stdin"],
            input: Data([0x63, 0x6F, 0x72, 0xE9, 0x0A]))
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("the password on standard input is not valid UTF-8"))
    }

    @Test("An email taken in any case is refused")
    func duplicateEmail() async throws {
        let sandbox = try Sandbox()
        try await sandbox.register(email: "Ada@Example.com")
        let run = try await sandbox.register(email: "ADA@EXAMPLE.COM")
        #expect(run.status == 2)
        #expect(run.stderr == "records: error: Email is already registered.\n")
        #expect(try sandbox.userRows().count == 1)
    }

    @Test("login: 0 for the right password; the same message and status for a wrong one and an unknown email")
    func login() async throws {
        let sandbox = try Sandbox()
        try await sandbox.register(email: "ada@example.com", password: "correct horse")
        let ok = try await sandbox.run(
            input: "correct horse\n", "users", "login", "ADA@example.com", "--password-stdin")
        #expect(ok.status == 0, "\(ok)")
        #expect(ok.stdout == "Logged in as “Ada Lovelace” (ID 1, ada@example.com).\n")
        let json = try await sandbox.run(
            input: "correct horse\n", "users", "login", "ada@example.com", "--password-stdin", "--json")
        #expect((try json.json() as? [String: Any])?["email"] as? String == "ada@example.com")

        let wrong = try await sandbox.run(
            input: "wrong horse\n", "users", "login", "ada@example.com", "--password-stdin")
        let unknown = try await sandbox.run(
            input: "correct horse\n", "users", "login", "nobody@example.com", "--password-stdin")
        #expect(wrong.status == 1)
        #expect(wrong.stderr == "records: error: invalid email or password\n")
        #expect(unknown.status == wrong.status)
        #expect(unknown.stderr == wrong.stderr)
        #expect(unknown.stdout.isEmpty && wrong.stdout.isEmpty)
    }

    @Test("list, show and --json show the profile, never the hash")
    func listAndShow() async throws {
        let sandbox = try Sandbox()
        try await sandbox.register(email: "ada@example.com")
        try await sandbox.register(
            email: "grace@example.com", ["first": "Grace", "last": "Hopper", "city": "New York"])
        let list = try await sandbox.run("users", "list")
        #expect(list.status == 0)
        #expect(
            list.lines == [
                "ID  NAME          EMAIL              MOBILE      CITY",
                " 2  Grace Hopper  grace@example.com  9876543210  New York",
                " 1  Ada Lovelace  ada@example.com    9876543210  London",
            ])
        let show = try await sandbox.run("users", "show", "1")
        #expect(show.lines.contains("Email:          ada@example.com"))
        #expect(show.lines.contains("Date of birth:  1990-12-10"))
        let json = try #require(
            try await sandbox.run("users", "list", "--json", "--sort", "newest").json() as? [[String: Any]])
        #expect(json.map { $0["id"] as? Int } == [2, 1])
        #expect(
            Set(json[0].keys) == [
                "id", "firstName", "lastName", "email", "mobile", "state", "city", "pincode", "address", "gender",
                "dateOfBirth", "imageName",
            ])
        let all = try await sandbox.run("users", "list", "--json").stdout + show.stdout
        #expect(!all.contains("scrypt"))
        let missing = try await sandbox.run("users", "show", "9")
        #expect(missing.status == 1)
        #expect(missing.stderr == "records: error: no user with ID 9\n")
    }

    @Test("edit changes profile fields; a bad field or a taken email changes nothing")
    func editProfile() async throws {
        let sandbox = try Sandbox()
        try await sandbox.register(email: "ada@example.com")
        try await sandbox.register(email: "bob@example.com")
        let edit = try await sandbox.run(
            input: "correct horse\n", "users", "edit", "1", "--city", "Cambridge", "--mobile", "+441223000000",
            "--password-stdin")
        #expect(edit.status == 0, "\(edit)")
        #expect(edit.stdout == "Updated “Ada Lovelace” (ID 1, ada@example.com).\n")
        let shown = try #require(try await sandbox.run("users", "show", "1", "--json").json() as? [String: Any])
        #expect(shown["city"] as? String == "Cambridge")
        #expect(shown["mobile"] as? String == "+441223000000")

        let bad = try await sandbox.run(
            input: "correct horse\n", "users", "edit", "1", "--city", "Oxford", "--dob", "2999-01-01",
            "--password-stdin")
        #expect(bad.status == 2)
        #expect(bad.stderr == "records: error: Date of birth must be in the past.\n")
        let taken = try await sandbox.run(
            input: "correct horse\n", "users", "edit", "2", "--email", "ADA@example.com", "--password-stdin")
        #expect(taken.status == 2)
        #expect(taken.stderr == "records: error: Email is already registered.\n")
        let nothing = try await sandbox.run("users", "edit", "1")
        #expect(nothing.status == 2)
        #expect(nothing.stderr.contains("nothing to change"))
        let wrong = try await sandbox.run(input: "x\n", "users", "edit", "1", "--city", "Oxford", "--password-stdin")
        #expect(wrong.status == 1)
        #expect(wrong.stderr == "records: error: the password is wrong\n")
        let rows = try sandbox.userRows()
        #expect(try rows[0]["USER_CITY"] as String == "Cambridge")
        #expect(try rows[1]["USER_EMAIL"] as String == "bob@example.com")
    }

    @Test("edit --change-password needs the current password; a wrong one changes nothing at all")
    func changePassword() async throws {
        let sandbox = try Sandbox()
        try await sandbox.register(password: "correct horse")
        let wrong = try await sandbox.run(
            input: "wrong horse\nbattery staple\nbattery staple\n",
            "users", "edit", "1", "--change-password", "--password-stdin", "--city", "Oxford")
        #expect(wrong.status == 1)
        #expect(wrong.stderr == "records: error: the current password is wrong\n")
        #expect(try sandbox.userRows()[0]["USER_CITY"] as String == "London")

        let short = try await sandbox.run(
            input: "correct horse\nshort\nshort\n", "users", "edit", "1", "--change-password", "--password-stdin")
        #expect(short.status == 2)
        #expect(short.stderr.contains("Password must be at least 8 characters"))

        let two = try await sandbox.run(
            input: "correct horse\nbattery staple\n", "users", "edit", "1", "--change-password", "--password-stdin")
        #expect(two.status == 2)
        #expect(two.stderr.contains("needs 3 lines"))

        let ok = try await sandbox.run(
            input: "correct horse\nbattery staple\nbattery staple\n",
            "users", "edit", "1", "--change-password", "--password-stdin", "--city", "Oxford")
        #expect(ok.status == 0, "\(ok)")
        #expect(try sandbox.userRows()[0]["USER_CITY"] as String == "Oxford")
        let newLogin = try await sandbox.run(
            input: "battery staple\n", "users", "login", "ada@example.com", "--password-stdin")
        #expect(newLogin.status == 0)
        let oldLogin = try await sandbox.run(
            input: "correct horse\n", "users", "login", "ada@example.com", "--password-stdin")
        #expect(oldLogin.status == 1)
    }

    @Test("delete removes a user; an unknown ID is an error")
    func delete() async throws {
        let sandbox = try Sandbox()
        try await sandbox.register()
        let run = try await sandbox.run(input: "correct horse\n", "users", "delete", "1", "--yes", "--password-stdin")
        #expect(run.status == 0)
        #expect(run.stdout == "Deleted “Ada Lovelace” (ID 1, ada@example.com).\n")
        #expect(try sandbox.userRows().isEmpty)
        let again = try await sandbox.run(input: "correct horse\n", "users", "delete", "1", "--yes", "--password-stdin")
        #expect(again.status == 1)
        #expect(again.stderr == "records: error: no user with ID 1\n")
        let list = try await sandbox.run("users", "list")
        #expect(list.stdout.hasPrefix("No users yet."))
    }

    @Test("A database made by the seed app is imported on first use; its users log in with their old passwords")
    func seedDatabase() async throws {
        let sandbox = try Sandbox()
        do {
            let db = try Database(path: sandbox.database)
            try db.execute(
                """
                CREATE TABLE IF NOT EXISTS User_Master (UID INTEGER PRIMARY KEY AUTOINCREMENT,USER_IMAGENAME TEXT NOT NULL, \
                USER_FNAME VARCHAR(30) NOT NULL,USER_LNAME VARCHAR(30) NOT NULL,USER_EMAIL VARCHAR(255) NOT NULL,\
                USER_PASS VARCHAR(200) NOT NULL,USER_CPASS VARCHAR(200) NOT NULL,USER_MOBILE INTEGER NOT NULL,\
                USER_STATE TEXT NOT NULL,USER_CITY TEXT NOT NULL,USER_PINCODE INTEGER NOT NULL,USER_ADDRESS TEXT NOT NULL,\
                USER_GENDER INT(1) NOT NULL,USER_DOB DATE NOT NULL);
                INSERT INTO User_Master (USER_IMAGENAME,USER_FNAME,USER_LNAME,USER_EMAIL,USER_PASS,USER_CPASS,USER_MOBILE,\
                USER_STATE,USER_CITY,USER_PINCODE,USER_ADDRESS,USER_GENDER,USER_DOB)VALUES ("img.png","Asha","Rao",\
                "asha@example.in","seed-pass-1","seed-pass-1","9876543210","Maharashtra","Pune","411001","MG Road","2",\
                "10/12/1990");
                """)
            db.close()
        }
        let list = try await sandbox.run("users", "list", "--json")
        #expect(list.status == 0, "\(list)")
        let users = try #require(try list.json() as? [[String: Any]])
        #expect(users.first?["email"] as? String == "asha@example.in")
        #expect(users.first?["mobile"] as? String == "9876543210")
        #expect(users.first?["dateOfBirth"] as? String == "10/12/1990")
        let rows = try sandbox.userRows()
        #expect(!rows[0].hasColumn("USER_CPASS"))
        #expect(try (rows[0]["USER_PASS"] as String).hasPrefix("$scrypt$"))
        let login = try await sandbox.run(
            input: "seed-pass-1\n", "users", "login", "asha@example.in", "--password-stdin")
        #expect(login.status == 0, "\(login)")
    }
}
