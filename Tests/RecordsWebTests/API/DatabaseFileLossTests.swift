import Foundation
import HTTPServer
import RecordsApp
import TestSupport
import Testing

@testable import RecordsWeb

/// The database file deleted or replaced under a running site: the open
/// connections would write to a file nobody can find, so no write is
/// acknowledged from then on (503), reads go on, the log says why once,
/// and the status says so.
@Suite struct DatabaseFileLossTests {
    private static let create = #"{"firstName":"Grace","lastName":"Hopper"}"#

    @Test func aCreateAfterTheFileIsDeletedAnswers503AndTheStatusSaysSo() async throws {
        let directory = try TemporaryDirectory()
        let site = try await APISite.onFile(in: directory)
        let before = await site.send("POST", "/api/v1/people", json: #"{"firstName":"Ada","lastName":"Lovelace"}"#)
        #expect(before.status == 201)
        #expect(try await site.databaseStatus()["writable"] as? Bool == true)

        try FileManager.default.removeItem(atPath: directory.path("records.sqlite"))
        let after = await site.send("POST", "/api/v1/people", json: Self.create)
        #expect(after.status == 503)
        #expect(after.isProblem)
        #expect(after.json["code"] as? String == "database-file-lost")
        #expect((after.json["detail"] as? String)?.contains("was deleted") == true)
        #expect(after.header("Retry-After") != nil)
        // Refused before the handler: nothing went to the lost file.
        #expect(try await site.lastNames() == ["Lovelace"])

        // Every write, not only the first; the log says why once.
        let again = await site.send("DELETE", "/api/v1/people/1")
        #expect(again.status == 503)
        let lines = site.log.filter { $0.contains("records.sqlite was deleted") }
        #expect(lines.count == 1, "\(site.log)")
        #expect(lines.first?.contains("now: missing") == true, "\(lines)")
        #expect(lines.first?.contains("inode") == true, "\(lines)")

        // Reads go on; the status says what happened.
        let list = await site.send("GET", "/api/v1/people", token: site.reader)
        #expect(list.status == 200)
        #expect(list.text.contains("Lovelace"))
        let database = try await site.databaseStatus()
        #expect(database["writable"] as? Bool == false)
        #expect((database["problem"] as? String)?.contains("was deleted while the server ran") == true)
    }

    @Test func aFileRenamedOverTheDatabaseIsAReplacementAndWritesAnswer503() async throws {
        let directory = try TemporaryDirectory()
        let site = try await APISite.onFile(in: directory)
        let other = directory.path("other.sqlite")
        try Data("another file".utf8).write(to: URL(fileURLWithPath: other))
        #expect(rename(other, directory.path("records.sqlite")) == 0)

        let answer = await site.send("POST", "/api/v1/people", json: Self.create)
        #expect(answer.status == 503)
        #expect(answer.json["code"] as? String == "database-file-lost")
        #expect((answer.json["detail"] as? String)?.contains("was replaced by another file") == true)
        #expect(try await site.lastNames().isEmpty)
        let line = site.log.first { $0.contains("was replaced by another file") }
        #expect(line != nil, "\(site.log)")
        // Old and new identities, so that whoever reads the log can tell them apart.
        #expect(line?.components(separatedBy: "inode").count == 3, "\(line ?? "")")
    }

    @Test func aPageWriteGetsTheErrorPageAndThePageStatusSaysSo() async throws {
        let directory = try TemporaryDirectory()
        let site = try await APISite.onFile(in: directory)
        let saved = try await site.signedIn("POST", "/people", form: ["firstName": "Ada", "lastName": "Lovelace"])
        #expect(saved.status == 303)

        try FileManager.default.removeItem(atPath: directory.path("records.sqlite"))
        let refused = try await site.signedIn("POST", "/people", form: ["firstName": "Grace", "lastName": "Hopper"])
        #expect(refused.status == 503)
        #expect(refused.header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(refused.text.contains("Nothing can be saved"))
        #expect(refused.text.contains("was deleted"))
        #expect(try await site.lastNames() == ["Lovelace"])

        // Reading a page still works, and /status says writes are refused.
        let list = try await site.signedIn("GET", "/people")
        #expect(list.status == 200)
        #expect(list.text.contains("Lovelace"))
        let status = try await site.signedIn("GET", "/status")
        #expect(status.text.contains(#"<p id="database-summary" class="notice">The database file was deleted"#))
    }

    @Test func aWriteWhoseFileVanishesDuringItsHandlerIsNotAcknowledged() async throws {
        let directory = try TemporaryDirectory()
        let site = try await APISite.onFile(in: directory)
        let gate = WriteAcknowledgement(context: site.app.context, api: true)
        let path = directory.path("records.sqlite")
        // The handler commits, and the file goes while it does: the check
        // after the handler turns its success into a 503.
        await #expect(throws: Problem.self) {
            _ = try await gate.respond(to: Request(method: "POST", path: "/api/v1/people")) { _ in
                try FileManager.default.removeItem(atPath: path)
                return Response(status: 201)
            }
        }
        // And the next write is refused before its handler runs.
        let refused = await #expect(throws: Problem.self) {
            _ = try await gate.respond(to: Request(method: "PATCH", path: "/api/v1/people/1")) { _ in
                Issue.record("the handler ran")
                return Response(status: 200)
            }
        }
        #expect(refused?.status == 503)
        #expect(refused?.code == "database-file-lost")
        // A read is let through.
        let read = try await gate.respond(to: Request(method: "GET", path: "/api/v1/people")) { _ in
            Response(status: 200)
        }
        #expect(read.status == 200)
    }

    @Test func theTimerNoticesTheLossWithoutAWrite() async throws {
        let directory = try TemporaryDirectory()
        let site = try await APISite.onFile(in: directory, check: .milliseconds(20))
        try FileManager.default.removeItem(atPath: directory.path("records.sqlite"))
        #expect(await eventually { site.log.contains { $0.contains("records.sqlite was deleted") } }, "\(site.log)")
        #expect(site.app.context.databaseFile?.loss?.found == nil)
        #expect(site.app.context.databaseFile?.loss != nil)
    }

    @Test func aDatabaseInMemoryHasNothingToWatchAndAcceptsWrites() async throws {
        let site = try await APISite()
        #expect(site.app.context.databaseFile == nil)
        let answer = await site.send("POST", "/api/v1/people", json: Self.create)
        #expect(answer.status == 201)
        #expect(try await site.databaseStatus()["writable"] as? Bool == true)
    }
}
