import Foundation

/// The content of a file being created or replaced, written where nobody
/// sees it, flushed to disk, then given its name in one step.
///
/// On Linux the content is an unnamed file (`O_TMPFILE`) in the target's
/// directory, linked into place only once complete: a process killed while
/// writing leaves nothing behind. Where unnamed files are not available
/// (Apple platforms, file systems that refuse them) it is a hidden file,
/// `.NAME.sqlitestore-UUID.tmp`, registered with ``TemporaryFileCleanup``
/// for the signal handlers and swept by later copies once stale.
///
/// `package`: the app-support module's `DatabaseTemplate` installs through it.
package final class StagedFile {
    let descriptor: FileDescriptor
    /// The path the content will take.
    let target: String
    private let directory: String
    /// The hidden name, when the content has one.
    private var temporaryPath: String?
    private var registration: Int?
    private var isOpen = true

    /// Whether the content has no name (Linux's `O_TMPFILE`).
    var isUnnamed: Bool { temporaryPath == nil }

    private init(descriptor: FileDescriptor, target: String, directory: String, temporaryPath: String?, slot: Int?) {
        self.descriptor = descriptor
        self.target = target
        self.directory = directory
        self.temporaryPath = temporaryPath
        self.registration = slot
    }

    deinit { discard() }

    /// Starts the content of `target`, in its directory.
    ///
    /// - Parameters:
    ///   - mode: The permissions of the new file, before the umask.
    ///   - allowsUnnamed: False forces the named temporary file used where
    ///     `O_TMPFILE` is not available (for tests).
    /// - Throws: ``SystemCallError``.
    package static func create(for target: String, mode: mode_t, allowsUnnamed: Bool = true) throws -> StagedFile {
        let directory = DestinationPath.directory(of: target)
        let name = DestinationPath.name(of: target)
        TemporaryNames.sweep(directory: directory, name: name)
        #if os(Linux)
            if allowsUnnamed, let descriptor = openUnnamed(in: directory, mode: mode) {
                return StagedFile(
                    descriptor: descriptor, target: target, directory: directory, temporaryPath: nil, slot: nil)
            }
        #endif
        let path = directory + "/" + TemporaryNames.make(for: name)
        // Registered before it exists: a signal between the two removes
        // nothing, rather than missing the file.
        let slot = InFlightFiles.register(path)
        do {
            let descriptor = try FileDescriptor.opening(path, flags: O_WRONLY | O_CREAT | O_EXCL, mode: mode)
            return StagedFile(
                descriptor: descriptor, target: target, directory: directory, temporaryPath: path, slot: slot)
        } catch {
            if let slot { InFlightFiles.unregister(slot) }
            throw error
        }
    }

    /// Writes all of `bytes`; throws ``SystemCallError``.
    package func write(_ bytes: UnsafeRawBufferPointer) throws {
        try descriptor.writeAll(bytes)
    }

    /// Gives the content the target's name only if that name is free: with
    /// another process doing the same, exactly one succeeds.
    ///
    /// - Returns: false, changing nothing, when the name is taken.
    package func publishIfAbsent() throws(SystemCallError) -> Bool {
        try flush()
        if let temporaryPath {
            if link(temporaryPath, target) != 0 {
                let error = SystemCallError.current()
                switch error.code {
                case EEXIST:
                    return false
                case EPERM, ENOTSUP, EOPNOTSUPP, EXDEV, EMLINK, ENOSYS:
                    // A file system without hard links: a rename, which
                    // would replace a file created this very instant.
                    if (try? FileStatus.notFollowing(target)) != nil { return false }
                    guard rename(temporaryPath, target) == 0 else { throw SystemCallError.current() }
                default:
                    throw error
                }
            }
        } else {
            do {
                try linkUnnamed(to: target)
            } catch let error where error.code == EEXIST {
                return false
            }
        }
        finishPublishing()
        return true
    }

    /// Gives the content the target's name, replacing the regular file
    /// there (whose permissions and owner it takes first), in one step.
    ///
    /// - Parameter existing: What was at the target when the copy began;
    ///   nil for nothing.
    package func publishReplacing(_ existing: FileStatus?) throws(SystemCallError) {
        if let existing { adopt(existing) }
        try flush()
        if isUnnamed, existing == nil {
            do {
                try linkUnnamed(to: target)
                finishPublishing()
                return
            } catch let error where error.code == EEXIST {
                // Something appeared meanwhile: replaced below if it is a
                // regular file.
            }
        }
        if let now = try? FileStatus.notFollowing(target), now.type != .regular {
            throw SystemCallError(
                code: EEXIST,
                message: "\(now.type.description) appeared at the path during the copy; it was left as it is")
        }
        if temporaryPath == nil {
            // Linked under a hidden name for the instant of the rename: the
            // only moment the content has a name that is not the target's.
            let hidden = directory + "/" + TemporaryNames.make(for: DestinationPath.name(of: target))
            registration = InFlightFiles.register(hidden)
            do {
                try linkUnnamed(to: hidden)
            } catch {
                unregister()
                throw error
            }
            temporaryPath = hidden
        }
        guard let temporaryPath, rename(temporaryPath, target) == 0 else { throw SystemCallError.current() }
        self.temporaryPath = nil
        finishPublishing()
    }

    /// Abandons the content: nothing of it stays. Safe to call more than
    /// once.
    package func discard() {
        if isOpen {
            try? descriptor.closeDescriptor()
            isOpen = false
        }
        if let temporaryPath {
            unlink(temporaryPath)
            self.temporaryPath = nil
        }
        unregister()
    }

    // MARK: - Steps

    private func flush() throws(SystemCallError) {
        guard fsync(descriptor.rawValue) == 0 else { throw SystemCallError.current() }
    }

    /// Takes the permissions (never set-user-ID, set-group-ID or sticky)
    /// and, where allowed, the owner and group of the file it replaces.
    private func adopt(_ existing: FileStatus) {
        if existing.owner != geteuid() || existing.group != getegid() {
            if fchown(descriptor.rawValue, existing.owner, existing.group) != 0 {
                _ = fchown(descriptor.rawValue, uid_t.max, existing.group)
            }
        }
        _ = fchmod(descriptor.rawValue, existing.permissions & 0o777)
    }

    /// The content has its name: the temporary name is gone, the directory
    /// entry is made durable, the descriptor closed.
    private func finishPublishing() {
        if let temporaryPath {
            unlink(temporaryPath)
            self.temporaryPath = nil
        }
        unregister()
        Self.syncDirectory(directory)
        // The content was flushed: a late close error changes nothing now.
        if isOpen {
            try? descriptor.closeDescriptor()
            isOpen = false
        }
    }

    private func unregister() {
        if let registration { InFlightFiles.unregister(registration) }
        registration = nil
    }

    /// Makes a new directory entry durable. Some file systems refuse to
    /// sync a directory; the file itself is on disk then, so the failure is
    /// not worth reporting.
    static func syncDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    #if os(Linux)
        /// `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY`), which Glibc only
        /// declares under `_GNU_SOURCE`. `__O_TMPFILE` is octal 020000000
        /// on every architecture Swift supports on Linux.
        private static let openTemporaryFile: Int32 = 0o20000000 | O_DIRECTORY
        /// `AT_EMPTY_PATH`, likewise.
        private static let atEmptyPath: Int32 = 0x1000

        /// An unnamed file in `directory`, or nil where the kernel or file
        /// system cannot make one or it could not be linked later.
        private static func openUnnamed(in directory: String, mode: mode_t) -> FileDescriptor? {
            let raw = open(directory, openTemporaryFile | O_WRONLY | O_CLOEXEC, mode)
            guard raw >= 0 else { return nil }
            // Linking it needs /proc (or a capability that only some
            // processes have): without /proc, use a named file instead.
            guard access("/proc/self/fd/\(raw)", F_OK) == 0 else {
                close(raw)
                return nil
            }
            return FileDescriptor(rawValue: raw)
        }

        /// Gives the unnamed file the name `path`; fails with `EEXIST`
        /// when the name is taken.
        private func linkUnnamed(to path: String) throws(SystemCallError) {
            if linkat(descriptor.rawValue, "", AT_FDCWD, path, Self.atEmptyPath) == 0 { return }
            if errno == EEXIST { throw SystemCallError.current() }
            if linkat(AT_FDCWD, "/proc/self/fd/\(descriptor.rawValue)", AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 {
                return
            }
            throw SystemCallError.current()
        }
    #else
        private func linkUnnamed(to path: String) throws(SystemCallError) {
            throw SystemCallError(code: ENOTSUP, message: String(cString: strerror(ENOTSUP)))
        }
    #endif
}

/// The names of the library's temporary files, and the sweep of those that
/// a killed process left.
enum TemporaryNames {
    /// How old a temporary file must be before a later copy removes it:
    /// long past any copy still in progress, which writes it all along.
    static let staleAge = 3600

    private static let marker = ".sqlitestore-"
    private static let suffix = ".tmp"

    /// `.NAME.sqlitestore-UUID.tmp`, with `NAME` shortened so that the
    /// whole stays within `NAME_MAX` bytes.
    static func make(for name: String) -> String {
        "." + stem(of: name) + marker + UUID().uuidString + suffix
    }

    /// The part of `name` that fits in a temporary name, cut at a
    /// character boundary.
    static func stem(of name: String) -> String {
        let room = Int(NAME_MAX) - 1 - marker.utf8.count - 36 - suffix.utf8.count
        var stem = ""
        var used = 0
        for scalar in name.unicodeScalars {
            let size = String(scalar).utf8.count
            if used + size > room { break }
            stem.unicodeScalars.append(scalar)
            used += size
        }
        return stem
    }

    /// The files SQLite keeps beside a database it writes: a backup's
    /// staging file has them while the copy goes on.
    static let companionSuffixes = ["-journal", "-wal", "-shm"]

    /// What a directory entry is to the sweep of a destination's files.
    enum Match: Equatable {
        /// A staging file: one of ours, or an install's by an earlier
        /// version of the library (`.NAME.UUID.installing`).
        case staging
        /// SQLite's `-journal`, `-wal` or `-shm` file of the staging file
        /// named `staging`.
        case companion(of: String)
    }

    /// Whether `entry` is a temporary file of the destination `name`, and
    /// which kind; nil when it is not.
    static func match(_ entry: String, of name: String) -> Match? {
        // Byte for byte: the system's names are bytes, while comparing
        // Strings treats canonically equivalent names (é, and e followed by
        // U+0301) as equal, and a sweep must not take another file's.
        let bytes = Array(entry.utf8)
        if isStagingName(bytes[...], of: name) { return .staging }
        for suffix in companionSuffixes {
            let suffixBytes = Array(suffix.utf8)
            guard bytes.count > suffixBytes.count, bytes.suffix(suffixBytes.count).elementsEqual(suffixBytes) else {
                continue
            }
            let staging = bytes.dropLast(suffixBytes.count)
            // An ASCII suffix taken off valid UTF-8 leaves the same bytes.
            if isStagingName(staging, of: name) { return .companion(of: String(decoding: staging, as: UTF8.self)) }
        }
        return nil
    }

    /// Whether `bytes` is exactly a staging file's name for `name`:
    /// `.STEM.sqlitestore-UUID.tmp`, or the `.NAME.UUID.installing` of
    /// earlier versions.
    private static func isStagingName(_ bytes: ArraySlice<UInt8>, of name: String) -> Bool {
        let prefix = Array(("." + stem(of: name) + marker).utf8)
        let suffixBytes = Array(suffix.utf8)
        if bytes.starts(with: prefix), bytes.count >= prefix.count + suffixBytes.count,
            bytes.suffix(suffixBytes.count).elementsEqual(suffixBytes)
        {
            let start = bytes.startIndex + prefix.count
            return isUUID(bytes[start..<(bytes.endIndex - suffixBytes.count)])
        }
        let legacyPrefix = Array(("." + name + ".").utf8)
        let legacySuffix = Array(".installing".utf8)
        guard bytes.starts(with: legacyPrefix) else { return false }
        let rest = bytes.dropFirst(legacyPrefix.count)
        return rest.count == 36 + legacySuffix.count && isUUID(rest.prefix(36))
            && rest.suffix(legacySuffix.count).elementsEqual(legacySuffix)
    }

    /// Removes the stale temporary files of the destination `name` in
    /// `directory`: exactly our names, regular files, owned by this user,
    /// unchanged for ``staleAge`` seconds. SQLite's files beside a staging
    /// file go only once the staging file is gone: SQLite may be writing it
    /// still (a backup's journal can stay unchanged from its first step to
    /// its last). Best effort: errors are ignored.
    static func sweep(directory: String, name: String) {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        let now = Int(Date().timeIntervalSince1970)
        var companions: [(path: String, staging: String)] = []
        for entry in entries {
            switch match(entry, of: name) {
            case nil:
                continue
            case .staging:
                removeIfStale(directory + "/" + entry, now: now)
            case .companion(let staging):
                companions.append((directory + "/" + entry, directory + "/" + staging))
            }
        }
        for companion in companions {
            var info = stat()
            guard lstat(companion.staging, &info) != 0, errno == ENOENT else { continue }
            removeIfStale(companion.path, now: now)
        }
    }

    private static func removeIfStale(_ path: String, now: Int) {
        guard let status = try? FileStatus.notFollowing(path), status.isRegularFile, status.owner == geteuid(),
            now - status.modificationTime > staleAge
        else { return }
        unlink(path)
    }

    private static func isUUID(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.count == 36, let uuid = UUID(uuidString: String(decoding: bytes, as: UTF8.self)) else {
            return false
        }
        return uuid.uuidString.utf8.elementsEqual(bytes)
    }
}
