import Foundation
import SQLiteStore

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
/// This is the original tutorials' "copy the bundled database into the
/// documents directory if it is not there yet", made safe:
///
/// - The template is checked to be a sound SQLite database before anything
///   is written.
/// - The copy is atomic. It is written beside the destination where no one
///   sees it, flushed to disk, and only then given the destination's name.
///   On Linux it has no name at all until then (`O_TMPFILE`), so even a
///   killed process leaves nothing behind; elsewhere it is a hidden
///   temporary file (see SQLiteStore's `TemporaryFileCleanup`). A missing or corrupt
///   template, a full disk or a crash never leaves a half-written or empty
///   file under the destination's name, so the next attempt is not blocked
///   by it.
/// - An empty regular file at the destination (what `sqlite3_open` leaves
///   behind when it ran before the template was installed) counts as "not
///   installed" and is replaced, if it may be written; the database takes
///   its permissions (a `0600` file stays `0600`) and, where allowed, its
///   owner.
/// - A symbolic link is followed, never replaced: the database is
///   installed at the file it points to, which is created if it does not
///   exist yet (its directory must exist).
/// - Anything else at the destination (a directory, a device such as
///   `/dev/null`, a FIFO, a socket) is refused with a
///   ``DatabaseFileError`` and left as it is.
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
/// `Migrator`, not of a new copy.
public enum DatabaseTemplate {
    /// Whether a database is installed at `destination`: a regular file
    /// that is not empty (symbolic links followed).
    ///
    /// A URL with a trailing slash names a directory, so nothing is
    /// installed there.
    public static func isInstalled(at destination: URL) -> Bool {
        guard let status = FileStatus.of(path: DestinationPath.path(of: destination)) else { return false }
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
    ///   regular file was already at the destination.
    /// - Throws: ``DatabaseFileError``: ``DatabaseFileError/Kind/templateMissing``,
    ///   ``DatabaseFileError/Kind/templateNotADatabase``,
    ///   ``DatabaseFileError/Kind/destinationUnusable`` (among others: a
    ///   directory, a device, a FIFO or a socket at the destination, an
    ///   empty file that may not be written, a missing directory, a name or
    ///   path too long) or ``DatabaseFileError/Kind/ioFailure``. Nothing is
    ///   left at the destination when it throws, and what was there is as it
    ///   was.
    @discardableResult
    public static func install(from template: URL, to destination: URL) throws -> TemplateInstallation {
        try install(from: template, to: destination, allowsUnnamedFiles: true)
    }

    /// ``install(from:to:)``; `allowsUnnamedFiles` false forces the named
    /// temporary file used where `O_TMPFILE` is not available (for tests).
    static func install(from template: URL, to destination: URL, allowsUnnamedFiles: Bool) throws
        -> TemplateInstallation
    {
        let destinationPath = DestinationPath.path(of: destination)
        guard let resolved = try usableDestination(destinationPath) else { return .alreadyInstalled }
        let input = try openTemplate(template.path)
        defer { try? input.descriptor.closeDescriptor() }
        try verifyDatabase(at: template.path)

        // Created private when it will take an existing file's place, so
        // that its content is never readable by more people than that file.
        let mode: mode_t = resolved.status == nil ? 0o644 : 0o600
        let staged: StagedFile
        do {
            staged = try StagedFile.create(for: resolved.target, mode: mode, allowsUnnamed: allowsUnnamedFiles)
        } catch let error as SystemCallError {
            let directory = resolved.targetDirectory
            throw DatabaseFileError(
                .destinationUnusable, path: destinationPath,
                message: "cannot install the database at \(destinationPath): cannot write in the directory "
                    + "\(directory): \(error.message)")
        }
        defer { staged.discard() }
        try copy(input, to: staged, template: template.path, destination: destinationPath)
        return try publish(staged, at: destinationPath)
    }

    // MARK: - Steps

    /// The bytes SQLite adds to a database's name for its longest
    /// companion file, `-journal`.
    private static let journalSuffixLength = 8

    private static func unusable(_ path: String, _ reason: String) -> DatabaseFileError {
        DatabaseFileError(
            .destinationUnusable, path: path, message: "cannot install the database at \(path): \(reason)")
    }

    /// Where the database goes, or nil when one is already there; throws
    /// when nothing may be installed at `path`.
    private static func usableDestination(_ path: String) throws -> ResolvedDestination? {
        let resolved: ResolvedDestination
        do {
            resolved = try DestinationPath.resolve(path)
        } catch {
            throw unusable(path, error.reason)
        }
        if let status = resolved.status {
            guard status.isRegularFile else { throw unusable(path, resolved.describe(status.type)) }
            if status.size > 0 { return nil }
            if access(resolved.target, W_OK) != 0 {
                throw unusable(
                    path, "it is an empty file that may not be written (\(SystemCallError.current().message))")
            }
        }
        // SQLite keeps its journal beside the database, named with 8 more
        // bytes: a longer name would install a database that cannot be
        // written.
        let name = DestinationPath.name(of: resolved.target)
        let nameLimit = Int(NAME_MAX) - journalSuffixLength
        if name.utf8.count > nameLimit {
            let shown = name.count > 24 ? name.prefix(24) + "…" : Substring(name)
            throw unusable(
                path,
                "the name \"\(shown)\" is \(name.utf8.count) bytes long, over the limit of \(nameLimit) bytes "
                    + "for a database (SQLite adds \"-journal\" to it for its journal)")
        }
        return resolved
    }

    private static func openTemplate(_ path: String) throws -> (descriptor: FileDescriptor, size: Int) {
        guard let status = FileStatus.of(path: path), !status.isDirectory else {
            throw DatabaseFileError(
                .templateMissing, path: path, message: "cannot install the database template: no file at \(path)")
        }
        if status.size == 0 {
            throw DatabaseFileError(
                .templateNotADatabase, path: path,
                message: "cannot install the database template \(path): the file is empty")
        }
        do {
            let descriptor = try FileDescriptor.opening(path, flags: O_RDONLY)
            return (descriptor, try descriptor.status().size)
        } catch let error as SystemCallError {
            throw DatabaseFileError(
                .templateMissing, path: path, message: "cannot read the database template \(path): \(error.message)")
        }
    }

    /// Runs SQLite's quick integrity check on the template, which catches
    /// one that is not a database, truncated or corrupt, before anything is
    /// written.
    private static func verifyDatabase(at path: String) throws {
        let result: [String]
        switch QuickCheck.run(onFileAt: path) {
        case .success(let rows): result = rows
        case .failure(let error):
            throw DatabaseFileError(
                .templateNotADatabase, path: path,
                message: "cannot install the database template \(path): it is not a usable SQLite database "
                    + "(\(error.message))")
        }
        guard result == ["ok"] else {
            throw DatabaseFileError(
                .templateNotADatabase, path: path,
                message: "cannot install the database template \(path): it is corrupt ("
                    + result.prefix(3).joined(separator: "; ") + ")")
        }
    }

    /// Copies in chunks (a large template never sits in memory whole),
    /// exactly as many bytes as the template held when it was checked.
    private static func copy(
        _ input: (descriptor: FileDescriptor, size: Int), to staged: StagedFile, template: String, destination: String
    ) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var copied = 0
        do {
            while true {
                let count = try input.descriptor.readSome(into: buffer)
                if count == 0 { break }
                try staged.write(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                copied += count
            }
        } catch let error as SystemCallError {
            throw DatabaseFileError(
                .ioFailure, path: destination,
                message: "cannot copy the database template \(template) to \(destination): \(error.message)")
        }
        guard copied == input.size else {
            throw DatabaseFileError(
                .templateNotADatabase, path: template,
                message: "cannot install the database template \(template): it changed while it was copied "
                    + "(\(input.size) bytes, then \(copied))")
        }
    }

    /// Gives the copy the destination's name, unless another process
    /// installed a database there in the meantime.
    private static func publish(_ staged: StagedFile, at destination: String) throws -> TemplateInstallation {
        for _ in 0..<3 {
            // Checked again: another process may have installed, or put
            // something else there, during the copy.
            guard let resolved = try usableDestination(destination) else { return .alreadyInstalled }
            do {
                if let existing = resolved.status {
                    // An empty file: replaced by a rename.
                    try staged.publishReplacing(existing)
                    return .installed
                }
                // A hard link (or linking the unnamed file) fails when the
                // name is taken, which makes "install only if absent"
                // atomic across processes.
                if try staged.publishIfAbsent() { return .installed }
            } catch {
                throw DatabaseFileError(
                    .ioFailure, path: destination,
                    message: "cannot install the database at \(destination): \(error.message)")
            }
        }
        throw unusable(destination, "another process keeps creating and removing files there")
    }
}
