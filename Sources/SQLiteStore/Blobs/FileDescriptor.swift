import Foundation

/// A failed system call, with the system's explanation (`strerror`).
package struct SystemCallError: Error {
    let code: Int32
    package let message: String

    /// The error of the last failed system call (`errno`).
    package static func current() -> SystemCallError {
        let code = errno
        return SystemCallError(code: code, message: String(cString: strerror(code)))
    }
}

/// A POSIX file descriptor, read and written with interrupted calls retried
/// and short writes completed. POSIX rather than `FileHandle` so that
/// errors carry the system's reason (`Permission denied`, `No space left on
/// device`) and chunks go straight from SQLite's buffer to the file.
///
/// `package`: the app-support module's `DatabaseTemplate` installs through it.
package struct FileDescriptor {
    let rawValue: Int32

    /// Opens `path`; `mode` applies when the file is created.
    package static func opening(_ path: String, flags: Int32, mode: mode_t = 0o666) throws -> FileDescriptor {
        while true {
            let descriptor = open(path, flags | O_CLOEXEC, mode)
            if descriptor >= 0 { return FileDescriptor(rawValue: descriptor) }
            if errno != EINTR { throw SystemCallError.current() }
        }
    }

    /// Reads at most `buffer.count` bytes; returns 0 at the end of the file.
    package func readSome(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let count = read(rawValue, base, buffer.count)
            if count >= 0 { return count }
            if errno != EINTR { throw SystemCallError.current() }
        }
    }

    /// Writes all of `bytes`.
    func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        guard var base = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let count = write(rawValue, base, remaining)
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemCallError.current()
            }
            base += count
            remaining -= count
        }
    }

    /// What the descriptor refers to.
    package func status() throws -> FileStatus {
        var info = stat()
        guard fstat(rawValue, &info) == 0 else { throw SystemCallError.current() }
        return FileStatus(info)
    }

    /// The current offset, or nil when the descriptor cannot seek (a pipe).
    func currentOffset() -> Int? {
        let offset = lseek(rawValue, 0, SEEK_CUR)
        return offset < 0 ? nil : Int(offset)
    }

    /// Moves back to the start of the file.
    func rewind() throws {
        guard lseek(rawValue, 0, SEEK_SET) == 0 else { throw SystemCallError.current() }
    }

    /// Closes the descriptor. Errors are reported (on some file systems a
    /// failed write only shows here) but the descriptor is gone either way.
    package func closeDescriptor() throws {
        if close(rawValue) != 0 && errno != EINTR { throw SystemCallError.current() }
    }
}

/// The parts of `stat` that the file copies need.
package struct FileStatus {
    /// What kind of file it is.
    package enum FileType: Equatable {
        case regular, directory, characterDevice, blockDevice, fifo, socket, symbolicLink, unknown

        /// "a character device", "a FIFO", ...: for messages.
        var description: String {
            switch self {
            case .regular: "a regular file"
            case .directory: "a directory"
            case .characterDevice: "a character device"
            case .blockDevice: "a block device"
            case .fifo: "a FIFO (named pipe)"
            case .socket: "a socket"
            case .symbolicLink: "a symbolic link"
            case .unknown: "a special file"
            }
        }
    }

    package let type: FileType
    package let size: Int
    let permissions: mode_t
    let owner: uid_t
    let group: gid_t
    /// The last modification, in seconds since 1970.
    let modificationTime: Int

    package var isRegularFile: Bool { type == .regular }
    package var isDirectory: Bool { type == .directory }

    init(_ info: stat) {
        switch info.st_mode & mode_t(S_IFMT) {
        case mode_t(S_IFREG): type = .regular
        case mode_t(S_IFDIR): type = .directory
        case mode_t(S_IFCHR): type = .characterDevice
        case mode_t(S_IFBLK): type = .blockDevice
        case mode_t(S_IFIFO): type = .fifo
        case mode_t(S_IFSOCK): type = .socket
        case mode_t(S_IFLNK): type = .symbolicLink
        default: type = .unknown
        }
        size = Int(info.st_size)
        permissions = info.st_mode & 0o7777
        owner = info.st_uid
        group = info.st_gid
        #if canImport(Darwin)
            modificationTime = Int(info.st_mtimespec.tv_sec)
        #else
            modificationTime = Int(info.st_mtim.tv_sec)
        #endif
    }

    /// The status of the file at `path`, following symbolic links; nil when
    /// there is none.
    package static func of(path: String) -> FileStatus? {
        try? following(path)
    }

    /// The status of the file at `path`, following symbolic links.
    static func following(_ path: String) throws(SystemCallError) -> FileStatus {
        var info = stat()
        guard stat(path, &info) == 0 else { throw SystemCallError.current() }
        return FileStatus(info)
    }

    /// The status of `path` itself: a symbolic link is not followed.
    static func notFollowing(_ path: String) throws(SystemCallError) -> FileStatus {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw SystemCallError.current() }
        return FileStatus(info)
    }
}
