import Foundation
import Synchronization

/// Removes the temporary files of copies still in progress when the
/// process is interrupted.
///
/// A file the library writes (a blob copied to a file by
/// ``Database/readBlob(table:column:rowID:schema:to:chunkSize:)``, a template
/// installed by the app-support module's `DatabaseTemplate`, a backup or
/// `VACUUM INTO` copy) is staged before it takes its name.
/// On Linux a blob's or template's staging file has no name at all
/// (`O_TMPFILE`), so even `SIGKILL` leaves nothing behind. A backup's
/// always has a name, since SQLite writes it; so does every staging file
/// elsewhere, and on file systems without unnamed files: a hidden file
/// beside the destination, `.NAME.sqlitestore-UUID.tmp`, with SQLite's
/// `-journal`, `-wal` and `-shm` files beside it while a backup writes it.
/// An interrupted process would leave them there. A command-line tool
/// calls ``installSignalHandlers()`` once at startup so that Ctrl-C (and
/// `SIGTERM`, `SIGHUP`) removes those files before the process ends:
///
/// ```swift
/// TemporaryFileCleanup.installSignalHandlers()
/// ```
///
/// A staging file that a killed process did leave (`SIGKILL`, a power
/// cut) is swept by the next copy to the same destination once it is an hour
/// old, if it is a regular file owned by the same user and named exactly as
/// the library names them; its `-journal`, `-wal` and `-shm` files are swept
/// likewise, once the staging file itself is gone.
public enum TemporaryFileCleanup {
    /// The signals ``installSignalHandlers()`` handles.
    public static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Removes the named temporary files of the copies in progress in this
    /// process, and SQLite's `-journal`, `-wal` and `-shm` files beside
    /// them. Those copies then fail when they try to publish.
    ///
    /// Safe to call from a signal handler: it only reads atomics and calls
    /// `unlink`.
    ///
    /// Before macOS 15, iOS 18, tvOS 18, watchOS 11 and visionOS 2 (which
    /// lack the `Synchronization` module's atomics, and a lock is not safe
    /// in a signal handler) no file is recorded, so this removes nothing:
    /// a staging file left by an interrupted copy is swept by a later copy
    /// to the same destination once it is an hour old.
    public static func removeFilesInProgress() {
        InFlightFiles.removeAll()
    }

    /// Installs handlers for `SIGINT`, `SIGTERM` and `SIGHUP` that remove
    /// the named temporary files of copies in progress (with SQLite's files
    /// beside them, see ``removeFilesInProgress()``), then end the
    /// process as the signal would have (the default action, so the exit
    /// status reports the signal).
    ///
    /// A signal the process was started with ignored (`nohup`, a
    /// background job) stays ignored. A signal it was started with blocked
    /// is unblocked on the calling thread: the mask is inherited through
    /// `exec`, and a program started from a thread that blocks signals (as
    /// Foundation's `Process` does when called from a dispatch queue) would
    /// otherwise never see Ctrl-C at all. Call this once, early, from the
    /// main thread of the main program, not from a library: it replaces
    /// the handlers of these signals.
    public static func installSignalHandlers() {
        InFlightFiles.prepare()
        for number in signals {
            let previous = installSignalHandler(number, temporaryFileSignalHandler)
            if isIgnored(previous) { installSignalHandler(number, previous) }
        }
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    private static func isIgnored(_ handler: SignalHandler?) -> Bool {
        unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }
}

private typealias SignalHandler = @convention(c) (Int32) -> Void

/// The handler: it can capture nothing, and may only do what is safe in a
/// signal handler.
private let temporaryFileSignalHandler: SignalHandler = { received in
    InFlightFiles.removeAll()
    installSignalHandler(received, SIG_DFL)
    // Blocked while this handler runs, the signal is delivered again, with
    // its default action, as soon as it returns.
    raise(received)
}

@discardableResult
private func installSignalHandler(_ number: Int32, _ handler: SignalHandler?) -> SignalHandler? {
    signal(number, handler)
}

/// The paths of the named temporary files being written, in storage that a
/// signal handler can read: fixed slots allocated once and never freed,
/// each with an atomic state. Removing a file removes the `-journal`,
/// `-wal` and `-shm` files beside it too: SQLite makes them while it
/// writes a backup's staging file.
///
/// The states are `Synchronization.Atomic`s, the only lock-free primitive
/// Swift has without a C module: a lock is not async-signal-safe (the
/// handler may interrupt the thread holding it). `Atomic` needs macOS 15,
/// iOS 18, tvOS 18, watchOS 11 or visionOS 2; on older systems ``register(_:)``
/// records nothing and the signal handler has nothing to remove (a left
/// staging file is then swept once stale; see ``TemporaryFileCleanup``).
/// On Linux the check is always true.
enum InFlightFiles {
    static let capacity = 16
    static let pathCapacity = Int(PATH_MAX) + 1
    /// Room after a path for its longest companion suffix, `-journal`.
    private static let suffixRoom = 8
    private static let slotSize = pathCapacity + suffixRoom

    private static let free = 0
    private static let writing = 1
    private static let ready = 2
    private static let removing = 3

    /// The slots' states, an array of `Atomic<Int>` (untyped, since a
    /// stored property cannot depend on availability); nil where `Atomic`
    /// is unavailable.
    nonisolated(unsafe) private static let stateStorage: UnsafeMutableRawPointer? = {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else { return nil }
        let states = UnsafeMutablePointer<Atomic<Int>>.allocate(capacity: capacity)
        for index in 0..<capacity { (states + index).initialize(to: Atomic(free)) }
        return UnsafeMutableRawPointer(states)
    }()

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    private static var states: UnsafeMutablePointer<Atomic<Int>>? {
        stateStorage?.assumingMemoryBound(to: Atomic<Int>.self)
    }

    nonisolated(unsafe) private static let paths = UnsafeMutablePointer<CChar>.allocate(
        capacity: capacity * slotSize)

    /// Allocates the slots now, so that a signal handler never has to.
    static func prepare() {
        _ = stateStorage
        _ = paths
        _ = pathCapacity
        _ = slotSize
    }

    /// Records `path`; returns its slot, or nil when the path is too long
    /// or every slot is taken (the file is then only swept once stale).
    static func register(_ path: String) -> Int? {
        let bytes = Array(path.utf8)
        guard bytes.count < pathCapacity, !bytes.contains(0) else { return nil }
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), let states else { return nil }
        for slot in 0..<capacity
        where states[slot].compareExchange(expected: free, desired: writing, ordering: .acquiring).exchanged {
            let destination = paths + slot * slotSize
            bytes.withUnsafeBufferPointer { source in
                for index in source.indices { destination[index] = CChar(bitPattern: source[index]) }
            }
            destination[bytes.count] = 0
            states[slot].store(ready, ordering: .releasing)
            return slot
        }
        return nil
    }

    /// Forgets a slot: its file was published or removed.
    static func unregister(_ slot: Int) {
        // A removal in progress on another thread is waited for; it
        // takes one unlink.
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), let states else { return }
        while !states[slot].compareExchange(expected: ready, desired: free, ordering: .acquiringAndReleasing).exchanged
        {
            guard states[slot].load(ordering: .acquiring) == removing else { return }
        }
    }

    /// Removes every registered file, and the companions beside it.
    /// Async-signal-safe: no allocation, no lock.
    static func removeAll() {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), let states else { return }
        for slot in 0..<capacity
        where states[slot].compareExchange(expected: ready, desired: removing, ordering: .acquiring).exchanged {
            let path = paths + slot * slotSize
            var length = 0
            while path[length] != 0 { length += 1 }
            // The companions first: should the process die half-way, the
            // staging file stays and the sweep takes them all.
            unlinkCompanion(path, length: length, "-journal")
            unlinkCompanion(path, length: length, "-wal")
            unlinkCompanion(path, length: length, "-shm")
            unlink(path)
            states[slot].store(ready, ordering: .releasing)
        }
    }

    /// Unlinks `path` + `suffix`, written in the slot's spare room and
    /// taken off again. A `StaticString` needs no allocation.
    private static func unlinkCompanion(_ path: UnsafeMutablePointer<CChar>, length: Int, _ suffix: StaticString) {
        let count = min(suffix.utf8CodeUnitCount, suffixRoom)
        let bytes = suffix.utf8Start
        for index in 0..<count { path[length + index] = CChar(bitPattern: bytes[index]) }
        path[length + count] = 0
        unlink(path)
        path[length] = 0
    }
}
