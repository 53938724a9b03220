import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``SyncTransport`` to a server over HTTP: `POST {base}/sync/push`,
/// `POST {base}/sync/pull`, and for large values
/// `POST {base}/sync/chunks/upload` and `POST {base}/sync/chunks/download`,
/// with an API token as the bearer, bodies in ``SyncWire``'s binary form.
///
/// ```swift
/// let transport = HTTPSyncTransport(
///     baseURL: URL(string: "https://records.example.com/api/v1")!, token: token)
/// let report = try await client.sync(over: transport)
/// ```
///
/// The server's refusals come back as the errors the engine would have
/// thrown in-process (a ``SyncError`` with its kind, a
/// ``SyncValidationError``); everything else is an ``HTTPSyncError``.
public struct HTTPSyncTransport: SyncTransport {
    /// The API's base URL, the part before `/sync/push`.
    public let baseURL: URL
    private let token: String
    private let timeout: TimeInterval
    private let session: URLSession

    /// A transport to the API at `baseURL`.
    ///
    /// - Parameters:
    ///   - baseURL: The API's base, such as `https://host/api/v1`.
    ///   - token: An API token: read-write to push, read is enough to pull.
    ///   - timeout: How long one request may wait for the server (default
    ///     60 seconds).
    ///   - session: The session that sends the requests.
    public init(baseURL: URL, token: String, timeout: TimeInterval = 60, session: URLSession = .shared) {
        self.baseURL = baseURL
        self.token = token
        self.timeout = timeout
        self.session = session
    }

    /// Sends a push.
    public func push(_ request: PushRequest) async throws -> PushResponse {
        try SyncWire.pushResponse(try await send(SyncWire.encode(request), to: "sync/push"))
    }

    /// Sends a pull.
    public func pull(_ request: PullRequest) async throws -> PullResponse {
        try SyncWire.pullResponse(try await send(SyncWire.encode(request), to: "sync/pull"))
    }

    /// Sends a chunk of a large value (or, with no bytes, asks how much of
    /// it the server holds).
    public func uploadChunk(_ request: ChunkUpload) async throws -> ChunkUploadResponse {
        try SyncWire.chunkUploadResponse(try await send(SyncWire.encode(request), to: "sync/chunks/upload"))
    }

    /// Fetches a piece of a large value a pull referenced.
    public func downloadChunk(_ request: ChunkDownload) async throws -> ChunkDownloadResponse {
        try SyncWire.chunkDownloadResponse(try await send(SyncWire.encode(request), to: "sync/chunks/download"))
    }

    private func send(_ body: Data, to path: String) async throws -> Data {
        var request = URLRequest(url: baseURL.appendingPathComponent(path), timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue(SyncWire.contentType, forHTTPHeaderField: "Content-Type")
        request.setValue(SyncWire.contentType + ", application/problem+json", forHTTPHeaderField: "Accept")
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await load(request)
        guard let response = response as? HTTPURLResponse else {
            throw HTTPSyncError(.badAnswer, "the server at \(host) gave an answer that is not HTTP")
        }
        if response.statusCode == 200,
            response.value(forHTTPHeaderField: "Content-Type")?.hasPrefix(SyncWire.contentType) == true
        {
            return data
        }
        throw Self.refusal(status: response.statusCode, problem: data, host: host)
    }

    private var host: String { baseURL.host ?? baseURL.absoluteString }

    private func load(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let box = TaskBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: Self.transportError(error, host: host))
                    } else if let data, let response {
                        continuation.resume(returning: (data, response))
                    } else {
                        continuation.resume(throwing: HTTPSyncError(.badAnswer, "the server at \(host) sent no answer"))
                    }
                }
                box.set(task)
                task.resume()
            }
        } onCancel: {
            box.cancel()
        }
    }

    private static func transportError(_ error: any Error, host: String) -> any Error {
        let code = (error as? URLError)?.code
        if code == .cancelled { return CancellationError() }
        if code == .timedOut {
            return HTTPSyncError(.unreachable, "the server at \(host) did not answer in time")
        }
        return HTTPSyncError(.unreachable, "cannot reach the server at \(host): \(error.localizedDescription)")
    }

    /// The error a server's refusal stands for: the engine's own error for
    /// the refusals it knows (a replayed push with its acknowledgement, a
    /// record the server's rules refuse), else an ``HTTPSyncError``. For a
    /// transport of one's own over the same endpoints.
    ///
    /// - Parameters:
    ///   - status: The answer's HTTP status.
    ///   - body: Its body, a problem document (RFC 9457) when the
    ///     server gave one.
    ///   - host: The server's name, for the messages.
    public static func refusal(status: Int, problem body: Data, host: String) -> any Error {
        let problem = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
        let code = problem["code"] as? String ?? ""
        let detail = problem["detail"] as? String ?? "the server at \(host) answered \(status)"
        func number(_ name: String) -> Int64 { (problem[name] as? NSNumber)?.int64Value ?? 0 }
        switch code {
        case "replayed-push":
            return SyncError(.replayedPush(acknowledgedThrough: number("acknowledgedThrough")), detail)
        case "push-out-of-order":
            return SyncError(.pushOutOfOrder(acknowledgedThrough: number("acknowledgedThrough")), detail)
        case "malformed-batch": return SyncError(.malformedBatch, detail)
        case "clock-skew": return SyncError(.clockSkew, detail)
        case "foreign-changes": return SyncError(.foreignChanges, detail)
        case "unknown-table": return SyncError(.unknownTable(problem["table"] as? String ?? ""), detail)
        case "unknown-column":
            return SyncError(
                .unknownColumn(table: problem["table"] as? String ?? "", column: problem["column"] as? String ?? ""),
                detail)
        case "malformed-chunk": return SyncError(.malformedChunk, detail)
        case "storage-full": return SyncError(.storageFull, detail)
        case "chunk-out-of-order": return SyncError(.chunkOutOfOrder(expectedOffset: number("expectedOffset")), detail)
        case "large-value-mismatch", "large-value-missing", "unknown-large-value":
            guard
                let reference = LargeValueReference(
                    hexDigest: problem["sha256"] as? String ?? "", size: number("size"))
            else { break }
            switch code {
            case "large-value-mismatch": return SyncError(.largeValueMismatch(reference), detail)
            case "large-value-missing": return SyncError(.largeValueMissing(reference), detail)
            default: return SyncError(.unknownLargeValue(reference), detail)
            }
        case "invalid-record":
            let errors = problem["errors"] as? [String: String] ?? [:]
            if let table = problem["table"] as? String, let id = (problem["globalID"] as? String).flatMap(UUID.init) {
                return SyncValidationError(
                    table: table, globalID: id,
                    problems: errors.sorted { $0.key < $1.key }.map { .init(column: $0.key, message: $0.value) })
            }
        default: break
        }
        if status == 401 {
            return HTTPSyncError(.unauthorized, "the server at \(host) refused the token: \(detail)", status: status)
        }
        if status == 403 {
            return HTTPSyncError(.forbidden, "the server at \(host) refused: \(detail)", status: status)
        }
        return HTTPSyncError(.refused, "the server at \(host) refused (\(status)): \(detail)", status: status)
    }
}

/// Why an ``HTTPSyncTransport`` request failed, other than a refusal the
/// engine knows (those are ``SyncError``s).
public struct HTTPSyncError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// The server could not be reached, or did not answer in time.
        case unreachable
        /// The token is missing, wrong, expired or revoked (401).
        case unauthorized
        /// The token may not do this (403: a read-only token pushing).
        case forbidden
        /// Any other refusal (a 4xx or 5xx problem).
        case refused
        /// An answer that is not a sync message.
        case badAnswer
    }

    /// What went wrong.
    public let kind: Kind
    /// A sentence for people, with the server's own words when it gave some.
    public let message: String
    /// The HTTP status, when the server answered.
    public let status: Int?

    /// An error.
    public init(_ kind: Kind, _ message: String, status: Int? = nil) {
        self.kind = kind
        self.message = message
        self.status = status
    }

    /// The message.
    public var description: String { message }
}

/// The running request, for a cancellation that may come before or after
/// it starts.
private final class TaskBox: Sendable {
    private let state = Mutex()

    func set(_ task: URLSessionDataTask) {
        if state.update({
            $0.task = task; return $0.cancelled
        }) {
            task.cancel()
        }
    }

    func cancel() {
        state.update {
            $0.cancelled = true; return $0.task
        }?.cancel()
    }

    private final class Mutex: @unchecked Sendable {
        struct State {
            var task: URLSessionDataTask?
            var cancelled = false
        }
        private let lock = NSLock()
        private var state = State()

        func update<T>(_ body: (inout State) -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body(&state)
        }
    }
}
