import Foundation
import RecordsApp

/// An upload route's sink for a coffee's picture: the app's upload, which
/// checks the bytes as they arrive (type on the first 12, size limit) and
/// spools them to an unlinked temporary file.
extension PictureUpload: UploadSink {
    /// Takes the next chunk; throws the app's `PictureError` to refuse
    /// the upload.
    public func write(_ chunk: UnsafeRawBufferPointer) throws { try append(chunk) }

    /// Nothing to do: what is left to check (an upload shorter than a
    /// signature) is checked when it is stored.
    public func finish() throws {}
}

/// A stored picture sent as a response body, chunk by chunk: each chunk is
/// read from the row when the connection asks for it, and holds at most
/// `PictureReader.chunkSize` bytes. If the picture changes during the
/// download, the read throws and the server closes the connection: the
/// client sees a body shorter than its `Content-Length`, never a mix of two
/// pictures.
final class PictureResponseStream: ResponseStream, @unchecked Sendable {
    // Used only from the connection's thread, one call at a time.
    private let picture: PictureReader
    private var offset: Int
    private let end: Int
    private var chunk = Data()
    private var position = 0

    /// The stream of `range` of the picture's bytes (all of them when nil).
    init(_ picture: PictureReader, range: Range<Int>? = nil) {
        self.picture = picture
        offset = range?.lowerBound ?? 0
        end = range.map { min($0.upperBound, picture.size) } ?? picture.size
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if position == chunk.count {
            guard offset < end else { return 0 }
            let picture = self.picture
            let start = offset
            let count = min(PictureReader.chunkSize, end - offset)
            let next = HTTPServer.waitBlocking { () async -> Result<Data, any Error> in
                do {
                    return .success(try await picture.read(at: start, count: count))
                } catch {
                    return .failure(error)
                }
            }
            chunk = try next.get()
            position = 0
            offset += chunk.count
            if chunk.isEmpty { return 0 }
        }
        let count = min(buffer.count, chunk.count - position)
        chunk.withUnsafeBytes { bytes in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[position..<position + count]))
        }
        position += count
        return count
    }

    func close() { chunk = Data() }
}

/// Conditional requests on a picture's entity tag.
enum EntityTags {
    /// Whether an `If-None-Match` header names `tag` (or is `*`): the
    /// weak comparison RFC 9110 asks for, so `W/"x"` matches `"x"`.
    static func ifNoneMatch(_ header: String?, matches tag: String) -> Bool {
        guard let header else { return false }
        let opaque = strip(tag)
        for candidate in header.split(separator: ",") {
            let trimmed = candidate.trimmingCharacters(in: .whitespaces)
            if trimmed == "*" || strip(trimmed) == opaque { return true }
        }
        return false
    }

    private static func strip(_ tag: some StringProtocol) -> Substring {
        let text = Substring(tag)
        return text.hasPrefix("W/") ? text.dropFirst(2) : text
    }
}
