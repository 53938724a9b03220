import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One request on its way through the daemon's callbacks: created when its
/// headers are in, fed the body, answered, and released when libmicrohttpd
/// reports it complete.
final class Exchange: @unchecked Sendable {
    // Only ever touched from the connection's thread, one call at a time.
    var request: Request
    var route: Route?
    var queued = false
    /// An answer decided before the body was read, sent once it has been.
    var pending: Response?
    /// How the body is read once the request's task asks for it.
    var reading = BodyReading.discarded
    var postProcessor: OpaquePointer?
    /// A ``Route/Body/bytes(limit:)`` body so far.
    var rawBody: [UInt8] = []
    var problem: FormProblem?
    var formLimit = Route.defaultFormLimit
    var formBytes = 0
    /// The most bytes the body may have (the route's limit), and the bytes
    /// that came so far.
    var bodyLimit = Route.defaultFormLimit
    var bodyBytes = 0
    var fields: [String: [UInt8]] = [:]
    var currentField: String?
    var sink: (any UploadSink)?
    var uploadError: (any Error)?
    var fileRefused = false
    /// The application refused the file before it started.
    var fileWithheld = false
    /// The handshake with the request's task.
    var gate: BodyGate?
    /// Whether the task asked for the body, and which files it accepts.
    var bodyWanted = false
    var fileGuard: (@Sendable (Request) -> Bool)?
    /// Its place in the server's ``ParkingLot`` when connections do not
    /// each have a thread: it parks there instead of blocking.
    var ticket: ParkingTicket?
    /// The request's ``EventLoopStartExecutor`` when its route starts on
    /// the event loop (``Route/startsOnEventLoop``), else nil. (An
    /// `AnyObject`: the type needs macOS 15.)
    var startExecutor: AnyObject?
    /// What a parked exchange waits for, so that the callback called again
    /// after it is woken goes on where it stopped.
    var waiting = Waiting.nothing

    /// What a parked exchange waits for.
    enum Waiting {
        /// Nothing: it is not parked.
        case nothing
        /// The task's first event: its answer, or its asking for the body.
        case decision
        /// The task's answer, once it has the body.
        case answer
    }

    /// When the request's headers were in.
    let started = ContinuousClock.now

    /// The server it came to.
    let core: ServerCore

    /// What becomes of the body's bytes.
    enum BodyReading {
        /// Thrown away: the route takes no body, or the answer is given.
        case discarded
        /// Decoded as a form by the post processor.
        case form
        /// Kept whole, as it came (``rawBody``).
        case collected
        /// Handed to the route's sink chunk by chunk, as it came.
        case streamed
    }

    init(request: Request, core: ServerCore) {
        self.request = request
        self.core = core
    }

    deinit {
        if let postProcessor { _ = MHD_destroy_post_processor(postProcessor) }
        sink?.cancel()
    }
}
