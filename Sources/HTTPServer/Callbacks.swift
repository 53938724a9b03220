import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The daemon's C callbacks: nonisolated, reaching the server through the
/// context pointer.
enum Callbacks {
    static let access: MHD_AccessHandlerCallback = {
        context, connection, url, method, _, uploadData, uploadDataSize, exchangeSlot in
        guard let context, let connection, let uploadDataSize, let exchangeSlot else { return .NO }
        let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
        if let existing = exchangeSlot.pointee {
            let exchange = Unmanaged<Exchange>.fromOpaque(existing).takeUnretainedValue()
            // Called again after its parked connection was woken.
            switch exchange.waiting {
            case .decision: return Callbacks.decide(exchange, core: core, connection: connection)
            case .answer: return Callbacks.sendAnswer(exchange, core: core, connection: connection)
            case .nothing: break
            }
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
        if core.parking != nil { exchange.ticket = ParkingTicket(connection: connection) }
        exchangeSlot.pointee = Unmanaged.passRetained(exchange).toOpaque()
        core.requestStarted(on: connection)
        return Callbacks.begin(exchange, core: core, connection: connection)
    }

    /// Takes every connection until the server begins to stop, and none
    /// after: libmicrohttpd closes a refused one at once, unread.
    static let acceptPolicy: MHD_AcceptPolicyCallback = { context, _, _ in
        guard let context else { return .NO }
        let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
        return core.isStopping ? .NO : .YES
    }

    static let completed: MHD_RequestCompletedCallback = { context, connection, exchangeSlot, _ in
        guard let context else { return }
        let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
        if let connection { core.watchdog.requestCompleted(connection) }
        Callbacks.droppingOnPurpose = false
        guard let slot = exchangeSlot, let existing = slot.pointee else { return }
        let exchange = Unmanaged<Exchange>.fromOpaque(existing).takeRetainedValue()
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            // The request is over: its task's jobs, if any, go on elsewhere.
            (exchange.startExecutor as? EventLoopStartExecutor)?.stopDeferring()
        }
        exchange.gate?.abandon()
        slot.pointee = nil
        core.requestEnded(on: connection)
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
}
