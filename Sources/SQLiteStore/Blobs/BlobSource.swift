import Foundation

/// Where the bytes of a large value come from, for
/// ``Database/writeBlob(from:table:column:rowID:schema:maximumSize:chunkSize:)``.
///
/// ```swift
/// try db.writeBlob(from: .file(pictureURL), table: "coffee", column: "picture", rowID: id)
/// try db.writeBlob(from: .stream(upload), table: "coffee", column: "picture", rowID: id)
/// ```
///
/// The size must be known before anything is written (SQLite reserves the
/// blob with `zeroblob(N)` and fills it in place). Files report theirs; a
/// source of unknown size (a stream without `size`, a pipe) is first copied
/// to a temporary file, in chunks, so its size is learnt without holding it
/// in memory, and a limit is enforced while copying.
public struct BlobSource {
    enum Kind {
        case file(path: String)
        case nonFileURL(URL)
        case fileHandle(FileHandle)
        case stream(InputStream, size: Int?)
        case data(Data)
        case custom(size: Int?, read: (UnsafeMutableRawBufferPointer) throws -> Int)
    }

    let kind: Kind

    /// The contents of a local file. It is opened when the copy starts; an
    /// error then is ``BlobError/Reason/unreadableSource(_:)``.
    public static func file(_ url: URL) -> BlobSource {
        BlobSource(kind: url.isFileURL ? .file(path: url.path) : .nonFileURL(url))
    }

    /// The contents of the file at `path`.
    public static func file(path: String) -> BlobSource {
        BlobSource(kind: .file(path: path))
    }

    /// What remains of an open file or pipe, from its current offset to its
    /// end. The handle is left open (and, for a file, at its end).
    public static func fileHandle(_ handle: FileHandle) -> BlobSource {
        BlobSource(kind: .fileHandle(handle))
    }

    /// The bytes of a stream, to its end. Give `size` when it is known
    /// (the stream must then hold exactly that many bytes); without it the
    /// stream is first buffered in a temporary file. A stream that is not
    /// open yet is opened, and closed at the end.
    public static func stream(_ stream: InputStream, size: Int? = nil) -> BlobSource {
        BlobSource(kind: .stream(stream, size: size))
    }

    /// Bytes already in memory (for tests, or small values that should go
    /// through the same path as large ones).
    public static func data(_ data: Data) -> BlobSource {
        BlobSource(kind: .data(data))
    }

    /// A source of your own: `read` fills the start of the buffer it is
    /// given and returns how many bytes it wrote there, 0 at the end. With
    /// `size`, it must deliver exactly that many bytes; without, it is
    /// buffered in a temporary file first. Errors it throws are rethrown as
    /// they are.
    public init(size: Int?, read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) {
        kind = .custom(size: size, read: read)
    }

    init(kind: Kind) {
        self.kind = kind
    }

    /// Opens the source for one copy.
    func makeReader(at location: BlobLocation) throws -> BlobReader {
        switch kind {
        case .file(let path):
            return try BlobReader.file(path: path, at: location)
        case .nonFileURL(let url):
            throw BlobError(.unreadableSource("not a file URL: \(url.absoluteString)"), at: location)
        case .fileHandle(let handle):
            return try BlobReader.descriptor(
                FileDescriptor(rawValue: handle.fileDescriptor), ownsDescriptor: false, path: nil, at: location)
        case .stream(let stream, let size):
            return try BlobReader.stream(stream, size: size, at: location)
        case .data(let data):
            var offset = 0
            return BlobReader(size: data.count, path: nil, location: location) { buffer in
                let count = min(buffer.count, data.count - offset)
                let start = data.startIndex + offset
                data.copyBytes(to: buffer.assumingMemoryBound(to: UInt8.self), from: start..<start + count)
                offset += count
                return count
            }
        case .custom(let size, let read):
            return BlobReader(size: size, path: nil, location: location, read: read)
        }
    }
}

/// One opened source: delivers its bytes in order and knows its size.
final class BlobReader {
    /// The number of bytes the source will deliver; nil until known.
    let size: Int?
    /// The file read, for error messages.
    let path: String?
    let location: BlobLocation
    private let readSome: (UnsafeMutableRawBufferPointer) throws -> Int
    private var cleanup: (() -> Void)?

    init(
        size: Int?, path: String?, location: BlobLocation,
        cleanup: (() -> Void)? = nil, read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int
    ) {
        self.size = size
        self.path = path
        self.location = location
        self.cleanup = cleanup
        self.readSome = read
    }

    deinit { close() }

    /// Releases what the reader opened. Safe to call more than once.
    func close() {
        cleanup?()
        cleanup = nil
    }

    /// Fills `buffer` as far as the source allows; returns the number of
    /// bytes read, less than the buffer's size only at the end.
    func fill(_ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = try readSome(UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            guard count > 0 else { break }
            guard count <= buffer.count - filled else {
                throw SQLiteError.misuse("a blob source claimed to read more bytes than its buffer holds")
            }
            filled += count
        }
        return filled
    }

    static func file(path: String, at location: BlobLocation) throws -> BlobReader {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.opening(path, flags: O_RDONLY)
        } catch let error as SystemCallError {
            throw BlobError(.unreadableSource(error.message), at: location, path: path)
        }
        return try Self.descriptor(descriptor, ownsDescriptor: true, path: path, at: location)
    }

    static func descriptor(
        _ descriptor: FileDescriptor, ownsDescriptor: Bool, path: String?, at location: BlobLocation
    ) throws -> BlobReader {
        let cleanup = { if ownsDescriptor { try? descriptor.closeDescriptor() } }
        let size: Int?
        do {
            let status = try descriptor.status()
            guard !status.isDirectory else {
                throw BlobError(.unreadableSource("it is a directory"), at: location, path: path)
            }
            if status.isRegularFile, let offset = descriptor.currentOffset() {
                size = max(status.size - offset, 0)
            } else {
                size = nil
            }
        } catch {
            cleanup()
            if let error = error as? SystemCallError {
                throw BlobError(.unreadableSource(error.message), at: location, path: path)
            }
            throw error
        }
        return BlobReader(size: size, path: path, location: location, cleanup: cleanup) { buffer in
            do {
                return try descriptor.readSome(into: buffer)
            } catch let error as SystemCallError {
                throw BlobError(.unreadableSource(error.message), at: location, path: path)
            }
        }
    }

    static func stream(_ stream: InputStream, size: Int?, at location: BlobLocation) throws -> BlobReader {
        let opensStream = stream.streamStatus == .notOpen
        if opensStream { stream.open() }
        func failure() -> BlobError {
            BlobError(.unreadableSource(StreamFailure.explanation(stream)), at: location)
        }
        if stream.streamStatus == .error || stream.streamStatus == .closed {
            let error = failure()
            if opensStream { stream.close() }
            throw error
        }
        return BlobReader(size: size, path: nil, location: location, cleanup: { if opensStream { stream.close() } }) {
            buffer in
            guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
            let count = stream.read(base.assumingMemoryBound(to: UInt8.self), maxLength: buffer.count)
            if count < 0 { throw failure() }
            return count
        }
    }

    /// Copies a source of unknown size to an (already unlinked) temporary
    /// file, stopping with ``BlobError/Reason/tooLarge(size:limit:)`` as soon
    /// as it goes past `limit`, and returns a reader of that file, whose
    /// size is known.
    func spooled(limit: Int, chunkSize: Int) throws -> BlobReader {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("sqlitestore-blob-\(UUID().uuidString)").path
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.opening(path, flags: O_RDWR | O_CREAT | O_EXCL, mode: 0o600)
        } catch let error as SystemCallError {
            throw BlobError(.temporaryFileFailed("\(path): \(error.message)"), at: location)
        }
        // Unlinked at once: the space is reclaimed when the descriptor
        // closes, even if the process dies.
        unlink(path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var total = 0
        do {
            while true {
                let count = try fill(buffer)
                guard count > 0 else { break }
                total += count
                guard total <= limit else { throw BlobError(.tooLarge(size: nil, limit: limit), at: location) }
                do {
                    try descriptor.writeAll(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                } catch let error as SystemCallError {
                    throw BlobError(.temporaryFileFailed(error.message), at: location)
                }
                if count < buffer.count { break }
            }
            try descriptor.rewind()
        } catch {
            try? descriptor.closeDescriptor()
            if let error = error as? SystemCallError {
                throw BlobError(.temporaryFileFailed(error.message), at: location)
            }
            throw error
        }
        close()
        let location = self.location
        return BlobReader(
            size: total, path: nil, location: location, cleanup: { try? descriptor.closeDescriptor() }
        ) { buffer in
            do {
                return try descriptor.readSome(into: buffer)
            } catch let error as SystemCallError {
                throw BlobError(.temporaryFileFailed(error.message), at: location)
            }
        }
    }
}

/// Why a Foundation stream failed.
enum StreamFailure {
    static func explanation(_ stream: Stream) -> String {
        switch stream.streamStatus {
        // streamError is read only in the error state: on Linux, reading it
        // when no error is set traps.
        case .error: return stream.streamError.map { $0.localizedDescription } ?? "the stream failed"
        case .closed: return "the stream is closed"
        case .notOpen: return "the stream is not open"
        case .atEnd: return "the stream is at its end"
        default: return "the stream failed"
        }
    }
}
