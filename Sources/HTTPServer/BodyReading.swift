import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reading the body: form fields and an upload's file, or a raw body kept
/// or streamed, chunk by chunk.
extension Callbacks {
    /// Sets up the post processor.
    static func startBody(_ exchange: Exchange, connection: OpaquePointer) {
        let context = Unmanaged.passUnretained(exchange).toOpaque()
        guard let processor = MHD_create_post_processor(connection, 64 * 1024, postIterator, context) else {
            exchange.problem = FormProblem(.malformed)
            return
        }
        exchange.postProcessor = processor
    }

    /// A chunk of the body.
    static func receive(_ data: UnsafePointer<CChar>?, count: Int, into exchange: Exchange) {
        guard !exchange.queued, exchange.pending == nil, exchange.problem == nil, let data else { return }
        switch exchange.reading {
        case .discarded:
            return
        case .form:
            guard let processor = exchange.postProcessor else { return }
            if MHD_post_process(processor, data, count) == .NO, exchange.problem == nil {
                exchange.problem = FormProblem(.malformed)
            }
        case .collected:
            // Within the route's limit: a body past it was refused before
            // this chunk was handed over.
            exchange.rawBody.append(contentsOf: UnsafeRawBufferPointer(start: data, count: count))
        case .streamed:
            receiveStreamed(UnsafeRawBufferPointer(start: data, count: count), exchange: exchange)
        }
    }

    /// A chunk of a ``Route/Body/stream(limit:sink:)`` body: the first
    /// asks the application's file guard, then makes the sink.
    static func receiveStreamed(_ bytes: UnsafeRawBufferPointer, exchange: Exchange) {
        guard !exchange.fileRefused, !exchange.fileWithheld, !bytes.isEmpty,
            case .stream(_, let makeSink)? = exchange.route?.body
        else { return }
        if exchange.sink == nil {
            let start = exchange.request
            guard exchange.fileGuard?(start) ?? true else {
                exchange.fileWithheld = true
                return
            }
            do {
                exchange.sink = try makeSink(
                    UploadStart(request: start, fileName: "", contentType: start.headers["content-type"]))
            } catch {
                exchange.uploadError = error
                exchange.fileRefused = true
                return
            }
        }
        write(bytes, exchange: exchange)
    }

    /// Hands a chunk to the upload's sink; a sink that throws is cancelled,
    /// and the rest of the body discarded.
    static func write(_ bytes: UnsafeRawBufferPointer, exchange: Exchange) {
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

    static func receiveField(name: String, bytes: UnsafeRawBufferPointer, offset: UInt64, exchange: Exchange) {
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

    static func receiveFile(
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
            guard exchange.fileGuard?(start) ?? true else {
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
        write(bytes, exchange: exchange)
    }

    /// The body is in: decode the fields, finish the upload, hand them to
    /// the request's task, and send its answer.
    static func complete(_ exchange: Exchange, core: ServerCore, connection: OpaquePointer) -> MHD_Result {
        guard exchange.bodyWanted, let gate = exchange.gate else {
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
        let received = BodyGate.Received(
            form: Form(form), body: exchange.rawBody, upload: exchange.sink, uploadError: exchange.uploadError,
            problem: exchange.problem, withheld: exchange.fileWithheld)
        resumingHere(exchange) { gate.deliver(received) }
        return sendAnswer(exchange, core: core, connection: connection)
    }
}
