import Dispatch
import Foundation
import TestSupport
import Testing

@testable import RecordsApp
@testable import RecordsWeb
@testable import SQLiteStore

/// Creates that wait for the writer together share one transaction
/// (``AppDatabase/combinedWrites``), and each request still gets its own
/// answer: its record, its version, its problem, its idempotent replay.
@Suite struct APICombinedCreatesTests {
    /// Holds the database's writer until ``release()``, so that the
    /// requests sent meanwhile wait for it together.
    final class WriterHold: Sendable {
        private let released = DispatchSemaphore(value: 0)
        private let held = Flag()
        private let task: Task<Void, any Error>

        init(_ database: AppDatabase) async {
            let released = released
            let held = held
            task = Task {
                try await database.writer.writeWithoutTransaction { _ in
                    held.set()
                    released.wait()
                }
            }
            _ = await eventually { held.isSet }
        }

        func release() async throws {
            released.signal()
            try await task.value
        }
    }

    /// Sends each body as a POST to `/api/v1/people` at once, with the
    /// writer held until `waiting` writes wait for it; returns the answers
    /// in the order of the bodies.
    static func createTogether(
        _ site: APISite, _ bodies: [(json: String, key: String?)], waiting: Int
    ) async throws -> [APIAnswer] {
        let hold = await WriterHold(site.database)
        let tasks = bodies.map { body in
            Task {
                await site.send(
                    "POST", "/api/v1/people", json: body.json,
                    headers: body.key.map { ["idempotency-key": $0] } ?? [:])
            }
        }
        #expect(await eventually { site.database.combinedWrites.waitingCount == waiting })
        try await hold.release()
        var answers: [APIAnswer] = []
        for task in tasks { answers.append(await task.value) }
        return answers
    }

    /// A site on a database file (a pool: its reads go on while the
    /// writer is held) whose token is in the cache, so that no request of
    /// a test writes its last use.
    static func warmSite(_ directory: TemporaryDirectory) async throws -> APISite {
        let site = try await APISite(databaseURL: directory.fileURL("records.sqlite"))
        // The first use writes the token's last use, which drops it from
        // the cache; the second keeps it there.
        #expect(await site.send("GET", "/api/v1/people").status == 200)
        #expect(await site.send("GET", "/api/v1/people").status == 200)
        return site
    }

    static func person(_ index: Int) -> String {
        #"{"firstName":"First\#(index)","lastName":"Last\#(index)","age":\#(20 + index)}"#
    }

    @Test func createsSentTogetherShareATransactionAndEachGetsItsOwnRecordAndVersion() async throws {
        let directory = try TemporaryDirectory()
        let site = try await Self.warmSite(directory)
        let transactionsBefore = site.database.combinedWrites.statistics.transactions
        let answers = try await Self.createTogether(site, (1...8).map { (Self.person($0), nil) }, waiting: 8)
        var ids: Set<Int> = []
        for (index, answer) in answers.enumerated() {
            #expect(answer.status == 201, "\(answer.text)")
            let id = try #require(answer.json["id"] as? Int)
            ids.insert(id)
            #expect(answer.json["firstName"] as? String == "First\(index + 1)")
            #expect(answer.json["age"] as? Int == 21 + index)
            #expect(answer.header("Location") == "/api/v1/people/\(id)")
            let version = try #require(answer.json["version"] as? String)
            #expect(answer.header("ETag") == "\"\(version)\"")
            // What the answer says is what was stored.
            let stored = await site.send("GET", "/api/v1/people/\(id)")
            #expect(stored.text == answer.text)
        }
        #expect(ids.count == 8)
        #expect(site.database.combinedWrites.statistics.transactions == transactionsBefore + 1)
        #expect(site.database.combinedWrites.statistics.largestBatch == 8)
        // The change log, which the live events read, has each of them.
        let changes = try await site.database.recordChanges(after: 0, apps: [.people], limit: 100)
        #expect(Set(changes.changes.filter { $0.kind == .created }.map { Int($0.id) }) == ids)
    }

    @Test func anInvalidCreateAmongOthersFailsAloneWithItsProblem() async throws {
        let directory = try TemporaryDirectory()
        let site = try await Self.warmSite(directory)
        // The invalid one is refused before it waits for the writer.
        let bodies: [(json: String, key: String?)] = [
            (Self.person(1), nil), (#"{"firstName":"","lastName":"L","age":151}"#, nil), (Self.person(3), nil),
            (Self.person(4), nil),
        ]
        let answers = try await Self.createTogether(site, bodies, waiting: 3)
        #expect(answers.map(\.status) == [201, 422, 201, 201])
        #expect(answers[1].isProblem)
        #expect(
            answers[1].errors == [
                "firstName": "First name is required.", "age": "Age must be a whole number from 0 to 150.",
            ])
        #expect(try await PeopleStore(database: site.database).count() == 3)
    }

    @Test func idempotentRetriesGetTheFirstAnswerWithinABatchAndAcrossBatches() async throws {
        let directory = try TemporaryDirectory()
        let site = try await Self.warmSite(directory)
        // Four keys, and the first key sent twice in the same batch: its
        // second request finds the first still running.
        let bodies: [(json: String, key: String?)] =
            (1...4).map { (Self.person($0), "key-\($0)") } + [(Self.person(1), "key-1")]
        let first = try await Self.createTogether(site, bodies, waiting: 5)
        #expect(first.prefix(4).map(\.status) == [201, 201, 201, 201])
        #expect(first[4].status == 409)
        #expect(first[4].json["code"] as? String == "idempotency-key-in-use")
        #expect(try await PeopleStore(database: site.database).count() == 4)
        // Retried together, in a later batch: each gets its first answer.
        let retries = try await Self.createTogether(site, Array(bodies.prefix(4)), waiting: 4)
        for (retry, original) in zip(retries, first) {
            #expect(retry.status == 201)
            #expect(retry.text == original.text)
            #expect(retry.header("ETag") == original.header("ETag"))
            #expect(retry.header("Idempotent-Replayed") == "true")
        }
        // And one at a time.
        let alone = await site.send(
            "POST", "/api/v1/people", json: Self.person(2), headers: ["idempotency-key": "key-2"])
        #expect(alone.text == first[1].text)
        #expect(try await PeopleStore(database: site.database).count() == 4)
    }

    @Test func aCancelledCreateLosesNorDuplicatesTheOthers() async throws {
        let directory = try TemporaryDirectory()
        let site = try await Self.warmSite(directory)
        let hold = await WriterHold(site.database)
        let tasks = (1...5).map { index in
            Task { await site.send("POST", "/api/v1/people", json: Self.person(index)) }
        }
        #expect(await eventually { site.database.combinedWrites.waitingCount == 5 })
        // The client of the third went away: its request's task is cancelled.
        tasks[2].cancel()
        #expect(await eventually { site.database.combinedWrites.waitingCount == 4 })
        try await hold.release()
        var answers: [APIAnswer] = []
        for task in tasks { answers.append(await task.value) }
        for index in [0, 1, 3, 4] { #expect(answers[index].status == 201, "\(answers[index].text)") }
        #expect(answers[2].status != 201)
        let people = try await PeopleStore(database: site.database).all()
        #expect(people.map(\.firstName).sorted() == ["First1", "First2", "First4", "First5"])
    }
}
