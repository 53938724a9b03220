import Foundation
import RecordsApp
import SQLiteStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `records backup FILE`: a copy of the whole database, every app's
/// tables, made with SQLite's online backup.
let backupCommand = Command(
    name: "backup", summary: "Copy the database to a new file, checked for integrity",
    positionals: [Command.Positional(name: "FILE", help: "The copy to make; its directory must exist")],
    options: [.flag("force", "Replace FILE if it is already there (a regular file only)")],
    discussion: """
        The copy is made while the database stays usable: other programs may write to it
        meanwhile, and the copy holds the database as it was when the backup started.
        FILE appears only once the copy is complete and has passed SQLite's integrity
        check; a failed or interrupted backup leaves nothing there. An existing FILE is
        kept unless --force is given. On a terminal, progress is shown on standard error.
        """,
    examples: ["records backup records-copy.sqlite", "records backup --force ~/backups/records.sqlite"],
    run: { invocation in
        let file = invocation.arguments.positionals.first ?? ""
        if file.isEmpty { throw UsageError(message: "FILE must not be empty", helpPath: invocation.path) }
        if file == "-" {
            throw UsageError(
                message: "FILE must be a file: a backup cannot be written to standard output", helpPath: invocation.path
            )
        }
        let replace = invocation.arguments.flag("force")
        let database = try invocation.database()
        let meter = ProgressLine()
        let result: BackupResult
        do {
            defer { meter.clear() }
            result = try database.backup(to: URL(fileURLWithPath: file), replace: replace) { meter.show($0) }
        } catch let error as BackupError where error.kind == .destinationExists {
            throw CommandFailure(message: "\(error.message) (use --force to replace it)")
        } catch let error as SQLiteError {
            // Either file may be at fault (a full disk where the copy goes).
            throw CommandFailure(message: "cannot back up \(database.path) to \(file): \(error.message)")
        }
        try invocation.afterChange("the backup \(file) was written", lost: "the summary") {
            try Console.out(
                "Backed up \(database.path) to \(file): \(result.pageCount) pages, "
                    + "\(ByteCount.text(result.byteCount)), "
                    + "integrity check ok.")
        }
    })

/// The backup's progress as one line of standard error, rewritten in place,
/// and only when standard error is a terminal: a log file or pipe gets
/// nothing.
@MainActor
private final class ProgressLine {
    private let isEnabled = isatty(STDERR_FILENO) == 1
    private var lastPercent = -1
    private var width = 0

    func show(_ progress: BackupProgress) {
        guard isEnabled else { return }
        let percent = Int(progress.fractionCompleted * 100)
        guard percent != lastPercent else { return }
        lastPercent = percent
        let text = "Backing up: \(percent)% (\(progress))"
        width = max(width, text.count)
        _ = StandardStream.write("\r" + text.padding(toLength: width, withPad: " ", startingAt: 0), to: STDERR_FILENO)
    }

    /// Blanks the line, so that the next message starts clean.
    func clear() {
        guard isEnabled, width > 0 else { return }
        _ = StandardStream.write("\r" + String(repeating: " ", count: width) + "\r", to: STDERR_FILENO)
        width = 0
    }
}
