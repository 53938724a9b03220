import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// SQLite's `-wal` and `-shm` files beside the database files this process
/// has open, so that the ones it created and nobody uses any more are
/// removed once its last connection to the file closes.
///
/// SQLite makes both the first time a connection reads a WAL database,
/// with the database file's permissions, and only a connection that can
/// write the database removes them when it closes. A read-only connection
/// (``Configuration/isReadOnly``, or a file this process may not write)
/// leaves them; beside a file whose permissions are `0444` they are `0444`
/// too, and once the database is made writable again every write fails,
/// since SQLite cannot write them.
///
/// A file is removed only if this process created it (it was absent when
/// the process first opened the database), it is a regular file owned by
/// this user, the `-wal` is empty (it never holds changes), and no other
/// process holds one of SQLite's locks on the database or the `-shm` file
/// (any connection using them does).
///
/// Those checks and the removal happen while this process holds SQLite's
/// exclusive lock on the database file, as SQLite's own last connection
/// does when it removes them: a connection of another process takes a
/// shared lock on the database before it opens the `-wal` and `-shm`
/// files, and keeps it until it closes, so none can start using the files
/// between the checks and the removal. (Without the lock, one that did
/// could commit into a `-wal` removed the next moment, and the next
/// process to open the database would start a new one without that
/// commit.) A database file this process cannot open for writing cannot be
/// locked that way; its files are removed after the checks alone.
enum CompanionFiles {
    /// The files of one database, as its first connection in this process
    /// found them.
    private struct Entry {
        /// The database's file, as SQLite names it (links resolved).
        var path: String
        /// Connections of this process open on it.
        var connections: Int
        /// The suffixes of the files that were absent.
        var absent: [String]
    }

    fileprivate struct FileID: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    private static let suffixes = ["-wal", "-shm"]
    private static let entries = Locked<[FileID: Entry]>([:])

    /// One connection's registration: released once, when the connection
    /// has closed.
    struct Registration {
        fileprivate let id: FileID

        /// Counts the connection closed; the last one removes what the
        /// process created.
        func release() {
            CompanionFiles.closed(id)
        }
    }

    /// Counts a connection just opened on the database file `path` (the
    /// name SQLite gives it, `sqlite3_db_filename`), before it has read
    /// anything. Nil for a database without a file.
    static func opened(_ path: String) -> Registration? {
        guard !path.isEmpty else { return nil }
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let id = FileID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        entries.withLock { entries in
            if entries[id] != nil {
                entries[id]?.connections += 1
            } else {
                var status = stat()
                let absent = suffixes.filter { lstat(path + $0, &status) != 0 && errno == ENOENT }
                entries[id] = Entry(path: path, connections: 1, absent: absent)
            }
        }
        return Registration(id: id)
    }

    private static func closed(_ id: FileID) {
        // Under the lock: a connection of this process opening meanwhile
        // waits, and then finds the files gone or counts itself in first.
        entries.withLock { entries in
            guard var entry = entries[id] else { return }
            entry.connections -= 1
            guard entry.connections == 0 else {
                entries[id] = entry
                return
            }
            entries[id] = nil
            removeUnused(entry)
        }
    }

    private static func removeUnused(_ entry: Entry) {
        guard !entry.absent.isEmpty else { return }
        let wal = entry.path + "-wal"
        let shm = entry.path + "-shm"
        let exclusive = ExclusiveLock(entry.path)
        if case .heldElsewhere = exclusive { return }
        // Closing the descriptor ends the lock, once the files are gone.
        defer { exclusive.release() }
        var info = stat()
        if lstat(wal, &info) == 0, info.st_size != 0 { return }
        if case .unavailable = exclusive, isLocked(entry.path, start: sqlitePendingByte, length: 512) { return }
        guard !isLocked(shm, start: 0, length: 0) else { return }
        removalWillStart.withLock { $0 }?(entry.path)
        for suffix in entry.absent {
            let path = entry.path + suffix
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else { continue }
            unlink(path)
        }
    }

    /// Run by the tests with the database's path once the checks have
    /// passed, just before its files are removed; nil otherwise.
    static let removalWillStart = Locked<(@Sendable (String) -> Void)?>(nil)

    /// SQLite's exclusive lock on a database file, taken by this process
    /// without waiting: a write lock on the pending, reserved and shared
    /// bytes, which no connection of another process can hold any lock of
    /// SQLite's beside.
    private enum ExclusiveLock {
        /// Held through this descriptor, until it is closed.
        case held(Int32)
        /// Another process holds one of SQLite's locks on the file.
        case heldElsewhere
        /// The file cannot be opened for writing, which a write lock needs.
        case unavailable

        init(_ path: String) {
            let descriptor = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else {
                self = .unavailable
                return
            }
            var lock = writeLock(start: sqlitePendingByte, length: 512)
            guard fcntl(descriptor, F_SETLK, &lock) == 0 else {
                close(descriptor)
                self = .heldElsewhere
                return
            }
            self = .held(descriptor)
        }

        func release() {
            if case .held(let descriptor) = self { close(descriptor) }
        }
    }

    /// Where SQLite's unix VFS takes its locks on a database file: the
    /// pending byte, then the reserved byte and the 510 shared bytes.
    private static let sqlitePendingByte = 0x4000_0000

    /// Whether another process holds a lock on `length` bytes of `path`
    /// from `start` (0: to the end). Only called with no connection of this
    /// process open on the file: closing the descriptor it opens drops the
    /// process's own locks on the file.
    private static func isLocked(_ path: String, start: Int, length: Int) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return errno != ENOENT }
        defer { close(descriptor) }
        var lock = writeLock(start: start, length: length)
        guard fcntl(descriptor, F_GETLK, &lock) == 0 else { return true }
        return lock.l_type != Int16(F_UNLCK)
    }

    /// A write lock on `length` bytes from `start` (0: to the end), to take
    /// or to ask about.
    private static func writeLock(start: Int, length: Int) -> flock {
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(start)
        lock.l_len = off_t(length)
        return lock
    }
}
