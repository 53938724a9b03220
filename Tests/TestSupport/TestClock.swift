import Foundation

/// A clock the tests move by hand: sessions, the log-in throttle and the
/// web server read it instead of the system's, so expiry is tested without
/// waiting.
public final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    /// A clock stopped at `start`.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = start
    }

    /// The clock's time.
    public var now: Date { lock.withLock { current } }

    /// Moves the clock on by `duration`.
    public func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        advance(seconds: TimeInterval(seconds) + TimeInterval(attoseconds) * 1e-18)
    }

    /// Moves the clock on by `seconds`.
    public func advance(seconds: TimeInterval) {
        lock.withLock { current = current.addingTimeInterval(seconds) }
    }

    /// The closure that stores and servers take as their `now`.
    public var closure: @Sendable () -> Date { { [self] in self.now } }
}
