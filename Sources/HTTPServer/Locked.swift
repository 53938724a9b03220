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

/// Values each behind a lock of its own, one chosen by a key (a
/// connection): the event loop's threads serve different connections, so
/// they seldom wait for each other's lock, where with one lock for all
/// they met at it several times a request, and each meeting cost a
/// `futex` call and often a thread switch.
package final class Sharded<Value: Sendable>: Sendable {
    private let shards: [Locked<Value>]

    /// `count` values (rounded up to a power of two), each `make()`.
    package init(count: Int = 16, _ make: () -> Value) {
        var size = 1
        while size < max(1, count) { size *= 2 }
        shards = (0..<size).map { _ in Locked(make()) }
    }

    /// Runs `body` with exclusive access to the value `key` falls to.
    package func withLock<Result, Failure: Error>(
        for key: UInt, _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        // Fibonacci hashing: keys that are addresses (aligned, close
        // together) still spread over every shard.
        let index = Int(truncatingIfNeeded: (UInt64(key) &* 0x9E37_79B9_7F4A_7C15) >> 32) & (shards.count - 1)
        return try shards[index].withLock(body)
    }

    /// Runs `body` on each value in turn, each under its own lock (never
    /// two at once).
    package func forEachLocked(_ body: (inout Value) -> Void) {
        for shard in shards { shard.withLock(body) }
    }

    /// `body` of each value, summed.
    package func sum(_ body: (Value) -> Int) -> Int {
        shards.reduce(0) { total, shard in total + shard.withLock { body($0) } }
    }
}
