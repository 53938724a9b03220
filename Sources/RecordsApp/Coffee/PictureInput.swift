import Foundation
import SQLiteStore

/// A picture source, opened and checked before anything is written: its
/// format is known from its first bytes, its size (when the source has
/// one) is within the limit.
///
/// The first bytes are read once, for the check, and replayed ahead of the
/// rest by ``blobSource()``: so the source is read once, pipes work, and the
/// bytes stored are the very bytes that were checked, even if the file
/// changes meanwhile.
///
/// `@unchecked Sendable`: it is opened on one thread and then handed to the
/// database writer's thread, which alone uses it until the store closes it
/// after the write; it is never used from two threads at once.
final class PictureInput: @unchecked Sendable {
    let format: PictureFormat
    /// The number of bytes the source will deliver; nil for a pipe.
    let size: Int?
    /// How messages name the source.
    let name: String

    private let descriptor: Int32?
    private let ownsDescriptor: Bool
    private let data: Data?
    private let header: [UInt8]
    private var isOpen = true

    private init(
        format: PictureFormat, size: Int?, name: String, descriptor: Int32?, ownsDescriptor: Bool, data: Data?,
        header: [UInt8]
    ) {
        self.format = format
        self.size = size
        self.name = name
        self.descriptor = descriptor
        self.ownsDescriptor = ownsDescriptor
        self.data = data
        self.header = header
    }

    deinit { close() }

    /// Opens `source` and checks its format and size.
    ///
    /// - Throws: ``PictureError``: unreadable (missing file, a directory, no
    ///   permission), empty, not a recognised format, over `limit`.
    static func open(_ source: PictureSource, limit: Int) throws -> PictureInput {
        let name = source.name
        switch source.kind {
        case .data(let data):
            let format = try check(header: Array(data.prefix(PictureFormat.signatureLength)), name: name)
            try checkSize(data.count, limit: limit, name: name)
            return PictureInput(
                format: format, size: data.count, name: name, descriptor: nil, ownsDescriptor: false, data: data,
                header: [])
        case .file(let path):
            let descriptor = openForReading(path)
            guard descriptor >= 0 else { throw PictureError(.unreadable(systemReason()), subject: name) }
            do {
                return try opened(descriptor: descriptor, owned: true, name: name, limit: limit)
            } catch {
                _ = systemClose(descriptor)
                throw error
            }
        case .fileHandle(let handle, _):
            return try opened(descriptor: handle.fileDescriptor, owned: false, name: name, limit: limit)
        case .upload(let upload):
            // Checked as it arrived, against its own limit; the store's may
            // be lower.
            let taken = try upload.take()
            do {
                try checkSize(taken.size, limit: limit, name: name)
            } catch {
                if let file = taken.file { _ = systemClose(file) }
                throw error
            }
            guard let file = taken.file else {
                return PictureInput(
                    format: taken.format, size: taken.size, name: name, descriptor: nil, ownsDescriptor: false,
                    data: Data(taken.header), header: [])
            }
            return PictureInput(
                format: taken.format, size: taken.size, name: name, descriptor: file, ownsDescriptor: true, data: nil,
                header: [])
        }
    }

    private static func opened(descriptor: Int32, owned: Bool, name: String, limit: Int) throws -> PictureInput {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw PictureError(.unreadable(systemReason()), subject: name) }
        let type = info.st_mode & mode_t(S_IFMT)
        if type == mode_t(S_IFDIR) { throw PictureError(.unreadable("it is a directory"), subject: name) }
        var size: Int?
        if type == mode_t(S_IFREG) {
            let offset = lseek(descriptor, 0, SEEK_CUR)
            size = offset < 0 ? nil : max(Int(info.st_size) - Int(offset), 0)
        }
        var header = [UInt8](repeating: 0, count: PictureFormat.signatureLength)
        let count = try header.withUnsafeMutableBytes { buffer in
            try readFully(descriptor, into: buffer, name: name)
        }
        header.removeSubrange(count...)
        let format = try check(header: header, name: name)
        if let size { try checkSize(size, limit: limit, name: name) }
        return PictureInput(
            format: format, size: size, name: name, descriptor: descriptor, ownsDescriptor: owned, data: nil,
            header: header)
    }

    private static func check(header: [UInt8], name: String) throws -> PictureFormat {
        if header.isEmpty { throw PictureError(.empty, subject: name) }
        guard let format = PictureFormat.detect(header) else {
            throw PictureError(.unrecognizedFormat(firstBytes: header), subject: name)
        }
        return format
    }

    private static func checkSize(_ size: Int, limit: Int, name: String) throws {
        if size > limit { throw PictureError(.tooLarge(size: size, limit: limit), subject: name) }
    }

    /// The source's bytes for ``Database/writeBlob(from:table:column:rowID:schema:maximumSize:chunkSize:)``:
    /// the header already read, then the rest.
    func blobSource() -> BlobSource {
        if let data { return .data(data) }
        guard let descriptor else { return .data(Data()) }
        var replayed = 0
        let header = self.header
        let name = self.name
        return BlobSource(size: size) { buffer in
            if replayed < header.count {
                let count = min(buffer.count, header.count - replayed)
                buffer.copyBytes(from: header[replayed..<replayed + count])
                replayed += count
                return count
            }
            return try Self.readSome(descriptor, into: buffer, name: name)
        }
    }

    /// Closes the file if it was opened here. Safe to call twice.
    func close() {
        guard isOpen else { return }
        isOpen = false
        if ownsDescriptor, let descriptor { _ = systemClose(descriptor) }
    }

    // MARK: - System calls

    /// Reads until `buffer` is full or the source ends.
    private static func readFully(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, name: String)
        throws -> Int
    {
        var filled = 0
        while filled < buffer.count {
            let count = try readSome(
                descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]), name: name)
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    private static func readSome(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, name: String)
        throws -> Int
    {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let count = read(descriptor, base, buffer.count)
            if count >= 0 { return count }
            if errno != EINTR { throw PictureError(.unreadable(systemReason()), subject: name) }
        }
    }
}

/// The last system call's error, as the system words it.
private func systemReason() -> String { String(cString: strerror(errno)) }

/// `open(path, O_RDONLY)`, retried when interrupted.
private func openForReading(_ path: String) -> Int32 {
    while true {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 || errno != EINTR { return descriptor }
    }
}

/// `close`, named apart from ``PictureInput/close()``.
private func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
