import Foundation
import HTTPServer
import RecordsApp
import Thumbnails

/// The coffee pictures' thumbnails (`GET /coffee/:id/thumbnail`), each made
/// once per picture version and kept in memory.
///
/// **Where they are kept, and why.** In a bounded least-recently-used
/// cache in this process, keyed by the coffee's ID and its picture's
/// version, not on disk or in a table:
/// - A thumbnail is small (a 96 x 96 JPEG is a few KiB), so the cache's
///   ``byteLimit`` (8 MiB by default) holds thousands, more than a list
///   page or a session shows.
/// - The key holds the picture's version, a number the database never
///   gives to another picture, so a replaced or removed picture's
///   thumbnail is never served again and needs no invalidation: it ages
///   out. A table would need a migration, writes on reads, and cleaning
///   when pictures change (by this app, the `records` command or
///   `sqlite3`); files beside the database would need the same cleaning,
///   and both would outlive the thumbnailer's settings.
/// - What it costs: a thumbnail is made again after a restart or an
///   eviction, once, in bounded memory and time (see ``Thumbnailer``).
///
/// Concurrent first requests for one thumbnail wait for the same making
/// (coalesced); at most ``concurrentMakings`` are made at once, each on a
/// thread of its own (libvips blocks while it decodes). A picture that
/// cannot be made into a thumbnail (damaged, cut short, too many pixels,
/// not an image) gets ``placeholder``, kept like a thumbnail so it is not
/// decoded again. A picture that changed while it was read is not kept:
/// the read throws.
final class CoffeeThumbnails: Sendable {
    /// What a thumbnail request is answered with.
    struct Image: Sendable {
        let data: Data
        let mimeType: String
        /// Whether it is ``placeholder`` rather than the picture's.
        let isPlaceholder: Bool
    }

    /// A small grey picture frame: the thumbnail of a picture that cannot
    /// be made into one.
    static let placeholder = Image(
        data: Data(
            """
            <svg xmlns="http://www.w3.org/2000/svg" width="96" height="96" viewBox="0 0 96 96">\
            <rect width="96" height="96" rx="8" fill="#e5e7eb"/>\
            <rect x="22" y="26" width="52" height="44" rx="3" fill="none" stroke="#9ca3af" stroke-width="4"/>\
            <path d="M26 66l14-16 10 11 7-8 13 13z" fill="#9ca3af"/>\
            <circle cx="60" cy="38" r="5" fill="#9ca3af"/></svg>
            """.utf8), mimeType: "image/svg+xml", isPlaceholder: true)

    /// How many thumbnails are made at once, at most.
    static let concurrentMakings = 2

    let thumbnailer: Thumbnailer
    /// The most bytes of thumbnails kept.
    let byteLimit: Int
    private let state: State
    private let makings = Locked(0)
    private let gate = Gate(width: concurrentMakings)
    private let log: @Sendable (String) -> Void

    /// Thumbnails by `thumbnailer`, keeping up to `byteLimit` bytes of them.
    init(
        thumbnailer: Thumbnailer = Thumbnailer(), byteLimit: Int = 8 << 20,
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.thumbnailer = thumbnailer
        self.byteLimit = byteLimit
        self.log = log
        state = State(byteLimit: byteLimit)
        // libvips starts now (once per process), not while the first
        // thumbnail's request waits; its libraries' pages are then part of
        // the server's resident memory from the start.
        do {
            try Thumbnailer.prepare()
        } catch {
            log("thumbnails are placeholders: \(error)")
        }
    }

    /// How many thumbnails (or placeholders) have been made: the tests'
    /// count of decodings.
    var made: Int { makings.withLock { $0 } }

    /// The thumbnail of the opened picture: kept, being made, or made now.
    ///
    /// - Throws: The picture's read error (it changed or was removed
    ///   while it was read).
    func thumbnail(of picture: PictureReader) async throws -> Image {
        guard let version = picture.version else { return try await make(picture) }
        return try await state.thumbnail(for: Key(coffeeID: picture.coffeeID, version: version)) {
            try await self.make(picture)
        }
    }

    private func make(_ picture: PictureReader) async throws -> Image {
        await gate.enter()
        defer { Task { await gate.leave() } }
        makings.withLock { $0 += 1 }
        let thumbnailer = self.thumbnailer
        let result = await Self.onThread { thumbnailer.make(from: PictureBytes(picture)) }
        switch result {
        case .success(let thumbnail):
            return Image(data: thumbnail.data, mimeType: thumbnail.mimeType, isPlaceholder: false)
        case .failure(let error):
            if case .input(let cause) = error.reason { throw cause }
            log("coffee \(picture.coffeeID)'s picture gets a placeholder thumbnail: \(error)")
            return Self.placeholder
        }
    }

    /// `work`'s result, run on a thread of its own (not one of the few
    /// concurrency threads, which it would hold while libvips decodes).
    private static func onThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: work()) }
            thread.name = "thumbnail"
            thread.start()
        }
    }

    struct Key: Hashable, Sendable {
        let coffeeID: Int64
        let version: Int64
    }

    /// The kept thumbnails, least recently used first out, and the ones
    /// being made.
    private actor State {
        private var kept: [Key: (image: Image, used: UInt64)] = [:]
        private var making: [Key: Task<Image, any Error>] = [:]
        private var bytes = 0
        private var clock: UInt64 = 0
        let byteLimit: Int

        init(byteLimit: Int) { self.byteLimit = byteLimit }

        func thumbnail(for key: Key, make: @escaping @Sendable () async throws -> Image) async throws -> Image {
            clock += 1
            if let entry = kept[key] {
                kept[key]?.used = clock
                return entry.image
            }
            if let task = making[key] { return try await task.value }
            let task = Task { try await make() }
            making[key] = task
            do {
                let image = try await task.value
                making[key] = nil
                keep(image, for: key)
                return image
            } catch {
                making[key] = nil
                throw error
            }
        }

        private func keep(_ image: Image, for key: Key) {
            guard image.data.count <= byteLimit else { return }
            clock += 1
            kept[key] = (image, clock)
            bytes += image.data.count
            while bytes > byteLimit, let oldest = kept.min(by: { $0.value.used < $1.value.used }) {
                kept[oldest.key] = nil
                bytes -= oldest.value.image.data.count
            }
        }
    }

    /// At most `width` holders at a time; the others wait in order.
    private actor Gate {
        private var free: Int
        private var waiting: [CheckedContinuation<Void, Never>] = []

        init(width: Int) { free = width }

        func enter() async {
            if free > 0 {
                free -= 1
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func leave() {
            if waiting.isEmpty {
                free += 1
            } else {
                waiting.removeFirst().resume()
            }
        }
    }
}

/// A stored picture as the thumbnailer reads it: a chunk of
/// `PictureReader.chunkSize` bytes at a time from the row (libvips asks for
/// a few KiB at a time), each read waited for on the calling thread (the
/// thumbnail's, or a libvips worker: never a concurrency thread). One call
/// at a time; the lock makes that visible to Swift.
private final class PictureBytes: ThumbnailInput {
    let picture: PictureReader
    private let lock = NSLock()
    private var chunk = Data()
    private var chunkStart = 0

    init(_ picture: PictureReader) { self.picture = picture }

    var size: Int { picture.size }

    func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try lock.withLock { try readLocked(at: offset, into: buffer) }
    }

    private func readLocked(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if offset < chunkStart || offset >= chunkStart + chunk.count {
            guard offset < picture.size else { return 0 }
            let picture = self.picture
            let next = HTTPServer.waitBlocking { () async -> Result<Data, any Error> in
                do {
                    return .success(try await picture.read(at: offset, count: PictureReader.chunkSize))
                } catch {
                    return .failure(error)
                }
            }
            chunk = try next.get()
            chunkStart = offset
            if chunk.isEmpty { return 0 }
        }
        let start = offset - chunkStart
        let count = min(buffer.count, chunk.count - start)
        chunk.withUnsafeBytes { bytes in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<start + count]))
        }
        return count
    }
}
