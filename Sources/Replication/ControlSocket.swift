import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Litestream's control socket: HTTP over a Unix domain socket, asked one
/// request per connection. Blocking: call it from a thread of its own or a
/// task that may wait (each call is bounded by `timeout`).
public struct ControlSocket: Sendable {
    /// The socket's path.
    public var path: String
    /// The most a request may take, connecting included.
    public var timeout: Duration

    /// A client of the socket at `path`.
    public init(path: String, timeout: Duration = .seconds(5)) {
        self.path = path
        self.timeout = timeout
    }

    /// What the daemon says of one database (`GET /list`).
    public struct DatabaseState: Sendable, Equatable, Decodable {
        /// The database's path.
        public var path: String
        /// "replicating", or what stops it.
        public var status: String
        /// When its last sync to the replica ended, if one has.
        public var lastSyncAt: Date?

        enum CodingKeys: String, CodingKey {
            case path, status
            case lastSyncAt = "last_sync_at"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            path = try container.decode(String.self, forKey: .path)
            status = try container.decode(String.self, forKey: .status)
            let text = try container.decodeIfPresent(String.self, forKey: .lastSyncAt)
            lastSyncAt = text.flatMap(ControlSocket.parseDate)
        }

        /// A state as given.
        public init(path: String, status: String, lastSyncAt: Date?) {
            self.path = path
            self.status = status
            self.lastSyncAt = lastSyncAt
        }
    }

    /// The result of a sync (`POST /sync`).
    public struct SyncResult: Sendable, Equatable, Decodable {
        /// "ok" or "no_change".
        public var status: String
        /// The database's latest transaction.
        public var txid: Int
        /// The latest transaction the replica holds.
        public var replicatedTxid: Int

        enum CodingKeys: String, CodingKey {
            case status, txid
            case replicatedTxid = "replicated_txid"
        }
    }

    /// The databases the daemon replicates.
    public func databases() throws -> [DatabaseState] {
        struct List: Decodable { var databases: [DatabaseState] }
        return try JSONDecoder().decode(List.self, from: request("GET", "/list")).databases
    }

    /// Ships what the database committed so far to the replica now, and
    /// with `wait`, returns once the replica holds it.
    public func sync(database: String, wait: Bool) throws -> SyncResult {
        let body = try JSONSerialization.data(withJSONObject: ["path": database, "wait": wait])
        return try JSONDecoder().decode(SyncResult.self, from: request("POST", "/sync", body: body))
    }

    /// One request; the body of a 2xx answer.
    ///
    /// - Throws: ``ReplicationError`` when the socket cannot be reached in
    ///   time, or the answer is not a 2xx.
    func request(_ method: String, _ target: String, body: Data = Data()) throws -> Data {
        let descriptor = try connect()
        defer { close(descriptor) }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: litestream\r\nConnection: close\r\n"
        if method == "POST" { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        try send(Data((head + "\r\n").utf8) + body, on: descriptor)
        let answer = try receiveAll(descriptor)
        guard let split = answer.range(of: Data("\r\n\r\n".utf8)) else {
            throw ReplicationError("Litestream's control socket answered something that is not HTTP")
        }
        let headText = String(decoding: answer[..<split.lowerBound], as: UTF8.self)
        var payload = Data(answer[split.upperBound...])
        let statusLine = headText.split(separator: "\r\n").first ?? ""
        let status = statusLine.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        if headText.lowercased().contains("transfer-encoding: chunked") { payload = Self.dechunked(payload) }
        guard (200..<300).contains(status) else {
            let reason = String(decoding: payload.prefix(300), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            throw ReplicationError("Litestream's control socket answered \(status) to \(target): \(reason)")
        }
        return payload
    }

    private var timeoutval: timeval {
        let (seconds, attoseconds) = timeout.components
        return timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }

    private func connect() throws -> Int32 {
        #if canImport(Glibc)
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else {
            throw ReplicationError("cannot make a socket: \(String(cString: strerror(errno)))")
        }
        var limit = timeoutval
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            close(descriptor)
            throw ReplicationError("the control socket's path is too long for a Unix socket: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                systemConnect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw ReplicationError("cannot reach Litestream's control socket \(path): \(reason)")
        }
        return descriptor
    }

    private func send(_ data: Data, on descriptor: Int32) throws {
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else {
                    throw ReplicationError(
                        "cannot write to Litestream's control socket: \(String(cString: strerror(errno)))")
                }
                offset += count
            }
        }
    }

    private func receiveAll(_ descriptor: Int32) throws -> Data {
        var answer = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                let timedOut = errno == EAGAIN || errno == EWOULDBLOCK
                throw ReplicationError(
                    timedOut
                        ? "Litestream's control socket did not answer within \(timeout)"
                        : "cannot read Litestream's control socket: \(String(cString: strerror(errno)))")
            }
            if count == 0 { return answer }
            answer.append(contentsOf: buffer[..<count])
            guard answer.count < 1 << 20 else {
                throw ReplicationError("Litestream's control socket answered too much")
            }
        }
    }

    /// A chunked body's data.
    static func dechunked(_ data: Data) -> Data {
        var out = Data()
        var rest = data[...]
        while let lineEnd = rest.range(of: Data("\r\n".utf8)) {
            let sizeText = String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16), size > 0 else { break }
            let start = lineEnd.upperBound
            guard let end = rest.index(start, offsetBy: size, limitedBy: rest.endIndex) else { break }
            out.append(rest[start..<end])
            rest = rest[min(rest.endIndex, rest.index(end, offsetBy: 2, limitedBy: rest.endIndex) ?? rest.endIndex)...]
        }
        return out
    }

    /// Go's RFC 3339 time, with or without fractional seconds (up to
    /// nanoseconds, which Foundation's parser does not take: cut to
    /// milliseconds).
    static func parseDate(_ text: String) -> Date? {
        var trimmed = text
        if let dot = text.firstIndex(of: "."),
            let zone = text[dot...].firstIndex(where: { $0 == "Z" || $0 == "+" || $0 == "-" })
        {
            let fraction = text[text.index(after: dot)..<zone].prefix(3)
            trimmed =
                String(text[..<dot]) + "." + fraction.padding(toLength: 3, withPad: "0", startingAt: 0)
                + String(text[zone...])
        }
        let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        return (try? withFraction.parse(trimmed)) ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}

#if canImport(Glibc)
    private let systemConnect = Glibc.connect
#else
    private let systemConnect = Darwin.connect
#endif
