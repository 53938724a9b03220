import Foundation
import SQLiteStore
import Testing

/// End to end: another application's database is
/// never taken over without `--adopt`; one odd row or table blocks nothing.
@Suite("records: foreign databases and unreadable rows")
struct ReliabilityCLITests {
    /// Another application's database, alone in a directory of its own.
    func ledger(_ sandbox: Sandbox, journalMode: String = "delete") throws -> String {
        let directory = sandbox.path("ledger")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/ledger.db"
        let db = try Database(path: path)
        try db.execute("PRAGMA journal_mode = \(unsafeLiteral: journalMode)")
        try db.execute(
            """
            CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, balance INTEGER);
            INSERT INTO accounts (owner, balance) VALUES ('ada', 100), ('alan', 250);
            """)
        db.close()
        return path
    }

    /// Each file of the directory holding `path`, with its bytes.
    func snapshot(besides path: String) throws -> [String: Data] {
        let directory = (path as NSString).deletingLastPathComponent
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        }
        return files
    }

    /// Changes the sandbox's database behind the app's back (after a first
    /// run has installed the sample).
    func tamper(_ sandbox: Sandbox, _ sql: String) async throws {
        #expect(try await sandbox.run("people", "list").status == 0)
        let db = try Database(path: sandbox.database)
        try db.execute(sql: sql)
        db.close()
    }

    // MARK: - Another application's database

    @Test(
        "--database on another application's file is refused with status 1, the file and its directory unchanged",
        arguments: ["delete", "wal"])
    func foreignRefused(journalMode: String) async throws {
        let sandbox = try Sandbox()
        let path = try ledger(sandbox, journalMode: journalMode)
        let before = try snapshot(besides: path)
        for command in [["people", "list"], ["coffee", "add", "--name", "X", "--price", "1"], ["users", "list"]] {
            let run = try await sandbox.runRaw(["--database", path] + command)
            #expect(run.status == 1, "\(run)")
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.hasPrefix("records: error: \(path) is another application's SQLite database"))
            #expect(run.stderr.contains("table accounts"))
            #expect(run.stderr.contains("Nothing was changed. To add records' tables to it anyway, give --adopt"))
            #expect(try snapshot(besides: path) == before)
        }
        let fromEnvironment = try await sandbox.runRaw(["people", "list"], environment: ["RECORDS_DATABASE": path])
        #expect(fromEnvironment.status == 1)
        #expect(try snapshot(besides: path) == before)
    }

    @Test("--adopt adds the apps' tables beside the other application's; afterwards it opens without the option")
    func adopt() async throws {
        let sandbox = try Sandbox()
        let path = try ledger(sandbox)
        let added = try await sandbox.runRaw(
            ["people", "add", "--first", "Ada", "--last", "Lovelace", "--age", "36", "--adopt", "--database", path])
        #expect(added.status == 0, "\(added)")
        let list = try await sandbox.runRaw(["--database", path, "people", "list", "--json"])
        #expect(list.status == 0, "\(list)")
        #expect((try list.json() as? [[String: Any]])?.map { $0["firstName"] as? String } == ["Ada"])
        let db = try Database(path: path)
        #expect(try db.fetchAll(Int.self, "SELECT balance FROM accounts ORDER BY id") == [100, 250])
    }

    @Test("--help lists --adopt among the global options")
    func help() async throws {
        let run = try await Sandbox().runRaw(["--help"])
        #expect(run.stdout.contains("--adopt"))
        #expect(run.stdout.contains("another application's SQLite file"))
    }

    // MARK: - Rows and tables the app cannot read

    @Test("A person with text in the age: list shows the others, names the row on stderr, exits 1; edit mends it")
    func peopleOddRow() async throws {
        let sandbox = try Sandbox()
        try await tamper(
            sandbox, "INSERT INTO peopleInfo (peopleInfoID, firstname, lastname, age) VALUES (7, 'Odd', 'Row', 'abc')")
        let list = try await sandbox.run("people", "list")
        #expect(list.status == 1)
        #expect(list.stdout.contains("Lovelace") && list.stdout.contains("Turing") && !list.stdout.contains("Odd"))
        #expect(
            list.stderr == """
                records: warning: person 7 cannot be read: its age (peopleInfo.age) is the text 'abc', not a whole \
                number; give it a new value, or delete the person
                records: error: 1 of 7 people could not be read (see above); the others were listed

                """)
        let json = try await sandbox.run("people", "list", "--json")
        #expect(json.status == 1)
        #expect((try json.json() as? [Any])?.count == 6)
        let search = try await sandbox.run("people", "search", "o")
        #expect(search.status == 1 && search.stderr.contains("person 7 cannot be read"))
        let show = try await sandbox.run("people", "show", "7")
        #expect(show.status == 1)
        #expect(show.stderr.hasPrefix("records: error: person 7 cannot be read: its age (peopleInfo.age)"))
        let edit = try await sandbox.run("people", "edit", "7", "--age", "40")
        #expect(edit.status == 0, "\(edit)")
        #expect(try await sandbox.run("people", "list").status == 0)
    }

    @Test("A contact with a blob name: list and find name the row; delete removes it")
    func contactsOddRow() async throws {
        let sandbox = try Sandbox()
        try await tamper(
            sandbox, "INSERT INTO CONTACTS (ID, NAME, ADDRESS, CONTACT) VALUES (9, CAST('Jane Doe' AS BLOB), 'a', 'c')")
        let list = try await sandbox.run("contacts", "list")
        #expect(list.status == 1)
        #expect(list.stdout.contains("Marco Rossi"))
        #expect(
            list.stderr.contains("contact 9 cannot be read: its name (CONTACTS.NAME) is a blob of 8 bytes, not text"))
        let find = try await sandbox.run("contacts", "find", "jane", "doe")
        #expect(find.status == 1)
        #expect(find.stdout.hasPrefix("Match found\n"))
        #expect(find.stderr.contains("contact 9 cannot be read"))
        #expect(try await sandbox.run("contacts", "delete", "9", "--yes").status == 0)
        #expect(try await sandbox.run("contacts", "list").status == 0)
    }

    @Test("A coffee price no decimal holds: show flags it and exits 1; the list and the other apps work; edit mends it")
    func coffeeOddPrice() async throws {
        let sandbox = try Sandbox()
        try await tamper(sandbox, "UPDATE coffee SET priceMicros = '1e+300' WHERE coffeeID = 2")
        #expect(try await sandbox.run("coffee", "list").status == 0)
        let show = try await sandbox.run("coffee", "show", "2")
        #expect(show.status == 1)
        #expect(show.stdout.contains("Name:     Cappuccino\nPrice:    (cannot be read)\n"))
        #expect(
            show.stderr == """
                records: error: coffee 2 has stored values records cannot read, kept as they are: its price \
                (coffee.priceMicros) is the text '1e+300', not a price in millionths (a whole number); give a new \
                one with records coffee edit 2

                """)
        let json = try #require(try await sandbox.run("coffee", "show", "2", "--json").json() as? [String: Any])
        #expect(json["unreadable"] as? [String] == ["price"])
        let edit = try await sandbox.run("coffee", "edit", "2", "--price", "3.20")
        #expect(edit.status == 0, "\(edit)")
        #expect(edit.stdout == "Updated “Cappuccino” (ID 2): price none → 3.20.\n")
        #expect(try await sandbox.run("coffee", "show", "2").status == 0)
    }

    @Test("A database from the original Coffee tutorial with a price of 1e300 opens; every app works")
    func coffeeTutorialDatabase() async throws {
        let sandbox = try Sandbox()
        let db = try Database(path: sandbox.database)
        try db.execute(
            """
            CREATE TABLE coffee (coffeeID INTEGER PRIMARY KEY, coffeeName TEXT, price REAL);
            INSERT INTO coffee VALUES (1, 'Huge', 1e300), (2, 'Fine', 1.99);
            """)
        db.close()
        let people = try await sandbox.run("people", "list")
        #expect(people.status == 0, "\(people)")
        #expect(people.stdout.hasPrefix("No people yet."))
        let fine = try await sandbox.run("coffee", "show", "2")
        #expect(fine.status == 0 && fine.stdout.contains("1.99"))
        let huge = try await sandbox.run("coffee", "show", "1")
        #expect(huge.status == 1 && huge.stderr.contains("the text '1e+300'"))
        #expect(!huge.stderr.contains("is not a number"))
        #expect(try await sandbox.run("users", "list").status == 0)
    }

    @Test("A user with a blob name: list names the row and exits 1; edit mends it")
    func usersOddRow() async throws {
        let sandbox = try Sandbox()
        let registration = [
            "--database", sandbox.database, "users", "register", "--first", "Ada", "--last", "Lovelace",
            "--email", "ada@example.com", "--mobile", "9876543210", "--state", "Surrey", "--city", "London",
            "--pincode", "110001", "--address", "12 St James's Sq", "--gender", "female", "--dob", "1990-12-10",
            "--image", "ada.png", "--password-stdin",
        ]
        let registered = try await sandbox.runRaw(registration, input: Data("correct horse\ncorrect horse\n".utf8))
        #expect(registered.status == 0, "\(registered)")
        let db = try Database(path: sandbox.database)
        try db.execute("UPDATE User_Master SET USER_CITY = X'00' WHERE UID = 1")
        db.close()
        let list = try await sandbox.run("users", "list")
        #expect(list.status == 1)
        #expect(list.stderr.contains("user 1 cannot be read: its city (User_Master.USER_CITY) is a blob of 1 byte"))
        let edit = try await sandbox.run(
            input: "correct horse\n", "users", "edit", "1", "--city", "Cambridge", "--password-stdin")
        #expect(edit.status == 0, "\(edit)")
        #expect(try await sandbox.run("users", "list").status == 0)
    }

    @Test("A Users table whose import is refused blocks only the Users app")
    func refusedUsersImport() async throws {
        let sandbox = try Sandbox()
        let db = try Database(path: sandbox.database)
        try db.execute(
            """
            CREATE TABLE IF NOT EXISTS User_Master (UID INTEGER PRIMARY KEY AUTOINCREMENT,USER_IMAGENAME TEXT NOT NULL, \
            USER_FNAME VARCHAR(30) NOT NULL,USER_LNAME VARCHAR(30) NOT NULL,USER_EMAIL VARCHAR(255) NOT NULL,\
            USER_PASS VARCHAR(200) NOT NULL,USER_CPASS VARCHAR(200) NOT NULL,USER_MOBILE INTEGER NOT NULL,\
            USER_STATE TEXT NOT NULL,USER_CITY TEXT NOT NULL,USER_PINCODE INTEGER NOT NULL,USER_ADDRESS TEXT NOT NULL,\
            USER_GENDER INT(1) NOT NULL,USER_DOB DATE NOT NULL);
            INSERT INTO User_Master (USER_IMAGENAME,USER_FNAME,USER_LNAME,USER_EMAIL,USER_PASS,USER_CPASS,USER_MOBILE,
                USER_STATE,USER_CITY,USER_PINCODE,USER_ADDRESS,USER_GENDER,USER_DOB)
            VALUES ('i.png','Asha','Rao','asha@example.in','p1','p1',1,'s','c',1,'a',9,'1990-01-01');
            """)
        db.close()
        let people = try await sandbox.run("people", "add", "--first", "Ada", "--last", "Lovelace", "--age", "36")
        #expect(people.status == 0, "\(people)")
        let users = try await sandbox.run("users", "list")
        #expect(users.status == 1)
        #expect(users.stderr.hasPrefix("records: error: the Users app cannot use this database: User_Master cannot be"))
        #expect(users.stderr.contains("users with IDs 1 have a USER_GENDER"))
    }
}
