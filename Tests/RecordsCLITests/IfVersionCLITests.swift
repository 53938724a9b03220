import Foundation
import Testing

/// `edit --if-version`: a script's edit that changes nothing when someone
/// else changed the record since the script read its version.
@Suite("records edit --if-version")
struct IfVersionCLITests {
    /// The version `show --json` prints for a record.
    static func version(_ sandbox: Sandbox, _ app: String, _ id: String) async throws -> String {
        let shown = try #require(try await sandbox.run(app, "show", id, "--json").json() as? [String: Any])
        return try #require(shown["version"] as? String)
    }

    @Test("show prints the version, as text and in JSON")
    func showPrintsTheVersion() async throws {
        let sandbox = try Sandbox()
        let version = try await Self.version(sandbox, "people", "1")
        #expect(version.count == 16)
        let text = try await sandbox.run("people", "show", "1")
        #expect(text.lines.contains("Version:     \(version)"))
        for app in ["contacts", "coffee"] {
            _ = try await Self.version(sandbox, app, "1")
        }
    }

    @Test("An edit at the current version is written")
    func currentVersionEdits() async throws {
        let sandbox = try Sandbox()
        let version = try await Self.version(sandbox, "people", "1")
        let edit = try await sandbox.run("people", "edit", "1", "--age", "40", "--if-version", version)
        #expect(edit.status == 0, "\(edit)")
        #expect(try await Self.version(sandbox, "people", "1") != version)
    }

    @Test("An edit over a stale version writes nothing, exits 1 and names the current version")
    func staleVersionFails() async throws {
        let sandbox = try Sandbox()
        let stale = try await Self.version(sandbox, "people", "1")
        #expect(try await sandbox.run("people", "edit", "1", "--last", "King").status == 0)
        let current = try await Self.version(sandbox, "people", "1")
        let edit = try await sandbox.run("people", "edit", "1", "--last", "Byron", "--if-version", stale)
        #expect(edit.status == 1)
        #expect(edit.stdout == "")
        #expect(
            edit.stderr
                == "records: error: person 1 is now at version \(current), not \(stale): someone changed it since, "
                + "so nothing was written. Show it again and redo the change.\n")
        let shown = try #require(try await sandbox.run("people", "show", "1", "--json").json() as? [String: Any])
        #expect(shown["lastName"] as? String == "King")
    }

    @Test("A stale version is refused by contacts and coffee too, even for a change to nothing")
    func staleVersionInEveryApp() async throws {
        let sandbox = try Sandbox()
        let contact = try await Self.version(sandbox, "contacts", "1")
        #expect(try await sandbox.run("contacts", "edit", "1", "--address", "1 New Rd").status == 0)
        let contactEdit = try await sandbox.run(
            "contacts", "edit", "1", "--address", "2 Old Rd", "--if-version", contact)
        #expect(contactEdit.status == 1 && contactEdit.stderr.contains("contact 1 is now at version"))

        let coffee = try await Self.version(sandbox, "coffee", "1")
        #expect(try await sandbox.run("coffee", "edit", "1", "--price", "9.10").status == 0)
        let coffeeEdit = try await sandbox.run("coffee", "edit", "1", "--price", "9.10", "--if-version", coffee)
        #expect(coffeeEdit.status == 1 && coffeeEdit.stderr.contains("coffee 1 is now at version"))
    }

    @Test("A malformed version is a usage error (status 2) and nothing is written")
    func malformedVersionIsAUsageError() async throws {
        let sandbox = try Sandbox()
        let before = try await Self.version(sandbox, "people", "1")
        for bad in ["", "abc", "0123456789ABCDEF", "\"0123456789abcdef\"", "0123456789abcdef0"] {
            let edit = try await sandbox.run("people", "edit", "1", "--age", "50", "--if-version", bad)
            #expect(edit.status == 2, "\(bad): \(edit)")
            #expect(edit.stderr.contains("--if-version must be a record version"), "\(bad): \(edit)")
        }
        #expect(try await Self.version(sandbox, "people", "1") == before)
    }
}
