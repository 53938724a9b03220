import Foundation
import TestSupport

@testable import SQLiteStore

/// One run of `records` with the peak resident memory of its process.
struct MeasuredRun {
    let run: RecordsRun
    /// The highest `VmHWM` (peak resident set size) read from the child's
    /// `/proc/PID/status` while it ran, in bytes.
    let peakResidentBytes: Int
}

/// The child's own peak memory, read from Linux's `/proc`.
///
/// Not `wait4`'s `ru_maxrss`: on Linux that value carries the parent's
/// peak into a child started with `vfork` (as `posix_spawn` and `Process`
/// start them) when the child calls `exec`, so it would report the test
/// process's size. `VmHWM` belongs to the memory the child got from
/// `exec`, and only grows, so the last value read before the child exits
/// is its peak up to then.
enum ChildMemory {
    static var isAvailable: Bool { ProcessStatus.isAvailable }

    /// `VmHWM` of process `pid` in bytes; nil once it has exited.
    static func peak(of pid: Int32) -> Int? { ProcessStatus.bytes("VmHWM", of: pid) }
}

extension Sandbox {
    /// Runs `records --database <sandbox db> arguments...`, reading the
    /// child's `VmHWM` every half millisecond until it exits.
    func runMeasuringMemory(_ arguments: String...) async throws -> MeasuredRun {
        try await runMeasuringMemory(binary: try recordsBinary(), ["--database", database] + arguments)
    }

    /// Runs `binary` with `arguments`, reading its `VmHWM` every half
    /// millisecond until it exits.
    func runMeasuringMemory(binary: URL, _ arguments: [String]) async throws -> MeasuredRun {
        let peak = Locked(0)
        let run = try await runRaw(arguments, binary: binary) { process in
            var highest = 0
            while process.isRunning {
                if let now = ChildMemory.peak(of: process.processIdentifier) { highest = max(highest, now) }
                usleep(500)
            }
            peak.withLock { $0 = highest }
        }
        return MeasuredRun(run: run, peakResidentBytes: peak.withLock { $0 })
    }
}
