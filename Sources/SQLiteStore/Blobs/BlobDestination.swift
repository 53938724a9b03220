import Foundation

/// Where the bytes of a large value go, for
/// ``Database/readBlob(table:column:rowID:schema:to:chunkSize:)``.
///
/// ```swift
/// try db.readBlob(table: "coffee", column: "picture", rowID: id, to: .file(outputURL))
/// ```
///
/// A file destination is written to a temporary file next to it, which
/// replaces it only when the whole value has been written: a failed copy
/// leaves no partial file, and an existing file stays as it was.
public struct BlobDestination {
    enum Kind {
        case file(path: String)
        case nonFileURL(URL)
        case fileHandle(FileHandle)
        case stream(OutputStream)
        case custom((UnsafeRawBufferPointer) throws -> Void)
    }

    let kind: Kind

    /// A local file, created or replaced once the whole value is written.
    /// The directory must exist; an existing file must be writable, and
    /// keeps its permissions.
    public static func file(_ url: URL) -> BlobDestination {
        BlobDestination(kind: url.isFileURL ? .file(path: url.path) : .nonFileURL(url))
    }

    /// The file at `path`, created or replaced once the whole value is
    /// written.
    public static func file(path: String) -> BlobDestination {
        BlobDestination(kind: .file(path: path))
    }

    /// An open file or pipe, written from its current offset. The handle is
    /// left open.
    public static func fileHandle(_ handle: FileHandle) -> BlobDestination {
        BlobDestination(kind: .fileHandle(handle))
    }

    /// A stream. One that is not open yet is opened, and closed at the end.
    /// A stream that stops accepting bytes (a full fixed-size buffer) makes
    /// the copy fail with ``BlobError/Reason/shortWrite(expected:written:)``.
    public static func stream(_ stream: OutputStream) -> BlobDestination {
        BlobDestination(kind: .stream(stream))
    }

    /// A destination of your own: `write` receives each chunk in order. The
    /// buffer is valid only during the call. Errors it throws are rethrown
    /// as they are.
    public init(write: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        kind = .custom(write)
    }

    init(kind: Kind) {
        self.kind = kind
    }

    /// Opens the destination for a copy of `size` bytes.
    func makeWriter(size: Int, at location: BlobLocation) throws -> BlobWriter {
        switch kind {
        case .file(let path):
            return try BlobWriter.file(path: path, size: size, at: location)
        case .nonFileURL(let url):
            throw BlobError(.unwritableDestination("not a file URL: \(url.absoluteString)"), at: location)
        case .fileHandle(let handle):
            let descriptor = FileDescriptor(rawValue: handle.fileDescriptor)
            return BlobWriter { bytes in
                do {
                    try descriptor.writeAll(bytes)
                } catch let error as SystemCallError {
                    throw BlobError(.unwritableDestination(error.message), at: location)
                }
            }
        case .stream(let stream):
            return try BlobWriter.stream(stream, size: size, at: location)
        case .custom(let write):
            return BlobWriter(write: write)
        }
    }
}

/// One opened destination: takes the chunks in order, then is finished
/// (the copy succeeded) or abandoned (it failed).
final class BlobWriter {
    private let writeChunk: (UnsafeRawBufferPointer) throws -> Void
    private var finishing: (() throws -> Void)?
    private var abandoning: (() -> Void)?

    init(
        finish: (() throws -> Void)? = nil, abandon: (() -> Void)? = nil,
        write: @escaping (UnsafeRawBufferPointer) throws -> Void
    ) {
        self.writeChunk = write
        self.finishing = finish
        self.abandoning = abandon
    }

    deinit { abandon() }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        try writeChunk(bytes)
    }

    /// Completes the copy (a file is moved into place).
    func finish() throws {
        abandoning = nil
        let finishing = self.finishing
        self.finishing = nil
        try finishing?()
    }

    /// Undoes what can be undone of a failed copy (a file's temporary copy
    /// is deleted). Safe to call more than once.
    func abandon() {
        finishing = nil
        abandoning?()
        abandoning = nil
    }

    static func file(path: String, size: Int, at location: BlobLocation) throws -> BlobWriter {
        func failure(_ why: String) -> BlobError {
            BlobError(.unwritableDestination(why), at: location, path: path)
        }
        let existing = FileStatus.of(path: path)
        if let existing {
            if existing.isDirectory { throw failure("it is a directory") }
            if access(path, W_OK) != 0 { throw failure(SystemCallError.current().message) }
        }
        let name = (path as NSString).lastPathComponent
        let directory = (path as NSString).deletingLastPathComponent
        guard !name.isEmpty, !path.hasSuffix("/") else { throw failure("the path names a directory, not a file") }
        let temporaryPath =
            (directory.isEmpty ? "" : directory + "/") + ".\(name).sqlitestore-\(UUID().uuidString).tmp"
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.opening(temporaryPath, flags: O_WRONLY | O_CREAT | O_EXCL)
        } catch let error as SystemCallError {
            if error.code == ENOENT, !directory.isEmpty {
                throw failure("the directory \(directory) does not exist")
            }
            if error.code == ENOTDIR { throw failure("\(directory) is not a directory") }
            throw failure(error.message)
        }
        if let existing, existing.isRegularFile {
            fchmod(descriptor.rawValue, existing.permissions)
        }
        var isOpen = true
        return BlobWriter(
            finish: {
                isOpen = false
                do {
                    try descriptor.closeDescriptor()
                    guard rename(temporaryPath, path) == 0 else { throw SystemCallError.current() }
                } catch let error as SystemCallError {
                    unlink(temporaryPath)
                    throw failure(error.message)
                }
            },
            abandon: {
                if isOpen { try? descriptor.closeDescriptor() }
                isOpen = false
                unlink(temporaryPath)
            },
            write: { bytes in
                do {
                    try descriptor.writeAll(bytes)
                } catch let error as SystemCallError {
                    throw failure(error.message)
                }
            })
    }

    static func stream(_ stream: OutputStream, size: Int, at location: BlobLocation) throws -> BlobWriter {
        let opensStream = stream.streamStatus == .notOpen
        if opensStream { stream.open() }
        func failure() -> BlobError {
            BlobError(.unwritableDestination(StreamFailure.explanation(stream)), at: location)
        }
        if stream.streamStatus == .error || stream.streamStatus == .closed {
            let error = failure()
            if opensStream { stream.close() }
            throw error
        }
        var written = 0
        let closeStream = { if opensStream { stream.close() } }
        return BlobWriter(finish: closeStream, abandon: closeStream) { bytes in
            guard var base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            var remaining = bytes.count
            while remaining > 0 {
                let count = stream.write(base, maxLength: remaining)
                if count < 0 { throw failure() }
                if count == 0 { throw BlobError(.shortWrite(expected: size, written: written), at: location) }
                base += count
                remaining -= count
                written += count
            }
        }
    }
}
