import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// Counts the fetches of an observation.
final class FetchCounter: Sendable {
    private let count = Locked(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// Something a fetch closure holds, to see it released.
final class FetchResource: Sendable {}

private func setUp(_ writer: some DatabaseWriter) throws {
    try writer.write { db in
        try db.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER)")
        try db.execute("CREATE TABLE pets (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
    }
}

private func countPeople(_ counter: FetchCounter) -> @Sendable (Database) throws -> Int {
    { db in
        counter.increment()
        return try db.fetchOne(Int.self, "SELECT COUNT(*) FROM people") ?? 0
    }
}

private func insertPerson(_ writer: some DatabaseWriter, _ name: String = "Ada") throws {
    try writer.write { db in try db.execute("INSERT INTO people (name) VALUES (?)", arguments: [name]) }
}

/// A queue and a pool on files of a fresh directory.
enum WriterKind: String, CaseIterable, Sendable {
    case queue, pool

    func make(_ directory: TemporaryDirectory, _ name: String = "db.sqlite") throws -> any DatabaseWriter {
        // No disk flushes: a thousand commits should not wait for the disk.
        var configuration = Configuration()
        configuration.prepareDatabase = { db in try db.execute("PRAGMA synchronous = OFF") }
        return switch self {
        case .queue: try DatabaseQueue(path: directory.path(name), configuration: configuration)
        case .pool: try DatabasePool(path: directory.path(name), configuration: configuration)
        }
    }
}

// The limit guards against a hang. Each test takes well under a second
// alone, but under Thread Sanitizer on two cores a test can wait a long time
// for a cooperative thread before its first line runs.
@Suite("Value observation", .timeLimit(.minutes(3)), .tags(.concurrency))
struct ValueObservationTests {
    @Test(arguments: WriterKind.allCases)
    func initialValueThenAValueAfterEachChange(_ kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try kind.make(directory)
        try setUp(writer)
        try insertPerson(writer)
        var values = writer.observe(countPeople(FetchCounter())).makeAsyncIterator()
        #expect(try await values.next() == 1)
        try insertPerson(writer, "Bob")
        #expect(try await values.next() == 2)
        try await writer.write { db in try db.execute("DELETE FROM people") }
        #expect(try await values.next() == 0)
    }

    @Test func aChangeToAnUntouchedTableCausesNoFetch() async throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("db.sqlite"))
        try setUp(queue)
        let counter = FetchCounter()
        var values = queue.observe(countPeople(counter)).makeAsyncIterator()
        #expect(try await values.next() == 0)
        #expect(counter.value == 1)
        // The queue refetches inside the write access, before it returns.
        try await queue.write { db in try db.execute("INSERT INTO pets (name) VALUES ('Rex')") }
        try await queue.write { db in try db.execute("UPDATE pets SET name = 'Tom'") }
        #expect(counter.value == 1)
        try insertPerson(queue)
        #expect(counter.value == 2)
        #expect(try await values.next() == 1)
    }

    @Test func noStatementOfTheFetchRunsForAnUntouchedTable() async throws {
        let directory = try TemporaryDirectory()
        let statements = Locked<[String]>([])
        var configuration = Configuration()
        configuration.trace = { event in statements.withLock { $0.append(event.sql) } }
        let queue = try DatabaseQueue(path: directory.path("db.sqlite"), configuration: configuration)
        try setUp(queue)
        var values = queue.observe { db in try db.fetchAll(String.self, "SELECT name FROM people") }
            .makeAsyncIterator()
        #expect(try await values.next() == [])
        statements.withLock { $0 = [] }
        try await queue.write { db in try db.execute("INSERT INTO pets (name) VALUES ('Rex')") }
        #expect(!statements.withLock { $0 }.contains("SELECT name FROM people"))
        try insertPerson(queue)
        #expect(statements.withLock { $0 }.contains("SELECT name FROM people"))
        #expect(try await values.next() == ["Ada"])
    }

    @Test func aFetchThroughACachedStatementStillTracksItsTable() async throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("db.sqlite"))
        try setUp(queue)
        let sql = "SELECT COUNT(*) FROM people"
        // Prepared and cached before any observation: not prepared again.
        _ = try await queue.read { db in try db.fetchOne(Int.self, sql: sql) }
        let counter = FetchCounter()
        var values = queue.observe(countPeople(counter)).makeAsyncIterator()
        #expect(try await values.next() == 0)
        try insertPerson(queue)
        #expect(try await values.next() == 1)
        try await queue.write { db in try db.execute("INSERT INTO pets (name) VALUES ('Rex')") }
        #expect(counter.value == 2)
    }

    @Test(arguments: WriterKind.allCases)
    func rolledBackWritesDeliverNothing(_ kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try kind.make(directory)
        try setUp(writer)
        let counter = FetchCounter()
        var values = writer.observe(countPeople(counter)).makeAsyncIterator()
        #expect(try await values.next() == 0)
        struct Failure: Error {}
        #expect(throws: Failure.self) {
            try writer.write { db in
                try db.execute("INSERT INTO people (name) VALUES ('gone')")
                throw Failure()
            }
        }
        try await writer.write { db in
            try db.execute("INSERT INTO pets (name) VALUES ('Rex')")
            try? db.savepoint { db in
                try db.execute("INSERT INTO people (name) VALUES ('gone too')")
                throw Failure()
            }
        }
        try insertPerson(writer, "kept")
        // The next value is the one of the last write: nothing came between.
        #expect(try await values.next() == 1)
        #expect(counter.value == 2)
    }

    @Test(arguments: WriterKind.allCases)
    func manyWritesInOneTransactionGiveOneValue(_ kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try kind.make(directory)
        try setUp(writer)
        let counter = FetchCounter()
        var values = writer.observe(countPeople(counter)).makeAsyncIterator()
        #expect(try await values.next() == 0)
        try await writer.write { db in
            for index in 0..<100 { try db.execute("INSERT INTO people (name) VALUES (?)", arguments: ["\(index)"]) }
        }
        #expect(try await values.next() == 100)
        #expect(counter.value == 2)
    }

    /// 300 commits: in the full suite, which shares Swift's few concurrency
    /// threads among hundreds of tests, 1,000 took 37 of the suite's 60
    /// seconds on a quiet machine and ran out of time on a busy one.
    @Test(arguments: WriterKind.allCases)
    func manyQuickCommitsEndWithTheLastValueAndNeverGoBack(_ kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try kind.make(directory)
        try setUp(writer)
        let observation = writer.observe(countPeople(FetchCounter()))
        let commits = 300
        let writes = Task {
            for index in 1...commits { try await writer.write { db in try insertPerson(db, index) } }
        }
        var previous = -1
        for try await count in observation {
            #expect(count > previous, "a value older than the one before it")
            previous = count
            if count == commits { break }
        }
        try await writes.value
        #expect(previous == commits)
    }

    @Test func aPoolRefetchesOnTheSnapshotOfItsCommitWithoutHoldingTheWriter() async throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("db.sqlite"))
        try setUp(pool)
        let fetching = Gate("second fetch running")
        let proceed = Gate("second fetch may go on")
        let counter = FetchCounter()
        // What each fetch read, by the order the fetches started.
        let fetched = Locked<[Int: Int]>([:])
        var values = pool.observe { db in
            counter.increment()
            let call = counter.value
            if call == 2 {
                fetching.open()
                try proceed.waitBlocking()
            }
            let count = try db.fetchOne(Int.self, "SELECT COUNT(*) FROM people") ?? 0
            fetched.withLock { $0[call] = count }
            return count
        }.makeAsyncIterator()
        #expect(try await values.next() == 0)
        try await pool.write { db in try insertPerson(db, 1) }
        try await fetching.wait()
        // The writer is free while the fetch of the first commit waits.
        try await pool.write { db in try insertPerson(db, 2) }
        proceed.open()
        var last = 0
        while last < 2 {
            let value = try #require(try await values.next())
            #expect(value > last)
            last = value
        }
        try #require(await eventually { fetched.withLock { $0.count } == 3 }, "the waiting fetch ended")
        // The fetch that started after the first commit saw that commit
        // only, though the second was committed before it read.
        #expect(fetched.withLock { $0 } == [1: 0, 2: 1, 3: 2])
    }

    @Test(arguments: WriterKind.allCases)
    func aCommitOfAnotherConnectionIsNoticed(_ kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try kind.make(directory)
        try setUp(writer)
        var values = writer.observe(countPeople(FetchCounter())).makeAsyncIterator()
        #expect(try await values.next() == 0)
        let other = try kind.make(directory)
        try insertPerson(other)
        #expect(try await values.next() == 1)
        await other.close()
    }

    @Test(arguments: WriterKind.allCases)
    func aCommitOfAnotherProcessIsNoticed(_ kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        let writer = try kind.make(directory)
        try setUp(writer)
        var values = writer.observe(countPeople(FetchCounter())).makeAsyncIterator()
        #expect(try await values.next() == 0)
        let child = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["sqlite3", "-cmd", ".timeout 5000", path, "INSERT INTO people (name) VALUES ('child')"])
        #expect(child.status == 0, "\(child)")
        #expect(try await values.next() == 1)
    }

    @Test func pollingRunsOnlyWhileSomethingIsObserved() async throws {
        let directory = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.observationPollingInterval = .milliseconds(10)
        let polls = Locked(0)
        configuration.trace = { event in if event.sql.contains("data_version") { polls.withLock { $0 += 1 } } }
        let queue = try DatabaseQueue(path: directory.path("db.sqlite"), configuration: configuration)
        try setUp(queue)
        let task = Task {
            for try await _ in queue.observe(countPeople(FetchCounter())) {}
        }
        try #require(await eventually { polls.withLock { $0 } >= 2 }, "two polls")
        task.cancel()
        _ = await task.result
        try #require(await eventually { !queue.observationCenter.tracker.isActive }, "observation removed")
        // A poll already waiting for the writer may still run once.
        try await Task.sleep(for: .milliseconds(50))
        let afterStop = polls.withLock { $0 }
        try await Task.sleep(for: .milliseconds(100))
        #expect(polls.withLock { $0 } == afterStop)
    }

    @Test(arguments: WriterKind.allCases)
    func cancellingTheConsumingTaskStopsTheObservationAndFreesItsFetch(_ kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try kind.make(directory)
        try setUp(writer)
        let counter = FetchCounter()
        let firstValue = Gate("first value")
        weak var weakResource: FetchResource?
        let task: Task<Void, any Error>
        do {
            let resource = FetchResource()
            weakResource = resource
            let observation = writer.observe { db in
                _ = resource
                counter.increment()
                return try db.fetchOne(Int.self, "SELECT COUNT(*) FROM people") ?? 0
            }
            task = Task {
                for try await _ in observation { firstValue.open() }
            }
        }
        try await firstValue.wait()
        task.cancel()
        _ = await task.result
        let center = (writer as? any ObservableWriter)?.observationCenter
        try #require(await eventually { center?.tracker.isActive == false }, "observation removed")
        try #require(await eventually { weakResource == nil }, "fetch closure released")
        let fetches = counter.value
        try insertPerson(writer)
        try await writer.write { db in try db.execute("DELETE FROM people") }
        #expect(counter.value == fetches)
    }

    @Test func cancellingTheTokenStopsTheCallbacks() async throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("db.sqlite"))
        try setUp(queue)
        let received = Locked<[Int]>([])
        let first = Gate("first value")
        let token = queue.observe(countPeople(FetchCounter())) { _ in
        } onChange: { value in
            received.withLock { $0.append(value) }
            first.open()
        }
        try await first.wait()
        token.cancel()
        try insertPerson(queue)
        #expect(received.withLock { $0 } == [0])
        #expect(!queue.observationCenter.tracker.isActive)
    }

    @Test func anObservationStartedInsideAWriteSeesItCommitted() async throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("db.sqlite"))
        try setUp(queue)
        let received = Locked<[Int]>([])
        let first = Gate("first value")
        let token = try await queue.write { db in
            try db.execute("INSERT INTO people (name) VALUES ('Ada')")
            return queue.observe(countPeople(FetchCounter())) { _ in
            } onChange: { value in
                received.withLock { $0.append(value) }
                first.open()
            }
        }
        try await first.wait()
        #expect(received.withLock { $0 } == [1])
        token.cancel()
    }

    @Test(arguments: WriterKind.allCases)
    func closingTheWriterEndsTheSequenceWithAnError(_ kind: WriterKind) async throws {
        let directory = try TemporaryDirectory()
        let writer = try kind.make(directory)
        try setUp(writer)
        var values = writer.observe(countPeople(FetchCounter())).makeAsyncIterator()
        #expect(try await values.next() == 0)
        await writer.close()
        await #expect {
            _ = try await values.next()
        } throws: { error in
            isMisuse(error, mentioning: "closed")
        }
    }

    @Test func observingAClosedWriterEndsWithAnError() async throws {
        let queue = try DatabaseQueue.inMemory()
        await queue.close()
        var values = queue.observe { _ in 1 }.makeAsyncIterator()
        await #expect(throws: SQLiteError.self) { _ = try await values.next() }
    }

    @Test func aFailingFetchEndsTheSequenceWithItsError() async throws {
        let queue = try DatabaseQueue.inMemory()
        var values = queue.observe { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM missing") }
            .makeAsyncIterator()
        await #expect {
            _ = try await values.next()
        } throws: { error in
            (error as? SQLiteError)?.message.contains("no such table") == true
        }
        #expect(!queue.observationCenter.tracker.isActive)
    }

    @Test func aFetchThatWritesEndsWithReadOnlyError() async throws {
        let queue = try DatabaseQueue.inMemory()
        try setUp(queue)
        var values = queue.observe { db in try db.execute("INSERT INTO pets (name) VALUES ('x')") }
            .makeAsyncIterator()
        await #expect {
            _ = try await values.next()
        } throws: { error in
            (error as? SQLiteError)?.code == .readOnly
        }
    }

    @Test func removeDuplicatesSkipsAnUnchangedValue() async throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("db.sqlite"))
        try setUp(queue)
        try insertPerson(queue)
        let counter = FetchCounter()
        var values = queue.observe { db in
            counter.increment()
            return try db.fetchAll(String.self, "SELECT name FROM people ORDER BY name")
        }.removeDuplicates().makeAsyncIterator()
        #expect(try await values.next() == ["Ada"])
        try await queue.write { db in try db.execute("UPDATE people SET age = 36") }
        #expect(counter.value == 2)
        try insertPerson(queue, "Bob")
        #expect(try await values.next() == ["Ada", "Bob"])
    }

    @Test func theRegionFollowsWhatEachFetchRead() async throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("db.sqlite"))
        try setUp(queue)
        let counter = FetchCounter()
        // Reads pets only once people is not empty.
        var values = queue.observe { db -> Int in
            counter.increment()
            let people = try db.fetchOne(Int.self, "SELECT COUNT(*) FROM people") ?? 0
            guard people > 0 else { return -1 }
            return try db.fetchOne(Int.self, "SELECT COUNT(*) FROM pets") ?? 0
        }.makeAsyncIterator()
        #expect(try await values.next() == -1)
        try await queue.write { db in try db.execute("INSERT INTO pets (name) VALUES ('Rex')") }
        #expect(counter.value == 1)
        try insertPerson(queue)
        #expect(try await values.next() == 1)
        try await queue.write { db in try db.execute("INSERT INTO pets (name) VALUES ('Tom')") }
        #expect(try await values.next() == 2)
    }

    @Test func aViewIsTrackedThroughItsTables() async throws {
        let queue = try DatabaseQueue.inMemory()
        try setUp(queue)
        try await queue.write { db in try db.execute("CREATE VIEW adults AS SELECT name FROM people WHERE age >= 18") }
        var values = queue.observe { db in try db.fetchAll(String.self, "SELECT name FROM adults") }
            .makeAsyncIterator()
        #expect(try await values.next() == [])
        try await queue.write { db in try db.execute("INSERT INTO people (name, age) VALUES ('Ada', 36)") }
        #expect(try await values.next() == ["Ada"])
    }

    @Test func aUserAuthorizerStillWorksWithObservation() async throws {
        let queue = try DatabaseQueue.inMemory()
        try setUp(queue)
        try await queue.write { db in
            db.setAuthorizer { request in request.action == .delete ? .deny : .allow }
        }
        var values = queue.observe(countPeople(FetchCounter())).makeAsyncIterator()
        #expect(try await values.next() == 0)
        try insertPerson(queue)
        #expect(try await values.next() == 1)
        #expect(throws: SQLiteError.self) {
            try queue.write { db in try db.execute("DELETE FROM people") }
        }
    }
}

private func insertPerson(_ db: Database, _ index: Int) throws {
    try db.execute("INSERT INTO people (name) VALUES (?)", arguments: ["\(index)"])
}
