import Foundation
import HTTPServer

/// An upload sink for tests: keeps a copy of what it is given and counts
/// chunks, refusing past `limit` bytes, and records whether the server
/// finished or cancelled it. Shared by the server's and the site's tests.
public final class RecordingSink: UploadSink, @unchecked Sendable {
    /// Guards the fields below.
    public let lock = NSLock()
    /// The bytes written so far.
    public var bytes: [UInt8] = []
    /// The largest chunk written.
    public var largestChunk = 0
    /// Whether the server finished the upload.
    public var finished = false
    /// Whether the server cancelled (released) the sink.
    public var cancelled = false
    /// The most bytes the sink takes.
    public let limit: Int

    /// A sink taking at most `limit` bytes.
    public init(limit: Int) { self.limit = limit }

    /// Thrown by a write past the limit.
    public struct TooLarge: Error {}

    public func write(_ chunk: UnsafeRawBufferPointer) throws {
        try lock.withLock {
            largestChunk = max(largestChunk, chunk.count)
            if bytes.count + chunk.count > limit { throw TooLarge() }
            bytes.append(contentsOf: chunk)
        }
    }

    public func finish() throws { lock.withLock { finished = true } }
    public func cancel() { lock.withLock { cancelled = true } }
}

/// The sinks a test's routes made, in order.
public final class RecordingSinks: Sendable {
    private let made = Locked<[RecordingSink]>([])

    public init() {}

    /// Makes a sink taking at most `limit` bytes, and keeps it.
    public func make(limit: Int) -> RecordingSink {
        let sink = RecordingSink(limit: limit)
        made.withLock { $0.append(sink) }
        return sink
    }

    /// Every sink made so far.
    public var all: [RecordingSink] { made.withLock { $0 } }
}
