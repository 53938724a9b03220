import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Drops connections whose request headers do not arrive in time.
///
/// libmicrohttpd's connection timeout counts idle time, so a client that
/// sends one byte a second (a "slow loris") would keep its connection and
/// its thread for ever. The watchdog gives each request's headers a
/// deadline: ``ServerOptions/headerTimeout`` from the connection's start,
/// and on a kept-alive connection the idle timeout plus that from the end
/// of the previous request. A request's body, once its headers are in,
/// must then keep coming at ``ServerOptions/minimumBodyRate`` on average
/// over each period of that timeout (a long upload on a slow link is fine;
/// a body trickled a byte a second is not). A connection that falls behind
/// is shut down; libmicrohttpd then sees it fail and closes it. A request
/// whose body is in has no deadline here (a slow answer, a live page's
/// event stream). No route has run for a dropped connection (its handler
/// runs once the body is in), so it held no database connection.
final class ConnectionWatchdog: Sendable {
    private let headerTimeout: Duration
    private let idleTimeout: Duration
    /// The bytes a body must bring in each period of `headerTimeout`.
    private let bodyBytesPerPeriod: Int
    /// The connections, over shards by connection: the event loop's
    /// threads touch them several times a request.
    private let shards = Sharded { Shard() }
    private let isStopped = Locked(false)
    private let log: @Sendable (String) -> Void

    private struct Entry {
        var descriptor: Int32
        /// The socket's inode when the connection started: the descriptor
        /// is shut down only while it is still that socket.
        var socket: UInt64
        /// When the next request's headers must be in; nil while a request
        /// is served.
        var deadline: ContinuousClock.Instant?
        /// While a body arrives: when the current period started, and the
        /// bytes that came in it.
        var bodyPeriod: (start: ContinuousClock.Instant, bytes: Int)?
        /// The body's bytes at the last sweep, and how many sweeps in a row
        /// saw no more come.
        var bodyProgress: (bytes: Int, stalledSweeps: Int) = (0, 0)
    }

    private struct Shard {
        var entries: [UInt: Entry] = [:]
        var dropped = 0
    }

    init(
        headerTimeout: Duration, idleTimeout: Duration, minimumBodyRate: Int,
        log: @escaping @Sendable (String) -> Void
    ) {
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
        let (seconds, attoseconds) = headerTimeout.components
        bodyBytesPerPeriod = Int(Double(max(0, minimumBodyRate)) * (Double(seconds) + Double(attoseconds) / 1e18))
        self.log = log
    }

    /// Connections dropped so far for being too slow.
    var droppedCount: Int { shards.sum { $0.dropped } }

    /// Connections open now.
    var connectionCount: Int { shards.sum { $0.entries.count } }

    /// Starts checking the deadlines, on a thread of its own, until
    /// ``stop()``.
    func start() {
        let (seconds, attoseconds) = headerTimeout.components
        let interval = min(0.25, max(0.02, (Double(seconds) + Double(attoseconds) / 1e18) / 8))
        let thread = Thread { [self] in
            while !isStopped.withLock({ $0 }) {
                Thread.sleep(forTimeInterval: interval)
                sweep()
            }
        }
        thread.name = "http-server-watchdog"
        thread.stackSize = 256 * 1024
        thread.start()
    }

    func stop() { isStopped.withLock { $0 = true } }

    func connectionStarted(_ connection: OpaquePointer) {
        let descriptor = records_mhd_connection_fd(connection)
        guard descriptor >= 0 else { return }
        guard let socket = Self.socketIdentity(descriptor) else { return }
        let deadline = ContinuousClock.now.advanced(by: headerTimeout)
        let key = Self.key(connection)
        shards.withLock(for: key) {
            $0.entries[key] = Entry(descriptor: descriptor, socket: socket, deadline: deadline)
        }
    }

    func headersArrived(_ connection: OpaquePointer) {
        let key = Self.key(connection)
        shards.withLock(for: key) { $0.entries[key]?.deadline = nil }
    }

    /// The server is ready for the request's body: from now on it must
    /// keep coming.
    func bodyExpected(_ connection: OpaquePointer) {
        let now = ContinuousClock.now
        let key = Self.key(connection)
        shards.withLock(for: key) { $0.entries[key]?.bodyPeriod = (now, 0) }
    }

    func bodyReceived(_ connection: OpaquePointer, count: Int) {
        let key = Self.key(connection)
        shards.withLock(for: key) { $0.entries[key]?.bodyPeriod?.bytes += count }
    }

    func bodyComplete(_ connection: OpaquePointer) {
        let key = Self.key(connection)
        shards.withLock(for: key) { $0.entries[key]?.bodyPeriod = nil }
    }

    func requestCompleted(_ connection: OpaquePointer) {
        let deadline = ContinuousClock.now.advanced(by: idleTimeout + headerTimeout)
        let key = Self.key(connection)
        shards.withLock(for: key) { shard in
            // One lookup: this runs for every request.
            guard let index = shard.entries.index(forKey: key) else { return }
            shard.entries.values[index].deadline = deadline
            shard.entries.values[index].bodyPeriod = nil
        }
    }

    /// libmicrohttpd reports the connection closed before it closes its
    /// socket, so the descriptor is never another connection's when the
    /// watchdog shuts it down (both happen under the lock).
    func connectionClosed(_ connection: OpaquePointer) {
        let key = Self.key(connection)
        shards.withLock(for: key) { _ = $0.entries.removeValue(forKey: key) }
    }

    private func sweep() {
        let now = ContinuousClock.now
        var forgotten = 0
        var droppedTotal = 0
        shards.forEachLocked { state in
            var dropped = 0
            /// Shuts the connection's socket down, unless its descriptor is
            /// no longer that socket (closed without libmicrohttpd's notice:
            /// the number may be another connection's by now, which must
            /// not be touched); then the entry is forgotten.
            func shutDown(_ key: UInt, _ entry: Entry) -> Bool {
                guard Self.socketIdentity(entry.descriptor) == entry.socket else {
                    state.entries[key] = nil
                    forgotten += 1
                    return false
                }
                shutdown(entry.descriptor, Int32(SHUT_RDWR))
                return true
            }
            for (key, entry) in state.entries {
                if let period = entry.bodyPeriod, Self.hungUp(entry, bytes: period.bytes, key: key, in: &state) {
                    // Not slow: gone. libmicrohttpd learns it from the shutdown.
                    if shutDown(key, entry) { state.entries[key]?.bodyPeriod = nil }
                    continue
                }
                if let period = entry.bodyPeriod, period.start.advanced(by: headerTimeout) < now {
                    if period.bytes >= bodyBytesPerPeriod {
                        state.entries[key]?.bodyPeriod = (now, 0)
                        continue
                    }
                } else {
                    guard let deadline = entry.deadline, deadline < now else { continue }
                }
                guard shutDown(key, entry) else { continue }
                state.entries[key]?.deadline = nil
                state.entries[key]?.bodyPeriod = nil
                dropped += 1
            }
            state.dropped += dropped
            droppedTotal += dropped
        }
        let dropped = droppedTotal
        if dropped > 0 {
            log("server: dropped \(dropped) connection(s) whose request did not arrive in time")
        }
        if forgotten > 0 {
            log("server: \(forgotten) connection(s) closed without notice were forgotten, not shut down")
        }
    }

    /// Whether a client hung up in the middle of its body: nothing came for
    /// two sweeps and its socket has nothing left to read but the end.
    ///
    /// On the event loop, libmicrohttpd (0.9.75) can miss such a hang-up:
    /// its epoll is edge-triggered, and a read that returns less than it
    /// asked for makes it wait for the next edge, which the end that came
    /// with the last bytes never brings. The connection would then wait for
    /// the body's rate check (two periods of the header timeout).
    private static func hungUp(_ entry: Entry, bytes: Int, key: UInt, in state: inout Shard) -> Bool {
        if bytes != entry.bodyProgress.bytes {
            state.entries[key]?.bodyProgress = (bytes, 0)
            return false
        }
        let stalled = entry.bodyProgress.stalledSweeps + 1
        state.entries[key]?.bodyProgress.stalledSweeps = stalled
        guard stalled >= 2 else { return false }
        var byte: UInt8 = 0
        return recv(entry.descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 0
    }

    /// The inode of the socket open at `descriptor`, or nil when it is not
    /// an open socket.
    private static func socketIdentity(_ descriptor: Int32) -> UInt64? {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return nil }
        return UInt64(info.st_ino)
    }

    private static func key(_ connection: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: connection)) }
}
