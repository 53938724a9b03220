import Foundation

/// The bodies of the sync messages over HTTP: a small fixed header, then
/// the ``ChangeBatch`` bytes as they are (no JSON, no base64).
///
/// Each body opens with the byte `0x53` ("S"), the message kind and the
/// format version (1), then the fields in little-endian order:
///
/// | message | fields after the 3 opening bytes |
/// | --- | --- |
/// | push request | replica (16 bytes), after (8), through (8), batch |
/// | push answer | acknowledged through (8), server position (8), conflicts (8) |
/// | pull request | replica (16), after (8), limit (4), then for a catch-up of columns only: 1 (1), until (8), tables (2), each table's name and columns (2), each column's name |
/// | pull answer | through (8), has more (1: 0 or 1), batch |
/// | chunk upload | SHA-256 (32), size (8), offset (8), the bytes |
/// | chunk upload answer | received (8) |
/// | chunk download | SHA-256 (32), size (8), offset (8), maximum length (4) |
/// | chunk download answer | the bytes |
///
/// A name is its UTF-8 length (2) and its bytes.
///
/// Errors are not messages of this format: the server answers them as
/// problem documents (`application/problem+json`).
public enum SyncWire {
    /// The media type of every message body.
    public static let contentType = "application/vnd.sqlitestore.sync"

    private static let magic: UInt8 = 0x53
    private static let version: UInt8 = 1

    private enum Kind: UInt8 {
        case pushRequest = 1, pushResponse, pullRequest, pullResponse
        case chunkUpload, chunkUploadResponse, chunkDownload, chunkDownloadResponse
    }

    /// A push as a body.
    public static func encode(_ request: PushRequest) -> Data {
        var data = header(.pushRequest)
        data.append(request.replica.bytes)
        append(request.after, to: &data)
        append(request.through, to: &data)
        data.append(request.changes.encoded())
        return data
    }

    /// A push answer as a body.
    public static func encode(_ response: PushResponse) -> Data {
        var data = header(.pushResponse)
        append(response.acknowledgedThrough, to: &data)
        append(response.serverPosition, to: &data)
        append(Int64(response.conflicts), to: &data)
        return data
    }

    /// A pull as a body.
    public static func encode(_ request: PullRequest) -> Data {
        var data = header(.pullRequest)
        data.append(request.replica.bytes)
        append(request.after, to: &data)
        data.append(contentsOf: UInt32(clamping: max(0, request.limit)).littleEndianBytes)
        if let columns = request.columns {
            data.append(1)
            append(request.until ?? .max, to: &data)
            data.append(contentsOf: UInt16(clamping: columns.count).littleEndianBytes)
            for (table, names) in columns.sorted(by: { $0.key < $1.key }) {
                appendName(table, to: &data)
                data.append(contentsOf: UInt16(clamping: names.count).littleEndianBytes)
                for name in names { appendName(name, to: &data) }
            }
        }
        return data
    }

    /// A pull answer as a body.
    public static func encode(_ response: PullResponse) -> Data {
        var data = header(.pullResponse)
        append(response.through, to: &data)
        data.append(response.hasMore ? 1 : 0)
        data.append(response.changes.encoded())
        return data
    }

    /// Reads a push.
    ///
    /// - Throws: ``SyncError/Kind/malformedBatch`` for bytes that are not one.
    public static func pushRequest(_ data: Data) throws -> PushRequest {
        var reader = try open(data, .pushRequest)
        return try read {
            PushRequest(
                replica: try uuid(&reader), after: try integer(&reader), through: try integer(&reader),
                changes: try ChangeBatch(encoded: Data(data.dropFirst(3 + 16 + 8 + 8))))
        }
    }

    /// Reads a push answer.
    public static func pushResponse(_ data: Data) throws -> PushResponse {
        var reader = try open(data, .pushResponse)
        return try read {
            let response = PushResponse(
                acknowledgedThrough: try integer(&reader), serverPosition: try integer(&reader),
                conflicts: Int(clamping: try integer(&reader)))
            guard reader.isAtEnd else { throw ByteReader.End() }
            return response
        }
    }

    /// Reads a pull.
    public static func pullRequest(_ data: Data) throws -> PullRequest {
        var reader = try open(data, .pullRequest)
        return try read {
            let replica = try uuid(&reader)
            let after = try integer(&reader)
            let limit = try reader.bytes(4).enumerated().reduce(UInt32(0)) {
                $0 | UInt32($1.element) << (8 * $1.offset)
            }
            if reader.isAtEnd { return PullRequest(replica: replica, after: after, limit: Int(limit)) }
            guard try reader.byte() == 1 else { throw ByteReader.End() }
            let until = try integer(&reader)
            var columns: [String: [String]] = [:]
            for _ in 0..<(try short(&reader)) {
                let table = try name(&reader)
                columns[table] = try (0..<(try short(&reader))).map { _ in try name(&reader) }
            }
            guard reader.isAtEnd else { throw ByteReader.End() }
            return PullRequest(replica: replica, after: after, until: until, columns: columns, limit: Int(limit))
        }
    }

    /// A chunk of a large value as a body.
    public static func encode(_ request: ChunkUpload) -> Data {
        var data = header(.chunkUpload)
        appendReference(request.reference, to: &data)
        append(request.offset, to: &data)
        data.append(request.bytes)
        return data
    }

    /// The server's progress on an uploaded value as a body.
    public static func encode(_ response: ChunkUploadResponse) -> Data {
        var data = header(.chunkUploadResponse)
        append(response.received, to: &data)
        return data
    }

    /// A request for a piece of a large value as a body.
    public static func encode(_ request: ChunkDownload) -> Data {
        var data = header(.chunkDownload)
        appendReference(request.reference, to: &data)
        append(request.offset, to: &data)
        data.append(contentsOf: UInt32(clamping: max(0, request.maximumLength)).littleEndianBytes)
        return data
    }

    /// A piece of a large value as a body.
    public static func encode(_ response: ChunkDownloadResponse) -> Data {
        var data = header(.chunkDownloadResponse)
        data.append(response.bytes)
        return data
    }

    /// Reads a chunk upload.
    public static func chunkUpload(_ data: Data) throws -> ChunkUpload {
        var reader = try open(data, .chunkUpload)
        return try read {
            let reference = try self.reference(&reader)
            let offset = try integer(&reader)
            return ChunkUpload(reference: reference, offset: offset, bytes: Data(data.dropFirst(3 + 32 + 8 + 8)))
        }
    }

    /// Reads the server's progress on an uploaded value.
    public static func chunkUploadResponse(_ data: Data) throws -> ChunkUploadResponse {
        var reader = try open(data, .chunkUploadResponse)
        return try read {
            let received = try integer(&reader)
            guard reader.isAtEnd else { throw ByteReader.End() }
            return ChunkUploadResponse(received: received)
        }
    }

    /// Reads a request for a piece of a large value.
    public static func chunkDownload(_ data: Data) throws -> ChunkDownload {
        var reader = try open(data, .chunkDownload)
        return try read {
            let reference = try self.reference(&reader)
            let offset = try integer(&reader)
            let length = try reader.bytes(4).enumerated().reduce(UInt32(0)) {
                $0 | UInt32($1.element) << (8 * $1.offset)
            }
            guard reader.isAtEnd else { throw ByteReader.End() }
            return ChunkDownload(reference: reference, offset: offset, maximumLength: Int(length))
        }
    }

    /// Reads a piece of a large value.
    public static func chunkDownloadResponse(_ data: Data) throws -> ChunkDownloadResponse {
        _ = try open(data, .chunkDownloadResponse)
        return ChunkDownloadResponse(bytes: Data(data.dropFirst(3)))
    }

    /// Reads a pull answer.
    public static func pullResponse(_ data: Data) throws -> PullResponse {
        var reader = try open(data, .pullResponse)
        return try read {
            let through = try integer(&reader)
            let more = try reader.byte()
            guard more <= 1 else { throw ByteReader.End() }
            return PullResponse(
                changes: try ChangeBatch(encoded: Data(data.dropFirst(3 + 8 + 1))), through: through, hasMore: more == 1
            )
        }
    }

    // MARK: - Bytes

    private static func header(_ kind: Kind) -> Data { Data([magic, kind.rawValue, version]) }

    private static func append(_ value: Int64, to data: inout Data) {
        data.append(contentsOf: value.littleEndianBytes)
    }

    private static func open(_ data: Data, _ kind: Kind) throws -> ByteReader {
        var reader = ByteReader(data)
        let opening = try? (reader.byte(), reader.byte(), reader.byte())
        guard let opening, opening.0 == magic, opening.1 == kind.rawValue else {
            throw SyncError(.malformedBatch, "the sync message was refused: it is not a \(kind) message")
        }
        guard opening.2 == version else {
            throw SyncError(
                .malformedBatch, "the sync message was refused: it is in format \(opening.2), not \(version)")
        }
        return reader
    }

    private static func read<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch is ByteReader.End {
            throw SyncError(.malformedBatch, "the sync message was refused: it ends early or has bytes too many")
        }
    }

    private static func appendName(_ name: String, to data: inout Data) {
        let bytes = Array(name.utf8.prefix(Int(UInt16.max)))
        data.append(contentsOf: UInt16(bytes.count).littleEndianBytes)
        data.append(contentsOf: bytes)
    }

    private static func appendReference(_ reference: LargeValueReference, to data: inout Data) {
        data.append(reference.sha256)
        append(reference.size, to: &data)
    }

    private static func short(_ reader: inout ByteReader) throws -> Int {
        let bytes = try reader.bytes(2)
        return Int(bytes[bytes.startIndex]) | Int(bytes[bytes.startIndex + 1]) << 8
    }

    private static func name(_ reader: inout ByteReader) throws -> String {
        guard let name = String(bytes: try reader.bytes(try short(&reader)), encoding: .utf8) else {
            throw ByteReader.End()
        }
        return name
    }

    private static func reference(_ reader: inout ByteReader) throws -> LargeValueReference {
        let digest = try reader.bytes(32)
        let size = try integer(&reader)
        guard size >= 0 else { throw ByteReader.End() }
        return LargeValueReference(sha256: Data(digest), size: size)
    }

    private static func uuid(_ reader: inout ByteReader) throws -> UUID {
        guard let uuid = UUID(bytes: try reader.bytes(16)) else { throw ByteReader.End() }
        return uuid
    }

    private static func integer(_ reader: inout ByteReader) throws -> Int64 {
        let bytes = try reader.bytes(8)
        return Int64(bitPattern: bytes.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * $1.offset) })
    }
}
