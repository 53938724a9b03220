import Foundation
import SQLiteStore
import Testing

extension Sandbox {
    /// Runs `records token create` for Ada with `--password-stdin`.
    @discardableResult
    func createToken(
        email: String = "ada@example.com", password: String = "correct horse", name: String = "backup script",
        _ extra: [String] = []
    ) async throws -> RecordsRun {
        try await run(
            input: "\(password)\n",
            ["token", "create", "--email", email, "--name", name, "--password-stdin"] + extra)
    }

    /// The rows of `api_tokens`, read behind the app's back.
    func tokenRows() throws -> [Row] {
        let db = try Database(path: database)
        defer { db.close() }
        return try db.fetchAll("SELECT * FROM api_tokens ORDER BY id")
    }
}

/// Runs `records token ...` end to end; passwords always come from
/// standard input.
@Suite("records token")
struct TokenCLITests {
    /// A sandbox with Ada registered.
    private func sandboxWithAda() async throws -> Sandbox {
        let sandbox = try Sandbox()
        let registered = try await sandbox.register()
        #expect(registered.status == 0, "\(registered)")
        return sandbox
    }

    @Test("Help lists the token commands, and create takes no password option")
    func help() async throws {
        let sandbox = try Sandbox()
        let main = try await sandbox.runRaw(["--help"])
        for command in ["token create", "token list", "token revoke"] {
            #expect(main.stdout.contains(command), "missing \(command)")
        }
        let create = try await sandbox.runRaw(["token", "create", "--help"])
        #expect(create.status == 0)
        for option in ["--email EMAIL", "--name NAME", "[--read-only]", "[--expires-in DAYS]", "[--password-stdin]"] {
            #expect(create.stdout.contains(option), "missing \(option)")
        }
        let password = try await sandbox.run(
            ["token", "create", "--email", "ada@example.com", "--name", "n", "--password", "x"])
        #expect(password.status == 2)
        #expect(password.stderr.contains("unknown option '--password'"))
    }

    @Test("create prints the secret alone on standard output, and keeps only its SHA-256")
    func create() async throws {
        let sandbox = try await sandboxWithAda()
        let run = try await sandbox.createToken()
        #expect(run.status == 0, "\(run)")
        #expect(run.lines.count == 1)
        let secret = try #require(run.lines.first)
        #expect(secret.hasPrefix("rst_") && secret.count == 47)
        #expect(run.stderr.contains("shown only this once"))
        #expect(!run.stderr.contains(secret))
        let rows = try sandbox.tokenRows()
        #expect(rows.count == 1)
        let hash: Data = try rows[0]["secret_hash"]
        #expect(hash.count == 32)
        #expect(try rows[0]["scope"] as String == "read-write")
        #expect(try rows[0]["expires_at"] as Int64? == nil)
        for value in rows[0].values {
            if case .text(let text) = value { #expect(!text.contains(secret)) }
        }
    }

    @Test("create --read-only --expires-in makes a narrower token that expires")
    func readOnlyExpiring() async throws {
        let sandbox = try await sandboxWithAda()
        let run = try await sandbox.createToken(["--read-only", "--expires-in", "30"])
        #expect(run.status == 0, "\(run)")
        let row = try #require(try sandbox.tokenRows().first)
        #expect(try row["scope"] as String == "read")
        let created: Int64 = try row["created_at"]
        #expect(try row["expires_at"] as Int64? == created + 30 * 86_400)
    }

    @Test("create --json gives the secret and the token")
    func createJSON() async throws {
        let sandbox = try await sandboxWithAda()
        let run = try await sandbox.createToken(["--json"])
        #expect(run.status == 0, "\(run)")
        let object = try #require(try run.json() as? [String: Any])
        let secret = try #require(object["secret"] as? String)
        let token = try #require(object["token"] as? [String: Any])
        #expect(token["hint"] as? String == String(secret.prefix(6)))
        #expect(token["status"] as? String == "active")
    }

    @Test("A wrong password and an unknown email are refused alike, and make nothing")
    func wrongPasswordOrUnknownEmail() async throws {
        let sandbox = try await sandboxWithAda()
        let wrong = try await sandbox.createToken(password: "wrong horse")
        let unknown = try await sandbox.createToken(email: "bob@example.com")
        for run in [wrong, unknown] {
            #expect(run.status == 1, "\(run)")
            #expect(run.stdout.isEmpty)
            #expect(run.stderr == "records: error: invalid email or password\n")
        }
        #expect(try sandbox.tokenRows().isEmpty)
    }

    @Test(
        "A bad expiry is a usage error, before the password is read",
        arguments: ["0", "-1", "3651", "ten", "1.5", ""])
    func badExpiry(_ days: String) async throws {
        let sandbox = try await sandboxWithAda()
        // No password on standard input: it is not asked for.
        let run = try await sandbox.run(
            ["token", "create", "--email", "ada@example.com", "--name", "n", "--expires-in", days, "--password-stdin"])
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.contains("'--expires-in' needs a whole number of days from 1 to 3650"))
        #expect(try sandbox.tokenRows().isEmpty)
    }

    @Test("An empty or too long name is refused", arguments: ["", "  ", String(repeating: "n", count: 101)])
    func badName(_ name: String) async throws {
        let sandbox = try await sandboxWithAda()
        let run = try await sandbox.createToken(name: name)
        #expect(run.status == 2, "\(run)")
        let problem = name.count > 100 ? "must be at most 100 characters" : "is required"
        #expect(run.stderr.hasPrefix("records: error: name \(problem)"), "\(run)")
        #expect(try sandbox.tokenRows().isEmpty)
    }

    @Test("list shows the tokens without their secrets; an unknown email is an error")
    func list() async throws {
        let sandbox = try await sandboxWithAda()
        let secret = try #require(try await sandbox.createToken(name: "backup script", ["--read-only"]).lines.first)
        let run = try await sandbox.run("token", "list", "--email", "ADA@example.com")
        #expect(run.status == 0, "\(run)")
        let header = try #require(run.lines.first)
        for column in ["ID", "NAME", "ACCESS", "CREATED", "LAST USED", "EXPIRES", "HINT", "STATUS"] {
            #expect(header.contains(column), "missing \(column)")
        }
        #expect(run.lines.count == 2)
        #expect(run.lines[1].contains("backup script") && run.lines[1].contains("Read only"))
        #expect(run.lines[1].contains(String(secret.prefix(6))) && run.lines[1].contains("active"))
        #expect(!run.stdout.contains(secret.dropFirst(6)))
        let unknown = try await sandbox.run("token", "list", "--email", "bob@example.com")
        #expect(unknown.status == 1)
        #expect(unknown.stderr == "records: error: no user has the email address bob@example.com\n")
    }

    @Test("revoke revokes each ID given, and again is no error")
    func revoke() async throws {
        let sandbox = try await sandboxWithAda()
        try await sandbox.createToken(name: "one")
        try await sandbox.createToken(name: "two")
        let run = try await sandbox.run("token", "revoke", "--email", "ada@example.com", "1", "2")
        #expect(run.status == 0, "\(run)")
        #expect(run.lines.count == 2 && run.lines[0].hasPrefix("Revoked token 1 \"one\""))
        #expect(try sandbox.tokenRows().allSatisfy { try !$0.hasNull("revoked_at") })
        let again = try await sandbox.run("token", "revoke", "--email", "ada@example.com", "1")
        #expect(again.status == 0, "\(again)")
        let list = try await sandbox.run("token", "list", "--email", "ada@example.com")
        #expect(list.lines.dropFirst().allSatisfy { $0.contains("revoked") })
    }

    @Test("revoke of an unknown ID, or another user's, revokes nothing")
    func revokeUnknown() async throws {
        let sandbox = try await sandboxWithAda()
        try await sandbox.register(email: "bob@example.com")
        try await sandbox.createToken(name: "ada's")
        try await sandbox.createToken(email: "bob@example.com", name: "bob's")
        let run = try await sandbox.run("token", "revoke", "--email", "ada@example.com", "1", "2")
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr == "records: error: no token with ID 2\n")
        let missing = try await sandbox.run("token", "revoke", "--email", "ada@example.com", "9")
        #expect(missing.status == 1)
        let bad = try await sandbox.run("token", "revoke", "--email", "ada@example.com", "x")
        #expect(bad.status == 2)
        #expect(try sandbox.tokenRows().allSatisfy { try $0.hasNull("revoked_at") })
    }

    @Test("Changing the password revokes the user's tokens")
    func passwordChangeRevokes() async throws {
        let sandbox = try await sandboxWithAda()
        try await sandbox.createToken()
        let change = try await sandbox.run(
            input: "correct horse\nbattery staple\nbattery staple\n",
            ["users", "edit", "1", "--change-password", "--password-stdin"])
        #expect(change.status == 0, "\(change)")
        #expect(try sandbox.tokenRows().allSatisfy { try !$0.hasNull("revoked_at") })
    }
}

extension Row {
    /// Whether the column holds NULL.
    fileprivate func hasNull(_ column: String) throws -> Bool {
        let value: Int64? = try self[column]
        return value == nil
    }
}
