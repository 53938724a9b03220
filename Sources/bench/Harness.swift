import Foundation
import SQLiteStore

/// One benchmark workload: the same job written twice, once on the raw
/// SQLite C API and once with SQLiteStore.
///
/// To add a workload, write a file in `Workloads/` that defines a
/// `static var` on ``Workloads`` returning one of these, and add it to
/// ``Workloads/all``.
struct Workload {
    /// Short id used by `--filter` and in reports, such as `W1`.
    let id: String
    /// What is measured, shown in the table.
    let title: String
    /// What "as fast as raw" means for this workload.
    let target: Target
    /// The number of rows in the workload's table for a `--rows` value (W7
    /// streams ten times as many). Rates divide by the rows a run really
    /// handled, its ``Outcome/count``, not by this.
    var rowCount: (Int) -> Int = { $0 }
    /// Builds the database every run starts from (untimed, once per
    /// workload); each run gets a fresh copy. Nil: each run starts from an
    /// empty file.
    var template: ((_ path: String, _ rows: Int) throws -> Void)?
    /// The baseline on the C API.
    let raw: (Run) throws -> Outcome
    /// The same job through SQLiteStore.
    let store: (Run) throws -> Outcome
}

/// What a workload must achieve.
enum Target {
    /// SQLiteStore's median time at most this many times raw's.
    case ratio(Double)
    /// SQLiteStore's peak resident memory growth below this many bytes.
    case memoryGrowth(Int)
    /// No target: measured to show what a convenience costs.
    case none

    var description: String {
        switch self {
        case .ratio(let ratio): String(format: "<= %.2fx", ratio)
        case .memoryGrowth(let bytes): "< \(bytes / 1_048_576) MB"
        case .none: "-"
        }
    }
}

/// What a run computed: both sides of a workload must agree on it, so that
/// they are known to have done the same work.
struct Outcome: Equatable, CustomStringConvertible {
    /// The rows the run handled (read, or in the table after inserting),
    /// every reader's rows counted: what rates divide by.
    var count: Int
    var sum: Int
    var description: String { "count \(count), sum \(sum)" }
}

/// The two sides of a workload.
enum Side: String {
    case raw
    case store
}

/// One timed execution of one side of a workload.
final class Run {
    /// A fresh database file for this run.
    let path: String
    /// The workload's row count.
    let rows: Int
    /// Whether the timed part runs inside ``measuredPart(_:)``, for
    /// callgrind to count (`--callgrind-side`).
    let isCollected: Bool
    private(set) var elapsed: Duration = .zero
    private(set) var measured = false
    let memory = MemoryProbe()

    init(path: String, rows: Int, isCollected: Bool = false) {
        self.path = path
        self.rows = rows
        self.isCollected = isCollected
    }

    /// Times `body`; only what runs inside counts. May be called more than
    /// once per run: the times add up.
    func measure<T>(_ body: () throws -> T) rethrows -> T {
        memory.start()
        let clock = ContinuousClock()
        let start = clock.now
        let result = try isCollected ? measuredPart(body) : body()
        elapsed += clock.now - start
        memory.sample()
        measured = true
        return result
    }
}

/// Runs the timed part of the side named by `--callgrind-side`, and nothing
/// else, so that `scripts/bench-callgrind.sh` counts its instructions with
/// valgrind's `--toggle-collect=*measuredPart*`.
///
/// Left unoptimized so that there is exactly one such function, entered
/// once per timed part by a call: the optimizer would otherwise make a copy
/// per closure and merge look-alike copies into one another (a copy calling
/// a copy turns the toggle off again), or jump to the closure instead of
/// calling it (leaving the function, and the collection, before the body
/// ran). One function for the side collected: two identical ones, one per
/// side, could be merged too.
@_optimize(none) @inline(never)
func measuredPart<T>(_ body: () throws -> T) rethrows -> T {
    try body()
}

/// Peak resident memory growth during a run, from Linux's `/proc`: the heap
/// is trimmed and the kernel's high-water mark reset when measuring starts,
/// and sampled values cover kernels that do not allow the reset.
final class MemoryProbe {
    private var baseline = 0
    private var peak = 0
    private var hwmWasReset = false

    /// Peak growth in bytes since ``start()``, or nil where unknown.
    var growth: Int? {
        guard baseline > 0 else { return nil }
        var top = peak
        if hwmWasReset, let hwm = Self.read("VmHWM:") { top = max(top, hwm) }
        return max(0, top - baseline)
    }

    func start() {
        // Memory freed by earlier runs would otherwise be reused without
        // showing as growth.
        _ = Self.trimHeap?(0)
        hwmWasReset = (try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)) != nil
        baseline = Self.read("VmRSS:") ?? 0
        peak = baseline
    }

    /// Records the current resident size; cheap enough to call every few
    /// thousand rows.
    func sample() {
        if let rss = Self.read("VmRSS:") { peak = max(peak, rss) }
    }

    /// glibc's `malloc_trim`, looked up at run time: it is not in the
    /// `Glibc` module, and other C libraries do not have it.
    private static let trimHeap: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    private static func read(_ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            let digits = line.dropFirst(field.count).filter(\.isNumber)
            return Int(digits).map { $0 * 1024 }
        }
        return nil
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The measured figures of one workload.
struct Result {
    let workload: Workload
    let rows: Int
    let rawTimes: [Duration]
    let storeTimes: [Duration]
    let rawGrowth: Int?
    let storeGrowth: Int?
    let outcome: Outcome

    var rawMedian: Double { Self.median(rawTimes) }
    var storeMedian: Double { Self.median(storeTimes) }
    var ratio: Double { storeMedian / rawMedian }
    /// The rows one run handled, as both sides counted them: for W8 every
    /// reader's rows, `rows` times the readers.
    var rowsHandled: Int { outcome.count }
    var rawRowsPerSecond: Double { Self.rate(rowsHandled, milliseconds: rawMedian) }
    var storeRowsPerSecond: Double { Self.rate(rowsHandled, milliseconds: storeMedian) }

    /// Rows per second; 0 when nothing was timed.
    static func rate(_ rows: Int, milliseconds: Double) -> Double {
        milliseconds > 0 ? Double(rows) / (milliseconds / 1000) : 0
    }

    var isMet: Bool? {
        switch workload.target {
        case .ratio(let limit): ratio <= limit
        case .memoryGrowth(let limit): storeGrowth.map { $0 < limit }
        case .none: nil
        }
    }

    /// Median in milliseconds.
    static func median(_ times: [Duration]) -> Double {
        let sorted = times.map { Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15 }
            .sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

/// Runs workloads: each side `repetitions` times after one warm-up run,
/// alternating which side goes first, each run on a fresh database file.
struct Runner {
    let directory: URL
    let rows: Int
    let repetitions: Int
    /// The side whose timed parts run inside ``measuredPart(_:)``, if any.
    var collectedSide: Side?

    func run(_ workload: Workload) throws -> Result {
        let rows = workload.rowCount(self.rows)
        let templatePath = directory.appendingPathComponent("\(workload.id)-template.sqlite").path
        if let template = workload.template {
            try template(templatePath, rows)
        }
        defer { removeDatabase(templatePath) }
        var rawTimes: [Duration] = []
        var storeTimes: [Duration] = []
        var rawGrowth: Int?
        var storeGrowth: Int?
        var expected: Outcome?
        for repetition in 0...repetitions {
            let order = repetition % 2 == 0 ? [true, false] : [false, true]
            for isRaw in order {
                let path = directory.appendingPathComponent("\(workload.id)-run.sqlite").path
                removeDatabase(path)
                if workload.template != nil {
                    try FileManager.default.copyItem(atPath: templatePath, toPath: path)
                }
                defer { removeDatabase(path) }
                let run = Run(
                    path: path, rows: rows, isCollected: collectedSide == (isRaw ? Side.raw : Side.store))
                let outcome = try isRaw ? workload.raw(run) : workload.store(run)
                guard run.measured else { throw BenchError("\(workload.id): a side measured nothing") }
                if let expected, outcome != expected {
                    throw BenchError(
                        "\(workload.id): the raw and SQLiteStore runs did different work: "
                            + "\(expected) vs \(outcome) (\(isRaw ? "raw" : "SQLiteStore"))")
                }
                expected = outcome
                guard repetition > 0 else { continue }  // warm-up
                if isRaw {
                    rawTimes.append(run.elapsed)
                    rawGrowth = max(rawGrowth ?? 0, run.memory.growth ?? 0)
                } else {
                    storeTimes.append(run.elapsed)
                    storeGrowth = max(storeGrowth ?? 0, run.memory.growth ?? 0)
                }
            }
        }
        return Result(
            workload: workload, rows: rows, rawTimes: rawTimes, storeTimes: storeTimes, rawGrowth: rawGrowth,
            storeGrowth: storeGrowth, outcome: expected ?? Outcome(count: 0, sum: 0))
    }

    private func removeDatabase(_ path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}
