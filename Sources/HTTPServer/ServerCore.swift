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
    private let state = Locked((inFlight: 0, stopping: false))

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

    var inFlight: Int { state.withLock { $0.inFlight } }
    var isStopping: Bool { state.withLock { $0.stopping } }

    /// True the first time.
    func beginStopping() -> Bool {
        state.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
    }

    func requestStarted() { state.withLock { $0.inFlight += 1 } }
    func requestEnded() { state.withLock { $0.inFlight -= 1 } }

    /// Waits until no request is in flight, or the grace period is over.
    func waitForRequestsInFlight() {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: grace)
        while inFlight > 0 && clock.now < deadline { usleep(10_000) }
    }
}
