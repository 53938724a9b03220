import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the daemon's callbacks reach through their context pointer: the
/// application and the count of requests in flight.
final class ServerCore: Sendable {
    let application: any HTTPApplication
    let isSecure: Bool
    /// Drops connections whose request headers are too slow to arrive.
    let watchdog: ConnectionWatchdog
    /// Closes connections answered before their body was read.
    let lingering = LingeringClose()
    /// Suspends and resumes waiting connections when they do not each have
    /// a thread (``ServerOptions/eventLoopThreads`` above 0); nil when
    /// they do, and simply block.
    let parking: ParkingLot?
    private let grace: Duration
    private let stopping = Locked(false)
    /// Requests in flight, counted by connection: a request's start and
    /// end are counted on its connection's shard, so the event loop's
    /// threads do not meet at one lock for every request.
    private let requests = Sharded { 0 }

    init(
        application: any HTTPApplication, isSecure: Bool, grace: Duration, watchdog: ConnectionWatchdog,
        parking: ParkingLot? = nil
    ) {
        self.application = application
        self.parking = parking
        self.isSecure = isSecure
        self.grace = grace
        self.watchdog = watchdog
    }

    var inFlight: Int { requests.sum { $0 } }
    var isStopping: Bool { stopping.withLock { $0 } }

    /// True the first time.
    func beginStopping() -> Bool {
        stopping.withLock { stopping in
            defer { stopping = true }
            return !stopping
        }
    }

    /// A request began on `connection` (nil: counted on a shard of its own;
    /// only the sum counts).
    func requestStarted(on connection: OpaquePointer?) {
        requests.withLock(for: Self.key(connection)) { $0 += 1 }
    }

    /// A request that began on `connection` ended.
    func requestEnded(on connection: OpaquePointer?) {
        requests.withLock(for: Self.key(connection)) { $0 -= 1 }
    }

    private static func key(_ connection: OpaquePointer?) -> UInt {
        UInt(bitPattern: connection.map { Int(bitPattern: $0) } ?? 0)
    }

    /// Waits until no request is in flight, or the grace period is over.
    func waitForRequestsInFlight() {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: grace)
        while inFlight > 0 && clock.now < deadline { usleep(10_000) }
    }
}
