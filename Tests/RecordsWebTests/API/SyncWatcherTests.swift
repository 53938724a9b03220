import Foundation
import SQLiteStoreSync
import TestSupport
import Testing

@testable import RecordsApp
@testable import RecordsWeb

/// ``SyncWatcher`` (`records sync --watch`) against the web app's sync
/// endpoints and its `/api/v1/events` stream: the news of a device's own
/// push costs it no pull, news of any other change does.
@Suite(.tags(.concurrency)) struct SyncWatcherTests {
    /// A transport that counts the pushes and pulls it carries.
    final class CountingTransport: SyncTransport, @unchecked Sendable {
        private let inner: InProcessSyncTransport
        private let lock = NSLock()
        private var pullCount = 0

        init(_ inner: InProcessSyncTransport) { self.inner = inner }

        var pulls: Int { lock.withLock { pullCount } }

        func push(_ request: PushRequest) async throws -> PushResponse { try await inner.push(request) }

        func pull(_ request: PullRequest) async throws -> PullResponse {
            lock.withLock { pullCount += 1 }
            return try await inner.pull(request)
        }
    }

    /// The rounds a watcher reported, in order.
    final class Rounds: @unchecked Sendable {
        private let lock = NSLock()
        private var rounds: [SyncWatcher.Round] = []

        func append(_ round: SyncWatcher.Round) { lock.withLock { rounds.append(round) } }
        var count: Int { lock.withLock { rounds.count } }
        var last: SyncWatcher.Round? { lock.withLock { rounds.last } }

        /// The last round's report when it synced.
        var lastReport: SyncReport? {
            if case .synced(let report)? = last { return report }
            return nil
        }
        var lastSkipped: Bool {
            if case .skipped? = last { return true }
            return false
        }
    }

    /// The data of each event the stream sent so far.
    private static func eventData(_ reader: APIEventsTests.StreamReader) -> [String] {
        reader.text.split(separator: "\n").filter { $0.hasPrefix("data: ") }.map { String($0.dropFirst(6)) }
    }

    @Test func aWatcherPullsForOtherChangesButNotForTheNewsOfItsOwnPush() async throws {
        let site = try await APISite(configure: { $0.liveHeartbeat = .seconds(30) })
        let answer = await site.send("GET", "/api/v1/events?apps=people")
        #expect(answer.status == 200)
        let events = try APIEventsTests.StreamReader(answer.response)
        defer { events.close() }
        #expect(await eventually { events.text.contains(": open") })
        let laptop = try AppDatabase.inMemory()
        let phone = try AppDatabase.inMemory()
        let phoneTransport = InProcessSyncTransport(site: site, token: site.writer)
        let transport = CountingTransport(InProcessSyncTransport(site: site, token: site.writer))
        let watcher = SyncWatcher(database: laptop, transport: transport)
        let rounds = Rounds()
        let running = Task { await watcher.run { rounds.append($0) } }
        defer {
            watcher.finish()
            running.cancel()
        }
        // The first round syncs.
        #expect(await eventually { rounds.count == 1 })
        #expect(rounds.lastReport != nil)

        // A change here is pushed; the sync pulls once after pushing.
        _ = try await PeopleStore(database: laptop).add(PersonDraft(firstName: "Ada", lastName: "Laptop", age: 36))
        watcher.localChange()
        #expect(await eventually { rounds.count == 2 })
        #expect(rounds.lastReport?.sent ?? 0 > 0)
        let pulls = transport.pulls

        // The server's news of that push names a position the laptop has
        // pulled past: no pull.
        #expect(await eventually { Self.eventData(events).count == 1 })
        let own = SyncWatcher.syncPosition(inEvent: Self.eventData(events)[0])
        #expect(own != nil)
        watcher.serverChange(at: own)
        #expect(await eventually { rounds.count == 3 })
        #expect(rounds.lastSkipped)
        #expect(transport.pulls == pulls)

        // Another device's change: its news names a later position, pulled.
        _ = try await PeopleStore(database: phone).add(PersonDraft(firstName: "Pia", lastName: "Phone", age: 30))
        _ = try await phone.syncClient().sync(over: phoneTransport)
        #expect(await eventually { Self.eventData(events).count == 2 })
        let phones = SyncWatcher.syncPosition(inEvent: Self.eventData(events)[1])
        #expect(phones ?? 0 > own ?? .max)
        watcher.serverChange(at: phones)
        #expect(await eventually { rounds.count == 4 })
        #expect(rounds.lastReport?.received ?? 0 > 0)
        #expect(transport.pulls > pulls)
        #expect(try await PeopleStore(database: laptop).all().map(\.lastName).sorted() == ["Laptop", "Phone"])

        // Interleaved: the phone's change reaches the server after the
        // laptop's push and before the news of it, which (read after both)
        // names a position past what the laptop pulled: pulled.
        _ = try await PeopleStore(database: laptop).add(PersonDraft(firstName: "Lin", lastName: "Laptop", age: 20))
        watcher.localChange()
        #expect(await eventually { rounds.count == 5 })
        _ = try await PeopleStore(database: phone).add(PersonDraft(firstName: "Pat", lastName: "Phone", age: 21))
        _ = try await phone.syncClient().sync(over: phoneTransport)
        let afterBoth = try await site.database.syncSettledPosition()
        #expect(afterBoth != nil)
        let beforeNews = transport.pulls
        watcher.serverChange(at: afterBoth)
        #expect(await eventually { rounds.count == 6 })
        #expect(rounds.lastReport?.received ?? 0 > 0)
        #expect(transport.pulls > beforeNews)
        #expect(
            try await PeopleStore(database: laptop).all().map(\.firstName).sorted() == ["Ada", "Lin", "Pat", "Pia"])

        // A change made on the server itself waits to be numbered: its
        // news names no position, and the laptop pulls it.
        #expect(await eventually { Self.eventData(events).count == 4 })
        _ = try await PeopleStore(database: site.database).add(
            PersonDraft(firstName: "Sam", lastName: "Server", age: 40))
        #expect(await eventually { Self.eventData(events).count == 5 })
        let news = Self.eventData(events)[4]
        #expect(news.contains("\"kind\":\"created\""))
        #expect(SyncWatcher.syncPosition(inEvent: news) == nil)
        watcher.serverChange(at: SyncWatcher.syncPosition(inEvent: news))
        #expect(await eventually { rounds.count == 7 })
        #expect(rounds.lastReport?.received ?? 0 > 0)
        #expect(try await PeopleStore(database: laptop).all().contains { $0.lastName == "Server" })
    }

    @Test func theSyncPositionOfAnEventIsReadFromItsData() {
        #expect(SyncWatcher.syncPosition(inEvent: #"{"app":"people","kind":"created","id":3,"syncPosition":42}"#) == 42)
        #expect(SyncWatcher.syncPosition(inEvent: #" {"app":"people","kind":"deleted","id":3}"#) == nil)
        #expect(SyncWatcher.syncPosition(inEvent: "not json") == nil)
        #expect(SyncWatcher.syncPosition(inEvent: #"{"syncPosition":"42"}"#) == nil)
    }
}
