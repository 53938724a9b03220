import Foundation

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
    static var isAvailable: Bool { FileManager.default.isReadableFile(atPath: "/proc/self/status") }

    /// `VmHWM` of process `pid` in bytes; nil once it has exited.
    static func peak(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let number = line.dropFirst("VmHWM:".count).trimmingCharacters(in: .whitespaces)
                .replacingOccurrences(of: " kB", with: "")
            return Int(number).map { $0 * 1024 }
        }
        return nil
    }
}

extension Sandbox {
    /// Runs `records --database <sandbox db> arguments...`, reading the
    /// child's `VmHWM` every half millisecond until it exits.
    func runMeasuringMemory(_ arguments: String...) throws -> MeasuredRun {
        try runMeasuringMemory(binary: try recordsBinary(), ["--database", database] + arguments)
    }

    /// Runs `binary` with `arguments`, reading its `VmHWM` every half
    /// millisecond until it exits.
    func runMeasuringMemory(binary: URL, _ arguments: [String]) throws -> MeasuredRun {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = [
            "HOME": path("home"), "XDG_DATA_HOME": path("xdg"), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
        ]
        let outURL = root.appendingPathComponent("stdout-\(UUID().uuidString)")
        let errURL = root.appendingPathComponent("stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var peak = 0
        while process.isRunning {
            if let now = ChildMemory.peak(of: process.processIdentifier) { peak = max(peak, now) }
            usleep(500)
        }
        process.waitUntilExit()
        try out.close()
        try err.close()
        let run = RecordsRun(
            status: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
        return MeasuredRun(run: run, peakResidentBytes: peak)
    }
}
