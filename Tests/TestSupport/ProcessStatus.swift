import Foundation

/// Memory figures of a process, from Linux's `/proc/PID/status`.
public enum ProcessStatus {
    /// Whether `/proc` has them (Linux).
    public static var isAvailable: Bool { FileManager.default.isReadableFile(atPath: "/proc/self/status") }

    /// A `kB` field of the status of process `pid` (this process when nil),
    /// in bytes: `VmRSS` (resident now) or `VmHWM` (the peak resident size
    /// since the process started, or since it was reset); nil when the
    /// process has exited or the field is missing.
    public static func bytes(_ field: String, of pid: Int32? = nil) -> Int? {
        let path = "/proc/\(pid.map(String.init) ?? "self")/status"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let number = line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces)
                .replacingOccurrences(of: " kB", with: "")
            return Int(number).map { $0 * 1024 }
        }
        return nil
    }
}

/// Whether two files hold the same bytes, compared a mebibyte at a time.
///
/// - Throws: when either file cannot be opened or read.
public func sameBytes(_ first: String, _ second: String) throws -> Bool {
    guard let a = FileHandle(forReadingAtPath: first), let b = FileHandle(forReadingAtPath: second) else {
        throw CocoaError(.fileReadNoSuchFile)
    }
    defer {
        try? a.close()
        try? b.close()
    }
    while true {
        let left = try a.read(upToCount: 1 << 20) ?? Data()
        let right = try b.read(upToCount: 1 << 20) ?? Data()
        if left != right { return false }
        if left.isEmpty { return true }
    }
}
