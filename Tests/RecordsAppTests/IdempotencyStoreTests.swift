import Foundation
import SQLiteStore
import TestSupport
import Testing

@testable import RecordsApp

@Suite("Idempotency keys")
struct IdempotencyStoreTests {
    let file: FileDatabase
    let keys: IdempotencyStore
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let created = StoredResponse(
        status: 201, headers: ["Content-Type": "application/json", "Location": "/api/v1/people/4"],
        body: Array(#"{"id":4}"#.utf8))

    init() throws {
        file = try FileDatabase()
        keys = IdempotencyStore(database: file.database)
    }

    @Test("A new key proceeds")
    func newKey() async throws {
        #expect(try await keys.begin(owner: 1, key: "k1", requestDigest: "d1", now: start) == .proceed)
    }

    @Test("The same key again while its request runs is in progress")
    func pending() async throws {
        _ = try await keys.begin(owner: 1, key: "k1", requestDigest: "d1", now: start)
        let again = try await keys.begin(owner: 1, key: "k1", requestDigest: "d1", now: start.addingTimeInterval(59))
        #expect(again == .inProgress)
    }

    @Test("The same request after it finished replays its response, byte for byte")
    func replay() async throws {
        _ = try await keys.begin(owner: 1, key: "k1", requestDigest: "d1", now: start)
        try await keys.finish(owner: 1, key: "k1", response: created)
        let again = try await keys.begin(owner: 1, key: "k1", requestDigest: "d1", now: start.addingTimeInterval(3600))
        #expect(again == .replay(created))
    }

    @Test("The same key with another request is refused, pending or finished")
    func reusedKey() async throws {
        _ = try await keys.begin(owner: 1, key: "k1", requestDigest: "d1", now: start)
        #expect(
            try await keys.begin(owner: 1, key: "k1", requestDigest: "d2", now: start) == .keyReusedWithAnotherRequest)
        try await keys.finish(owner: 1, key: "k1", response: created)
        #expect(
            try await keys.begin(owner: 1, key: "k1", requestDigest: "d2", now: start) == .keyReusedWithAnotherRequest)
    }

    @Test("Two owners' equal keys are two keys")
    func owners() async throws {
        _ = try await keys.begin(owner: 1, key: "k1", requestDigest: "d1", now: start)
        #expect(try await keys.begin(owner: 2, key: "k1", requestDigest: "d2", now: start) == .proceed)
    }

    @Test("A key older than 24 hours is forgotten: the same key proceeds again, and the old entry is purged")
    func expiry() async throws {
        _ = try await keys.begin(owner: 1, key: "old", requestDigest: "d1", now: start)
        try await keys.finish(owner: 1, key: "old", response: created)
        _ = try await keys.begin(owner: 1, key: "other", requestDigest: "d1", now: start)
        let later = start.addingTimeInterval(IdempotencyStore.keyLifetime)
        #expect(try await keys.begin(owner: 1, key: "old", requestDigest: "d2", now: later) == .proceed)
        let left = try file.database.read { db in
            try db.fetchAll(String.self, "SELECT key FROM api_idempotency ORDER BY key")
        }
        #expect(left == ["old"])
    }

    @Test("A pending key older than 60 seconds is taken over, once")
    func abandonedAfterAMinute() async throws {
        _ = try await keys.begin(owner: 1, key: "k1", requestDigest: "d1", now: start)
        let later = start.addingTimeInterval(IdempotencyStore.abandonedAfter)
        #expect(try await keys.begin(owner: 1, key: "k1", requestDigest: "d1", now: later) == .proceed)
        #expect(try await keys.begin(owner: 1, key: "k1", requestDigest: "d1", now: later) == .inProgress)
    }

    @Test("An abandoned key proceeds at once; a finished one is kept")
    func abandon() async throws {
        _ = try await keys.begin(owner: 1, key: "k1", requestDigest: "d1", now: start)
        try await keys.abandon(owner: 1, key: "k1")
        #expect(try await keys.begin(owner: 1, key: "k1", requestDigest: "d1", now: start) == .proceed)
        try await keys.finish(owner: 1, key: "k1", response: created)
        try await keys.abandon(owner: 1, key: "k1")
        #expect(try await keys.begin(owner: 1, key: "k1", requestDigest: "d1", now: start) == .replay(created))
    }

    @Test("Finishing a key that is not pending keeps nothing")
    func finishUnknown() async throws {
        try await keys.finish(owner: 1, key: "never", response: created)
        #expect(try await keys.begin(owner: 1, key: "never", requestDigest: "d1", now: start) == .proceed)
    }

    @Test("A response without headers or body replays as such")
    func emptyResponse() async throws {
        let empty = StoredResponse(status: 204, headers: [:], body: [])
        _ = try await keys.begin(owner: 1, key: "k1", requestDigest: "d1", now: start)
        try await keys.finish(owner: 1, key: "k1", response: empty)
        #expect(try await keys.begin(owner: 1, key: "k1", requestDigest: "d1", now: start) == .replay(empty))
    }

    @Test("Purge deletes the entries begun before the date and counts them")
    func purge() async throws {
        _ = try await keys.begin(owner: 1, key: "a", requestDigest: "d", now: start)
        _ = try await keys.begin(owner: 1, key: "b", requestDigest: "d", now: start.addingTimeInterval(10))
        #expect(try await keys.purge(before: start.addingTimeInterval(5)) == 1)
        #expect(try await keys.purge(before: start.addingTimeInterval(5)) == 0)
        #expect(try await keys.begin(owner: 1, key: "a", requestDigest: "other", now: start) == .proceed)
    }

    @Test(
        "An empty or over-long key, or an empty digest, is refused",
        arguments: ["", String(repeating: "k", count: 256)])
    func invalidKey(_ key: String) async throws {
        await #expect(throws: ValidationError.self) {
            try await keys.begin(owner: 1, key: key, requestDigest: "d", now: start)
        }
        await #expect(throws: ValidationError.self) {
            try await keys.begin(owner: 1, key: "ok", requestDigest: "", now: start)
        }
    }

    @Test("Two requests with one key at once, from two connections: exactly one proceeds", .tags(.concurrency))
    func concurrentBegins() async throws {
        let other = try file.secondDatabase()
        defer { other.close() }
        let second = IdempotencyStore(database: other)
        for round in 0..<20 {
            let key = "k\(round)"
            async let a = keys.begin(owner: 1, key: key, requestDigest: "d", now: start)
            async let b = second.begin(owner: 1, key: key, requestDigest: "d", now: start)
            let outcomes = try await [a, b]
            #expect(outcomes.filter { $0 == .proceed }.count == 1, "\(outcomes)")
            #expect(outcomes.filter { $0 == .inProgress }.count == 1, "\(outcomes)")
        }
    }
}
