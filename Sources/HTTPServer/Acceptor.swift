import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The listening socket of a server on the event loop, and the thread that
/// accepts its connections and hands each to libmicrohttpd
/// (`MHD_add_connection`).
///
/// Why not libmicrohttpd's own listening: each of its event loop threads
/// has the shared listening socket in its epoll set and, when it wakes,
/// accepts up to ten connections at a time. A burst of connections (a
/// program opening 16 at once) could all land on one thread while the
/// others had none, and stay there for as long as they were open:
/// measured, a list at 16 connections on two threads answered about 5,000
/// requests a second in such runs and 10,000 when they were spread.
/// `MHD_add_connection` places a connection on the thread its socket's
/// number picks (the number modulo the threads, the next one with room if
/// that one is full), so the acceptor gives each connection the number of
/// the next thread in turn (``renumber(_:toThread:of:)``): numbers alone
/// are no guide, since whatever else the process opens between two
/// accepts (a client in the same process, a file a request reads) can give
/// every connection the same remainder. `MHD_add_connection` applies the
/// checks libmicrohttpd's own accept does: the connection limit, the limit
/// per client address (counted over all the threads), the accept policy.
///
/// ``stop()`` shuts the socket down, which ends the thread's `accept`,
/// waits for the thread, and closes the socket: connection attempts from
/// then on are refused.
final class Acceptor: Sendable {
    /// The port bound (the one the system picked for port 0).
    let port: UInt16
    private let socket: Int32
    private let state = Locked(State())
    /// Signalled once the accepting thread has ended.
    private let ended = DispatchSemaphore(value: 0)

    private struct State {
        var started = false
        var stopping = false
    }

    /// Binds `address` and listens.
    ///
    /// - Throws: ``ServerError`` ("cannot listen on …") with the system's
    ///   reason, such as an address already in use.
    init(address: SocketAddress) throws {
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        #if canImport(Glibc)
            let descriptor = Glibc.socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let descriptor = Darwin.socket(family, SOCK_STREAM, 0)
        #endif
        func failure(_ code: Int32) -> ServerError {
            ServerError(message: "cannot listen on \(address.display): " + String(cString: strerror(code)))
        }
        guard descriptor >= 0 else { throw failure(errno) }
        var on: Int32 = 1
        let size = socklen_t(MemoryLayout<Int32>.size)
        // As libmicrohttpd's own socket: a restarted server binds its port
        // at once, and an IPv6 address takes IPv6 connections only.
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, size)
        if address.isIPv6 { _ = setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, size) }
        let length = socklen_t(address.isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        guard address.withSockaddr({ bind(descriptor, $0, length) }) == 0, listen(descriptor, SOMAXCONN) == 0 else {
            let code = errno
            close(descriptor)
            throw failure(code)
        }
        var bound = sockaddr_storage()
        var boundLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &boundLength) }
        }
        guard named == 0 else {
            let code = errno
            close(descriptor)
            throw failure(code)
        }
        port = withUnsafePointer(to: &bound) { pointer in
            address.isIPv6
                ? pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    UInt16(bigEndian: $0.pointee.sin6_port)
                }
                : pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    UInt16(bigEndian: $0.pointee.sin_port)
                }
        }
        socket = descriptor
    }

    /// Starts the thread that accepts connections and hands them to
    /// `daemon`, started with `MHD_USE_NO_LISTEN_SOCKET` and
    /// `MHD_USE_ITC` and a pool of `threads` threads (1 without a pool).
    /// `log` gets what stops accepting for a while (no file descriptors
    /// left).
    func start(daemon: OpaquePointer, threads: Int, log: @escaping @Sendable (String) -> Void) {
        let begins = state.withLock { state in
            guard !state.stopping, !state.started else { return false }
            state.started = true
            return true
        }
        guard begins else { return }
        nonisolated(unsafe) let daemon = daemon
        let thread = Thread { [self] in
            acceptConnections(daemon: daemon, threads: max(1, threads), log: log)
            ended.signal()
        }
        thread.name = "http-accept"
        thread.stackSize = 256 * 1024
        thread.start()
    }

    private func acceptConnections(daemon: OpaquePointer, threads: Int, log: @Sendable (String) -> Void) {
        var lastComplaint: ContinuousClock.Instant?
        var turn = 0
        while true {
            var client = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let connection = withUnsafeMutablePointer(to: &client) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { records_accept(socket, $0, &length) }
            }
            if connection < 0 {
                let code = errno
                if state.withLock({ $0.stopping }) { return }
                switch code {
                case EINTR, EAGAIN, ECONNABORTED, EPROTO, ENETDOWN, ENOPROTOOPT, EHOSTDOWN, EHOSTUNREACH,
                    EOPNOTSUPP, ENETUNREACH:
                    // The connection went away while waiting (accept(2)
                    // says to take the network's errors as "try again").
                    continue
                default:
                    // Out of file descriptors or memory: say so (once in a
                    // while) and wait for connections to close. Waiting
                    // connections stay in the listening queue meanwhile.
                    let now = ContinuousClock.now
                    if lastComplaint.map({ now - $0 > .seconds(10) }) ?? true {
                        lastComplaint = now
                        log("server: cannot accept a connection: " + String(cString: strerror(code)))
                    }
                    usleep(20_000)
                    continue
                }
            }
            let placed = Self.renumber(connection, toThread: turn, of: threads)
            turn = (turn + 1) % threads
            // Refused (limits, the server stopping): libmicrohttpd closed it.
            _ = withUnsafePointer(to: &client) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    MHD_add_connection(daemon, placed, $0, length)
                }
            }
        }
    }

    /// `descriptor`, or a copy of it numbered so that the number modulo
    /// `threads` is `thread` (the original then closed): the number
    /// libmicrohttpd's pool places the connection by. When no copy can be
    /// made (no descriptors left), or none of the numbers tried is free,
    /// `descriptor` as it is.
    static func renumber(_ descriptor: Int32, toThread thread: Int, of threads: Int) -> Int32 {
        guard threads > 1, Int(descriptor) % threads != thread else { return descriptor }
        var lowest = Int(descriptor) + 1
        // Only numbers with the wanted remainder are asked for: stepping
        // through every free number could meet only the wrong remainder
        // when what else the process has open takes every other number.
        for _ in 0..<16 {
            lowest += (thread - lowest % threads + threads) % threads
            guard lowest <= Int(Int32.max) else { return descriptor }
            let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, Int32(lowest))
            guard copy >= 0 else { return descriptor }
            if Int(copy) % threads == thread {
                close(descriptor)
                return copy
            }
            // The number asked for was taken: the next try starts past the
            // copy, so closing it now cannot give the same number back.
            close(copy)
            lowest = Int(copy) + 1
        }
        return descriptor
    }

    /// Stops accepting: the socket is shut down (connection attempts are
    /// refused from now on), the accepting thread ends, and the socket is
    /// closed. Safe to call more than once.
    func stop() {
        let started = state.withLock { state -> Bool? in
            guard !state.stopping else { return nil }
            state.stopping = true
            return state.started
        }
        guard let started else { return }
        // A thread blocked in accept() returns (EINVAL) once its listening
        // socket is shut down.
        _ = shutdown(socket, Int32(SHUT_RDWR))
        if started { ended.wait() }
        close(socket)
    }

    deinit { stop() }
}
