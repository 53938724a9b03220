import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A plain TCP connection to a test server, for what URLSession cannot
/// do: read a never-ending event stream as it arrives, trickle a request
/// byte by byte, hang up in the middle of an upload, or hold a thousand
/// connections open.
///
/// Its calls block, so async tests make them through ``onOwnThread(_:)``:
/// blocking Swift's few concurrency threads would stall the server, whose
/// handlers run on them. Shared by the web and server test targets.
public final class RawSocket: @unchecked Sendable {
    /// The socket.
    public let descriptor: Int32
    private var received: [UInt8] = []
    private var isOpen = true

    /// Why a call failed.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed, with the system's reason.
        public let description: String
    }

    /// Connects to `127.0.0.1:port`, from the loopback address `source`
    /// (another client, as the server sees it) when given, with a receive
    /// buffer of `receiveBuffer` bytes when given (a slow reader: the
    /// server can run ahead of it by little more than its own buffers).
    public init(port: UInt16, from source: String? = nil, receiveBuffer: Int32? = nil) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                let reason = String(cString: strerror(errno))
                Glibc.close(descriptor)
                throw Failure(description: "bind \(source): \(reason)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(descriptor)
            throw Failure(description: "connect: \(reason)")
        }
        self.descriptor = descriptor
    }

    /// Sends all of `text`.
    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Sends all of `bytes`.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { buffer in
                Glibc.send(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw Failure(description: "send: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    /// Reads until what arrived contains `marker`, and returns everything
    /// read so far.
    ///
    /// - Throws: when the connection ends or `timeout` passes first.
    @discardableResult
    public func read(until marker: String, timeout: Duration = livenessTimeout) throws -> String {
        let wanted = Array(marker.utf8)
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while !contains(wanted) {
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                throw Failure(
                    description: "no \(marker.debugDescription) within \(timeout); got \(text.debugDescription)")
            }
            guard try receive(waiting: left) else {
                throw Failure(
                    description: "the connection ended before \(marker.debugDescription); got \(text.debugDescription)")
            }
        }
        return text
    }

    /// Reads until at least `count` bytes have arrived in all.
    ///
    /// - Throws: when the connection ends or `timeout` passes first.
    public func read(atLeast count: Int, timeout: Duration = livenessTimeout) throws {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while received.count < count {
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                throw Failure(description: "\(received.count) of \(count) bytes within \(timeout)")
            }
            guard try receive(waiting: left) else {
                throw Failure(description: "the connection ended after \(received.count) of \(count) bytes")
            }
        }
    }

    /// Reads until the server closes the connection; false when `timeout`
    /// passes first.
    public func readToEnd(timeout: Duration = livenessTimeout) throws -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            do {
                guard try receive(waiting: left) else { return true }
            } catch let error as Failure where error.description.hasPrefix("recv") {
                return true  // reset by the server
            }
        }
    }

    /// Whether the server has closed the connection, without waiting.
    public func hasEnded() -> Bool {
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// Everything read so far.
    public var bytes: [UInt8] { received }

    /// Everything read so far, as text.
    public var text: String { String(decoding: received, as: UTF8.self) }

    /// Forgets what was read so far.
    public func discardReceived() { received = [] }

    /// Waits up to `limit` for bytes; false at the end of the stream.
    private func receive(waiting limit: Duration) throws -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let (seconds, attoseconds) = limit.components
        let milliseconds = Int32(min(seconds * 1000 + attoseconds / 1_000_000_000_000_000, 60_000))
        let ready = poll(&poller, 1, max(1, milliseconds))
        if ready == 0 { return true }  // nothing yet: the caller checks its deadline
        guard ready > 0 else { throw Failure(description: "poll: \(String(cString: strerror(errno)))") }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        if count == 0 { return false }
        guard count > 0 else { throw Failure(description: "recv: \(String(cString: strerror(errno)))") }
        received.append(contentsOf: buffer[..<count])
        return true
    }

    private func contains(_ wanted: [UInt8]) -> Bool {
        guard wanted.count <= received.count else { return false }
        return received.indices.dropLast(wanted.count - 1).contains { start in
            received[start..<(start + wanted.count)].elementsEqual(wanted)
        }
    }

    /// Closes the connection (at once, as a client that goes away).
    public func close() {
        guard isOpen else { return }
        isOpen = false
        Glibc.close(descriptor)
    }

    deinit { close() }
}
