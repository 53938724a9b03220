import Foundation

/// What a route answers: a status, headers and a body.
public struct Response: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Headers in order; a name may repeat (`Set-Cookie`).
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Body

    /// A response body.
    public enum Body: Sendable {
        /// No body.
        case empty
        /// These bytes.
        case bytes([UInt8])
        /// Bytes produced while they are sent, chunk by chunk, with their
        /// total length when known (Content-Length) or sent chunked.
        case stream(length: UInt64?, any ResponseStream)
    }

    /// Creates a response.
    public init(status: Int = 200, headers: [(name: String, value: String)] = [], body: Body = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A redirect after a POST (303 See Other), to a site-relative path.
    public static func redirect(to path: String) -> Response {
        Response(status: 303, headers: [("Location", Response.sameSitePath(path))])
    }

    /// `path` if it is a path on this site (`/people`), else `/`: a `next`
    /// parameter cannot send the user to another site (`//evil.example`,
    /// `https://…`, `/\evil`).
    public static func sameSitePath(_ path: String) -> String {
        // Bytes, not characters: `/` followed by a combining mark is one
        // Character, so `hasPrefix("//")` is false for `//\u{301}evil.example`.
        var bytes = path.utf8.makeIterator()
        guard bytes.next() == UInt8(ascii: "/"), bytes.next() != UInt8(ascii: "/"),
            !path.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == "\\" })
        else { return "/" }
        return path
    }

    /// Adds a header.
    public func with(header name: String, _ value: String) -> Response {
        var copy = self
        copy.headers.append((name, value))
        return copy
    }

    /// Adds a `Set-Cookie` header.
    public func setting(_ cookie: Cookie) -> Response { with(header: "Set-Cookie", cookie.headerValue) }

    /// The value of the first header with this name (case-insensitive:
    /// header names are ASCII, whose letters are compared without case).
    public func header(_ name: String) -> String? {
        headers.first { Self.sameName($0.name, name) }?.value
    }

    /// Whether two header names are the same, ASCII letters compared
    /// without case. Byte by byte, without Foundation: this runs for
    /// every header of every answer.
    static func sameName(_ one: String, _ other: String) -> Bool {
        guard one.utf8.count == other.utf8.count else { return false }
        return zip(one.utf8, other.utf8).allSatisfy { a, b in
            a == b || (a | 0x20 == b | 0x20 && (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(a | 0x20))
        }
    }
}

/// A body produced while it is sent: the server asks for the next bytes
/// on the connection's thread until the stream says it is done, then
/// closes it (also when the client went away first).
public protocol ResponseStream: AnyObject, Sendable {
    /// Fills `buffer` from the start and returns how many bytes it wrote;
    /// 0 ends the body. May block: on the event loop it runs on a dispatch
    /// thread while the connection waits suspended (a stream that waits
    /// long, for events, should be a ``WaitingResponseStream`` instead).
    ///
    /// - Throws: to abort the response (the connection is closed).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// The response is over: release what the stream holds. Called once.
    func close()
}

/// What a ``WaitingResponseStream`` has for the server now.
public enum StreamReadiness: Sendable, Equatable {
    /// This many bytes (more than 0) were written to the buffer.
    case bytes(Int)
    /// The body is over.
    case end
    /// Nothing yet: the stream calls the `wake` it was given once it has
    /// something (or the end), and the server asks again then, or at
    /// `until` if it comes first (a heartbeat's time), whichever is first.
    case wait(until: ContinuousClock.Instant?)
}

/// A ``ResponseStream`` that can say it has nothing yet instead of
/// blocking: a long-lived stream (server-sent events) then holds no thread
/// while it waits, when the server does not give each connection a thread
/// of its own (``ServerOptions/eventLoopThreads``).
///
/// Other streams' ``ResponseStream/read(into:)`` runs on a thread of its
/// own there, while the connection waits without one.
public protocol WaitingResponseStream: ResponseStream {
    /// Fills `buffer` from the start with what is ready, without blocking.
    ///
    /// - Parameter wake: To call (from any thread, at most once needed)
    ///   when something is ready after this returned
    ///   ``StreamReadiness/wait(until:)``; calling it when nothing is
    ///   waiting does no harm.
    /// - Throws: to abort the response (the connection is closed).
    func readReady(into buffer: UnsafeMutableRawBufferPointer, wake: @escaping @Sendable () -> Void) throws
        -> StreamReadiness
}

extension WaitingResponseStream {
    /// Blocks until ``readReady(into:wake:)`` has something: for a
    /// connection with a thread of its own.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let ready = DispatchSemaphore(value: 0)
        while true {
            switch try readReady(into: buffer, wake: { ready.signal() }) {
            case .bytes(let count): return count
            case .end: return 0
            case .wait(let deadline?):
                let (seconds, attoseconds) = ContinuousClock.now.duration(to: deadline).components
                let nanoseconds = max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
                _ = ready.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds)))
            case .wait(nil):
                ready.wait()
            }
        }
    }
}

/// A cookie to set, with the attributes the web app always uses:
/// `HttpOnly`, `SameSite=Lax`, `Path=/`, and `Secure` under TLS.
public struct Cookie: Sendable, Equatable {
    /// The name.
    public var name: String
    /// The value (the caller makes sure it holds no `;`, `,` or spaces).
    public var value: String
    /// Seconds until it expires; nil for a cookie that ends with the
    /// browser session, 0 to delete it.
    public var maxAge: Int?
    /// Whether the browser may send it only over TLS.
    public var secure: Bool

    /// Creates a cookie.
    public init(name: String, value: String, maxAge: Int? = nil, secure: Bool) {
        self.name = name
        self.value = value
        self.maxAge = maxAge
        self.secure = secure
    }

    /// A cookie that deletes the one named `name`.
    public static func deleting(_ name: String, secure: Bool) -> Cookie {
        Cookie(name: name, value: "", maxAge: 0, secure: secure)
    }

    /// The `Set-Cookie` header's value.
    public var headerValue: String {
        var value = "\(name)=\(self.value); Path=/; HttpOnly; SameSite=Lax"
        if let maxAge { value += "; Max-Age=\(maxAge)" }
        if secure { value += "; Secure" }
        return value
    }
}

/// An error a route throws to answer with an error page.
public struct HTTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The status.
    public var status: Int
    /// What the page says (shown to the user: no internals).
    public var message: String
    /// Headers the answer carries (`Allow` on a 405).
    public var headers: [String: String]

    /// Creates an error.
    public init(status: Int, message: String, headers: [String: String] = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    /// 404: the page or record does not exist.
    public static let notFound = HTTPError(status: 404, message: "There is nothing at this address.")
    /// 400: the request cannot be understood.
    public static func badRequest(_ message: String) -> HTTPError { HTTPError(status: 400, message: message) }

    public var description: String { "HTTP \(status): \(message)" }
}
