import Foundation

/// What ``DatabaseTemplate/install(from:to:)`` did.
public enum TemplateInstallation: Sendable, Equatable {
    /// The template was copied to the destination.
    case installed
    /// A database was already there; nothing was changed.
    case alreadyInstalled
}

/// Installs a pre-populated database that ships with an app (a "template")
/// as the app's working copy, once.
///
/// This is the seeds' "copy the bundled database into the documents
/// directory if it is not there yet", made safe:
///
/// - The copy is atomic. The template is copied to a temporary file in the
///   destination's directory, flushed to disk, checked to be a sound SQLite
///   database, and only then given the destination's name. A missing or
///   corrupt template, a full disk or a crash never leaves a half-written
///   or empty file under the destination's name, so the next attempt is not
///   blocked by it.
/// - A zero-byte file at the destination (what `sqlite3_open` leaves behind
///   when it ran before the template was installed) counts as "not
///   installed" and is replaced.
/// - An existing database is never overwritten, even when two processes
///   install at the same moment.
///
/// ```swift
/// let directory = try DataDirectory.create(forApplication: "records")
/// let destination = directory.appendingPathComponent("records.sqlite")
/// try DatabaseTemplate.install(from: bundledTemplateURL, to: destination)
/// let db = try Database(path: destination.path)
/// ```
///
/// Upgrading a database installed from an older template is the job of a
/// ``Migrator``, not of a new copy.
public enum DatabaseTemplate {
    /// Whether a database is installed at `destination`: a regular file
    /// that is not empty.
    public static func isInstalled(at destination: URL) -> Bool {
        guard let status = FileStatus.of(path: destination.path) else { return false }
        return status.isRegularFile && status.size > 0
    }

    /// Copies `template` to `destination` unless a database is already
    /// there.
    ///
    /// The destination's directory must exist (see
    /// ``DataDirectory/create(forApplication:environment:)``).
    ///
    /// - Returns: ``TemplateInstallation/installed`` when the template was
    ///   copied, ``TemplateInstallation/alreadyInstalled`` when a non-empty
    ///   file was already at the destination.
    /// - Throws: ``DatabaseFileError``: ``DatabaseFileError/Kind/templateMissing``,
    ///   ``DatabaseFileError/Kind/templateNotADatabase``,
    ///   ``DatabaseFileError/Kind/destinationUnusable`` or
    ///   ``DatabaseFileError/Kind/ioFailure``. Nothing is left at the
    ///   destination when it throws.
    @discardableResult
    public static func install(from template: URL, to destination: URL) throws -> TemplateInstallation {
        let destinationPath = destination.path
        if try destinationState(destinationPath) == .installed { return .alreadyInstalled }
        try checkTemplate(template.path)

        let directory = destination.deletingLastPathComponent().path
        let temporaryPath =
            (directory as NSString).appendingPathComponent(
                ".\(destination.lastPathComponent).\(UUID().uuidString).installing")
        defer { removeTemporaryFiles(temporaryPath) }
        try copyFile(from: template.path, to: temporaryPath, destinationDirectory: directory)
        try verifyDatabase(at: temporaryPath, template: template.path)
        return try publish(temporaryPath, as: destinationPath, directory: directory)
    }

    // MARK: - Steps

    private enum DestinationState { case installed, absent }

    /// Whether the destination already holds a database, is free (missing
    /// or empty), or cannot be used.
    private static func destinationState(_ path: String) throws -> DestinationState {
        let directory = (path as NSString).deletingLastPathComponent
        guard let parent = FileStatus.of(path: directory.isEmpty ? "." : directory), parent.isDirectory else {
            throw DatabaseFileError(
                .destinationUnusable, path: path,
                message: "cannot install the database at \(path): the directory \(directory) does not exist")
        }
        guard let status = FileStatus.of(path: path) else { return .absent }
        if status.isDirectory {
            throw DatabaseFileError(
                .destinationUnusable, path: path,
                message: "cannot install the database at \(path): it is a directory")
        }
        return status.size > 0 ? .installed : .absent
    }

    private static func checkTemplate(_ path: String) throws {
        guard let status = FileStatus.of(path: path), !status.isDirectory else {
            throw DatabaseFileError(
                .templateMissing, path: path,
                message: "cannot install the database template: no file at \(path)")
        }
        if status.size == 0 {
            throw DatabaseFileError(
                .templateNotADatabase, path: path,
                message: "cannot install the database template \(path): the file is empty")
        }
    }

    /// Copies in chunks (a large template never sits in memory whole) and
    /// flushes the copy to disk before it can be published.
    private static func copyFile(from source: String, to target: String, destinationDirectory: String) throws {
        let input: FileDescriptor
        do {
            input = try FileDescriptor.opening(source, flags: O_RDONLY)
        } catch let error as SystemCallError {
            throw DatabaseFileError(
                .templateMissing, path: source, message: "cannot read the database template \(source): \(error.message)"
            )
        }
        defer { try? input.closeDescriptor() }
        let output: FileDescriptor
        do {
            output = try FileDescriptor.opening(target, flags: O_WRONLY | O_CREAT | O_EXCL, mode: 0o644)
        } catch let error as SystemCallError {
            throw DatabaseFileError(
                .destinationUnusable, path: destinationDirectory,
                message: "cannot write in the directory \(destinationDirectory): \(error.message)")
        }
        var isOpen = true
        defer { if isOpen { try? output.closeDescriptor() } }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        do {
            while true {
                let count = try input.readSome(into: buffer)
                if count == 0 { break }
                try output.writeAll(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            }
            guard fsync(output.rawValue) == 0 else { throw SystemCallError.current() }
            isOpen = false
            try output.closeDescriptor()
        } catch let error as SystemCallError {
            throw DatabaseFileError(
                .ioFailure, path: target,
                message: "cannot copy the database template \(source) to \(destinationDirectory): \(error.message)")
        }
    }

    /// Opens the copy and runs SQLite's integrity check on it, which
    /// catches a template that is not a database, truncated or corrupt.
    private static func verifyDatabase(at path: String, template: String) throws {
        var configuration = Configuration()
        configuration.createsMissingFile = false
        configuration.label = "template check"
        do {
            let db = try Database(path: path, configuration: configuration)
            defer { db.close() }
            let result = try db.fetchAll(String.self, "PRAGMA quick_check")
            guard result == ["ok"] else {
                throw DatabaseFileError(
                    .templateNotADatabase, path: template,
                    message: "cannot install the database template \(template): it is corrupt ("
                        + result.prefix(3).joined(separator: "; ") + ")")
            }
        } catch let error as DatabaseFileError {
            throw error
        } catch let error as SQLiteError {
            throw DatabaseFileError(
                .templateNotADatabase, path: template,
                message: "cannot install the database template \(template): it is not a usable SQLite "
                    + "database (\(error.message.replacingOccurrences(of: ": \(path)", with: "")))")
        }
    }

    /// Gives the verified copy the destination's name, unless another
    /// process installed a database there in the meantime.
    private static func publish(_ temporaryPath: String, as destination: String, directory: String) throws
        -> TemplateInstallation
    {
        // A hard link fails when the name is taken, which makes "install
        // only if absent" atomic across processes. A zero-byte file in the
        // way is replaced by renaming over it.
        for _ in 0..<3 {
            guard let status = FileStatus.of(path: destination) else {
                if link(temporaryPath, destination) == 0 {
                    syncDirectory(directory)
                    return .installed
                }
                switch errno {
                case EEXIST:
                    continue
                case EPERM, ENOTSUP, EOPNOTSUPP, EXDEV, EMLINK, ENOSYS:
                    // A file system without hard links: rename, which is
                    // atomic but would replace a file created this instant.
                    try replace(destination, with: temporaryPath, directory: directory)
                    return .installed
                default:
                    throw ioFailure(destination, "cannot install the database at \(destination)")
                }
            }
            if status.isDirectory || status.size > 0 {
                // Another process got there first; a directory throws.
                _ = try destinationState(destination)
                return .alreadyInstalled
            }
            try replace(destination, with: temporaryPath, directory: directory)
            return .installed
        }
        throw DatabaseFileError(
            .destinationUnusable, path: destination,
            message: "cannot install the database at \(destination): it keeps changing")
    }

    private static func replace(_ destination: String, with temporaryPath: String, directory: String) throws {
        guard rename(temporaryPath, destination) == 0 else {
            throw ioFailure(destination, "cannot install the database at \(destination)")
        }
        syncDirectory(directory)
    }

    /// Removes the temporary copy and any journal SQLite left beside it.
    private static func removeTemporaryFiles(_ path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            unlink(path + suffix)
        }
    }

    /// Makes the new directory entry durable. Some file systems refuse to
    /// sync a directory; the file itself is already on disk then, so the
    /// failure is not worth reporting.
    private static func syncDirectory(_ path: String) {
        let descriptor = open(path.isEmpty ? "." : path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    private static func ioFailure(_ path: String, _ what: String) -> DatabaseFileError {
        DatabaseFileError(.ioFailure, path: path, message: "\(what): \(SystemCallError.current().message)")
    }
}
