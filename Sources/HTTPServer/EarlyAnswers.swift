import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Answers given before the body is read, and refusals of bodies too large.
extension Callbacks {
    /// The headers are in: start the request's task, and wait until it
    /// answers (sent now or after the discarded body) or asks for the body
    /// (read now, unless it is announced too large: then refused unread).
    static func begin(_ exchange: Exchange, core: ServerCore, connection: OpaquePointer) -> MHD_Result {
        let application = core.application
        var request = exchange.request
        let match = application.router.match(method: request.method, path: request.path)
        // A request with no body (a GET) is answered without the task
        // waiting for one: the answer comes in this call, as an early one.
        let bodiless: Bool
        if case .route(let route, _) = match {
            bodiless = BodyGate.isBodiless(request.headers, route: route.body)
        } else {
            bodiless = false
        }
        let gate = BodyGate(wake: waker(for: exchange, core: core), bodiless: bodiless)
        exchange.gate = gate
        request.bodyGate = gate
        request.matched = match
        let started = request
        exchange.startExecutor = startExecutor(for: match, core: core)
        start(on: exchange.startExecutor) {
            let response = await application.respond(to: started)
            gate.answer(response)
        }
        return decide(exchange, core: core, connection: connection)
    }

    /// What wakes the exchange's parked connection, when it parks.
    static func waker(for exchange: Exchange, core: ServerCore) -> (@Sendable () -> Void)? {
        guard let parking = core.parking, let ticket = exchange.ticket else { return nil }
        return { parking.wake(ticket) }
    }

    /// The task's next event, when it has one.
    enum NextEvent {
        case event(BodyGate.Event)
        /// None yet: the connection is parked until there is one.
        case parked
        /// The server is closing: end the request.
        case closing
    }

    /// The task's next event: waited for on this thread when the connection
    /// has a thread of its own; else taken if it is there, or the
    /// connection parks until it is.
    static func nextEvent(_ exchange: Exchange, core: ServerCore) -> NextEvent {
        guard let gate = exchange.gate else { return .event(.answered(Response(status: 500))) }
        guard let parking = core.parking, let ticket = exchange.ticket else { return .event(gate.nextEvent()) }
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *),
            let executor = exchange.startExecutor as? EventLoopStartExecutor
        else {
            while true {
                if let event = gate.takeEvent() { return .event(event) }
                if parking.isClosing { return .closing }
                if parking.park(ticket) { return .parked }
            }
        }
        // A request that started on the event loop goes on here: what its
        // task does next, once what it waits for is done, runs on this
        // thread when the connection is woken for it.
        executor.deferJobs(wake: { parking.wake(ticket) })
        while true {
            executor.runDeferred()
            if let event = gate.takeEvent() {
                executor.stopDeferring()
                return .event(event)
            }
            if parking.isClosing {
                executor.stopDeferring()
                return .closing
            }
            if parking.park(ticket) { return .parked }
        }
    }

    /// The task's first event: its answer, or its asking for the body. On
    /// the first call, or on a later one once the parked connection is
    /// woken: libmicrohttpd calls again as if for the first time, so an
    /// answer queued then still sends no "100 Continue" and reads no body.
    static func decide(_ exchange: Exchange, core: ServerCore, connection: OpaquePointer) -> MHD_Result {
        let event: BodyGate.Event
        switch nextEvent(exchange, core: core) {
        case .parked:
            exchange.waiting = .decision
            return .YES
        case .closing:
            droppingOnPurpose = true
            return .NO
        case .event(let next):
            exchange.waiting = .nothing
            event = next
        }
        let result = decided(event, exchange: exchange, core: core, connection: connection)
        // Only now does the server read the body, if there is one and the
        // request was not answered already.
        let headers = exchange.request.headers
        if !exchange.queued, exchange.waiting == .nothing,
            headers["content-length"].map({ $0 != "0" }) ?? (headers["transfer-encoding"] != nil)
        {
            core.watchdog.bodyExpected(connection)
        }
        return result
    }

    /// Acts on the task's first event.
    static func decided(
        _ event: BodyGate.Event, exchange: Exchange, core: ServerCore, connection: OpaquePointer
    ) -> MHD_Result {
        switch event {
        case .answered(let response):
            return answerEarly(response, exchange: exchange, core: core, connection: connection)
        case .bodyWanted(let asking, let fileGuard):
            exchange.request = asking
            exchange.route = asking.route
            exchange.fileGuard = fileGuard
            exchange.bodyWanted = true
            exchange.bodyLimit = asking.route?.body.sizeLimit ?? Route.defaultFormLimit
            if let length = declaredLength(exchange.request.headers), length > UInt64(max(0, exchange.bodyLimit)) {
                // Answered before a byte of the body is read: on the first
                // call, libmicrohttpd sends no "100 Continue", reads no body,
                // and closes the connection after the answer (lingering: see LingeringClose).
                core.lingering.mark(connection)
                exchange.gate?.deliver(BodyGate.Received(problem: FormProblem(.tooLarge)))
                return sendAnswer(exchange, core: core, connection: connection)
            }
            switch asking.route?.body ?? .none {
            case .none:
                // Discarded; answered on the next call, once libmicrohttpd
                // has read the whole request: answering now would close the
                // connection after the response instead of keeping it alive.
                break
            case .form(let limit):
                exchange.formLimit = limit
                exchange.reading = .form
                startBody(exchange, connection: connection)
            case .upload:
                exchange.reading = .form
                startBody(exchange, connection: connection)
            case .bytes:
                exchange.reading = .collected
            case .stream:
                exchange.reading = .streamed
            }
            return .YES
        }
    }

    /// Sends the task's answer once it has the body, or parks until it
    /// comes.
    static func sendAnswer(_ exchange: Exchange, core: ServerCore, connection: OpaquePointer) -> MHD_Result {
        switch nextEvent(exchange, core: core) {
        case .parked:
            exchange.waiting = .answer
            return .YES
        case .closing:
            droppingOnPurpose = true
            return .NO
        case .event(let event):
            exchange.waiting = .nothing
            return queue(response(from: event), for: exchange, core: core, connection: connection)
        }
    }

    /// Waits for the task's answer, once it has the body.
    static func answer(from gate: BodyGate) -> Response { response(from: gate.nextEvent()) }

    /// The answer an event carries.
    static func response(from event: BodyGate.Event) -> Response {
        switch event {
        case .answered(let response): response
        // A second request for the body is answered at once: never here.
        case .bodyWanted: Response(status: 500)
        }
    }

    /// An answer decided from the headers alone. It is sent after the
    /// (discarded) body, so that the connection stays open for the next
    /// request, unless the body is large or of unknown length: then at once,
    /// and libmicrohttpd closes the connection after it (lingering).
    static func answerEarly(
        _ response: Response, exchange: Exchange, core: ServerCore, connection: OpaquePointer
    ) -> MHD_Result {
        let headers = exchange.request.headers
        let length = headers["content-length"].flatMap(Int.init) ?? (headers["transfer-encoding"] == nil ? 0 : .max)
        if length > Route.defaultFormLimit {
            core.lingering.mark(connection)
            return queue(response, for: exchange, core: core, connection: connection)
        }
        exchange.pending = response
        return .YES
    }

    /// The body's length as its headers announce it: nil for a chunked
    /// body (libmicrohttpd then ignores Content-Length) or none, and the
    /// largest length for digits too many to count.
    static func declaredLength(_ headers: [String: String]) -> UInt64? {
        guard headers["transfer-encoding"] == nil, let raw = headers["content-length"] else { return nil }
        // The usual value, digits alone, read without Foundation's
        // trimming (a CharacterSet walk, on every request with a body).
        if let length = UInt64(raw) { return length }
        let text = raw.trimmingCharacters(in: .whitespaces)
        if let length = UInt64(text) { return length }
        return !text.isEmpty && text.utf8.allSatisfy { (0x30...0x39).contains($0) } ? .max : nil
    }

    /// Refuses a body of unknown length (chunked) as soon as it passes the
    /// route's limit, without reading more.
    ///
    /// libmicrohttpd takes a response only before the body is read or once
    /// all of it is, so the answer is written on the connection directly,
    /// and the connection is then closed. It waits for the answer (an
    /// error page, made at once) and the send (at most 5 s a stall) on this
    /// thread, also on the event loop: libmicrohttpd cannot be asked to
    /// call back once the connection is past its body.
    static func refuseOversizedBody(_ exchange: Exchange, core: ServerCore, connection: OpaquePointer)
        -> MHD_Result
    {
        exchange.queued = true
        exchange.sink?.cancel()
        exchange.sink = nil
        core.lingering.mark(connection)
        if exchange.bodyWanted, let gate = exchange.gate {
            gate.deliver(BodyGate.Received(problem: FormProblem(.tooLarge)))
            let response = answer(from: gate)
            let refused = exchange.request
            let bytes = rawResponse(response, headOnly: refused.method == "HEAD")
            let sent = bytes.withUnsafeBytes { records_mhd_send_raw(connection, $0.baseAddress, $0.count, 5_000) }
            core.application.log(
                requestLine(refused, status: response.status, exchange: exchange)
                    + (sent == 0 ? "" : " (not delivered)"))
        }
        droppingOnPurpose = true
        return .NO
    }

    /// A response as HTTP/1.1 bytes, closing the connection.
    static func rawResponse(_ response: Response, headOnly: Bool) -> [UInt8] {
        var body: [UInt8] = []
        switch response.body {
        case .empty: break
        case .bytes(let bytes): body = Array(bytes)
        case .stream(_, let stream):
            // An error page is never a stream; one is closed unsent.
            stream.close()
        }
        let reason = MHD_get_reason_phrase_for(UInt32(response.status)).map { String(cString: $0) } ?? ""
        var head = "HTTP/1.1 \(response.status) \(reason)\r\n"
        for (name, value) in response.headers {
            let lowered = name.lowercased()
            guard lowered != "content-length", lowered != "connection", lowered != "transfer-encoding",
                !breaksLine(name), !breaksLine(value)
            else { continue }
            head += "\(name): \(value)\r\n"
        }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + (headOnly ? [] : body)
    }

    /// Set on a connection's thread while the server closes that connection
    /// on purpose (``refuseOversizedBody(_:core:connection:)``), so that
    /// libmicrohttpd's complaint about it ("internal error") is not logged;
    /// cleared once the request is reported complete.
    static var droppingOnPurpose: Bool {
        get { pthread_getspecific(droppingKey) != nil }
        set { pthread_setspecific(droppingKey, newValue ? UnsafeRawPointer(bitPattern: 1) : nil) }
    }

    static let droppingKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

}
