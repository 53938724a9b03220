import Foundation
import Testing

@testable import bench

/// The bench's arithmetic: what its medians and rates divide, and how many
/// rows W8's readers read.
@Suite struct HarnessArithmeticTests {
    private static func milliseconds(_ values: [Int]) -> [Duration] { values.map { .milliseconds($0) } }

    @Test func medianOfAnOddCountIsTheMiddleTime() {
        #expect(Result.median(Self.milliseconds([30, 10, 20])) == 20)
    }

    @Test func medianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
        #expect(Result.median(Self.milliseconds([40, 10, 30, 20])) == 25)
    }

    @Test func medianOfNoTimesIsZero() {
        #expect(Result.median([]) == 0)
    }

    @Test func rateIsRowsDividedBySeconds() {
        #expect(Result.rate(3_000, milliseconds: 1_500) == 2_000)
    }

    @Test func rateOfNothingTimedIsZero() {
        #expect(Result.rate(3_000, milliseconds: 0) == 0)
    }

    @Test func ratesDivideTheRowsEveryReaderReadNotTheTableRows() {
        let workload = Workloads.w8ConcurrentReads(readers: 4)
        let result = Result(
            workload: workload, rows: 1_000, rawTimes: Self.milliseconds([100]), storeTimes: Self.milliseconds([200]),
            rawGrowth: nil, storeGrowth: nil, outcome: Outcome(count: 4_000, sum: 0))
        #expect(result.rowsHandled == 4_000)
        #expect(result.rawRowsPerSecond == 40_000)
        #expect(result.storeRowsPerSecond == 20_000)
        #expect(result.ratio == 2)
    }

    @Test(arguments: [1, 2, 4])
    func w8TableHoldsTheRowsAndEachReaderReadsThemAll(readers: Int) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("bench-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let rows = 50
        let result = try Runner(directory: directory, rows: rows, repetitions: 1)
            .run(Workloads.w8ConcurrentReads(readers: readers))
        #expect(result.rows == rows)
        #expect(result.outcome.count == rows * readers)
        #expect(result.rowsHandled == rows * readers)
        // Every reader sums the same table: 0 + 1 + ... + (10 rows - 1).
        #expect(result.outcome.sum == readers * (rows * 10) * (rows * 10 - 1) / 2)
    }

    @Test func aRunOfOneReaderReadsTheTableOnce() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("bench-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try Runner(directory: directory, rows: 30, repetitions: 1).run(Workloads.w2FetchByIndex)
        #expect(result.rowsHandled == 30)
    }

    @Test func throughputLinesNameEachReaderCountWithItsRowsRead() {
        let results = [1, 2].map { readers in
            Result(
                workload: Workloads.w8ConcurrentReads(readers: readers), rows: 1_000,
                rawTimes: Self.milliseconds([1]), storeTimes: Self.milliseconds([2]), rawGrowth: nil,
                storeGrowth: nil, outcome: Outcome(count: 1_000 * readers, sum: 0))
        }
        let text = Report.throughput(results) ?? ""
        #expect(text.contains("1 reader: raw 1.00 M rows/s, SQLiteStore 0.50 M rows/s (1000 rows read per run)"))
        #expect(text.contains("2 readers: raw 2.00 M rows/s, SQLiteStore 1.00 M rows/s (2000 rows read per run)"))
    }

    @Test func noThroughputWithoutW8() {
        #expect(Report.throughput([]) == nil)
    }
}
