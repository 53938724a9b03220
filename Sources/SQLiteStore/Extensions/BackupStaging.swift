import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Not a StagedFile: SQLite writes the copy, so it needs a file with a
// name (StagedFile prefers an unnamed O_TMPFILE). The temporary file has
// the library's temporary name, so it is removed on SIGINT, SIGTERM and
// SIGHUP (TemporaryFileCleanup), with the journal SQLite keeps beside it
// while it writes, and swept with that journal by a later copy if a SIGKILL
// left them; it is published by link() (never replacing) or rename() (replacing a
// regular file only).

/// A backup's destination file while it is being written: a temporary file
/// in the destination's directory that takes the destination's name only
/// once it holds a checked, complete database.
final class BackupStaging {
    /// The destination, as given.
    let destination: String
    /// The temporary file the copy is written to.
    let temporaryPath: String
    private let replace: Bool
    /// "back up to", "vacuum into": for messages.
    private let action: String
    private let directory: String
    private var isPublished = false
    /// Its slot in the files that a signal removes; nil once published or
    /// discarded (or when no slot was free: it is then only swept).
    private var cleanupSlot: Int?

    /// Checks the destination and creates the (empty) temporary file.
    ///
    /// - Parameter sourceFile: The database being copied, so that it is
    ///   never replaced by its own copy.
    init(destination: String, replace: Bool, sourceFile: String?, action: String) throws {
        self.destination = destination
        self.replace = replace
        self.action = action
        guard !destination.isEmpty, destination != ":memory:" else {
            throw SQLiteError.misuse("cannot \(action) \"\(destination)\": the copy needs a file path")
        }
        let parent = (destination as NSString).deletingLastPathComponent
        directory = parent.isEmpty ? "." : parent
        let name = (destination as NSString).lastPathComponent
        temporaryPath = (directory as NSString).appendingPathComponent(TemporaryNames.make(for: name))

        var directoryInfo = stat()
        guard stat(directory, &directoryInfo) == 0 else {
            throw Self.error(.destinationUnusable, destination, action, "the directory \(directory) does not exist")
        }
        guard directoryInfo.st_mode & S_IFMT == S_IFDIR else {
            throw Self.error(.destinationUnusable, destination, action, "\(directory) is not a directory")
        }
        try checkDestination(sourceFile: sourceFile)

        // Registered before it exists: a signal between the two removes
        // nothing, rather than missing the file.
        cleanupSlot = InFlightFiles.register(temporaryPath)
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let message = Self.systemMessage()
            forgetCleanup()
            throw Self.error(
                .destinationUnusable, destination, action,
                "cannot write in the directory \(directory): \(message)")
        }
        close(descriptor)
        TemporaryNames.sweep(directory: directory, name: name)
    }

    /// Refuses a destination that exists (unless replacing), is not a
    /// regular file, or is the source itself.
    private func checkDestination(sourceFile: String?) throws {
        var info = stat()
        guard lstat(destination, &info) == 0 else { return }
        if let sourceFile {
            var sourceInfo = stat()
            var target = stat()
            if stat(sourceFile, &sourceInfo) == 0, stat(destination, &target) == 0,
                sourceInfo.st_dev == target.st_dev, sourceInfo.st_ino == target.st_ino
            {
                throw Self.error(.destinationUnusable, destination, action, "it is the database being copied")
            }
        }
        let type = info.st_mode & S_IFMT
        if type == S_IFDIR {
            throw Self.error(.destinationUnusable, destination, action, "it is a directory")
        }
        guard replace else {
            throw Self.error(.destinationExists, destination, action, "a file is already there")
        }
        guard type == S_IFREG else {
            throw Self.error(
                .destinationUnusable, destination, action,
                "it is not a regular file (a link, device or pipe), which a backup never replaces")
        }
    }

    /// A connection to the temporary file, for the backup to write into.
    func openCopy() throws -> Database {
        var configuration = Configuration()
        configuration.createsMissingFile = false
        configuration.label = "backup copy"
        return try Database(path: temporaryPath, configuration: configuration)
    }

    /// Checks the finished copy, flushes it, and gives it the destination's
    /// name.
    func publish() throws {
        try verify()
        try flush(temporaryPath)
        try checkDestination(sourceFile: nil)
        if replace {
            guard rename(temporaryPath, destination) == 0 else {
                throw Self.error(.ioFailure, destination, action, Self.systemMessage())
            }
        } else if link(temporaryPath, destination) != 0 {
            // link() fails when the name is taken, which makes "only if
            // absent" atomic; a file system without hard links gets the
            // check above and a rename.
            switch errno {
            case EEXIST:
                throw Self.error(.destinationExists, destination, action, "a file is already there")
            case EPERM, ENOTSUP, EOPNOTSUPP, EXDEV, EMLINK, ENOSYS:
                guard rename(temporaryPath, destination) == 0 else {
                    throw Self.error(.ioFailure, destination, action, Self.systemMessage())
                }
            default:
                throw Self.error(.ioFailure, destination, action, Self.systemMessage())
            }
        }
        isPublished = true
        forgetCleanup()
        unlink(temporaryPath)  // the link's other name, if linked
        syncDirectory()
    }

    /// Removes the temporary file and whatever SQLite left beside it.
    func discard() {
        for suffix in ["-journal", "-wal", "-shm"] { unlink(temporaryPath + suffix) }
        if !isPublished { unlink(temporaryPath) }
        forgetCleanup()
    }

    private func forgetCleanup() {
        if let slot = cleanupSlot { InFlightFiles.unregister(slot) }
        cleanupSlot = nil
    }

    /// Opens the copy afresh and runs SQLite's full integrity check on it.
    private func verify() throws {
        var configuration = Configuration()
        configuration.createsMissingFile = false
        configuration.label = "backup check"
        let problems: [String]
        do {
            let copy = try Database(path: temporaryPath, configuration: configuration)
            defer { copy.close() }
            problems = try copy.fetchAll(String.self, "PRAGMA integrity_check")
        } catch let error as SQLiteError {
            throw Self.error(
                .integrityCheckFailed, destination, action,
                "the copy could not be checked (\(error.message)); nothing was written there")
        }
        guard problems == ["ok"] else {
            throw Self.error(
                .integrityCheckFailed, destination, action,
                "the copy failed SQLite's integrity check (\(problems.prefix(3).joined(separator: "; "))); "
                    + "nothing was written there")
        }
    }

    private func flush(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0, fsync(descriptor) == 0 else {
            let message = Self.systemMessage()
            if descriptor >= 0 { close(descriptor) }
            throw Self.error(.ioFailure, destination, action, message)
        }
        close(descriptor)
    }

    /// Makes the new name durable. Some file systems refuse to sync a
    /// directory; the file itself is on disk then, so that is not reported.
    private func syncDirectory() {
        let descriptor = open(directory, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    private static func systemMessage() -> String { String(cString: strerror(errno)) }

    private static func error(_ kind: BackupError.Kind, _ path: String, _ action: String, _ reason: String)
        -> BackupError
    {
        BackupError(kind, path: path, message: "cannot \(action) \(path): \(reason)")
    }
}
