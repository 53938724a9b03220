import Foundation

/// A value protected by a lock, for what libmicrohttpd's threads share with
/// others (the watchdog, the server's state, the live streams).
///
/// The same type as the SQLiteStore library's `Locked`: the shape of
/// `Synchronization.Mutex` (`withLock` with typed throws) over `NSLock`.
/// Why not `Mutex` itself: on Linux (Swift 6.3) `Mutex` locks through
/// futexes inside the uninstrumented Synchronization library, so Thread
/// Sanitizer does not see it synchronize and reports every value it
/// protects as a data race (it did, for the watchdog and for the live
/// streams closed while the server stopped). `NSLock` is a
/// `pthread_mutex_t`, which the sanitizer understands. `Mutex` also needs
/// macOS 15, above the package's minimum. Swap both for `Mutex` once
/// sanitizers see it.
///
/// `@unchecked Sendable` because the compiler cannot see the lock: `value`
/// is private and only touched inside ``withLock(_:)`` while `lock` is
/// held, and `Value` is `Sendable`.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// A lock around `value`.
    package init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
