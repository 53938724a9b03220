import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What kind of file a path names, as `lstat` sees it (a symbolic link is
/// not followed).
public enum FileKind: Equatable, Sendable {
    case regular, directory, characterDevice, blockDevice, fifo, socket, symbolicLink, other
}

/// Special files for the tests of what the library and `records` do with
/// the files they are pointed at; made only inside a test's own temporary
/// directory, never on real device files.
public enum SpecialFiles {
    /// A device number as glibc's `makedev` builds it.
    public static func deviceNumber(major: UInt64, minor: UInt64) -> UInt64 {
        (minor & 0xff) | ((major & 0xfff) << 8) | ((minor & ~0xff) << 12) | ((major & ~0xfff) << 32)
    }

    /// A character device with the numbers of `/dev/null` (1, 3). Needs
    /// root.
    public static func makeNullDevice(at path: String) throws {
        try check(mknod(path, mode_t(S_IFCHR) | 0o666, dev_t(deviceNumber(major: 1, minor: 3))), path)
    }

    /// A block device node for loop device 200, which no test ever opens:
    /// refusing it is what is tested. Needs root.
    public static func makeBlockDevice(at path: String) throws {
        try check(mknod(path, mode_t(S_IFBLK) | 0o600, dev_t(deviceNumber(major: 7, minor: 200))), path)
    }

    /// A FIFO (named pipe).
    public static func makeFIFO(at path: String) throws {
        try check(mkfifo(path, 0o644), path)
    }

    /// A listening Unix socket bound at `path`; returns its descriptor,
    /// which the caller closes.
    public static func makeSocket(at path: String) throws -> Int32 {
        #if canImport(Darwin)
            let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
        #else
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        try check(descriptor >= 0 ? 0 : -1, path)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(descriptor)
            throw CocoaError(.fileWriteInvalidFileName)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result != 0 {
            close(descriptor)
            try check(-1, path)
        }
        return descriptor
    }

    /// What is at `path` itself (a symbolic link is not followed); nil when
    /// nothing is.
    public static func type(_ path: String) -> FileKind? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        switch info.st_mode & mode_t(S_IFMT) {
        case mode_t(S_IFREG): return .regular
        case mode_t(S_IFDIR): return .directory
        case mode_t(S_IFCHR): return .characterDevice
        case mode_t(S_IFBLK): return .blockDevice
        case mode_t(S_IFIFO): return .fifo
        case mode_t(S_IFSOCK): return .socket
        case mode_t(S_IFLNK): return .symbolicLink
        default: return .other
        }
    }

    /// The device number of the node at `path`.
    public static func deviceID(_ path: String) -> UInt64? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return UInt64(info.st_rdev)
    }

    /// The permission bits of `path`.
    public static func permissions(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int
    }

    private static func check(_ result: Int32, _ path: String) throws {
        if result != 0 {
            throw NSError(
                domain: NSPOSIXErrorDomain, code: Int(errno),
                userInfo: [NSLocalizedDescriptionKey: "\(path): \(String(cString: strerror(errno)))"])
        }
    }
}

/// Sets a file's modification time `seconds` into the past.
public func age(_ path: String, by seconds: TimeInterval) throws {
    try FileManager.default.setAttributes(
        [.modificationDate: Date(timeIntervalSinceNow: -seconds)], ofItemAtPath: path)
}

/// Reads a FIFO to its end on a thread of its own (not a task: opening a
/// FIFO blocks until the writer opens it, and a blocked task could starve
/// the cooperative pool that the writer's side needs).
public final class FIFOReader: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()

    /// Starts reading the FIFO at `path`.
    public init(_ path: String) {
        let thread = Thread { [self] in
            if let handle = FileHandle(forReadingAtPath: path) {
                data = (try? handle.readToEnd()) ?? Data()
                try? handle.close()
            }
            done.signal()
        }
        thread.start()
    }

    /// Everything read, once the writer has closed its end.
    public func received() -> Data {
        done.wait()
        return data
    }
}
