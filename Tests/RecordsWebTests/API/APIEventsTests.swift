import Foundation
import RecordsApp
import RecordsWeb
import TestSupport
import Testing

/// `/api/v1/events`: every committed change as JSON, resumable with
/// `Last-Event-ID`, and ended when its token is revoked.
@Suite(.tags(.concurrency)) struct APIEventsTests {
    /// Reads an event stream's body on a thread of its own, as the server
    /// would on the connection's thread.
    final class StreamReader: @unchecked Sendable {
        private let lock = NSLock()
        private var received = ""
        private var finished = false
        private let stream: any ResponseStream

        init(_ response: Response) throws {
            guard case .stream(_, let stream) = response.body else { throw ReaderError.notAStream }
            self.stream = stream
            let thread = Thread { [self] in
                var buffer = [UInt8](repeating: 0, count: 64 * 1024)
                while true {
                    let count = (try? buffer.withUnsafeMutableBytes { try stream.read(into: $0) }) ?? 0
                    if count == 0 { break }
                    let text = String(decoding: buffer[0..<count], as: UTF8.self)
                    lock.withLock { received += text }
                }
                lock.withLock { finished = true }
            }
            thread.start()
        }

        var text: String { lock.withLock { received } }
        var isFinished: Bool { lock.withLock { finished } }
        func close() { stream.close() }

        enum ReaderError: Error { case notAStream }
    }

    private func open(_ site: APISite, apps: String = "people", token: String? = nil, lastEventID: String? = nil)
        async throws -> StreamReader
    {
        var headers: [String: String] = [:]
        if let lastEventID { headers["last-event-id"] = lastEventID }
        let answer = await site.send("GET", "/api/v1/events?apps=\(apps)", token: .some(token), headers: headers)
        #expect(answer.status == 200)
        #expect(answer.header("Content-Type")?.hasPrefix("text/event-stream") == true)
        return try StreamReader(answer.response)
    }

    @Test func aChangeByAnyoneReachesTheStreamAsJSON() async throws {
        let site = try await APISite(configure: { $0.liveHeartbeat = .seconds(30) })
        let reader = try await open(site)
        defer { reader.close() }
        #expect(await eventually { reader.text.contains(": open") })
        // A change through the store, as the pages or the command make them.
        let person = try await PeopleStore(database: site.database).add(
            PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        #expect(await eventually { reader.text.contains("\"kind\":\"created\"") })
        #expect(reader.text.contains("\"app\":\"people\""))
        #expect(reader.text.contains("\"id\":\(person.id)"))
        #expect(reader.text.contains("\"version\":\"\(person.version)\""))
        #expect(reader.text.contains("event: change"))
    }

    @Test func aStreamGetsOnlyTheAppsItFollows() async throws {
        let site = try await APISite(configure: { $0.liveHeartbeat = .seconds(30) })
        let reader = try await open(site, apps: "coffee")
        defer { reader.close() }
        _ = await site.send("POST", "/api/v1/people", json: #"{"firstName":"Ada","lastName":"L"}"#)
        _ = await site.send("POST", "/api/v1/coffee", json: #"{"name":"Cortado","price":"3"}"#)
        #expect(await eventually { reader.text.contains("\"app\":\"coffee\"") })
        #expect(!reader.text.contains("\"app\":\"people\""))
    }

    @Test func aReconnectingClientGetsWhatItMissed() async throws {
        let site = try await APISite(configure: { $0.liveHeartbeat = .seconds(30) })
        let first = try await open(site)
        _ = await site.send("POST", "/api/v1/people", json: #"{"firstName":"Ada","lastName":"L"}"#)
        #expect(await eventually { first.text.contains("\"kind\":\"created\"") })
        first.close()
        let lastID = try #require(
            first.text.split(separator: "\n").last { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) })
        // Missed while disconnected:
        _ = await site.send("POST", "/api/v1/people", json: #"{"firstName":"Grace","lastName":"H"}"#)
        let again = try await open(site, lastEventID: lastID)
        defer { again.close() }
        #expect(await eventually { again.text.contains("\"kind\":\"created\"") })
        #expect(!again.text.contains("id: \(lastID)\n"))
    }

    @Test func aBogusLastEventIDIsAProblem() async throws {
        let site = try await APISite()
        for bogus in ["abc", "-1", "999999"] {
            let answer = await site.send("GET", "/api/v1/events?apps=people", headers: ["last-event-id": bogus])
            #expect(answer.status == 400, "\(bogus)")
            #expect(answer.json["code"] as? String == "bad-last-event-id")
        }
        let unknown = await site.send("GET", "/api/v1/events?apps=people,planets")
        #expect(unknown.status == 400)
        let none = await site.send("GET", "/api/v1/events")
        #expect(none.status == 400)
        let anonymous = await site.send("GET", "/api/v1/events?apps=people", token: nil)
        #expect(anonymous.status == 401)
    }

    @Test func revokingTheTokenEndsItsStream() async throws {
        let site = try await APISite(configure: { $0.liveHeartbeat = .seconds(30) })
        let made = try await site.tokens.create(userID: site.user.id, name: "phone", scope: .read, expiresAt: nil)
        let reader = try await open(site, token: made.secret)
        defer { reader.close() }
        #expect(await eventually { reader.text.contains(": open") })
        try await site.tokens.revoke(id: made.token.id, userID: site.user.id)
        #expect(await eventually { reader.isFinished })
        // Another token's stream stays open.
        let other = try await open(site)
        defer { other.close() }
        _ = await site.send("POST", "/api/v1/people", json: #"{"firstName":"Ada","lastName":"L"}"#)
        #expect(await eventually { other.text.contains("\"kind\":\"created\"") })
    }
}
