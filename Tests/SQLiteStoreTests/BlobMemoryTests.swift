import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// The resident memory of this process, from Linux's `/proc/self/status`.
enum ResidentMemory {
    static var isAvailable: Bool { ProcessStatus.isAvailable }

    /// A `/proc/self/status` field in bytes: `VmRSS` (resident now) or
    /// `VmHWM` (the peak since the process started or ``resetPeak()``).
    static func bytes(_ field: String) -> Int? { ProcessStatus.bytes(field) }

    /// Resets `VmHWM` to the current resident size (writing 5 to
    /// `/proc/self/clear_refs`, Linux 4.0 and later); false if refused.
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }
}

/// Samples `VmRSS` every millisecond on its own thread, keeping the largest
/// value: a second view of the peak, which also works where `VmHWM` cannot
/// be reset.
final class ResidentMemorySampler: @unchecked Sendable {
    private let lock = NSLock()
    private var running = true
    private var largest = 0
    private let finished = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [self] in
            while lock.withLock({ running }) {
                let now = ResidentMemory.bytes("VmRSS") ?? 0
                lock.withLock { largest = max(largest, now) }
                usleep(1000)
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops sampling and returns the largest resident size seen.
    func stop() -> Int {
        lock.withLock { running = false }
        finished.wait()
        return lock.withLock { largest }
    }
}

/// What the child process measured, in bytes.
struct BlobMemoryReport: Codable {
    var valueSize: Int
    var peakWasReset: Bool
    /// Peak growth over the resident size before the step, by VmHWM
    /// (when it could be reset) and by sampling VmRSS, for each step.
    var writeGrowth: Int
    var readGrowth: Int
    var sampledGrowth: Int
    /// The same measure around reading the value whole as `Data`: proof
    /// that the method sees a value loaded in memory.
    var wholeValueGrowth: Int
    var roundTripIsExact: Bool

    var streamingGrowth: Int { max(writeGrowth, readGrowth, sampledGrowth) }
}

/// Measures one step: the peak resident size during `body`, above the
/// resident size before it.
private func peakGrowth(_ body: () throws -> Void) rethrows -> (growth: Int, peakWasReset: Bool) {
    let wasReset = ResidentMemory.resetPeak()
    let before = ResidentMemory.bytes("VmRSS") ?? 0
    try body()
    let peak = wasReset ? (ResidentMemory.bytes("VmHWM") ?? 0) : (ResidentMemory.bytes("VmRSS") ?? 0)
    return (max(peak - before, 0), wasReset)
}

private let probeOutputVariable = "SQLITESTORE_BLOB_MEMORY_PROBE_OUTPUT"
private let largeValueSize = 30 * 1024 * 1024

/// Runs in a child process started by ``BlobMemoryTests``, so that the
/// process-wide memory figures reflect this work alone and not the tests
/// running in parallel. Skipped otherwise.
@Suite("Blob memory probe")
struct BlobMemoryProbe {
    @Test(
        "Child process: 30 MB file round trip, measured",
        .enabled(if: ProcessInfo.processInfo.environment[probeOutputVariable] != nil, "run by BlobMemoryTests"))
    func measureRoundTrip() throws {
        let output = try #require(ProcessInfo.processInfo.environment[probeOutputVariable])
        let dir = try TemporaryDirectory()
        let db = try makePictureDatabase(in: dir)
        let input = dir.path("in.bin")
        let copy = dir.path("out.bin")
        try PatternBytes.writeFile(input, count: largeValueSize, seed: 50)

        let sampler = ResidentMemorySampler()
        let baseline = ResidentMemory.bytes("VmRSS") ?? 0
        let write = try peakGrowth {
            try db.writeBlob(from: .file(path: input), table: "pictures", column: "picture", rowID: 1)
        }
        // Read through a new connection, as another run of an app would,
        // so that its page cache starts empty.
        db.close()
        let reader = try Database(path: dir.path("pictures.sqlite"))
        let read = try peakGrowth {
            try reader.readBlob(table: "pictures", column: "picture", rowID: 1, to: .file(path: copy))
        }
        let sampled = max(sampler.stop() - baseline, 0)

        var loaded = 0
        let whole = try peakGrowth {
            loaded = try storedPicture(reader)?.count ?? 0
        }
        #expect(loaded == largeValueSize)

        let report = BlobMemoryReport(
            valueSize: largeValueSize, peakWasReset: write.peakWasReset && read.peakWasReset,
            writeGrowth: write.growth, readGrowth: read.growth, sampledGrowth: sampled,
            wholeValueGrowth: whole.growth, roundTripIsExact: try sameBytes(input, copy))
        try JSONEncoder().encode(report).write(to: URL(fileURLWithPath: output))
    }
}

@Suite("Large values in constant memory")
struct BlobMemoryTests {
    @Test(
        "A 30 MB round trip through files grows resident memory by far less than 30 MB",
        .enabled(if: ResidentMemory.isAvailable && ProcessInfo.processInfo.environment[probeOutputVariable] == nil))
    func roundTripMemory() async throws {
        let dir = try TemporaryDirectory()
        let reportPath = dir.path("report.json")
        let logPath = dir.path("child.log")

        // This test binary again, running only the probe.
        let status = try await ChildProcess.startingTestProbe(
            filter: "BlobMemoryProbe", environment: [probeOutputVariable: reportPath], log: logPath
        ).exited()

        let childOutput = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        try #require(status == 0, "the probe process failed:\n\(childOutput)")
        let data = try #require(FileManager.default.contents(atPath: reportPath), "no report:\n\(childOutput)")
        let report = try JSONDecoder().decode(BlobMemoryReport.self, from: data)

        func mebibytes(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
        print(
            "Blob memory, \(mebibytes(report.valueSize)) value, peak resident growth "
                + "(\(report.peakWasReset ? "VmHWM reset per step" : "VmRSS only"), sampled VmRSS every 1 ms): "
                + "write \(mebibytes(report.writeGrowth)), read \(mebibytes(report.readGrowth)), "
                + "sampled \(mebibytes(report.sampledGrowth)); "
                + "reading it whole as Data: \(mebibytes(report.wholeValueGrowth))")

        #expect(report.roundTripIsExact)
        // The measure sees a value held in memory...
        #expect(report.wholeValueGrowth >= report.valueSize * 9 / 10)
        // ...and streaming stays far from it.
        #expect(report.streamingGrowth < report.valueSize / 4)
    }
}
