import CVips
import Foundation

/// Bytes a ``Thumbnailer`` reads an image from, at any offset: a file, a
/// buffer, a database row read in chunks.
///
/// The thumbnailer calls it one call at a time, from the thread that
/// called `Thumbnailer.make(from:)` or from a libvips worker thread
/// (while it decodes), never after `make` returns.
public protocol ThumbnailInput: AnyObject {
    /// The number of bytes.
    var size: Int { get }
    /// Copies up to `buffer.count` bytes starting at `offset` into
    /// `buffer` and returns how many; fewer only at the end. Throwing
    /// stops the thumbnail (``ThumbnailError/Reason/input(_:)``).
    func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// A thumbnail: a small JPEG, or a PNG for a picture with transparency.
public struct Thumbnail: Sendable, Hashable {
    /// The encoded image.
    public let data: Data
    /// `image/jpeg` or `image/png`.
    public let mimeType: String
    /// Its size in pixels.
    public let width: Int
    /// Its size in pixels.
    public let height: Int
}

/// Why no thumbnail was made.
public struct ThumbnailError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable {
        /// Not a PNG, JPEG, GIF or WebP image (libvips found no loader, or
        /// one these thumbnails do not use).
        case unsupported
        /// More pixels than ``Thumbnailer/maximumPixels`` (such as a
        /// decompression bomb): refused from its header, before decoding.
        case tooManyPixels(width: Int, height: Int, limit: Int)
        /// The image is damaged or cut short; libvips' message.
        case undecodable(String)
        /// libvips could not start.
        case unavailable(String)
        /// Reading the input threw this.
        case input(any Error)
    }

    /// What went wrong.
    public let reason: Reason

    /// A sentence for the log.
    public var description: String {
        switch reason {
        case .unsupported: "not a PNG, JPEG, GIF or WebP image"
        case .tooManyPixels(let width, let height, let limit):
            "\(width) x \(height) pixels is more than the limit of \(limit) pixels"
        case .undecodable(let message): "the image cannot be decoded: \(message)"
        case .unavailable(let message): "libvips cannot start: \(message)"
        case .input(let error): "the image cannot be read: \(error)"
        }
    }
}

/// Makes thumbnails with libvips (Debian's `libvips-dev`), in bounded memory
/// and time whatever the input.
///
/// - The format is found from the first bytes, and only PNG, JPEG, GIF
///   and WebP are decoded: every other libvips loader is blocked
///   (`vips_operation_block_set`), the untrusted ones (ImageMagick and the
///   like) first of all.
/// - The header is read first, and an image of more than
///   ``maximumPixels`` pixels is refused before any pixel is decoded (a
///   30,000 x 30,000 image, a decompression bomb).
/// - The thumbnail is made with `vips_thumbnail_source`: a JPEG is
///   shrunk while it is decoded (shrink-on-load), and the pixels stream
///   through in sequential access, a few lines at a time, so memory grows
///   with the image's width, not its area or its file's size. The input is
///   read through ``ThumbnailInput`` in pieces, never held whole.
/// - Decoding fails on errors and truncation (`fail_on=error`): a damaged
///   or cut-short file is an error, never a half-grey thumbnail.
/// - libvips keeps no operation cache (each picture is thumbnailed once,
///   so there is nothing to reuse) and uses one worker thread per
///   thumbnail; callers bound how many run at once.
///
/// `make(from:)` blocks while it decodes: call it on a thread of its own,
/// not on one of Swift's concurrency threads. libvips is initialized once,
/// the first time any thumbnailer is used, from whichever thread.
public struct Thumbnailer: Sendable {
    /// The box the thumbnail fits in, in pixels (aspect ratio kept, never
    /// enlarged).
    public var width: Int
    /// The box the thumbnail fits in, in pixels.
    public var height: Int
    /// The most pixels (width x height, from the header) an image may have
    /// to be decoded.
    public var maximumPixels: Int
    /// JPEG quality, 1 to 100.
    public var quality: Int

    /// 50 megapixels: a large camera's picture, decoded in well under a
    /// second.
    public static let defaultMaximumPixels = 50_000_000

    /// A thumbnailer fitting `width` x `height` (96 x 96: 48 CSS pixels at
    /// 2x).
    public init(width: Int = 96, height: Int = 96, maximumPixels: Int = defaultMaximumPixels, quality: Int = 80) {
        precondition(width > 0 && height > 0 && maximumPixels > 0, "a thumbnail's limits must be positive")
        self.width = width
        self.height = height
        self.maximumPixels = maximumPixels
        self.quality = min(max(quality, 1), 100)
    }

    /// The loaders allowed, by the class name `vips_foreign_find_load_source`
    /// gives.
    static let loaders: Set<String> = [
        "VipsForeignLoadJpegSource", "VipsForeignLoadPngSource", "VipsForeignLoadNsgifSource",
        "VipsForeignLoadWebpSource",
    ]

    /// Initializes libvips once (thread-safe: a global's initializer runs
    /// once); the error if it cannot start. Call it before using `CVips`
    /// directly (the tests make their images with it).
    public static func prepare() throws {
        if let message = vipsStartup { throw ThumbnailError(reason: .unavailable(message)) }
    }

    /// libvips' error message, cleared.
    static func vipsError() -> String {
        // Its first line: the rest repeats it or says where it came from.
        let message = String(cString: vips_error_buffer()).split(separator: "\n").first.map(String.init) ?? ""
        vips_error_clear()
        return message.isEmpty ? "no message from libvips" : message
    }

    /// The thumbnail of the image in `data`.
    public func make(from data: Data) -> Result<Thumbnail, ThumbnailError> {
        make(from: DataInput(data))
    }

    /// The thumbnail of the image `input` holds; blocks while it decodes.
    public func make(from input: some ThumbnailInput) -> Result<Thumbnail, ThumbnailError> {
        if let message = vipsStartup { return .failure(ThumbnailError(reason: .unavailable(message))) }
        let reader = SourceReader(input)
        let callbacks = UnsafeMutablePointer<cvips_source_callbacks>.allocate(capacity: 1)
        defer { callbacks.deallocate() }
        callbacks.initialize(
            to: cvips_source_callbacks(
                read: { context, buffer, length in
                    guard length > 0 else { return 0 }
                    guard let context, let buffer else { return -1 }
                    let reader = Unmanaged<SourceReader>.fromOpaque(context).takeUnretainedValue()
                    return reader.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(length)))
                },
                seek: { context, offset, whence in
                    guard let context else { return -1 }
                    return Unmanaged<SourceReader>.fromOpaque(context).takeUnretainedValue().seek(offset, whence)
                },
                context: Unmanaged.passUnretained(reader).toOpaque()))
        return withExtendedLifetime(reader) {
            let result = make(source: cvips_source_custom(callbacks))
            // An error while reading is the input's, whatever libvips says.
            if case .failure = result, let error = reader.error {
                return .failure(ThumbnailError(reason: .input(error)))
            }
            return result
        }
    }

    private func make(source: UnsafeMutablePointer<VipsSource>?) -> Result<Thumbnail, ThumbnailError> {
        guard let source else { return .failure(ThumbnailError(reason: .undecodable(Self.vipsError()))) }
        defer { cvips_unref(source) }
        // The format, from the first bytes.
        guard let loader = vips_foreign_find_load_source(source).map({ String(cString: $0) }),
            Self.loaders.contains(loader)
        else {
            vips_error_clear()
            return .failure(ThumbnailError(reason: .unsupported))
        }
        // The header: its size, before any pixel is decoded.
        guard let header = cvips_header(source) else {
            return .failure(ThumbnailError(reason: .undecodable(Self.vipsError())))
        }
        let (width, height) = (Int(vips_image_get_width(header)), Int(vips_image_get_height(header)))
        cvips_unref(header)
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard width > 0, height > 0, !overflow, pixels <= maximumPixels else {
            return .failure(ThumbnailError(reason: .tooManyPixels(width: width, height: height, limit: maximumPixels)))
        }
        // The thumbnail: decoding happens while it is saved.
        var image: UnsafeMutablePointer<VipsImage>?
        guard cvips_thumbnail(source, &image, Int32(self.width), Int32(self.height)) == 0, let image else {
            return .failure(ThumbnailError(reason: .undecodable(Self.vipsError())))
        }
        defer { cvips_unref(image) }
        let transparent = vips_image_hasalpha(image) != 0
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let saved =
            transparent ? cvips_png(image, &buffer, &length) : cvips_jpeg(image, &buffer, &length, Int32(quality))
        guard saved == 0, let buffer else {
            return .failure(ThumbnailError(reason: .undecodable(Self.vipsError())))
        }
        defer { g_free(buffer) }
        return .success(
            Thumbnail(
                data: Data(bytes: buffer, count: length), mimeType: transparent ? "image/png" : "image/jpeg",
                width: Int(vips_image_get_width(image)), height: Int(vips_image_get_height(image))))
    }
}

/// libvips started and limited, once per process; nil when it started, its
/// message when it did not.
private let vipsStartup: String? = {
    guard vips_init("records") == 0 else { return Thumbnailer.vipsError() }
    // Its warnings about a damaged image are not for standard error: the
    // caller reports the failure.
    cvips_quiet()
    // Nothing is reused between thumbnails: keep no operations, memory or
    // files for reuse.
    vips_cache_set_max(0)
    vips_cache_set_max_mem(0)
    vips_cache_set_max_files(0)
    // One worker per thumbnail; the callers limit how many run at once.
    vips_concurrency_set(1)
    // Only the four formats a coffee's picture may have.
    vips_block_untrusted_set(1)
    vips_operation_block_set("VipsForeignLoad", 1)
    for loader in ["VipsForeignLoadJpeg", "VipsForeignLoadPng", "VipsForeignLoadNsgif", "VipsForeignLoadWebp"] {
        vips_operation_block_set(loader, 0)
    }
    return nil
}()

/// The input as libvips reads it: a position, and the first error thrown.
/// libvips calls it from its worker threads too, one call at a time; the
/// lock makes that ordering visible to Swift (and to Thread Sanitizer,
/// which does not see GLib's own locks).
private final class SourceReader {
    let input: any ThumbnailInput
    private let lock = NSLock()
    private var position = 0
    private var failure: (any Error)?

    init(_ input: any ThumbnailInput) { self.input = input }

    /// The first error the input threw.
    var error: (any Error)? { lock.withLock { failure } }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> gint64 {
        lock.withLock { readLocked(into: buffer) }
    }

    func seek(_ offset: gint64, _ whence: Int32) -> gint64 {
        lock.withLock { seekLocked(offset, whence) }
    }

    private func readLocked(into buffer: UnsafeMutableRawBufferPointer) -> gint64 {
        guard failure == nil else { return -1 }
        guard position < input.size, buffer.count > 0 else { return 0 }
        do {
            let count = try input.read(at: position, into: buffer)
            guard count >= 0, count <= buffer.count else { return -1 }
            position += count
            return gint64(count)
        } catch {
            failure = error
            return -1
        }
    }

    private func seekLocked(_ offset: gint64, _ whence: Int32) -> gint64 {
        let base: Int
        switch whence {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = position
        case SEEK_END: base = input.size
        default: return -1
        }
        let target = base + Int(offset)
        guard target >= 0 else { return -1 }
        position = target
        return gint64(target)
    }
}

/// Bytes in memory.
private final class DataInput: ThumbnailInput {
    let data: Data
    init(_ data: Data) { self.data = data }
    var size: Int { data.count }
    func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset < data.count else { return 0 }
        let count = min(buffer.count, data.count - offset)
        data.withUnsafeBytes { bytes in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
        }
        return count
    }
}
