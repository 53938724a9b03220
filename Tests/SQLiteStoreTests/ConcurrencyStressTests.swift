import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// Many writers and readers at once on one queue or pool: every write
/// lands, every read sees a state that was committed, and nothing fails
/// (no `SQLITE_BUSY`, no deadlock).
@Suite("Concurrency stress", .tags(.concurrency))
struct ConcurrencyStressTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case queue, pool
        var testDescription: String { rawValue }
    }

    static let writerCount = 8
    static let insertsPerWriter = 500
    static let readerCount = 8
    static var total: Int { writerCount * insertsPerWriter }

    /// A database with `item`, one row per insert, and `counter`, the
    /// number of inserts, updated in the same transaction as each insert:
    /// a read that sees a committed state finds them equal.
    private final class Fixture: Sendable {
        let directory: TemporaryDirectory
        let writer: any DatabaseWriter

        init(_ kind: Kind) throws {
            directory = try TemporaryDirectory()
            let path = directory.path("stress.sqlite")
            var configuration = Configuration()
            // Thousands of tiny commits: what is tested is their ordering,
            // not their durability, so spare the disk an fsync per commit.
            configuration.prepareDatabase = { db in try db.execute("PRAGMA synchronous = NORMAL") }
            switch kind {
            case .queue:
                configuration.journalMode = .wal
                writer = try DatabaseQueue(path: path, configuration: configuration)
            case .pool:
                writer = try DatabasePool(path: path, configuration: configuration, maximumReaderCount: 4)
            }
            try writer.write { db in
                try db.execute(
                    """
                    CREATE TABLE item (writer INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (writer, seq));
                    CREATE TABLE counter (n INTEGER NOT NULL);
                    INSERT INTO counter VALUES (0);
                    """)
            }
        }

        /// What one read sees: the number of rows and the counter.
        struct Observation: Sendable, Equatable {
            let rows: Int
            let counter: Int
        }

        static func insert(_ db: Database, writer: Int, seq: Int) throws {
            try db.execute("INSERT INTO item (writer, seq) VALUES (?, ?)", arguments: [writer, seq])
            try db.execute("UPDATE counter SET n = n + 1")
        }

        static func observe(_ db: Database) throws -> Observation {
            // Two statements: they agree only if the read keeps one snapshot.
            let rows = try db.fetchOne(Int.self, "SELECT COUNT(*) FROM item") ?? -1
            let counter = try db.fetchOne(Int.self, "SELECT n FROM counter") ?? -1
            return Observation(rows: rows, counter: counter)
        }

        /// Problems in a reader's observations, in order.
        static func problems(in observations: [Observation]) -> [String] {
            var problems: [String] = []
            var previous = 0
            for observation in observations {
                if observation.rows != observation.counter {
                    problems.append("saw \(observation.rows) rows but counter \(observation.counter)")
                }
                if observation.rows < previous {
                    problems.append("count went back from \(previous) to \(observation.rows)")
                }
                if observation.rows > ConcurrencyStressTests.total {
                    problems.append("saw \(observation.rows) rows, more than were written")
                }
                previous = observation.rows
            }
            return problems
        }

        /// Checks that every insert is present, once.
        func checkAllWritesPresent() throws {
            let pairs = try writer.read { db in
                try db.fetchAll("SELECT writer, seq FROM item").map { row -> Int in
                    let writer: Int = try row[0]
                    let seq: Int = try row[1]
                    return writer * ConcurrencyStressTests.insertsPerWriter + seq
                }
            }
            #expect(pairs.count == ConcurrencyStressTests.total)
            #expect(Set(pairs) == Set(0..<ConcurrencyStressTests.total))
            #expect(try writer.read { db in try Self.observe(db) } == Observation(rows: total, counter: total))
        }

        private var total: Int { ConcurrencyStressTests.total }
    }

    /// Which API the writers and readers use.
    enum API: String, CaseIterable, CustomTestStringConvertible {
        /// `async` methods, from tasks.
        case async
        /// Synchronous methods, from threads of their own.
        case threads
        var testDescription: String { rawValue }

        /// Runs `body` the way this API's callers do.
        func run<T: Sendable>(
            async asyncBody: @escaping @Sendable () async throws -> T,
            sync syncBody: @escaping @Sendable () throws -> T
        ) async throws -> T {
            switch self {
            case .async: try await asyncBody()
            case .threads: try await onOwnThread(syncBody)
            }
        }
    }

    @Test("8 writers x 500 inserts with 8 readers counting", arguments: Kind.allCases, API.allCases)
    func stress(kind: Kind, api: API) async throws {
        let fixture = try Fixture(kind)
        let writer = fixture.writer
        let writersDone = Flag()
        let readerProblems = try await withThrowingTaskGroup(of: [String].self) { group in
            for reader in 0..<Self.readerCount {
                group.addTask {
                    let observations = try await api.run {
                        var observations: [Fixture.Observation] = []
                        repeat {
                            observations.append(try await writer.read { db in try Fixture.observe(db) })
                        } while !writersDone.isSet
                        return observations
                    } sync: {
                        var observations: [Fixture.Observation] = []
                        repeat {
                            observations.append(try writer.read { db in try Fixture.observe(db) })
                        } while !writersDone.isSet
                        return observations
                    }
                    return Fixture.problems(in: observations).map { "reader \(reader): \($0)" }
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { writers in
                for writerIndex in 0..<Self.writerCount {
                    writers.addTask {
                        try await api.run {
                            for seq in 0..<Self.insertsPerWriter {
                                try await writer.write { db in try Fixture.insert(db, writer: writerIndex, seq: seq) }
                            }
                        } sync: {
                            for seq in 0..<Self.insertsPerWriter {
                                try writer.write { db in try Fixture.insert(db, writer: writerIndex, seq: seq) }
                            }
                        }
                    }
                }
                try await writers.waitForAll()
            }
            writersDone.set()
            var problems: [String] = []
            for try await readerProblems in group { problems += readerProblems }
            return problems
        }
        #expect(readerProblems.isEmpty, "\(readerProblems.prefix(5))")
        try fixture.checkAllWritesPresent()
        try await api.run {
            await writer.close()
        } sync: {
            try writer.close()
        }
    }
}
