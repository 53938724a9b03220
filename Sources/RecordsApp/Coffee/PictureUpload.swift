import Foundation

/// A picture that arrives in chunks, such as the body of a web upload,
/// checked as it comes and kept in a temporary file until it is stored
/// with ``CoffeeStore/setPicture(id:from:)`` and ``PictureSource/upload(_:)``.
///
/// ```swift
/// let upload = store.makePictureUpload(name: "latte.png")
/// for chunk in body { try upload.append(chunk) }    // throws as soon as a check fails
/// try await store.setPicture(id: 7, from: .upload(upload))
/// ```
///
/// The checks are the app's, with the same ``PictureError`` messages as a
/// file's:
/// - **The format**, from the first 12 bytes, as soon as they are in
///   (``PictureFormat/signatureLength``): anything that does not start
///   with a PNG, JPEG, GIF or WebP signature is refused before a byte is
///   written to disk. An upload shorter than that is checked when it is
///   stored.
/// - **The size limit**, as bytes arrive: the chunk that would take it
///   past the limit is refused, and nothing more is written.
///
/// After a refusal the temporary file is closed and every later
/// ``append(_:)`` throws the same error; ``cancel()`` (the client went
/// away) closes it too. The file is unlinked as soon as it is created, so
/// it is never visible in its directory and its space comes back when it
/// is closed, even if the process dies. Memory holds at most the first 12
/// bytes: every chunk is written to the file as it comes. Nothing is
/// stored until ``CoffeeStore/setPicture(id:from:)`` is given the complete
/// upload, and storing it uses it up, whether it was stored or not.
///
/// `@unchecked Sendable`: every use of the mutable state, the file
/// included, holds `lock`, so a server thread may append while another
/// cancels.
public final class PictureUpload: @unchecked Sendable {
    /// How messages name the upload, such as the file name the browser
    /// sent.
    public let name: String
    /// The largest picture accepted, in bytes.
    public let limit: Int

    private let directory: URL
    private let lock = NSLock()
    private var state: State

    private enum State {
        /// Bytes are arriving: the first ones (up to the signature's
        /// length) in `header` until the format is known; then in the file.
        case receiving(header: [UInt8], file: Int32?, count: Int, format: PictureFormat?)
        /// A check failed; the file is closed.
        case refused(PictureError)
        /// The client went away; the file is closed.
        case cancelled
        /// Handed to the store; the file belongs to it now.
        case used
    }

    /// Starts an upload.
    ///
    /// - Parameters:
    ///   - name: How messages name it.
    ///   - limit: The largest picture accepted, in bytes (64 MiB by
    ///     default); a negative limit accepts nothing.
    ///   - directory: Where the temporary file is made (the system's
    ///     temporary directory by default).
    public init(
        name: String = "the uploaded picture", limit: Int = CoffeeRules.defaultPictureSizeLimit,
        directory: URL = FileManager.default.temporaryDirectory
    ) {
        self.name = name
        self.limit = max(limit, 0)
        self.directory = directory
        state = .receiving(header: [], file: nil, count: 0, format: nil)
    }

    deinit { closeFile() }

    /// The bytes received so far.
    public var byteCount: Int {
        lock.withLock {
            if case .receiving(_, _, let count, _) = state { return count }
            return 0
        }
    }

    /// The picture's format, once its first bytes have been checked.
    public var format: PictureFormat? {
        lock.withLock {
            if case .receiving(_, _, _, let format) = state { return format }
            return nil
        }
    }

    /// Adds the next bytes of the picture.
    ///
    /// - Throws: ``PictureError``: ``PictureError/Reason/unrecognizedFormat(firstBytes:)``
    ///   once the first bytes are not a known signature,
    ///   ``PictureError/Reason/tooLarge(size:limit:)`` when the bytes go past
    ///   ``limit``, ``PictureError/Reason/unwritable(_:)`` when the temporary
    ///   file cannot be made or written. The upload is then over: the
    ///   file is closed and every later call throws the same error.
    ///   `CancellationError` after ``cancel()``.
    public func append(_ bytes: some ContiguousBytes) throws {
        try bytes.withUnsafeBytes { buffer in
            try lock.withLock { try receive(buffer) }
        }
    }

    /// Ends the upload without storing it (the client went away): the
    /// temporary file is closed, and so gone. Safe to call more than once,
    /// and after the upload was stored or refused.
    public func cancel() {
        lock.withLock {
            guard case .receiving = state else { return }
            closeFileLocked()
            state = .cancelled
        }
    }

    /// The complete upload, checked, for the store: a file at its start
    /// that the caller now owns, or the few bytes of a picture shorter
    /// than a signature. The upload is used up.
    ///
    /// - Throws: The refusal, if a check failed already; ``PictureError``
    ///   when it is empty or its first bytes are not a known format;
    ///   `CancellationError` when it was cancelled.
    func take() throws -> (format: PictureFormat, size: Int, file: Int32?, header: [UInt8]) {
        try lock.withLock {
            switch state {
            case .refused(let error): throw error
            case .cancelled: throw CancellationError()
            case .used: throw PictureError(.unreadable("it was stored already"), subject: name)
            case .receiving(let header, let file, let count, var format):
                if count == 0 { throw refuse(PictureError(.empty, subject: name)) }
                if format == nil { format = PictureFormat.detect(header) }
                guard let format else {
                    throw refuse(PictureError(.unrecognizedFormat(firstBytes: header), subject: name))
                }
                if let file, lseek(file, 0, SEEK_SET) < 0 {
                    throw refuse(PictureError(.unwritable(systemReason()), subject: temporaryFileName))
                }
                state = .used
                return (format, count, file, file == nil ? header : [])
            }
        }
    }

    // MARK: - Receiving (with the lock held)

    private func receive(_ bytes: UnsafeRawBufferPointer) throws {
        guard case .receiving(var header, var file, let count, var format) = state else {
            switch state {
            case .refused(let error): throw error
            case .used: throw PictureError(.unreadable("it was stored already"), subject: name)
            default: throw CancellationError()
            }
        }
        if bytes.isEmpty { return }
        if bytes.count > limit - count { throw refuse(PictureError(.tooLarge(size: nil, limit: limit), subject: name)) }
        var rest = bytes[...]
        if format == nil {
            let taken = rest.prefix(PictureFormat.signatureLength - header.count)
            header.append(contentsOf: taken)
            rest = rest.dropFirst(taken.count)
            if header.count < PictureFormat.signatureLength {
                state = .receiving(header: header, file: nil, count: count + bytes.count, format: nil)
                return
            }
            guard let detected = PictureFormat.detect(header) else {
                throw refuse(PictureError(.unrecognizedFormat(firstBytes: header), subject: name))
            }
            format = detected
            let opened = try openFile()
            file = opened
            state = .receiving(header: [], file: opened, count: count, format: detected)
            try header.withUnsafeBytes { try write($0, to: opened) }
            header = []
        }
        guard let file else { return }
        try write(UnsafeRawBufferPointer(rebasing: rest), to: file)
        state = .receiving(header: [], file: file, count: count + bytes.count, format: format)
    }

    /// Ends the upload with `error`, closing the file, and returns the
    /// error to throw.
    private func refuse(_ error: PictureError) -> PictureError {
        closeFileLocked()
        state = .refused(error)
        return error
    }

    private var temporaryFileName: String { "the temporary file for \(name)" }

    /// A new file in ``directory``, unlinked at once.
    private func openFile() throws -> Int32 {
        let path = directory.appendingPathComponent("records-upload-\(UUID().uuidString)").path
        var descriptor: Int32
        repeat {
            descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else {
            throw refuse(PictureError(.unwritable(systemReason()), subject: temporaryFileName))
        }
        unlink(path)
        return descriptor
    }

    private func write(_ bytes: UnsafeRawBufferPointer, to file: Int32) throws {
        guard var base = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = systemWrite(file, base, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                throw refuse(PictureError(.unwritable(systemReason()), subject: temporaryFileName))
            }
            remaining -= written
            base += written
        }
    }

    private func closeFileLocked() {
        if case .receiving(let header, let file?, let count, let format) = state {
            _ = close(file)
            state = .receiving(header: header, file: nil, count: count, format: format)
        }
    }

    private func closeFile() { lock.withLock { closeFileLocked() } }
}

/// The last system call's error, as the system words it.
private func systemReason() -> String { String(cString: strerror(errno)) }

/// `write`, named apart from ``PictureUpload``'s own.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
