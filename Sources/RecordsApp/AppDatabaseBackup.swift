import Foundation
import SQLiteStore

extension AppDatabase {
    /// Copies the database into a new file at `url` with SQLite's online
    /// backup, from a reader's snapshot: the database as committed when the
    /// backup starts, while writes go on (see
    /// `DatabaseReader.backup(toPath:replace:options:progress:)`). The file
    /// appears only once complete and checked with `integrity_check`, and
    /// an existing file is kept unless `replace` is true.
    ///
    /// - Parameters:
    ///   - options: The pages per step and the pauses between them.
    ///   - progress: Called after each step; throwing from it stops the
    ///     backup, leaving nothing at `url`.
    /// - Throws: `BackupError` (the destination exists, is unusable, or
    ///   the copy failed its check), `SQLiteError`, or what `progress`
    ///   throws.
    @discardableResult
    public func backup(
        to url: URL, replace: Bool = false, options: BackupOptions = BackupOptions(),
        progress: ((BackupProgress) throws -> Void)? = nil
    ) throws -> BackupResult {
        try writer.backup(toPath: url.path, replace: replace, options: options, progress: progress)
    }
}

extension AppDatabase {
    /// SQLite's quick integrity check of the database file at `path`,
    /// opened read-only and immutable: no lock is taken and no file is made
    /// beside it. For a copy made elsewhere (a restore) before it replaces
    /// anything.
    ///
    /// - Returns: the check's rows (`["ok"]` for a sound database), or the
    ///   error SQLite reported opening or reading the file.
    public static func quickCheck(fileAt path: String) -> Result<[String], SQLiteError> {
        QuickCheck.run(onFileAt: path)
    }
}
