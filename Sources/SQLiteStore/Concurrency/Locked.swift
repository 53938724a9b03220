import Foundation

/// A value protected by a lock: `Synchronization.Mutex`'s `withLock`, over
/// `NSLock`.
///
/// Why not `Mutex` itself: on Linux (Swift 6.3) `Mutex` locks through
/// futexes inside the uninstrumented Synchronization library, so Thread
/// Sanitizer does not see it synchronize and reports every value it
/// protects as a data race. `NSLock` is a `pthread_mutex_t`, which Thread
/// Sanitizer understands, so `swift test --sanitize=thread` can check the
/// queue and pool for real races. The shape matches `Mutex` so that it can
/// be swapped back once sanitizers see `Mutex`.
///
/// `@unchecked Sendable` because the compiler cannot see the lock. It is
/// safe: `value` is private and only read or written inside ``withLock(_:)``
/// while `lock` is held, so no two threads touch it at once and each access
/// happens after the previous holder's (the lock orders them); and `Value`
/// is `Sendable`, so what `withLock` returns can be used on any thread.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
