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
            let box = Unmanaged.passRetained(StreamBox(stream)).toOpaque()
            handle = MHD_create_response_from_callback(
                length ?? UInt64.max, 64 * 1024, streamReader, box, streamFree)
            if handle == nil { Unmanaged<StreamBox>.fromOpaque(box).takeRetainedValue().stream.close() }
        }
        guard let handle else { return .NO }
        defer { MHD_destroy_response(handle) }
        for (name, value) in response.headers where !Response.sameName(name, "Content-Length") {
            // A header with a line break would split the response.
            guard !name.contains(where: \.isNewline), !value.contains(where: \.isNewline) else { continue }
            _ = MHD_add_response_header(handle, name, value)
        }
        core.application.log(requestLine(request, status: response.status, exchange: exchange))
        return MHD_queue_response(connection, UInt32(response.status), handle)
    }

    /// The log's line for a request: method, path, status, and the time
    /// from its headers to its answer, in milliseconds.
    static func requestLine(_ request: Request, status: Int, exchange: Exchange) -> String {
        let (seconds, attoseconds) = (ContinuousClock.now - exchange.started).components
        // Tenths of a millisecond, written without a format string.
        let tenths = seconds * 10_000 + (attoseconds + 50_000_000_000_000) / 100_000_000_000_000
        return "\(request.logDescription) \(status) \(tenths / 10).\(tenths % 10)ms"
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

}

final class StreamBox {
    let stream: any ResponseStream
    init(_ stream: any ResponseStream) { self.stream = stream }
}
