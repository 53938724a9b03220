import Foundation

/// The handshake between a connection's thread, which reads the body, and
/// the request's task, which runs the middleware and the handler.
///
/// The thread starts the task when the headers are in and waits for one of
/// two events: the task answered (without the body: the answer is sent
/// and the body discarded), or it asked for the body
/// (``Request/receivingBody(acceptingFile:)``). It then reads the body,
/// hands it over with ``deliver(_:)``, and waits for the answer. On the
/// event loop (``ServerOptions/eventLoopThreads``) it never blocks: it
/// takes an event if there is one (``takeEvent()``), else parks the
/// connection, which the gate's `wake` resumes after the next event.
final class BodyGate: Sendable {
    /// A body as the server read it.
    struct Received: Sendable {
        var form = Form()
        var body: [UInt8] = []
        var upload: (any UploadSink)?
        var uploadError: (any Error)?
        var problem: FormProblem?
        var withheld = false
    }

    /// What the connection's thread waits for.
    enum Event: Sendable {
        /// The task asks for the body of this request (its context is
        /// filled in), receiving files `fileGuard` accepts.
        case bodyWanted(Request, fileGuard: (@Sendable (Request) -> Bool)?)
        /// The task's answer.
        case answered(Response)
    }

    private struct State: Sendable {
        var events: [Event] = []
        var waiting: CheckedContinuation<Received, any Error>?
        var received: Received?
        var asked = false
        var abandoned = false
    }

    private let state = Locked(State())
    private let signal = DispatchSemaphore(value: 0)
    /// Called after each event, for a connection that does not block
    /// waiting for them (it parks instead: see ``ParkingLot``).
    private let wake: (@Sendable () -> Void)?
    /// The request has no body, and its route reads none or takes it as
    /// it came: the task's ask is answered at once, with an empty body,
    /// and the connection's thread waits only for the answer.
    let bodiless: Bool

    /// A gate; `wake` is called after each event, from the task's thread.
    /// A `bodiless` gate hands the task an empty body without asking the
    /// connection's thread (see ``bodiless``).
    init(wake: (@Sendable () -> Void)? = nil, bodiless: Bool = false) {
        self.wake = wake
        self.bodiless = bodiless
    }

    /// Whether a request whose headers are `headers`, for a route taking
    /// `body`, can have its (empty) body handed over without waiting for
    /// the connection's thread: no `Transfer-Encoding` (with which
    /// libmicrohttpd ignores `Content-Length`), a `Content-Length` of `0` or
    /// none, and a route that reads no body or takes the bytes as they
    /// came (an empty form or upload is still read, for its problems).
    static func isBodiless(_ headers: [String: String], route body: Route.Body) -> Bool {
        guard headers["transfer-encoding"] == nil, headers["content-length"].map({ $0 == "0" }) ?? true else {
            return false
        }
        switch body {
        case .none, .bytes: return true
        case .form, .upload, .stream: return false
        }
    }

    // MARK: - The request's task

    /// The body, read by the connection's thread; at once if it was.
    func receive(_ request: Request, fileGuard: (@Sendable (Request) -> Bool)?) async throws -> Received {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Received, any Error>) in
            let now: Result<Received, any Error>? = state.withLock { state in
                if let received = state.received { return .success(received) }
                if state.abandoned || state.asked { return .failure(ClientDisconnected()) }
                state.asked = true
                state.waiting = continuation
                state.events.append(.bodyWanted(request, fileGuard: fileGuard))
                return nil
            }
            if let now {
                continuation.resume(with: now)
            } else {
                signal.signal()
                wake?()
            }
        }
    }

    /// The task's answer.
    func answer(_ response: Response) {
        state.withLock { $0.events.append(.answered(response)) }
        signal.signal()
        wake?()
    }

    // MARK: - The connection's thread

    /// Blocks until the task asks for the body or answers.
    func nextEvent() -> Event {
        while true {
            signal.wait()
            // The signal may count an event ``takeEvent()`` took already.
            if let event = takeEvent() { return event }
        }
    }

    /// The next event if there is one, without waiting.
    func takeEvent() -> Event? {
        state.withLock { $0.events.isEmpty ? nil : $0.events.removeFirst() }
    }

    /// Hands the body to the task waiting for it.
    func deliver(_ received: Received) {
        let waiting = state.withLock { state in
            state.received = received
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume(returning: received)
    }

    /// The connection is gone: a task waiting for the body gets
    /// ``ClientDisconnected``.
    func abandon() {
        let waiting = state.withLock { state in
            state.abandoned = true
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume(throwing: ClientDisconnected())
    }
}
