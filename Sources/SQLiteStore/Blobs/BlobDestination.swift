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
/// leaves no partial file, and an existing file stays as it was. On Linux
/// that temporary file has no name (`O_TMPFILE`), so even a killed process
/// leaves nothing behind; elsewhere see ``TemporaryFileCleanup``.
public struct BlobDestination {
    enum Kind {
        case file(path: String, allowsUnnamedFiles: Bool)
        case nonFileURL(URL)
        case fileHandle(FileHandle)
        case stream(OutputStream)
        case custom((UnsafeRawBufferPointer) throws -> Void)
    }

    let kind: Kind

    /// A local file, created or replaced once the whole value is written.
    ///
    /// - The directory must exist. A path that ends in `/` names a
    ///   directory, and is refused.
    /// - An existing regular file must be writable; its replacement keeps
    ///   its permissions and, where allowed, its owner and group.
    /// - A symbolic link is followed, never replaced: the file it points to
    ///   is replaced (in that file's directory), or created if it does not
    ///   exist yet.
    /// - A character device (`/dev/null`, a terminal) or a FIFO is written
    ///   into, as `cat > path` would: opening a FIFO waits for a reader, and
    ///   a failure can leave part of the value in it.
    /// - A directory, a block device or a socket is refused with
    ///   ``BlobError/Reason/unwritableDestination(_:)``, and left as it is.
    public static func file(_ url: URL) -> BlobDestination {
        guard url.isFileURL else { return BlobDestination(kind: .nonFileURL(url)) }
        return BlobDestination(kind: .file(path: DestinationPath.path(of: url), allowsUnnamedFiles: true))
    }

    /// The file at `path`, created or replaced once the whole value is
    /// written, as ``file(_:)`` describes.
    public static func file(path: String) -> BlobDestination {
        BlobDestination(kind: .file(path: path, allowsUnnamedFiles: true))
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
        case .file(let path, let allowsUnnamedFiles):
            return try BlobWriter.file(path: path, allowsUnnamedFiles: allowsUnnamedFiles, at: location)
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

    static func file(path: String, allowsUnnamedFiles: Bool, at location: BlobLocation) throws -> BlobWriter {
        func failure(_ why: String) -> BlobError {
            BlobError(.unwritableDestination(why), at: location, path: path)
        }
        let resolved: ResolvedDestination
        do {
            resolved = try DestinationPath.resolve(path)
        } catch {
            throw failure(error.reason)
        }
        if let existing = resolved.status {
            switch existing.type {
            case .regular:
                // A rename would replace a file we may not write.
                if access(resolved.target, W_OK) != 0 { throw failure(SystemCallError.current().message) }
            case .characterDevice, .fifo:
                return try special(path: path, at: location)
            default:
                throw failure(resolved.describe(existing.type))
            }
        }
        let staged: StagedFile
        do {
            // Private until it takes an existing file's place and modes.
            let mode: mode_t = resolved.status == nil ? 0o666 : 0o600
            staged = try StagedFile.create(for: resolved.target, mode: mode, allowsUnnamed: allowsUnnamedFiles)
        } catch let error as SystemCallError {
            throw failure(error.message)
        }
        return BlobWriter(
            finish: {
                do throws(SystemCallError) {
                    try staged.publishReplacing(resolved.status)
                } catch {
                    staged.discard()
                    throw failure(error.message)
                }
            },
            abandon: { staged.discard() },
            write: { bytes in
                do {
                    try staged.write(bytes)
                } catch let error as SystemCallError {
                    throw failure(error.message)
                }
            })
    }

    /// A character device or FIFO, written into in place.
    private static func special(path: String, at location: BlobLocation) throws -> BlobWriter {
        func failure(_ why: String) -> BlobError {
            BlobError(.unwritableDestination(why), at: location, path: path)
        }
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.opening(path, flags: O_WRONLY | O_NOCTTY)
        } catch let error as SystemCallError {
            throw failure(error.message)
        }
        var isOpen = true
        return BlobWriter(
            finish: {
                isOpen = false
                do {
                    try descriptor.closeDescriptor()
                } catch let error as SystemCallError {
                    throw failure(error.message)
                }
            },
            abandon: {
                if isOpen { try? descriptor.closeDescriptor() }
                isOpen = false
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
