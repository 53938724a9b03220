import Foundation
import SQLiteStore

extension AppDatabase {
    /// Copies the database into a new file at `url` with SQLite's online
    /// backup: the file appears only once complete and checked with
    /// `integrity_check`, and an existing file is kept unless `replace` is
    /// true (see `Database.backup(toPath:replace:options:progress:)`).
    ///
    /// Other processes may write to the database meanwhile; the copy then
    /// restarts, so it always holds one committed state.
    ///
    /// - Parameter progress: Called after each step; throwing from it stops
    ///   the backup, leaving nothing at `url`.
    /// - Throws: `BackupError` (the destination exists, is unusable, or
    ///   the copy failed its check), `SQLiteError`, or what `progress`
    ///   throws.
    @discardableResult
    public func backup(
        to url: URL, replace: Bool = false, progress: ((BackupProgress) throws -> Void)? = nil
    ) throws -> BackupResult {
        try writer.writeWithoutTransaction { db in
            try db.backup(toPath: url.path, replace: replace, progress: progress)
        }
    }
}
