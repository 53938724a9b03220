import CVips
import Foundation
import RecordsApp
import TestSupport
import Testing
import Thumbnails

@testable import RecordsWeb

/// Images made by libvips for the thumbnail tests (no binary files in the
/// repository), and thumbnails read back with it.
enum TestImages {
    /// A `width` x `height` image of noise in `format` ("png", "jpg",
    /// "tif"), `bands` bands (4: with transparency); `options` are the
    /// saver's, such as `[Q=100]`.
    static func make(width: Int, height: Int, bands: Int = 3, format: String, options: String = "") throws -> Data {
        try Thumbnailer.prepare()
        let image = try #require(cvips_noise(Int32(width), Int32(height), Int32(bands)), "\(vipsMessage())")
        defer { cvips_unref(image) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("records-image-\(UUID()).\(format)")
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(cvips_save(image, file.path + options) == 0, "\(vipsMessage())")
        return try Data(contentsOf: file)
    }

    /// The size of the image in `data`, decoded whole by libvips; nil when
    /// it cannot be.
    static func decodedSize(_ data: some Collection<UInt8>) throws -> (width: Int, height: Int)? {
        try Thumbnailer.prepare()
        let bytes = Array(data)
        return bytes.withUnsafeBytes { buffer -> (Int, Int)? in
            guard let image = cvips_load_buffer(buffer.baseAddress, buffer.count) else { return nil }
            defer { cvips_unref(image) }
            // The pixels, not only the header: fails on a damaged image.
            guard cvips_decode_all(image) == 0 else { return nil }
            return (Int(vips_image_get_width(image)), Int(vips_image_get_height(image)))
        }
    }

    static func vipsMessage() -> String {
        defer { vips_error_clear() }
        return String(cString: vips_error_buffer())
    }

    /// `jpeg` with the size in its frame header changed to `width` x
    /// `height`: what a decompression bomb's header says.
    static func claimingSize(jpeg: Data, width: Int, height: Int) throws -> Data {
        var bytes = [UInt8](jpeg)
        // The baseline frame header: FF C0, length (2), precision (1),
        // height (2), width (2).
        let start = try #require(
            bytes.indices.dropLast(9).first { bytes[$0] == 0xFF && (bytes[$0 + 1] == 0xC0 || bytes[$0 + 1] == 0xC2) })
        bytes[start + 5] = UInt8(height >> 8)
        bytes[start + 6] = UInt8(height & 0xFF)
        bytes[start + 7] = UInt8(width >> 8)
        bytes[start + 8] = UInt8(width & 0xFF)
        return Data(bytes)
    }

    /// `png` with its IHDR chunk's size changed to `width` x `height`, and
    /// the chunk's CRC made right again.
    static func claimingSize(png: Data, width: Int, height: Int) -> Data {
        var bytes = [UInt8](png)
        // Signature (8), length (4), "IHDR" (4), width (4), height (4).
        for (offset, value) in [(16, width), (20, height)] {
            for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
        }
        let crc = crc32(bytes[12..<29])
        for index in 0..<4 { bytes[29 + index] = UInt8(truncatingIfNeeded: crc >> (24 - 8 * index)) }
        return Data(bytes)
    }

    /// PNG's CRC-32.
    static func crc32(_ bytes: some Collection<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

/// `GET /coffee/:id/thumbnail`, answered in process.
@Suite struct CoffeeThumbnailTests {
    let app: WebApp
    let lines = ThumbnailLog()
    /// Takes pictures up to 64 MiB.
    var store: CoffeeStore { app.context.coffee }

    init() throws {
        var configuration = WebConfiguration()
        let lines = self.lines
        configuration.log = { lines.append($0) }
        app = WebApp(
            database: try AppDatabase.inMemory(), configuration: configuration, authenticator: FixedSessions.ada)
    }

    func get(
        _ path: String, query: [String: String] = [:], headers: [String: String] = [:], signedIn: Bool = true
    ) async -> Response {
        await app.respond(
            to: Request(
                method: "GET", path: path, query: query, headers: headers,
                cookies: signedIn ? [WebApp.sessionCookie: "ada-token"] : [:]))
    }

    func body(_ response: Response) -> [UInt8] {
        guard case .bytes(let bytes) = response.body else { return [] }
        return bytes
    }

    /// A coffee with `picture`.
    func coffee(with picture: Data?) async throws -> Coffee {
        let coffee = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
        if let picture { try await store.setPicture(id: coffee.id, from: .data(picture)) }
        return coffee
    }

    var made: Int { app.context.thumbnails.made }

    @Test func aJPEGsThumbnailFitsTheBoxKeepingItsShape() async throws {
        let coffee = try await coffee(with: try TestImages.make(width: 640, height: 480, format: "jpg"))
        let response = await get("/coffee/\(coffee.id)/thumbnail")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "image/jpeg")
        #expect(try TestImages.decodedSize(body(response)).map { [$0.width, $0.height] } == [96, 72])
        #expect(body(response).count < 10_000)
    }

    @Test func aPNGWithTransparencyGetsAPNGThumbnail() async throws {
        let coffee = try await coffee(with: try TestImages.make(width: 300, height: 900, bands: 4, format: "png"))
        let response = await get("/coffee/\(coffee.id)/thumbnail")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "image/png")
        #expect(try TestImages.decodedSize(body(response)).map { [$0.width, $0.height] } == [32, 96])
    }

    @Test func aSmallPictureIsNotEnlarged() async throws {
        let coffee = try await coffee(with: try TestImages.make(width: 40, height: 20, format: "png"))
        let response = await get("/coffee/\(coffee.id)/thumbnail")
        #expect(response.header("Content-Type") == "image/jpeg")
        #expect(try TestImages.decodedSize(body(response)).map { [$0.width, $0.height] } == [40, 20])
    }

    @Test func theETagFollowsThePictureAndAMatchIsNotModified() async throws {
        let coffee = try await coffee(with: try TestImages.make(width: 200, height: 100, format: "png"))
        let picture = try await store.openPicture(id: coffee.id)
        let first = await get("/coffee/\(coffee.id)/thumbnail")
        let tag = try #require(first.header("ETag"))
        #expect(tag == "\"thumbnail-\(try #require(picture.version))\"")
        #expect(first.header("Cache-Control") == "private, no-cache")
        let cached = await get("/coffee/\(coffee.id)/thumbnail", headers: ["if-none-match": tag])
        #expect(cached.status == 304 && body(cached).isEmpty && cached.header("ETag") == tag)
        #expect(await get("/coffee/\(coffee.id)/thumbnail", headers: ["if-none-match": "W/\(tag)"]).status == 304)
        #expect(await get("/coffee/\(coffee.id)/thumbnail", headers: ["if-none-match": "\"other\""]).status == 200)

        // The address the pages write (`v`, the coffee's version) is kept
        // for good; another `v` (a page from before a change) is not.
        let version = try #require(try await store.coffee(id: coffee.id)?.version)
        let lasting = await get("/coffee/\(coffee.id)/thumbnail", query: ["v": version.description])
        #expect(lasting.header("Cache-Control") == "private, max-age=31536000, immutable")
        let stale = await get("/coffee/\(coffee.id)/thumbnail", query: ["v": "0000000000000000"])
        #expect(stale.header("Cache-Control") == "private, no-cache")

        // A new picture: a new tag, a new thumbnail; the old tag is stale.
        try await store.setPicture(
            id: coffee.id, from: .data(try TestImages.make(width: 50, height: 100, format: "png")))
        let replaced = await get("/coffee/\(coffee.id)/thumbnail", headers: ["if-none-match": tag])
        #expect(replaced.status == 200)
        #expect(replaced.header("ETag") != tag)
        #expect(try TestImages.decodedSize(body(replaced)).map { [$0.width, $0.height] } == [48, 96])
        #expect(
            await get("/coffee/\(coffee.id)/thumbnail", query: ["v": version.description]).header("Cache-Control")
                == "private, no-cache")
    }

    @Test func aThumbnailIsMadeOncePerPictureVersion() async throws {
        let coffee = try await coffee(with: try TestImages.make(width: 300, height: 300, format: "jpg"))
        let before = made
        let first = body(await get("/coffee/\(coffee.id)/thumbnail"))
        let second = body(await get("/coffee/\(coffee.id)/thumbnail"))
        #expect(made - before == 1)
        #expect(first == second && !first.isEmpty)
        // Editing the name changes the coffee's version, not the picture's.
        _ = try await store.update(id: coffee.id, with: CoffeeChanges(name: "Latte"))
        _ = await get("/coffee/\(coffee.id)/thumbnail")
        #expect(made - before == 1)
        try await store.setPicture(
            id: coffee.id, from: .data(try TestImages.make(width: 300, height: 300, format: "jpg")))
        let third = body(await get("/coffee/\(coffee.id)/thumbnail"))
        #expect(made - before == 2)
        #expect(third != first)
    }

    @Test(.tags(.concurrency)) func concurrentFirstRequestsMakeEachThumbnailOnce() async throws {
        var coffees: [Coffee] = []
        for size in [120, 160, 200] {
            coffees.append(try await coffee(with: try TestImages.make(width: size, height: size / 2, format: "png")))
        }
        let before = made
        let ids = coffees.map(\.id)
        let answers = await withTaskGroup(of: (Int64, Int, [UInt8]).self) { group in
            for _ in 0..<6 {
                for id in ids {
                    group.addTask {
                        let response = await get("/coffee/\(id)/thumbnail")
                        return (id, response.status, body(response))
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 18 && answers.allSatisfy { $0.1 == 200 })
        #expect(made - before == 3)
        for id in ids {
            #expect(Set(answers.filter { $0.0 == id }.map(\.2)).count == 1, "one thumbnail for coffee \(id)")
        }
    }

    /// The placeholder, and the log line saying why.
    func expectPlaceholder(_ picture: Data, because reason: String) async throws {
        let coffee = try await coffee(with: picture)
        let clock = ContinuousClock()
        let start = clock.now
        let response = await get("/coffee/\(coffee.id)/thumbnail")
        let elapsed = clock.now - start
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "image/svg+xml")
        #expect(body(response) == Array(CoffeeThumbnails.placeholder.data))
        #expect(response.header("ETag") != nil)
        #expect(
            lines.all.contains {
                $0.contains("coffee \(coffee.id)'s picture gets a placeholder") && $0.contains(reason)
            },
            "\(lines.all)")
        // Kept like a thumbnail: not decoded again.
        let before = made
        _ = await get("/coffee/\(coffee.id)/thumbnail")
        #expect(made == before)
        print("placeholder (\(reason)) in \(elapsed)")
    }

    @Test func aTruncatedPictureGetsThePlaceholder() async throws {
        let jpeg = try TestImages.make(width: 400, height: 300, format: "jpg")
        try await expectPlaceholder(jpeg.prefix(jpeg.count / 2), because: "cannot be decoded")
        let png = try TestImages.make(width: 400, height: 300, format: "png")
        try await expectPlaceholder(png.prefix(png.count / 2), because: "cannot be decoded")
    }

    @Test func garbageBytesGetThePlaceholder() async throws {
        // Signatures the store accepts, then noise.
        try await expectPlaceholder(WebPictures.make(WebPictures.png, count: 5_000), because: "cannot be decoded")
        try await expectPlaceholder(WebPictures.make(WebPictures.jpeg, count: 5_000), because: "cannot be decoded")
        try await expectPlaceholder(WebPictures.make(Array("GIF89a".utf8), count: 5_000), because: "cannot be decoded")
    }

    @Test func a30000By30000PictureIsRefusedFromItsHeader() async throws {
        let jpeg = try TestImages.make(width: 64, height: 64, format: "jpg")
        try await expectPlaceholder(
            try TestImages.claimingSize(jpeg: jpeg, width: 30_000, height: 30_000),
            because: "30000 x 30000 pixels is more than the limit of 50000000 pixels")
        let png = try TestImages.make(width: 64, height: 64, format: "png")
        try await expectPlaceholder(
            TestImages.claimingSize(png: png, width: 30_000, height: 30_000),
            because: "30000 x 30000 pixels is more than the limit")
    }

    @Test func aCoffeeWithoutAPictureHasNoThumbnail() async throws {
        let coffee = try await coffee(with: nil)
        #expect(await get("/coffee/\(coffee.id)/thumbnail").status == 404)
        #expect(await get("/coffee/999/thumbnail").status == 404)
        #expect(await get("/coffee/abc/thumbnail").status == 404)
        try await store.setPicture(
            id: coffee.id, from: .data(try TestImages.make(width: 10, height: 10, format: "png")))
        _ = try await store.removePicture(id: coffee.id)
        #expect(await get("/coffee/\(coffee.id)/thumbnail").status == 404)
    }

    @Test func withoutASessionItIsAnsweredAsThePictureIs() async throws {
        let coffee = try await coffee(with: try TestImages.make(width: 10, height: 10, format: "png"))
        let picture = await get("/coffee/\(coffee.id)/picture", signedIn: false)
        let thumbnail = await get("/coffee/\(coffee.id)/thumbnail", signedIn: false)
        #expect(picture.status != 200)
        #expect(thumbnail.status == picture.status)
        #expect(
            thumbnail.header("Location")?.replacingOccurrences(of: "thumbnail", with: "picture")
                == picture.header("Location"))
        #expect(made == 0)
    }
}

/// The thumbnailer itself.
@Suite struct ThumbnailerTests {
    @Test func formatsOtherThanTheFourAreNotDecoded() throws {
        let tiff = try TestImages.make(width: 50, height: 50, format: "tif")
        guard case .failure(let error) = Thumbnailer().make(from: tiff), case .unsupported = error.reason else {
            Issue.record("a TIFF must be refused")
            return
        }
        guard case .failure(let empty) = Thumbnailer().make(from: Data()), case .unsupported = empty.reason else {
            Issue.record("nothing must be refused")
            return
        }
    }

    @Test func theBoxAndThePixelLimitAreTheThumbnailers() throws {
        let png = try TestImages.make(width: 100, height: 50, format: "png")
        let small = try Thumbnailer(width: 20, height: 20).make(from: png).get()
        #expect(small.width == 20 && small.height == 10)
        #expect(try TestImages.decodedSize(small.data).map { [$0.width, $0.height] } == [20, 10])
        guard case .failure(let error) = Thumbnailer(maximumPixels: 4_999).make(from: png),
            case .tooManyPixels(100, 50, 4_999) = error.reason
        else {
            Issue.record("5,000 pixels must be refused over a limit of 4,999")
            return
        }
        #expect(try Thumbnailer(maximumPixels: 5_000).make(from: png).get().width == 96)
    }

    @Test func anInputThatThrowsIsTheInputsError() throws {
        struct Broken: Error {}
        final class Failing: ThumbnailInput {
            let data: Data
            init(_ data: Data) { self.data = data }
            var size: Int { data.count }
            func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
                guard offset < 100 else { throw Broken() }
                let count = min(buffer.count, 100 - offset)
                data.withUnsafeBytes {
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count]))
                }
                return count
            }
        }
        let png = try TestImages.make(width: 300, height: 300, format: "png")
        guard case .failure(let error) = Thumbnailer().make(from: Failing(png)), case .input(let cause) = error.reason
        else {
            Issue.record("a read error must be reported as the input's")
            return
        }
        #expect(cause is Broken)
    }
}

/// Lines a test's web app logged.
final class ThumbnailLog: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    func append(_ line: String) { lock.withLock { stored.append(line) } }
    var all: [String] { lock.withLock { stored } }
}
