import Foundation
import Testing

@testable import SQLiteStore

@Suite("records under sustained writes from several processes")
struct ConcurrentWritersCLITests {
    static let writerCount = 8
    static let addsPerWriter = 25
    static let pictureWrites = 8
    static let readerCount = 2

    /// Runs the bodies side by side and waits for all of them.
    private func runConcurrently(_ bodies: [@Sendable () async -> Void]) async {
        await withTaskGroup(of: Void.self) { group in
            for body in bodies { group.addTask { await body() } }
        }
    }

    @Test("Every add succeeds and is stored while a 30 MB picture is written and lists run, all as processes")
    func sustainedWrites() async throws {
        let sandbox = try Sandbox()
        let first = try await sandbox.run("people", "list", "--json")
        #expect(first.status == 0, "\(first)")
        let before = try #require(try first.json() as? [[String: Any]]).count
        let picture = sandbox.path("large.png")
        try writePicture(picture, count: 30 * 1024 * 1024, seed: 5)

        // What failed, with its output: nothing should.
        let failures = Locked<[String]>([])
        let writersLeft = Locked(Self.writerCount + 1)
        let record: @Sendable (String, RecordsRun) -> Void = { what, run in
            if run.status != 0 { failures.withLock { $0.append("\(what): \(run)") } }
        }
        let runOrRecord: @Sendable (String, [String]) async -> Void = { what, arguments in
            do {
                record(what, try await sandbox.runRaw(["--database", sandbox.database] + arguments))
            } catch {
                failures.withLock { $0.append("\(what): \(error)") }
            }
        }

        var bodies: [@Sendable () async -> Void] = []
        for writer in 1...Self.writerCount {
            bodies.append {
                for add in 1...Self.addsPerWriter {
                    await runOrRecord(
                        "writer \(writer) add \(add)",
                        ["people", "add", "--first", "Writer \(writer)", "--last", "Add \(add)", "--age", "\(writer)"])
                }
                writersLeft.withLock { $0 -= 1 }
            }
        }
        bodies.append {
            for index in 1...Self.pictureWrites {
                await runOrRecord("picture set \(index)", ["coffee", "picture", "set", "1", picture])
            }
            writersLeft.withLock { $0 -= 1 }
        }
        for reader in 1...Self.readerCount {
            bodies.append {
                var index = 0
                while writersLeft.withLock({ $0 }) > 0 {
                    index += 1
                    await runOrRecord("reader \(reader) list \(index)", ["people", "list"])
                }
            }
        }
        await runConcurrently(bodies)

        let failed = failures.withLock { $0 }
        #expect(failed.isEmpty, "\(failed.count) commands failed:\n\(failed.prefix(5).joined(separator: "\n"))")

        let list = try await sandbox.run("people", "list", "--json")
        let people = try #require(try list.json() as? [[String: Any]])
        #expect(people.count == before + Self.writerCount * Self.addsPerWriter)
        let added = Set(
            people.compactMap { person -> String? in
                guard let first = person["firstName"] as? String, first.hasPrefix("Writer ") else { return nil }
                return "\(first)/\(person["lastName"] as? String ?? "")"
            })
        let expected = Set(
            (1...Self.writerCount).flatMap { writer in
                (1...Self.addsPerWriter).map { add in "Writer \(writer)/Add \(add)" }
            })
        #expect(added == expected)
        let show = try await sandbox.run("coffee", "show", "1")
        #expect(show.stdout.contains("30.0 MiB (31,457,280 bytes)"), "\(show)")
    }
}
