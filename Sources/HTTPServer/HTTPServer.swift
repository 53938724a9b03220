import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where and how an ``HTTPServer`` listens.
public struct ServerOptions: Sendable {
    /// The address to listen on: an IPv4 or IPv6 literal. Loopback
    /// (`127.0.0.1`) unless told otherwise.
    public var host: String = "127.0.0.1"
    /// The port; 0 picks a free one (see ``HTTPServer/port``).
    public var port: UInt16 = 8080
    /// The certificate and key for HTTPS, or nil for plain HTTP.
    public var tls: TLSCredentials?
    /// Seconds a connection may stay idle (between requests, or while a
    /// request trickles in) before it is closed.
    public var idleTimeout: Int = 30
    /// The most connections open at once; libmicrohttpd closes more at
    /// once (and logs it). Each is an open file: the server raises its
    /// soft limit on open files to the hard limit as it starts
    /// (``HTTPServer/raiseOpenFileLimit()``), and this should stay below
    /// that. With ``eventLoopThreads`` at 0 each also costs a thread
    /// (measured: about 70 KiB of resident memory for an idle connection or
    /// a live page's event stream); on the event loop a waiting connection
    /// costs no thread (see docs/API.md for the figures).
    public var connectionLimit: Int = 16384
    /// The threads that serve all the connections, each with an epoll
    /// event loop of its own: a connection waiting for its answer, for a
    /// stream's next event, or idle between requests holds none of them
    /// (it is suspended until what it waits for comes). 0, the default,
    /// gives each connection a thread of its own instead (libmicrohttpd's
    /// thread-per-connection mode), which limits the connections to what
    /// threads the machine can hold.
    ///
    /// The event loop is opt-in for now: in test runs on a loaded machine,
    /// now and then a form's body was never read after its connection was
    /// resumed (libmicrohttpd 0.9.75 called the request's handler again,
    /// then nothing more came), until the body rate check dropped the
    /// connection and the client saw an empty reply. The
    /// thread-per-connection mode has never shown it; until it is fixed, a
    /// server chooses the event loop.
    public var eventLoopThreads: Int = 0
    /// The most connections open at once from one client address, so that
    /// one client cannot take them all: further ones are closed at once.
    /// At most three quarters of ``connectionLimit`` (a larger value is
    /// lowered to it), so a quarter always stays for other clients. A
    /// browser opens about six; raise it when many people share an
    /// address, or behind a reverse proxy (all its connections come from
    /// its address).
    public var connectionsPerClient: Int = 128
    /// The stack of each connection's thread (or of each event loop's).
    /// Requests do their work on the database's threads, so a
    /// connection's thread needs little.
    public var threadStackSize: Int = 512 * 1024
    /// How long ``HTTPServer/stop()`` waits for requests in flight.
    public var shutdownGrace: Duration = .seconds(10)
    /// How long a request's headers may take to arrive, from the
    /// connection's start (or on a kept-alive connection, from
    /// ``idleTimeout`` after the previous request): a client that trickles
    /// them, which the idle timeout alone would let hold its connection
    /// and thread for ever, is dropped.
    public var headerTimeout: Duration = .seconds(10)
    /// The bytes per second a request's body must come at, on average
    /// over each ``headerTimeout``, once its headers are in: a client that
    /// trickles it is dropped. The default, 1 KiB/s, lets any real upload
    /// through.
    public var minimumBodyRate: Int = 1024

    /// Options with the defaults.
    public init() {}

    /// The most ``connectionsPerClient`` can be: three quarters of
    /// ``connectionLimit``, so that a quarter stays for other clients.
    public var maximumConnectionsPerClient: Int {
        let limit = max(1, connectionLimit)
        return max(1, limit - limit / 4)
    }

    /// ``connectionsPerClient`` within 1 and ``maximumConnectionsPerClient``.
    var effectiveConnectionsPerClient: Int {
        min(max(1, connectionsPerClient), maximumConnectionsPerClient)
    }
}

/// A certificate chain and private key, in PEM, for HTTPS.
public struct TLSCredentials: Sendable {
    /// The certificate chain, PEM.
    public var certificatePEM: String
    /// The private key, PEM (unencrypted).
    public var keyPEM: String

    /// Credentials from PEM text.
    public init(certificatePEM: String, keyPEM: String) {
        self.certificatePEM = certificatePEM
        self.keyPEM = keyPEM
    }

    /// Reads the two PEM files and checks them (``check(certificateName:keyName:)``).
    ///
    /// - Throws: ``ServerError`` naming the file that cannot be read, that
    ///   holds no certificate or no key, or the two that do not match.
    public static func load(certificate: String, key: String) throws -> TLSCredentials {
        func read(_ path: String, _ what: String) throws -> String {
            do {
                return try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw ServerError(message: "cannot read the TLS \(what) \(path)")
            }
        }
        let credentials = TLSCredentials(
            certificatePEM: try read(certificate, "certificate"), keyPEM: try read(key, "key"))
        try credentials.check(certificateName: "the TLS certificate \(certificate)", keyName: "the TLS key \(key)")
        return credentials
    }

    /// Checks that the certificate chain holds a certificate, the key is an
    /// unencrypted private key, and the key is the certificate's.
    ///
    /// - Parameters:
    ///   - certificateName: How the message names the certificate (its file).
    ///   - keyName: How the message names the key.
    /// - Throws: ``ServerError`` saying which of the two is wrong, or that
    ///   they are swapped or do not match.
    public func check(certificateName: String = "the TLS certificate", keyName: String = "the TLS key") throws {
        let result = records_tls_check(certificatePEM, keyPEM)
        let looksSwapped = certificatePEM.contains("PRIVATE KEY-----") && keyPEM.contains("-----BEGIN CERTIFICATE")
        switch result {
        case 0:
            return
        case 1 where looksSwapped:
            throw ServerError(
                message: "\(certificateName) is a private key and \(keyName) a certificate: the two are swapped")
        case 1:
            throw ServerError(
                message: "\(certificateName) is not a certificate (no PEM certificate in it)"
                    + (certificatePEM.contains("PRIVATE KEY-----") ? "; it holds a private key" : ""))
        case 2:
            throw ServerError(
                message: "\(keyName) is not a private key (no unencrypted PEM private key in it)"
                    + (keyPEM.contains("-----BEGIN CERTIFICATE") ? "; it holds a certificate" : ""))
        case 3:
            throw ServerError(message: "\(keyName) does not belong to \(certificateName): they do not match")
        default:
            let reason = gnutls_strerror(result).map { String(cString: $0) } ?? "error \(result)"
            throw ServerError(message: "\(certificateName) and \(keyName) cannot be used: \(reason)")
        }
    }
}

/// Why a server could not start.
public struct ServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    /// Creates an error.
    public init(message: String) { self.message = message }
    public var description: String { message }
}

/// An HTTP server over GNU libmicrohttpd, serving an ``HTTPApplication``.
///
/// libmicrohttpd parses HTTP on a few threads, each with an epoll event
/// loop (``ServerOptions/eventLoopThreads``). No callback blocks: a request
/// whose answer is not ready (it waits for the database, whose reads run
/// on the pool's readers, many at once), or a streamed response with
/// nothing to send yet, suspends its connection, which holds no thread
/// until it is resumed (``ParkingLot``); a ``ResponseStream`` that can only
/// block is read on a dispatch thread meanwhile, a ``WaitingResponseStream``
/// (an event stream) wakes its connection itself. Form bodies go through
/// libmicrohttpd's post processor, chunk by chunk; an upload's file, or a
/// streamed raw body, goes to the route's ``UploadSink`` as it arrives; a
/// raw body of another route is kept as it came.
public final class HTTPServer: Sendable {
    /// The port the server listens on (the one picked when started on port
    /// 0).
    public let port: UInt16
    /// The address the server listens on.
    public let host: String
    /// Whether it serves HTTPS.
    public var isSecure: Bool { core.isSecure }
    /// The URL of the site's root, such as `http://127.0.0.1:8080/`.
    public var url: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "\(isSecure ? "https" : "http")://\(hostPart):\(port)/"
    }

    let core: ServerCore
    private let daemon: Daemon

    /// Starts serving `application`.
    ///
    /// - Throws: ``ServerError`` when the address is not an IP literal or
    ///   cannot be bound (in use, not permitted), or TLS cannot start.
    public init(application: any HTTPApplication, options: ServerOptions = ServerOptions()) throws {
        let watchdog = ConnectionWatchdog(
            headerTimeout: options.headerTimeout, idleTimeout: .seconds(max(1, options.idleTimeout)),
            minimumBodyRate: options.minimumBodyRate, log: { application.log($0) })
        let parking = options.eventLoopThreads > 0 ? ParkingLot() : nil
        let core = ServerCore(
            application: application, isSecure: options.tls != nil, grace: options.shutdownGrace, watchdog: watchdog,
            parking: parking)
        let address = try SocketAddress(host: options.host, port: options.port)
        self.core = core
        self.host = options.host
        self.daemon = try Daemon(options: options, address: address, core: core)
        self.port = daemon.boundPort
        watchdog.start()
        parking?.start()
    }

    /// Raises this process's soft limit on open files to its hard limit
    /// (each connection is a file), and returns the limit now in force.
    @discardableResult
    public static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return -1 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// Connections dropped so far because their request headers did not
    /// arrive within ``ServerOptions/headerTimeout``, or their body came
    /// slower than ``ServerOptions/minimumBodyRate``.
    public var slowConnectionsDropped: Int { core.watchdog.droppedCount }

    /// Connections open now (served, or idle between requests).
    public var openConnections: Int { core.watchdog.connectionCount }

    /// Connections suspended now, waiting without a thread (for their
    /// answer, or a stream's next bytes); 0 when each connection has a
    /// thread of its own.
    public var parkedConnections: Int { core.parking?.parkedCount ?? 0 }

    /// Connections answered before their body was read that the server
    /// still reads from and discards, so that the client's sending does not
    /// make it lose the answer; each for at most two seconds.
    public var lingeringConnections: Int { core.lingering.lingeringCount }

    /// Stops the server: no new connections are accepted, requests in
    /// flight get up to ``ServerOptions/shutdownGrace`` to finish, then
    /// every connection is closed. Safe to call more than once, from any
    /// thread but a request's own.
    public func stop() {
        guard core.beginStopping() else { return }
        daemon.quiesce()
        core.application.serverWillStop()
        core.waitForRequestsInFlight()
        daemon.stop()
        core.watchdog.stop()
        core.parking?.stop()
    }

    /// Stops the server as ``stop()`` does, waiting on a thread of its own
    /// rather than on one of Swift's concurrency threads, which the
    /// requests in flight need to finish.
    public func stop() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                self.stop()
                done.resume()
            }
            thread.name = "http-server-stop"
            thread.start()
        }
    }

    /// Runs `work` on the server's request threads and blocks this thread
    /// until it is done: for a ``ResponseStream``, whose reads run on a
    /// thread that may block (a dispatch thread on the event loop, the
    /// connection's own otherwise), that needs an `async` call.
    public static func waitBlocking<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
        Callbacks.wait(work)
    }

    /// Whether ``stop()`` has begun.
    public var isStopping: Bool { core.isStopping }

    /// Requests being answered right now.
    public var requestsInFlight: Int { core.inFlight }

    deinit { stop() }
}

/// The running libmicrohttpd daemon.
final class Daemon: Sendable {
    nonisolated(unsafe) private let pointer: OpaquePointer
    let boundPort: UInt16
    private let stopped = Locked(false)
    private let parking: ParkingLot?
    /// On the event loop, the listening socket and the thread that hands
    /// its connections to libmicrohttpd's threads in turn (see
    /// ``Acceptor``); nil when libmicrohttpd listens itself (a thread per
    /// connection).
    private let acceptor: Acceptor?
    /// The listening socket libmicrohttpd handed back when it was quiesced,
    /// closed only once the daemon has stopped (-1 before).
    private let quiescedSocket = Locked<Int32>(-1)

    init(options: ServerOptions, address: SocketAddress, core: ServerCore) throws {
        var flags = MHD_USE_ERROR_LOG.rawValue | MHD_USE_ITC.rawValue
        let acceptor = options.eventLoopThreads > 0 ? try Acceptor(address: address) : nil
        if acceptor != nil {
            flags |=
                MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
                | MHD_USE_NO_LISTEN_SOCKET.rawValue
        } else {
            flags |=
                MHD_USE_THREAD_PER_CONNECTION.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue
                | MHD_USE_POLL.rawValue
        }
        if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
        if options.tls != nil { flags |= MHD_USE_TLS.rawValue }
        // libmicrohttpd reads the PEM text while it starts; the copies are
        // freed once it has.
        let certificate = options.tls.map { strdup($0.certificatePEM) } ?? nil
        let key = options.tls.map { strdup($0.keyPEM) } ?? nil
        defer {
            free(certificate)
            free(key)
        }
        do { try options.tls?.check() } catch {
            acceptor?.stop()
            throw error
        }
        let context = Unmanaged.passUnretained(core).toOpaque()
        var items: [MHD_OptionItem] = [
            // The logger first, so that libmicrohttpd's own messages about
            // the other options go through it too.
            MHD_OptionItem(
                option: .EXTERNAL_LOGGER,
                value: Int(bitPattern: unsafeBitCast(Callbacks.logger, to: UnsafeRawPointer.self)),
                ptr_value: context),
            MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: max(1, options.idleTimeout), ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_LIMIT, value: max(1, options.connectionLimit), ptr_value: nil),
            MHD_OptionItem(
                option: .PER_IP_CONNECTION_LIMIT, value: options.effectiveConnectionsPerClient, ptr_value: nil),
            MHD_OptionItem(option: .THREAD_STACK_SIZE, value: options.threadStackSize, ptr_value: nil),
            MHD_OptionItem(
                option: .NOTIFY_CONNECTION,
                value: Int(bitPattern: unsafeBitCast(Callbacks.connectionNotice, to: UnsafeRawPointer.self)),
                ptr_value: context),
            MHD_OptionItem(
                option: .NOTIFY_COMPLETED,
                value: Int(bitPattern: unsafeBitCast(Callbacks.completed, to: UnsafeRawPointer.self)),
                ptr_value: context),
        ]
        if options.eventLoopThreads > 1 {
            items.append(MHD_OptionItem(option: .THREAD_POOL_SIZE, value: options.eventLoopThreads, ptr_value: nil))
        }
        if let certificate, let key {
            items.append(
                MHD_OptionItem(option: .HTTPS_MEM_CERT, value: 0, ptr_value: UnsafeMutableRawPointer(certificate)))
            items.append(MHD_OptionItem(option: .HTTPS_MEM_KEY, value: 0, ptr_value: UnsafeMutableRawPointer(key)))
        }
        // Whatever errno an earlier call left must not pass for the reason.
        errno = 0
        let started: OpaquePointer? = address.withSockaddr { sockaddr in
            if acceptor == nil {
                items.append(
                    MHD_OptionItem(
                        option: .SOCK_ADDR, value: 0, ptr_value: UnsafeMutableRawPointer(mutating: sockaddr)))
            }
            items.append(MHD_OptionItem(option: .END, value: 0, ptr_value: nil))
            return items.withUnsafeBufferPointer { buffer in
                records_mhd_start(
                    flags, address.port, Callbacks.acceptPolicy, context, Callbacks.access, context,
                    buffer.baseAddress)
            }
        }
        guard let started else {
            let reason = errno == 0 ? "" : ": " + String(cString: strerror(errno))
            acceptor?.stop()
            throw ServerError(
                message: "cannot listen on \(address.display)\(reason)"
                    + (options.tls != nil ? " (or the TLS certificate and key were not accepted)" : ""))
        }
        pointer = started
        boundPort = acceptor?.port ?? records_mhd_bound_port(started)
        parking = core.parking
        self.acceptor = acceptor
        acceptor?.start(daemon: started, threads: options.eventLoopThreads, log: { core.application.log($0) })
    }

    /// Stops accepting connections; those open go on.
    ///
    /// With a thread per connection, libmicrohttpd is quiesced: it stops
    /// listening, and the listening socket is shut down at once (a
    /// connection attempt is refused) but closed only after the daemon's
    /// threads are joined, so that its number is never another socket's
    /// while they may still use it.
    ///
    /// On the event loop the server listens itself (``Acceptor``), and
    /// stops as libmicrohttpd would: the socket is shut down (a
    /// connection attempt is refused) once its thread no longer hands
    /// connections on. (libmicrohttpd 0.9.75 cannot quiesce its event loop
    /// safely: `MHD_quiesce_daemon` and a worker thread both take the
    /// listening socket out of the worker's epoll set, unsynchronized, and
    /// the one that loses aborts the process, "Failed to remove listen FD
    /// from epoll set", seen in a test run before the server listened
    /// itself.) A connection accepted just before still meets the accept
    /// policy (``Callbacks/acceptPolicy``), which closes it unread.
    func quiesce() {
        if let acceptor {
            acceptor.stop()
            return
        }
        let listening = MHD_quiesce_daemon(pointer)
        guard listening >= 0 else { return }
        _ = shutdown(listening, Int32(SHUT_RDWR))
        quiescedSocket.withLock { $0 = listening }
    }

    /// Closes every connection and joins the threads.
    func stop() {
        let already = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !already else { return }
        // Nothing may hand it a connection while it stops.
        acceptor?.stop()
        // libmicrohttpd may not stop with connections suspended.
        parking?.close()
        MHD_stop_daemon(pointer)
        let listening = quiescedSocket.withLock { socket in
            defer { socket = -1 }
            return socket
        }
        if listening >= 0 { close(listening) }
    }

    deinit { stop() }
}
