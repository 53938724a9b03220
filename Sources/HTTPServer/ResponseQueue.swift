import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Handing the answer to libmicrohttpd, and the log line for it.
extension Callbacks {
    /// Sends the answer.
    static func queue(
        _ response: Response, for exchange: Exchange, core: ServerCore, connection: OpaquePointer
    ) -> MHD_Result {
        exchange.queued = true
        let request = exchange.request
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
            let parked = core.parking.flatMap { parking in exchange.ticket.map { (parking, $0) } }
            let box = Unmanaged.passRetained(StreamBox(stream, parked: parked)).toOpaque()
            handle = MHD_create_response_from_callback(
                length ?? UInt64.max, 64 * 1024, streamReader, box, streamFree)
            if handle == nil { Unmanaged<StreamBox>.fromOpaque(box).takeRetainedValue().stream.close() }
        }
        guard let handle else { return .NO }
        defer { MHD_destroy_response(handle) }
        for (name, value) in response.headers where !Response.sameName(name, "Content-Length") {
            // A header with a line break would split the response.
            guard !Self.breaksLine(name), !Self.breaksLine(value) else { continue }
            _ = MHD_add_response_header(handle, name, value)
        }
        core.application.log(requestLine(request, status: response.status, exchange: exchange))
        return MHD_queue_response(connection, UInt32(response.status), handle)
    }

    /// Whether `text` holds a line break of any kind. Printable ASCII and
    /// tabs, what nearly every header is, are checked byte by byte first,
    /// without breaking the text into characters.
    static func breaksLine(_ text: String) -> Bool {
        if text.utf8.allSatisfy({ (0x20..<0x7F).contains($0) || $0 == 0x09 }) { return false }
        return text.contains(where: \.isNewline)
    }

    /// The log's line for a request: method, path, status, and the time
    /// from its headers to its answer, in milliseconds.
    static func requestLine(_ request: Request, status: Int, exchange: Exchange) -> String {
        let (seconds, attoseconds) = (ContinuousClock.now - exchange.started).components
        // Tenths of a millisecond, written without a format string.
        let tenths = seconds * 10_000 + (attoseconds + 50_000_000_000_000) / 100_000_000_000_000
        // Put together in one text, sized first: this runs for every request.
        let method = Request.forLog(request.method)
        let path = Request.forLog(request.path)
        let status = String(status)
        let whole = String(tenths / 10)
        var line = ""
        line.reserveCapacity(method.utf8.count + path.utf8.count + status.utf8.count + whole.utf8.count + 8)
        line += method
        line += " "
        line += path
        line += " "
        line += status
        line += " "
        line += whole
        line += "."
        line.unicodeScalars.append(Unicode.Scalar(UInt8(ascii: "0") + UInt8(tenths % 10)))
        line += "ms"
        return line
    }

    static let streamReader: MHD_ContentReaderCallback = { context, _, buffer, capacity in
        guard let context, let buffer else { return -2 }
        let box = Unmanaged<StreamBox>.fromOpaque(context).takeUnretainedValue()
        return box.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity))
    }

    static let streamFree: MHD_ContentReaderFreeCallback = { context in
        guard let context else { return }
        let box = Unmanaged<StreamBox>.fromOpaque(context).takeRetainedValue()
        box.close()
    }

}

/// A streamed response's body, as libmicrohttpd's content reader sees it.
final class StreamBox {
    let stream: any ResponseStream
    /// Where the connection parks while the stream has nothing, when
    /// connections do not each have a thread; nil when they do (the
    /// stream's read then blocks that thread).
    private let parked: (lot: ParkingLot, ticket: ParkingTicket)?
    /// Runs a stream that can only block on threads of its own.
    private let pump: BlockingReadPump?

    init(_ stream: any ResponseStream, parked: (ParkingLot, ParkingTicket)?) {
        self.stream = stream
        self.parked = parked
        pump = parked != nil && !(stream is any WaitingResponseStream) ? BlockingReadPump(stream) : nil
    }

    /// What libmicrohttpd's content reader returns: a count of bytes, 0
    /// when the connection is parked, -1 at the end, -2 on an error.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let (lot, ticket) = parked else {
            do {
                let count = try stream.read(into: buffer)
                return count > 0 ? count : -1  // MHD_CONTENT_READER_END_OF_STREAM
            } catch {
                return -2  // MHD_CONTENT_READER_END_WITH_ERROR
            }
        }
        let wake: @Sendable () -> Void = { lot.wake(ticket) }
        while true {
            let readiness: StreamReadiness
            do {
                if let pump {
                    readiness = try pump.read(into: buffer, wake: wake)
                } else if let waiting = stream as? any WaitingResponseStream {
                    readiness = try waiting.readReady(into: buffer, wake: wake)
                } else {
                    return -2
                }
            } catch {
                return -2
            }
            switch readiness {
            case .bytes(let count): return count > 0 ? count : -1
            case .end: return -1
            case .wait(let deadline):
                if lot.isClosing { return -2 }
                if lot.park(ticket, until: deadline) { return 0 }
            }
        }
    }

    func close() {
        if let pump { pump.close() } else { stream.close() }
    }
}

/// Reads a ``ResponseStream`` that blocks on a dispatch thread, a chunk
/// ahead, for a connection that may not block its thread: the reader gets
/// what is read, or waits (parked) for the read to finish.
final class BlockingReadPump: Sendable {
    private struct State {
        var chunk: [UInt8] = []
        var offset = 0
        var reading = false
        var finished = false
        var failure: (any Error)?
        var wake: (@Sendable () -> Void)?
        /// Closed while a read ran: the stream is closed after it.
        var closeAfterRead = false
        var closed = false
    }

    private let stream: any ResponseStream
    private let state = Locked(State())
    private static let chunkSize = 64 * 1024

    init(_ stream: any ResponseStream) { self.stream = stream }

    func read(into buffer: UnsafeMutableRawBufferPointer, wake: @escaping @Sendable () -> Void) throws
        -> StreamReadiness
    {
        let (readiness, start): (Result<StreamReadiness, any Error>, Bool) = state.withLock { state in
            if state.offset < state.chunk.count {
                let count = min(buffer.count, state.chunk.count - state.offset)
                state.chunk.withUnsafeBytes { bytes in
                    buffer.copyMemory(
                        from: UnsafeRawBufferPointer(rebasing: bytes[state.offset..<state.offset + count]))
                }
                state.offset += count
                return (.success(.bytes(count)), false)
            }
            if let failure = state.failure { return (.failure(failure), false) }
            if state.finished { return (.success(.end), false) }
            state.wake = wake
            if state.reading { return (.success(.wait(until: nil)), false) }
            state.reading = true
            return (.success(.wait(until: nil)), true)
        }
        if start {
            DispatchQueue.global().async { [self] in readAhead() }
        }
        return try readiness.get()
    }

    private func readAhead() {
        var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
        let result = Result { try chunk.withUnsafeMutableBytes { try stream.read(into: $0) } }
        let (wake, closeNow) = state.withLock { state in
            state.reading = false
            switch result {
            case .success(let count) where count > 0:
                chunk.removeSubrange(count...)
                state.chunk = chunk
                state.offset = 0
            case .success:
                state.finished = true
            case .failure(let error):
                state.failure = error
            }
            defer { state.wake = nil }
            return (state.wake, state.closeAfterRead)
        }
        if closeNow {
            stream.close()
        } else {
            wake?()
        }
    }

    /// Closes the stream, once a read that runs is over.
    func close() {
        let now = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.closed = true
            if state.reading {
                state.closeAfterRead = true
                return false
            }
            return true
        }
        if now { stream.close() }
    }
}
