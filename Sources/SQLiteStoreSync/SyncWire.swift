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
/// | pull request | replica (16), after (8), limit (4) |
/// | pull answer | through (8), has more (1: 0 or 1), batch |
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
            guard reader.isAtEnd else { throw ByteReader.End() }
            return PullRequest(replica: replica, after: after, limit: Int(limit))
        }
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

    private static func uuid(_ reader: inout ByteReader) throws -> UUID {
        guard let uuid = UUID(bytes: try reader.bytes(16)) else { throw ByteReader.End() }
        return uuid
    }

    private static func integer(_ reader: inout ByteReader) throws -> Int64 {
        let bytes = try reader.bytes(8)
        return Int64(bitPattern: bytes.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * $1.offset) })
    }
}
