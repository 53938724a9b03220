import Foundation

/// The picture formats a coffee's picture may have, recognised by their
/// first bytes (their signature), never by a file's name.
public enum PictureFormat: String, Sendable, CaseIterable, Codable {
    case png, jpeg, gif, webp

    /// The most bytes ``detect(_:)`` needs: WebP's `RIFF....WEBP`.
    public static let signatureLength = 12

    /// The format whose signature `header` starts with; nil for anything
    /// else (including fewer bytes than the signature).
    public static func detect(_ header: some Collection<UInt8>) -> PictureFormat? {
        let bytes = Array(header.prefix(signatureLength))
        func starts(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + signature.count && Array(bytes[offset..<offset + signature.count]) == signature
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        return nil
    }

    /// The MIME type, as stored in the `pictureType` column.
    public var mimeType: String { "image/\(rawValue)" }

    /// The format of a stored MIME type; nil for an unknown one.
    public init?(mimeType: String) {
        guard mimeType.hasPrefix("image/"), let format = PictureFormat(rawValue: String(mimeType.dropFirst(6)))
        else { return nil }
        self = format
    }

    /// The name people use: "PNG", "JPEG", "GIF", "WebP".
    public var displayName: String {
        switch self {
        case .png: "PNG"
        case .jpeg: "JPEG"
        case .gif: "GIF"
        case .webp: "WebP"
        }
    }

    /// The usual file extension, without the dot.
    public var fileExtension: String { self == .jpeg ? "jpg" : rawValue }

    /// The format a file extension names (`png`, `jpg` or `jpeg`, `gif`,
    /// `webp`, in any case); nil for any other.
    public init?(fileExtension: String) {
        let name = fileExtension.lowercased()
        guard let format = name == "jpg" ? .jpeg : PictureFormat(rawValue: name) else { return nil }
        self = format
    }
}

/// What is known about a stored picture without reading it: its size and
/// format.
public struct CoffeePicture: Sendable, Hashable, Encodable {
    /// The size in bytes.
    public let size: Int
    /// The format; nil when the stored type is not one the app knows (a
    /// row written by another tool).
    public let format: PictureFormat?

    /// Creates a description of a picture.
    public init(size: Int, format: PictureFormat?) {
        self.size = size
        self.format = format
    }

    private enum CodingKeys: String, CodingKey {
        case size, type
    }

    /// `{"size": 12345, "type": "image/png"}`; the type is null when unknown.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(size, forKey: .size)
        try container.encode(format?.mimeType, forKey: .type)
    }

    /// "PNG, 12.1 KiB (12,345 bytes)".
    public var summary: String {
        let name = format?.displayName ?? "unknown format"
        return "\(name), \(Self.sizeText(size))"
    }

    /// "12.1 KiB (12,345 bytes)": ``ByteCount/text(_:)``, the one size
    /// format.
    public static func sizeText(_ bytes: Int) -> String { ByteCount.text(bytes) }
}

/// Where a picture to store comes from.
public struct PictureSource: Sendable {
    enum Kind: Sendable {
        case file(path: String)
        case fileHandle(FileHandle, name: String)
        case data(Data)
        case upload(PictureUpload)
    }

    let kind: Kind

    /// The file at `path`, as the user gave it (messages repeat it).
    public static func file(path: String) -> PictureSource { PictureSource(kind: .file(path: path)) }

    /// A local file.
    public static func file(_ url: URL) -> PictureSource { .file(path: url.path) }

    /// What remains of an open file or pipe, such as standard input;
    /// `name` stands for it in messages. The handle is left open.
    public static func fileHandle(_ handle: FileHandle, name: String) -> PictureSource {
        PictureSource(kind: .fileHandle(handle, name: name))
    }

    /// Bytes already in memory, such as a photo picker's.
    public static func data(_ data: Data) -> PictureSource { PictureSource(kind: .data(data)) }

    /// An upload received in chunks, complete: its checks are finished
    /// (an upload that has fewer bytes than a signature, or none, is
    /// refused now), and storing it uses it up, stored or not.
    public static func upload(_ upload: PictureUpload) -> PictureSource { PictureSource(kind: .upload(upload)) }

    /// How messages name the source.
    var name: String {
        switch kind {
        case .file(let path): path
        case .fileHandle(_, let name): name
        case .data: "the picture data"
        case .upload(let upload): upload.name
        }
    }
}

/// Where a stored picture is written.
public struct PictureDestination: Sendable {
    enum Kind: Sendable {
        case file(path: String)
        case fileHandle(FileHandle, name: String)
    }

    let kind: Kind

    /// The file at `path`, created or replaced once the whole picture is
    /// written; a failed copy leaves no partial file.
    public static func file(path: String) -> PictureDestination { PictureDestination(kind: .file(path: path)) }

    /// A local file, created or replaced once the whole picture is written.
    public static func file(_ url: URL) -> PictureDestination { .file(path: url.path) }

    /// An open file or pipe, such as standard output; `name` stands for it
    /// in messages. The handle is left open.
    public static func fileHandle(_ handle: FileHandle, name: String) -> PictureDestination {
        PictureDestination(kind: .fileHandle(handle, name: name))
    }

    /// How messages name the destination.
    var name: String {
        switch kind {
        case .file(let path): path
        case .fileHandle(_, let name): name
        }
    }
}

/// A picture could not be stored or written back. Nothing was written to
/// the database, and no partial file was left.
public struct PictureError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// What went wrong.
    public enum Reason: Sendable, Equatable {
        /// The source cannot be opened or read; the system's reason.
        case unreadable(String)
        /// The source is empty.
        case empty
        /// The source does not start with a PNG, JPEG, GIF or WebP
        /// signature; its first bytes, for the message.
        case unrecognizedFormat(firstBytes: [UInt8])
        /// The source is over the size limit (`size` nil: a stream that went
        /// past it).
        case tooLarge(size: Int?, limit: Int)
        /// The coffee has no picture to read or remove.
        case noPicture(coffeeID: Int64)
        /// The destination cannot be created or written; the system's reason.
        case unwritable(String)
        /// The picture was replaced or removed (or the coffee deleted)
        /// while it was being read in chunks: the bytes already read belong
        /// to a picture that is gone.
        case changed(coffeeID: Int64)
    }

    /// What went wrong.
    public let reason: Reason
    /// The file or stream concerned, as the user named it; for
    /// ``Reason/noPicture(coffeeID:)`` and ``Reason/changed(coffeeID:)``,
    /// nil for a coffee, or what else has the picture ("user 3").
    public let subject: String?

    /// Creates an error.
    public init(_ reason: Reason, subject: String?) {
        self.reason = reason
        self.subject = subject
    }

    public var description: String {
        let subject = self.subject ?? "the picture"
        switch reason {
        case .unreadable(let why):
            return "cannot read \(subject): \(why)"
        case .empty:
            return "\(subject) is empty, not a picture"
        case .unrecognizedFormat(let firstBytes):
            let hex = firstBytes.prefix(8).map { String(format: "%02X", $0) }.joined(separator: " ")
            return "\(subject) is not a PNG, JPEG, GIF or WebP picture (it starts with \(hex)); nothing was stored"
        case .tooLarge(let size?, let limit):
            return "\(subject) is \(CoffeePicture.sizeText(size)), over the picture limit of "
                + "\(CoffeePicture.sizeText(limit)); nothing was stored"
        case .tooLarge(nil, let limit):
            return "\(subject) holds more than the picture limit of \(CoffeePicture.sizeText(limit)); "
                + "nothing was stored"
        case .noPicture(let id):
            return self.subject.map { "\($0) has no picture" } ?? "coffee \(id) has no picture"
        case .unwritable(let why):
            return "cannot write \(subject): \(why)"
        case .changed(let id):
            return "\(self.subject ?? "the picture of coffee \(id)") changed while it was being read"
        }
    }

    public var errorDescription: String? { description }
}
