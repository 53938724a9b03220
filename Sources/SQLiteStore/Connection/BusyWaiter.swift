import Foundation

/// How a connection waits for a lock that another connection holds: SQLite's
/// busy handler, installed for ``Configuration/busyTimeout``.
///
/// SQLite's own handler (`sqlite3_busy_timeout`) sleeps longer and longer
/// between tries, up to 100 ms once it has waited a while. Under sustained
/// writes from several processes, that lets a newcomer, still trying every
/// few milliseconds, take the lock again and again before a writer that has
/// waited for seconds tries once more, until that writer's timeout runs out.
/// This handler does the opposite: the longer a connection has waited, the
/// more often it tries (every 20 ms at first, down to every 2 ms after about
/// 4 seconds), so that the oldest waiters are the likeliest to get the lock,
/// and each sleep is a random part of that interval, so that waiters do not
/// retry in lockstep. It gives up, and the statement fails with
/// ``ResultCode/busy``, once the timeout has passed since the first try.
///
/// Only touched on the connection's thread: SQLite calls the handler from
/// the statement that waits, and ``cancellation`` is set by the access
/// running on that thread.
final class BusyWaiter {
    /// The longest wait for one lock, in nanoseconds.
    private let timeout: UInt64
    /// When the current wait began (the first try, attempt 0).
    private var start: UInt64 = 0
    private var randomState: UInt64
    /// Ends the wait early when the `async` access running on the
    /// connection is cancelled.
    var cancellation: AccessCancellation?

    init(timeoutMilliseconds: Int32) {
        timeout = UInt64(max(0, timeoutMilliseconds)) * 1_000_000
        randomState = UInt64.random(in: 1...UInt64.max)
    }

    /// Shortest and longest pause between two tries, in nanoseconds.
    static let shortestInterval: UInt64 = 2_000_000
    static let longestInterval: UInt64 = 20_000_000

    /// Called by SQLite each time the lock is found taken; `attempt` counts
    /// the calls for the same lock. Sleeps and returns true to try again,
    /// or returns false to give up.
    func shouldRetry(attempt: Int32) -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        if attempt == 0 { start = now }
        let waited = now &- start
        if cancellation?.isCancelled == true { return false }
        guard waited < timeout else { return false }
        let interval = min(Self.interval(attempt: attempt, waited: waited), timeout - waited)
        // A random part of the interval, at least half of it.
        let pause = interval / 2 + nextRandom() % (interval / 2 + 1)
        var request = timespec(tv_sec: Int(pause / 1_000_000_000), tv_nsec: Int(pause % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
        return true
    }

    /// The pause before the next try: growing from 1 ms over the first
    /// tries (a lock often frees within a millisecond), capped by a limit
    /// that shrinks from 20 ms to 2 ms as the wait grows, by 5 ms for each
    /// second waited.
    static func interval(attempt: Int32, waited: UInt64) -> UInt64 {
        let growing: UInt64 = 1_000_000 << UInt64(min(max(attempt, 0), 5))
        let shrink = (waited / 1_000_000_000) &* 5_000_000
        let limit = shrink >= longestInterval - shortestInterval ? shortestInterval : longestInterval - shrink
        return min(growing, limit)
    }

    private func nextRandom() -> UInt64 {
        randomState ^= randomState << 13
        randomState ^= randomState >> 7
        randomState ^= randomState << 17
        return randomState
    }
}

/// SQLite's busy callback: non-zero to try again.
func busyWaiterCallback(_ context: UnsafeMutableRawPointer?, _ attempt: Int32) -> Int32 {
    guard let context else { return 0 }
    let waiter = Unmanaged<BusyWaiter>.fromOpaque(context).takeUnretainedValue()
    return waiter.shouldRetry(attempt: attempt) ? 1 : 0
}
