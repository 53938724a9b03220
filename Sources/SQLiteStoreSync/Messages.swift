import Foundation

/// A device's local changes since the server's last acknowledgement.
///
/// A push is identified by its replica and its range of the device's own
/// change numbers, `after` (exclusive) through `through`: the server
/// applies a range once and refuses any push that does not start where
/// the replica's acknowledged range ends, so a retried push applies
/// nothing twice.
public struct PushRequest: Sendable, Equatable, Codable {
    /// The pushing replica.
    public var replica: UUID
    /// The last change number the server acknowledged to this replica.
    public var after: Int64
    /// The last change number in this push.
    public var through: Int64
    /// The changes.
    public var changes: ChangeBatch

    /// A push.
    public init(replica: UUID, after: Int64, through: Int64, changes: ChangeBatch) {
        self.replica = replica
        self.after = after
        self.through = through
        self.changes = changes
    }
}

/// The server's answer to an accepted push.
public struct PushResponse: Sendable, Equatable, Codable {
    /// The device's changes up to this number are applied and need not be
    /// sent again.
    public var acknowledgedThrough: Int64
    /// The server's position after applying them.
    public var serverPosition: Int64
    /// How many values lost a merge while the push was applied (the
    /// device's or the server's): each is in the server's conflict log.
    public var conflicts: Int

    /// An answer.
    public init(acknowledgedThrough: Int64, serverPosition: Int64, conflicts: Int = 0) {
        self.acknowledgedThrough = acknowledgedThrough
        self.serverPosition = serverPosition
        self.conflicts = conflicts
    }
}

/// A device asking for what the server accepted after a position.
public struct PullRequest: Sendable, Equatable, Codable {
    /// The asking replica (its own changes are not sent back).
    public var replica: UUID
    /// The last server position the device applied.
    public var after: Int64
    /// At most how many changes to send (rows new to the device come whole,
    /// so an answer may hold a few more).
    public var limit: Int
    /// Only these columns, by table (a device fetching the values of
    /// columns it started syncing after an upgrade); nil for everything.
    public var columns: [String: [String]]?
    /// With `columns`: the last server position to include.
    public var until: Int64?

    /// A pull.
    public init(replica: UUID, after: Int64, limit: Int = 10_000) {
        self.replica = replica
        self.after = after
        self.limit = limit
    }

    /// A pull of the values of `columns` (table -> columns) the server
    /// accepted after `after` through `until`: the catch-up of a device
    /// that upgraded (see ``SyncSchema/install(in:replicaID:)``).
    public init(replica: UUID, after: Int64, until: Int64, columns: [String: [String]], limit: Int = 10_000) {
        self.init(replica: replica, after: after, limit: limit)
        self.columns = columns
        self.until = until
    }
}

/// The server's changes after a device's position.
public struct PullResponse: Sendable, Equatable, Codable {
    /// The changes, in the server's order.
    public var changes: ChangeBatch
    /// The server position the device reaches once it has applied them.
    public var through: Int64
    /// Whether more changes wait after `through`.
    public var hasMore: Bool

    /// An answer.
    public init(changes: ChangeBatch, through: Int64, hasMore: Bool) {
        self.changes = changes
        self.through = through
        self.hasMore = hasMore
    }
}

/// How a ``SyncClient`` reaches a server: an HTTP client, or the server
/// itself in-process.
///
/// Each method carries one message to the server's method of the same
/// name (``SyncServer/push(_:)``, ``SyncServer/pull(_:)``,
/// ``SyncServer/uploadChunk(_:)``, ``SyncServer/downloadChunk(_:)``) and
/// brings back its answer, or the ``SyncError`` it threw. The chunk
/// methods carry large values (see <doc:LargeValues>); a transport for
/// tables without large columns may leave them out.
public protocol SyncTransport: Sendable {
    /// Sends a push and returns the server's acknowledgement.
    func push(_ request: PushRequest) async throws -> PushResponse
    /// Sends a pull and returns the server's changes.
    func pull(_ request: PullRequest) async throws -> PullResponse
    /// Sends a chunk of a large value (or, with no bytes, asks how much of
    /// it the server holds) and returns the server's progress.
    func uploadChunk(_ request: ChunkUpload) async throws -> ChunkUploadResponse
    /// Fetches a chunk of a large value a pull referenced.
    func downloadChunk(_ request: ChunkDownload) async throws -> ChunkDownloadResponse
}

extension SyncTransport {
    /// Refuses: this transport carries no large values.
    public func uploadChunk(_ request: ChunkUpload) async throws -> ChunkUploadResponse {
        throw SyncError(.largeValuesUnsupported, "this sync transport cannot send large values")
    }

    /// Refuses: this transport carries no large values.
    public func downloadChunk(_ request: ChunkDownload) async throws -> ChunkDownloadResponse {
        throw SyncError(.largeValuesUnsupported, "this sync transport cannot fetch large values")
    }
}
