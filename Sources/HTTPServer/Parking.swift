import CMicroHTTPD
import Foundation

/// One request's place in the ``ParkingLot``: the connection it came on,
/// and whether it is suspended now. Its fields are only touched under the
/// lot's lock.
final class ParkingTicket: @unchecked Sendable {
    nonisolated(unsafe) let connection: OpaquePointer
    /// libmicrohttpd holds the connection suspended (out of its event loop).
    var suspended = false
    /// Woken while not suspended: the next ``ParkingLot/park(_:until:)``
    /// does not suspend, and the caller looks again.
    var woken = false
    /// When to wake it even if nothing happened (a stream's heartbeat).
    var deadline: ContinuousClock.Instant?

    init(connection: OpaquePointer) { self.connection = connection }
}

/// Suspends connections that wait (for the request's task, or for a
/// stream's next bytes) and resumes them when what they wait for comes, so
/// that no libmicrohttpd thread ever blocks and one process can hold many
/// thousands of open connections on a few threads.
///
/// A callback that finds nothing ready parks its connection with
/// ``park(_:until:)`` and returns; whoever makes something ready calls
/// ``wake(_:)`` (from any thread), and libmicrohttpd calls the callback
/// again. Both run under one lock, so a wake that comes between the
/// callback's look and its park is not lost: the park then declines and the
/// callback looks again. A thread of the lot wakes connections whose
/// deadline passed. ``close()`` resumes every connection and refuses to
/// park more, before libmicrohttpd stops (it may not stop with suspended
/// connections).
final class ParkingLot: Sendable {
    private struct State {
        var parked: [ObjectIdentifier: ParkingTicket] = [:]
        var closing = false
        var stopped = false
    }

    private let state = Locked(State())

    /// Connections suspended now.
    var parkedCount: Int { state.withLock { $0.parked.count } }

    /// Whether ``close()`` was called.
    var isClosing: Bool { state.withLock { $0.closing } }

    /// Starts the thread that wakes connections whose deadline passed.
    func start() {
        let thread = Thread { [self] in
            while !state.withLock({ $0.stopped }) {
                Thread.sleep(forTimeInterval: 0.1)
                wakeDue()
            }
        }
        thread.name = "http-server-parking"
        thread.stackSize = 256 * 1024
        thread.start()
    }

    /// Suspends the ticket's connection, from a libmicrohttpd callback of
    /// that connection; the callback then returns without an answer. False
    /// when it was woken since it last parked, or the server closes: then
    /// the callback looks again instead.
    func park(_ ticket: ParkingTicket, until deadline: ContinuousClock.Instant? = nil) -> Bool {
        state.withLock { state in
            if state.closing { return false }
            if ticket.woken {
                ticket.woken = false
                return false
            }
            ticket.suspended = true
            ticket.deadline = deadline
            state.parked[ObjectIdentifier(ticket)] = ticket
            MHD_suspend_connection(ticket.connection)
            return true
        }
    }

    /// Something the ticket's connection waits for is ready: resumes it, or
    /// makes its next park decline. Safe from any thread, at any time (a
    /// ticket whose request is over is not suspended, so nothing happens).
    func wake(_ ticket: ParkingTicket) {
        state.withLock { state in Self.resume(ticket, in: &state) }
    }

    /// Wakes the connections whose deadline passed.
    func wakeDue() {
        let now = ContinuousClock.now
        state.withLock { state in
            for ticket in state.parked.values {
                if let deadline = ticket.deadline, deadline <= now { Self.resume(ticket, in: &state) }
            }
        }
    }

    /// Resumes every suspended connection and parks no more; their
    /// callbacks, called again, see ``isClosing`` and end their requests.
    func close() {
        state.withLock { state in
            state.closing = true
            for ticket in state.parked.values { Self.resume(ticket, in: &state) }
        }
    }

    /// Ends the lot's thread.
    func stop() { state.withLock { $0.stopped = true } }

    private static func resume(_ ticket: ParkingTicket, in state: inout State) {
        guard ticket.suspended else {
            ticket.woken = true
            return
        }
        ticket.suspended = false
        ticket.deadline = nil
        state.parked[ObjectIdentifier(ticket)] = nil
        MHD_resume_connection(ticket.connection)
    }
}
