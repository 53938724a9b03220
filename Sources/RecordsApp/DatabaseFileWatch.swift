import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which file a path names: its device and inode. Two paths, or one path
/// at two moments, name the same file when these are equal.
public struct FileIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The device the file is on.
    public var device: UInt64
    /// The file's inode on that device.
    public var inode: UInt64

    /// An identity as given.
    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// The file at `path` now (symbolic links followed), or nil when no
    /// file is there (or it cannot be looked at: a folder on the way gone
    /// or unreadable).
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    public var description: String { "device \(device), inode \(inode)" }
}

/// The database file was deleted or replaced while it was open: the open
/// connections still read and write the file as it was, which nothing can
/// find any more, so whatever is written now is lost when they close.
public struct DatabaseFileLoss: Sendable, Equatable, CustomStringConvertible {
    /// The database's path.
    public var path: String
    /// The file opened there.
    public var opened: FileIdentity
    /// The file there now, or nil when there is none.
    public var found: FileIdentity?

    /// A loss as given.
    public init(path: String, opened: FileIdentity, found: FileIdentity?) {
        self.path = path
        self.opened = opened
        self.found = found
    }

    /// What happened to the file, in a sentence's words: "was deleted" or
    /// "was replaced by another file".
    public var what: String { found == nil ? "was deleted" : "was replaced by another file" }

    /// The path, what happened, and the identities (for the log).
    public var description: String {
        "the database file \(path) \(what) while the server had it open (opened: \(opened); now: "
            + "\(found.map(\.description) ?? "missing"))"
    }
}

/// Watches that the file a database was opened from is still the one at
/// its path. A server asks it before acknowledging a write (``check()``)
/// and on a timer (``startChecking(every:)``): once the file is gone or
/// replaced, every write to the open connections goes to a file nobody can
/// find, so the server must stop acknowledging writes.
///
/// The loss is final: a file put back at the path later is another file
/// (or the same one, but the writes in between are in neither), so the
/// watch keeps reporting the loss until the database is opened again.
///
/// ```swift
/// let watch = DatabaseFileWatch(database: database, onLoss: { loss in log("\(loss)") })
/// watch?.startChecking(every: .seconds(2))
/// if let loss = watch?.check() { /* refuse the write */ }
/// ```
public final class DatabaseFileWatch: @unchecked Sendable {
    /// The database's path.
    public let path: String
    /// The file opened there.
    public let opened: FileIdentity

    private let onLoss: @Sendable (DatabaseFileLoss) -> Void
    // Guarded by `lock`.
    private let lock = NSLock()
    private var found: DatabaseFileLoss?
    private var timer: Task<Void, Never>?

    /// A watch over the file `database` was opened from; nil for a
    /// database in memory, or one whose file was not there to identify
    /// when it was opened.
    ///
    /// - Parameter onLoss: Called once, when a check first finds the file
    ///   gone or replaced (from the checking thread or task).
    public convenience init?(
        database: AppDatabase, onLoss: @escaping @Sendable (DatabaseFileLoss) -> Void = { _ in }
    ) {
        guard let opened = database.openedFile else { return nil }
        self.init(path: database.path, opened: opened, onLoss: onLoss)
    }

    /// A watch that `path` stays the file `opened`.
    public init(path: String, opened: FileIdentity, onLoss: @escaping @Sendable (DatabaseFileLoss) -> Void = { _ in }) {
        self.path = path
        self.opened = opened
        self.onLoss = onLoss
    }

    deinit { timer?.cancel() }

    /// The loss once seen, without looking at the file again.
    public var loss: DatabaseFileLoss? { lock.withLock { found } }

    /// Looks at the path now: the loss when the file there is not the one
    /// opened (now or at an earlier check), else nil.
    @discardableResult
    public func check() -> DatabaseFileLoss? {
        if let found = loss { return found }
        let now = FileIdentity(path: path)
        guard now != opened else { return nil }
        let seen = DatabaseFileLoss(path: path, opened: opened, found: now)
        let first: Bool = lock.withLock {
            guard found == nil else { return false }
            found = seen
            return true
        }
        if first { onLoss(seen) }
        return loss
    }

    /// Checks every `interval` from now on, until the watch is released
    /// (or ``stopChecking()``), so that a loss is noticed, and reported,
    /// without waiting for a write. A second call replaces the first's
    /// timer.
    public func startChecking(every interval: Duration) {
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, !Task.isCancelled else { return }
                if self.check() != nil { return }
            }
        }
        let previous = lock.withLock {
            defer { timer = task }
            return timer
        }
        previous?.cancel()
    }

    /// Stops the timer of ``startChecking(every:)``.
    public func stopChecking() {
        lock.withLock { timer }?.cancel()
    }
}
