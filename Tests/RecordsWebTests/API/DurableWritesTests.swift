import Foundation
import HTTPServer
import RecordsApp
import Replication
import TestSupport
import Testing

@testable import RecordsWeb

/// `records serve --durable` in process: a write is answered only after the
/// durability waiter's sync succeeded; when it fails, 503 saying the write
/// is saved here but not replicated. The sync is a fake that counts, or
/// throws as a dead Litestream's control socket does.
@Suite struct DurableWritesTests {
    private static let create = #"{"firstName":"Grace","lastName":"Hopper"}"#

    /// Counts syncs, and fails them while `failing` holds.
    private final class FakeSync: @unchecked Sendable {
        private let lock = NSLock()
        private var syncs = 0
        private var failing = false
        var count: Int { lock.withLock { syncs } }
        func fail(_ value: Bool) { lock.withLock { failing = value } }
        func sync() throws {
            let fails = lock.withLock {
                syncs += 1
                return failing
            }
            if fails { throw ReplicationError("cannot reach Litestream's control socket: connection refused") }
        }
    }

    private static func site(_ fake: FakeSync) async throws -> APISite {
        try await APISite { configuration in
            configuration.durability = DurabilityWaiter(timeout: livenessTimeout) { try fake.sync() }
        }
    }

    @Test func aWriteIsAnsweredAfterASyncAndAReadWaitsForNone() async throws {
        let fake = FakeSync()
        let site = try await Self.site(fake)
        let created = await site.send("POST", "/api/v1/people", json: Self.create)
        #expect(created.status == 201)
        #expect(fake.count == 1)
        let list = await site.send("GET", "/api/v1/people", token: site.reader)
        #expect(list.status == 200)
        #expect(fake.count == 1)
        let page = try await site.signedIn("POST", "/people", form: ["firstName": "Ada", "lastName": "Lovelace"])
        #expect(page.status == 303)
        #expect(fake.count == 2)
        // A write refused by validation acknowledges nothing: no sync.
        let invalid = await site.send("POST", "/api/v1/people", json: #"{"firstName":"","lastName":""}"#)
        #expect(invalid.status == 422)
        #expect(fake.count == 2)
        let status = await site.send("GET", "/api/v1/status", token: site.reader)
        #expect(status.status == 200)
    }

    @Test func aFailedSyncAnswers503SayingTheWriteIsSavedHereOnly() async throws {
        let fake = FakeSync()
        fake.fail(true)
        let site = try await Self.site(fake)
        let answer = await site.send("POST", "/api/v1/people", json: Self.create)
        #expect(answer.status == 503)
        #expect(answer.isProblem)
        #expect(answer.json["code"] as? String == "not-replicated")
        let detail = try #require(answer.json["detail"] as? String)
        #expect(detail.contains("saved on this server but is not yet in the replica"))
        #expect(answer.header("Retry-After") != nil)
        #expect(site.log.contains { $0.contains("not replicated: cannot reach Litestream") }, "\(site.log)")
        // Honest: the row is committed locally.
        #expect(try await site.lastNames() == ["Hopper"])

        let page = try await site.signedIn("POST", "/people", form: ["firstName": "Ada", "lastName": "Lovelace"])
        #expect(page.status == 503)
        #expect(page.text.contains("saved on this server but is not yet copied to its replica"))

        // Litestream back: writes are acknowledged again.
        fake.fail(false)
        let later = await site.send("POST", "/api/v1/people", json: #"{"firstName":"Hedy","lastName":"Lamarr"}"#)
        #expect(later.status == 201)
    }

    @Test func aRetryWithTheSameIdempotencyKeyGetsTheStoredAnswerOnceReplicated() async throws {
        let fake = FakeSync()
        fake.fail(true)
        let site = try await Self.site(fake)
        let key = ["idempotency-key": "create-hopper-1"]
        let first = await site.send("POST", "/api/v1/people", json: Self.create, headers: key)
        #expect(first.status == 503)
        fake.fail(false)
        let retry = await site.send("POST", "/api/v1/people", json: Self.create, headers: key)
        #expect(retry.status == 201)
        #expect(retry.header("Idempotent-Replayed") == "true")
        // One row: the retry did not create it again.
        #expect(try await site.lastNames() == ["Hopper"])
    }

    @Test func theStatusSaysWritesWaitForTheReplica() async throws {
        let fake = FakeSync()
        let site = try await APISite { configuration in
            configuration.durability = DurabilityWaiter(timeout: livenessTimeout) { try fake.sync() }
            configuration.replicationStatus = {
                ReplicationStatus(
                    replica: "/backup", state: .replicating, lastSyncAt: nil, restarts: 0, lastProblem: nil)
            }
        }
        let answer = await site.send("GET", "/api/v1/status", token: site.reader)
        let replication = try #require(answer.json["replication"] as? [String: Any])
        #expect(replication["durable"] as? Bool == true)
        let page = try await site.signedIn("GET", "/status")
        #expect(page.text.contains("acknowledged only once the replica holds it"))
        #expect(fake.count == 0)
    }

    @Test func theAPIDescriptionGivesEveryWriteA503AndNoRead() async throws {
        let site = try await APISite()
        let document = await site.send("GET", "/api/v1/openapi.json", token: nil).json
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var writes = 0
        for (path, operations) in paths {
            for (method, operation) in operations {
                let responses = (operation as? [String: Any])?["responses"] as? [String: Any] ?? [:]
                let isWrite = !["get", "head"].contains(method)
                if isWrite { writes += 1 }
                #expect((responses["503"] != nil) == isWrite, "\(method) \(path)")
            }
        }
        #expect(writes > 0)
    }

    @Test func withoutDurableModeNoWriteWaits() async throws {
        let site = try await APISite()
        #expect(site.app.configuration.durability == nil)
        let answer = await site.send("POST", "/api/v1/people", json: Self.create)
        #expect(answer.status == 201)
    }
}
