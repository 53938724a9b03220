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
    private let grace: Duration
    private let state = PThreadLocked((inFlight: 0, stopping: false))

    init(application: any HTTPApplication, isSecure: Bool, grace: Duration, watchdog: ConnectionWatchdog) {
        self.application = application
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
    var postProcessor: OpaquePointer?
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

    /// When the request's headers were in.
    let started = ContinuousClock.now

    /// The server it came to.
    let core: ServerCore

    init(request: Request, core: ServerCore) {
        self.request = request
        self.core = core
    }

    deinit {
        if let postProcessor { _ = MHD_destroy_post_processor(postProcessor) }
        sink?.cancel()
    }
}

/// The daemon's C callbacks: nonisolated, reaching the server through the
/// context pointer.
enum Callbacks {
    static let access: MHD_AccessHandlerCallback = {
        context, connection, url, method, _, uploadData, uploadDataSize, exchangeSlot in
        guard let context, let connection, let uploadDataSize, let exchangeSlot else { return .NO }
        let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
        if let existing = exchangeSlot.pointee {
            let exchange = Unmanaged<Exchange>.fromOpaque(existing).takeUnretainedValue()
            if uploadDataSize.pointee > 0 {
                core.watchdog.bodyReceived(connection, count: uploadDataSize.pointee)
                exchange.bodyBytes += uploadDataSize.pointee
                if exchange.bodyBytes > exchange.bodyLimit, !exchange.queued, exchange.pending == nil {
                    // Only a body of unknown length (chunked) gets here:
                    // one announced too large was refused before it was read.
                    return Callbacks.refuseOversizedBody(exchange, core: core, connection: connection)
                }
                Callbacks.receive(uploadData, count: uploadDataSize.pointee, into: exchange)
                uploadDataSize.pointee = 0
                return .YES
            }
            core.watchdog.bodyComplete(connection)
            if exchange.queued { return .YES }
            if let pending = exchange.pending {
                return Callbacks.queue(pending, for: exchange, core: core, connection: connection)
            }
            return Callbacks.complete(exchange, core: core, connection: connection)
        }
        let request = Callbacks.makeRequest(
            connection: connection, method: method.map { String(cString: $0) } ?? "GET",
            path: url.map { String(cString: $0) } ?? "/", isSecure: core.isSecure)
        core.watchdog.headersArrived(connection)
        let exchange = Exchange(request: request, core: core)
        exchangeSlot.pointee = Unmanaged.passRetained(exchange).toOpaque()
        core.requestStarted()
        let result = Callbacks.begin(exchange, core: core, connection: connection)
        // Only now does the server read the body, if there is one and the
        // request was not answered already.
        if !exchange.queued,
            request.headers["content-length"].map({ $0 != "0" }) ?? (request.headers["transfer-encoding"] != nil)
        {
            core.watchdog.bodyExpected(connection)
        }
        return result
    }

    static let completed: MHD_RequestCompletedCallback = { context, connection, exchangeSlot, _ in
        guard let context else { return }
        let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
        if let connection { core.watchdog.requestCompleted(connection) }
        Callbacks.droppingOnPurpose = false
        guard let slot = exchangeSlot, let existing = slot.pointee else { return }
        Unmanaged<Exchange>.fromOpaque(existing).release()
        slot.pointee = nil
        core.requestEnded()
    }

    static let connectionNotice: MHD_NotifyConnectionCallback = { context, connection, _, code in
        guard let context, let connection else { return }
        let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
        switch code.rawValue {
        case 0: core.watchdog.connectionStarted(connection)  // MHD_CONNECTION_NOTIFY_STARTED
        case 1:  // MHD_CONNECTION_NOTIFY_CLOSED
            core.watchdog.connectionClosed(connection)
            core.lingering.connectionClosed(connection)
        default: break
        }
    }

    static let logger: MHD_LogCallback = { context, format, arguments in
        guard let context, let format, let arguments else { return }
        let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
        var buffer = [CChar](repeating: 0, count: 512)
        _ = vsnprintf(&buffer, buffer.count, format, arguments)
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // Its complaint about a connection the server closed on purpose.
        if Callbacks.droppingOnPurpose { return }
        core.application.log("server: " + line.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static let postIterator: MHD_PostDataIterator = {
        context, _, key, fileName, contentType, _, data, offset, size in
        guard let context else { return .NO }
        let exchange = Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue()
        let name = key.map { String(cString: $0) } ?? ""
        let bytes = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
        if let fileName {
            Callbacks.receiveFile(
                name: name, fileName: String(cString: fileName), contentType: contentType.map { String(cString: $0) },
                bytes: bytes, offset: offset, exchange: exchange)
        } else {
            Callbacks.receiveField(name: name, bytes: bytes, offset: offset, exchange: exchange)
        }
        return .YES
    }

    // MARK: - Steps

    /// The headers are in: find the route, decide whether to answer now.
    private static func begin(_ exchange: Exchange, core: ServerCore, connection: OpaquePointer) -> MHD_Result {
        let application = core.application
        exchange.request = wait { await application.identify(exchange.request) }
        let request = exchange.request
        switch application.router.match(method: request.method, path: request.path) {
        case .route(let route, let parameters):
            exchange.request.parameters = parameters
            exchange.route = route
            if let refusal = wait({ await application.admit(request, to: route) }) {
                return answerEarly(refusal, exchange: exchange, core: core, connection: connection)
            }
            exchange.bodyLimit = route.body.sizeLimit
            if let length = declaredLength(exchange.request.headers), length > UInt64(max(0, exchange.bodyLimit)) {
                // Answered before a byte of the body is read: on the first
                // call, libmicrohttpd sends no "100 Continue", reads no body,
                // and closes the connection after the answer (lingering: see LingeringClose).
                let refused = exchange.request
                let response = wait {
                    await application.respond(to: refused, route: route, formProblem: FormProblem(.tooLarge))
                }
                core.lingering.mark(connection)
                return queue(response, for: exchange, core: core, connection: connection)
            }
            switch route.body {
            case .none:
                // Answered on the next call, once libmicrohttpd has read the
                // whole request: answering now would close the connection
                // after the response instead of keeping it alive.
                break
            case .form(let limit):
                exchange.formLimit = limit
                startBody(exchange, connection: connection)
            case .upload:
                startBody(exchange, connection: connection)
            }
            return .YES
        case let unmatched:
            let response = wait { await application.answer(unmatched: unmatched, request: request) }
            return answerEarly(response, exchange: exchange, core: core, connection: connection)
        }
    }

    /// An answer decided from the headers alone. It is sent after the
    /// (discarded) body, so that the connection stays open for the next
    /// request, unless the body is large or of unknown length: then at once,
    /// and libmicrohttpd closes the connection after it (lingering).
    private static func answerEarly(
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
    private static func declaredLength(_ headers: [String: String]) -> UInt64? {
        guard headers["transfer-encoding"] == nil,
            let text = headers["content-length"]?.trimmingCharacters(in: .whitespaces)
        else { return nil }
        if let length = UInt64(text) { return length }
        return !text.isEmpty && text.utf8.allSatisfy { (0x30...0x39).contains($0) } ? .max : nil
    }

    /// Refuses a body of unknown length (chunked) as soon as it passes the
    /// route's limit, without reading more.
    ///
    /// libmicrohttpd takes a response only before the body is read or once
    /// all of it is, so the answer is written on the connection directly,
    /// and the connection is then closed.
    static func refuseOversizedBody(_ exchange: Exchange, core: ServerCore, connection: OpaquePointer)
        -> MHD_Result
    {
        exchange.queued = true
        exchange.sink?.cancel()
        exchange.sink = nil
        core.lingering.mark(connection)
        let application = core.application
        if let route = exchange.route {
            let refused = exchange.request
            var response = wait {
                await application.respond(to: refused, route: route, formProblem: FormProblem(.tooLarge))
            }
            response = application.finish(response, for: refused)
            let bytes = rawResponse(response, headOnly: refused.method == "HEAD")
            let sent = bytes.withUnsafeBytes { records_mhd_send_raw(connection, $0.baseAddress, $0.count, 5_000) }
            application.log(
                requestLine(refused, status: response.status, exchange: exchange)
                    + (sent == 0 ? "" : " (not delivered)"))
        }
        droppingOnPurpose = true
        return .NO
    }

    /// A response as HTTP/1.1 bytes, closing the connection.
    private static func rawResponse(_ response: Response, headOnly: Bool) -> [UInt8] {
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
                !name.contains(where: \.isNewline), !value.contains(where: \.isNewline)
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

    private static let droppingKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Sets up the post processor.
    private static func startBody(_ exchange: Exchange, connection: OpaquePointer) {
        let context = Unmanaged.passUnretained(exchange).toOpaque()
        guard let processor = MHD_create_post_processor(connection, 64 * 1024, postIterator, context) else {
            exchange.problem = FormProblem(.malformed)
            return
        }
        exchange.postProcessor = processor
    }

    /// A chunk of the body.
    private static func receive(_ data: UnsafePointer<CChar>?, count: Int, into exchange: Exchange) {
        guard !exchange.queued, exchange.pending == nil, exchange.problem == nil,
            let processor = exchange.postProcessor, let data
        else { return }
        if MHD_post_process(processor, data, count) == .NO, exchange.problem == nil {
            exchange.problem = FormProblem(.malformed)
        }
    }

    private static func receiveField(name: String, bytes: UnsafeRawBufferPointer, offset: UInt64, exchange: Exchange) {
        guard exchange.problem == nil else { return }
        if offset == 0 {
            if exchange.fields[name] != nil {
                exchange.problem = FormProblem(.duplicateField(name))
                return
            }
            exchange.fields[name] = []
        }
        exchange.formBytes += bytes.count + (offset == 0 ? name.utf8.count : 0)
        if exchange.formBytes > exchange.formLimit {
            exchange.problem = FormProblem(.tooLarge)
            return
        }
        exchange.fields[name, default: []].append(contentsOf: bytes)
    }

    private static func receiveFile(
        name: String, fileName: String, contentType: String?, bytes: UnsafeRawBufferPointer, offset: UInt64,
        exchange: Exchange
    ) {
        guard exchange.problem == nil, !exchange.fileRefused, !exchange.fileWithheld else { return }
        guard case .upload(let field, _, let makeSink)? = exchange.route?.body, name == field else {
            // A file where the route takes none, or in another field.
            exchange.problem = FormProblem(.malformed)
            return
        }
        // An empty file input: the browser sends a part with no name.
        if fileName.isEmpty && bytes.isEmpty { return }
        if offset == 0 {
            guard exchange.sink == nil, exchange.uploadError == nil else {
                exchange.problem = FormProblem(.duplicateField(name))
                return
            }
            var start = exchange.request
            start.form = Form(exchange.fields.compactMapValues { String(validating: $0, as: UTF8.self) })
            guard exchange.core.application.acceptsFile(start) else {
                exchange.fileWithheld = true
                return
            }
            start.form = Form()
            do {
                exchange.sink = try makeSink(UploadStart(request: start, fileName: fileName, contentType: contentType))
            } catch {
                exchange.uploadError = error
                exchange.fileRefused = true
                return
            }
        }
        guard let sink = exchange.sink, !bytes.isEmpty else { return }
        do {
            try sink.write(bytes)
        } catch {
            exchange.uploadError = error
            exchange.fileRefused = true
            sink.cancel()
            exchange.sink = nil
        }
    }

    /// The body is in: decode the fields, finish the upload, answer.
    private static func complete(_ exchange: Exchange, core: ServerCore, connection: OpaquePointer) -> MHD_Result {
        let application = core.application
        guard let route = exchange.route else {
            return queue(Response(status: 500), for: exchange, core: core, connection: connection)
        }
        if let processor = exchange.postProcessor {
            exchange.postProcessor = nil
            if MHD_destroy_post_processor(processor) == .NO, exchange.problem == nil {
                exchange.problem = FormProblem(.malformed)
            }
        }
        // Fields are decoded even when the form was refused: the page shown
        // again keeps what can be kept.
        var form: [String: String] = [:]
        for (name, bytes) in exchange.fields {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                if exchange.problem == nil { exchange.problem = FormProblem(.notUTF8(name)) }
                continue
            }
            form[name] = text
        }
        if exchange.problem == nil, let sink = exchange.sink {
            do {
                try sink.finish()
            } catch {
                exchange.uploadError = error
                sink.cancel()
                exchange.sink = nil
            }
        }
        var request = exchange.request
        request.form = Form(form)
        request.uploadWithheld = exchange.fileWithheld
        request.upload = exchange.sink
        request.uploadError = exchange.uploadError
        let problem = exchange.problem
        let answered = request
        let response = wait { await application.respond(to: answered, route: route, formProblem: problem) }
        return queue(response, for: exchange, core: core, connection: connection, request: answered)
    }

    /// Sends the answer.
    private static func queue(
        _ response: Response, for exchange: Exchange, core: ServerCore, connection: OpaquePointer,
        request: Request? = nil
    ) -> MHD_Result {
        exchange.queued = true
        let request = request ?? exchange.request
        let response = core.application.finish(response, for: request)
        let handle: OpaquePointer?
        switch response.body {
        case .empty:
            handle = MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
        case .bytes(let bytes):
            handle = bytes.withUnsafeBytes { buffer in
                MHD_create_response_from_buffer(
                    buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_MUST_COPY)
            }
        case .stream(let length, let stream):
            let box = Unmanaged.passRetained(StreamBox(stream)).toOpaque()
            handle = MHD_create_response_from_callback(
                length ?? UInt64.max, 64 * 1024, streamReader, box, streamFree)
            if handle == nil { Unmanaged<StreamBox>.fromOpaque(box).takeRetainedValue().stream.close() }
        }
        guard let handle else { return .NO }
        defer { MHD_destroy_response(handle) }
        for (name, value) in response.headers where name.caseInsensitiveCompare("Content-Length") != .orderedSame {
            // A header with a line break would split the response.
            guard !name.contains(where: \.isNewline), !value.contains(where: \.isNewline) else { continue }
            _ = MHD_add_response_header(handle, name, value)
        }
        core.application.log(requestLine(request, status: response.status, exchange: exchange))
        return MHD_queue_response(connection, UInt32(response.status), handle)
    }

    /// The log's line for a request: method, path, status, and the time
    /// from its headers to its answer, in milliseconds.
    private static func requestLine(_ request: Request, status: Int, exchange: Exchange) -> String {
        let (seconds, attoseconds) = (ContinuousClock.now - exchange.started).components
        let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return "\(request.logDescription) \(status) \(String(format: "%.1f", milliseconds))ms"
    }

    static let streamReader: MHD_ContentReaderCallback = { context, _, buffer, capacity in
        guard let context, let buffer else { return -2 }
        let box = Unmanaged<StreamBox>.fromOpaque(context).takeUnretainedValue()
        do {
            let count = try box.stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity))
            return count > 0 ? count : -1  // MHD_CONTENT_READER_END_OF_STREAM
        } catch {
            return -2  // MHD_CONTENT_READER_END_WITH_ERROR
        }
    }

    static let streamFree: MHD_ContentReaderFreeCallback = { context in
        guard let context else { return }
        let box = Unmanaged<StreamBox>.fromOpaque(context).takeRetainedValue()
        box.stream.close()
    }

    // MARK: - The request

    private static func makeRequest(connection: OpaquePointer, method: String, path: String, isSecure: Bool)
        -> Request
    {
        var request = Request(
            method: method.uppercased(), path: path, query: values(connection, .GET_ARGUMENT_KIND),
            headers: values(connection, .HEADER_KIND, lowercased: true), cookies: values(connection, .COOKIE_KIND),
            clientAddress: clientAddress(connection), isSecure: isSecure)
        if request.path.isEmpty { request.path = "/" }
        return request
    }

    private final class Collected {
        var values: [String: String] = [:]
        let lowercased: Bool
        init(lowercased: Bool) { self.lowercased = lowercased }
    }

    private static func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind, lowercased: Bool = false)
        -> [String: String]
    {
        let collected = Collected(lowercased: lowercased)
        withExtendedLifetime(collected) {
            _ = MHD_get_connection_values(
                connection, kind, collectValue, Unmanaged.passUnretained(collected).toOpaque())
        }
        return collected.values
    }

    private static let collectValue: MHD_KeyValueIterator = { context, _, key, value in
        guard let context, let key else { return .YES }
        let collected = Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue()
        var name = String(cString: key)
        if collected.lowercased { name = name.lowercased() }
        // The first of a repeated name wins, as browsers send the most
        // specific cookie first.
        if collected.values[name] == nil { collected.values[name] = value.map { String(cString: $0) } ?? "" }
        return .YES
    }

    private static func clientAddress(_ connection: OpaquePointer) -> String {
        guard let address = records_mhd_client_address(connection) else { return "" }
        return SocketAddress.describe(address)
    }

    /// Runs `work` and waits for it on this (libmicrohttpd's) thread.
    static func wait<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
        let result = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            // The request's async work runs on the server's own executor,
            // not on Swift's shared concurrency threads: code elsewhere in
            // the process that blocks those threads (a synchronous wait)
            // must not starve the server.
            Task(executorPreference: RequestExecutor.shared) {
                result.value = await work()
                done.signal()
            }
        } else {
            Task {
                result.value = await work()
                done.signal()
            }
        }
        done.wait()
        return result.value!
    }
}

/// Runs requests' async work on threads of its own (a concurrent dispatch
/// queue, which adds threads as work waits), so the server never depends on
/// Swift's fixed pool of concurrency threads being free.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class RequestExecutor: TaskExecutor {
    static let shared = RequestExecutor()
    private let queue = DispatchQueue(label: "records-web.requests", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}

private final class StreamBox {
    let stream: any ResponseStream
    init(_ stream: any ResponseStream) { self.stream = stream }
}

/// The text of a NUL-terminated C string held in an array.
private func cText(_ characters: [CChar]) -> String {
    String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// An IPv4 or IPv6 socket address parsed from its literal.
struct SocketAddress {
    let port: UInt16
    let isIPv6: Bool
    private let storage: sockaddr_storage
    let display: String

    init(host: String, port: UInt16) throws {
        var storage = sockaddr_storage()
        self.port = port
        if host.contains(":") {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else {
                throw ServerError(message: "\(host) is not an IPv6 address")
            }
            withUnsafeBytes(of: address) { bytes in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
            }
            isIPv6 = true
            display = "[\(host)]:\(port)"
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
                throw ServerError(message: "\(host) is not an IP address (use 127.0.0.1, 0.0.0.0, ::1 or ::)")
            }
            withUnsafeBytes(of: address) { bytes in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
            }
            isIPv6 = false
            display = "\(host):\(port)"
        }
        self.storage = storage
    }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>) -> T) -> T {
        withUnsafeBytes(of: storage) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self)) }
    }

    /// Whether the address is a loopback address.
    static func isLoopback(_ host: String) -> Bool {
        host == "::1" || host.hasPrefix("127.") || host == "localhost"
    }

    static func describe(_ address: UnsafePointer<sockaddr>) -> String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
                var raw = ipv4.pointee.sin_addr
                guard inet_ntop(AF_INET, &raw, &text, socklen_t(text.count)) != nil else { return "" }
                return cText(text)
            }
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { ipv6 in
                var raw = ipv6.pointee.sin6_addr
                guard inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count)) != nil else { return "" }
                return cText(text)
            }
        default:
            return ""
        }
    }
}
