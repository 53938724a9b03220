import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Closes connections answered before their body was read without losing
/// the answer.
///
/// When the server refuses a body it has not read (a 413 for a body
/// announced or found too large), libmicrohttpd closes the connection after
/// the answer while the client is still sending. Closing a socket with
/// unread bytes makes the kernel reset the connection, and a reset can
/// discard the answer on the client's side before the client has read it:
/// a browser then shows "connection reset" instead of the page that says
/// the picture is too large.
///
/// So such a connection is closed the way HTTP servers call lingering: the
/// socket is kept (a duplicate of its descriptor outlives libmicrohttpd's
/// close), its sending side is shut down so that the client sees the end of
/// the answer, and what the client still sends is read and thrown away,
/// until the client closes its side or ``lingerTime`` passes. Nothing read
/// reaches the application; at most ``maximumLingering`` connections linger
/// at once (past that one is closed at once), each on a small thread of its
/// own for at most ``lingerTime``, so a client cannot hold the server this
/// way.
final class LingeringClose: Sendable {
    /// How long a connection may linger.
    static let lingerTime: Duration = .seconds(2)
    /// How many connections may linger at once.
    static let maximumLingering = 32

    private let state = Locked((marked: Set<UInt>(), lingering: 0))

    /// How many connections linger now.
    var lingeringCount: Int { state.withLock { $0.lingering } }

    /// Marks a connection as one to close by lingering: its answer goes out
    /// before its body was read.
    func mark(_ connection: OpaquePointer) {
        _ = state.withLock { $0.marked.insert(UInt(bitPattern: connection)) }
    }

    /// libmicrohttpd reports the connection closed; its socket is still
    /// open. A marked connection lingers on a duplicate of the socket.
    func connectionClosed(_ connection: OpaquePointer) {
        let key = UInt(bitPattern: connection)
        let admitted = state.withLock { state -> Bool in
            guard state.marked.remove(key) != nil, state.lingering < Self.maximumLingering else { return false }
            state.lingering += 1
            return true
        }
        guard admitted else { return }
        let socket = records_mhd_connection_fd(connection)
        let copy = socket < 0 ? -1 : dup(socket)
        guard copy >= 0 else {
            state.withLock { $0.lingering -= 1 }
            return
        }
        let thread = Thread { [self] in
            Self.drain(copy, for: Self.lingerTime)
            close(copy)
            state.withLock { $0.lingering -= 1 }
        }
        thread.stackSize = 64 * 1024
        thread.name = "linger"
        thread.start()
    }

    /// Shuts the sending side, then reads and discards until the peer
    /// closes its side, an error, or `time` has passed.
    private static func drain(_ socket: Int32, for time: Duration) {
        _ = shutdown(socket, Int32(SHUT_WR))
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: time)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let left = clock.now.duration(to: deadline)
            guard left > .zero else { return }
            let milliseconds = Int32(
                clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            var readable = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&readable, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return }
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
        }
    }
}
