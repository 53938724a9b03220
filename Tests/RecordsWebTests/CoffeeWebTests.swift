import Foundation
import RecordsApp
import TestSupport
import Testing

@testable import RecordsWeb

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// Bytes that start with a picture format's signature.
enum WebPictures {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]

    /// A large picture, quickly: ``make(_:count:)``'s first 1,000,003
    /// bytes (an odd length, so a byte out of place still shows), repeated.
    static func large(_ signature: [UInt8] = png, count: Int) -> Data {
        let block = make(signature, count: min(count, 1_000_003))
        var data = Data(capacity: count)
        while data.count < count { data.append(block.prefix(count - data.count)) }
        return data
    }

    /// `signature`, then a pattern in which a byte out of place shows.
    static func make(_ signature: [UInt8] = png, count: Int) -> Data {
        var data = Data(signature.prefix(count))
        data.append(PatternBytes.data(count: max(count - signature.count, 0), seed: 9))
        return data
    }
}

/// The upload files the process holds open (unlinked, so only
/// `/proc/self/fd` still shows them).
func openUploadFiles() -> [String] {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.compactMap { descriptor in
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
        else { return nil }
        return target.contains("records-upload-") ? target : nil
    }
}

/// Hostile text for every field the Coffee pages show.
let hostileNames = [
    "<script>alert(1)</script>", "\"><img src=x onerror=alert(1)>", "Caf\u{202E}é latte", "Mo\u{200B}cha",
]

/// The Coffee screens over HTTP: serialized, because the upload tests look
/// at the process's open upload files.
@Suite(.serialized)
struct CoffeeWebTests {
    let server: TestServer
    let client: WebClient
    var store: CoffeeStore { server.app.context.coffee }
    /// The same database, taking pictures larger than the server's limit.
    var roomyStore: CoffeeStore { CoffeeStore(database: server.database, pictureSizeLimit: 4 << 20) }

    init() throws {
        server = try TestServer(authenticator: FixedSessions.ada, configure: { $0.pictureSizeLimit = 256 * 1024 })
        client = server.client()
        client.setCookie(WebApp.sessionCookie, "ada-token")
    }

    /// The stored picture and type of a coffee, through the store.
    func storedPicture(_ id: Int64) async throws -> Data? {
        guard let picture = try? await store.openPicture(id: id) else { return nil }
        var data = Data()
        while data.count < picture.size { data.append(try await picture.read(at: data.count, count: 100_000)) }
        return data
    }

    func upload(_ id: Int64, name: String = "latte.png", type: String = "image/png", _ data: Data) async throws
        -> WebResponse
    {
        _ = try await client.get("/coffee/\(id)")
        return try await client.postMultipart(
            "/coffee/\(id)/picture", fields: [], file: ("picture", name, type, data))
    }

    // MARK: - The list

    @Test func theListShowsNamesPagedWithLinks() async throws {
        for index in 1...25 { try await store.add(CoffeeDraft(name: String(format: "Coffee %02d", index), price: 1)) }
        let first = try await client.get("/coffee")
        #expect(first.status == 200)
        #expect(first.body.matches(of: /<tr id="coffee-\d+">/).count == 20)
        #expect(first.body.contains("Coffee 01") && !first.body.contains("Coffee 21"))
        #expect(first.body.contains("<a href=\"/coffee?page=2\" rel=\"next\" id=\"page-next\">"))
        #expect(!first.body.contains("page-previous"))
        let second = try await client.get("/coffee?page=2")
        #expect(second.body.matches(of: /<tr id="coffee-\d+">/).count == 5)
        #expect(second.body.contains("Coffee 25") && !second.body.contains("Coffee 20<"))
        #expect(second.body.contains("<a href=\"/coffee\" rel=\"prev\" id=\"page-previous\">"))
        #expect(!second.body.contains("page-next"))
        #expect(try await client.get("/coffee?page=9").body.contains("past the end of the list"))
        // A page or an order that is not one is a bad request.
        #expect(try await client.get("/coffee?page=x").status == 400)
        #expect(try await client.get("/coffee?page=0").status == 400)
        #expect(try await client.get("/coffee?sort=colour").status == 400)
    }

    @Test func theListSortsByNameNewestOrPrice() async throws {
        try await store.add(CoffeeDraft(name: "Mocha", price: 5))
        try await store.add(CoffeeDraft(name: "Americano", price: 9))
        try await store.add(CoffeeDraft(name: "Ristretto", price: 2))
        func order(_ query: String) async throws -> [String] {
            try await client.get("/coffee" + query).body.matches(of: /class="title" href="[^"]*">([^<]*)</).map {
                String($0.1)
            }
        }
        #expect(try await order("") == ["Americano", "Mocha", "Ristretto"])
        #expect(try await order("?sort=newest") == ["Ristretto", "Americano", "Mocha"])
        #expect(try await order("?sort=price") == ["Ristretto", "Mocha", "Americano"])
        let page = try await client.get("/coffee?sort=price")
        #expect(page.body.contains("id=\"sort-price\" aria-current=\"true\""))
        #expect(
            page.body.contains(
                "aria-sort=\"ascending\"><a href=\"/coffee?sort=price&amp;order=desc\" id=\"sort-price\""))
        #expect(page.body.contains(">3 coffees · page 1 of 1</p>"))
    }

    @Test func theListIsATableOfThumbnailNameAndPrice() async throws {
        let plain = try await store.add(CoffeeDraft(name: "Mocha", price: Decimal(string: "3.5")!))
        let pictured = try await store.add(CoffeeDraft(name: ListsWeb.script, price: 2))
        let stored = try await upload(pictured.id, WebPictures.make(count: 1000))
        #expect(stored.status == 303)
        let hydrated = try #require(try await store.coffee(id: pictured.id))
        let version = try #require(hydrated.version)
        let body = try await client.get("/coffee").body
        #expect(body.contains("<table class=\"records stacked\" id=\"coffee-list\">"))
        #expect(
            body.contains(
                "<tr id=\"coffee-\(plain.id)\"><td data-label=\"Picture\" class=\"thumbnail\"></td>"
                    + "<td data-label=\"Name\"><a class=\"title\" href=\"/coffee/\(plain.id)\">Mocha</a></td>"
                    + "<td data-label=\"Price\" class=\"number\">3.50</td></tr>"))
        #expect(
            body.contains(
                "<td data-label=\"Picture\" class=\"thumbnail\"><img src=\"/coffee/\(pictured.id)/thumbnail?v=\(version)\" "
                    + "alt=\"\" width=\"48\" height=\"48\" loading=\"lazy\"></td>"))
        // A hostile name is escaped in its cell.
        #expect(!body.contains(ListsWeb.script))
        #expect(
            body.contains(">\(ListsWeb.escapedScript)</a></td><td data-label=\"Price\" class=\"number\">2.00</td>"))
        // Searching reads the same columns.
        let found = try await client.get("/coffee?q=moch").body
        #expect(found.contains("<td data-label=\"Price\" class=\"number\">3.50</td>"))
        #expect(found.contains(">1 match · page 1 of 1</p>"))
    }

    @Test func theSearchBoxUsesTheFullTextIndex() async throws {
        try await store.add(CoffeeDraft(name: "Caffè Latte", price: 3))
        try await store.add(CoffeeDraft(name: "Espresso", price: 2))
        let found = try await client.get("/coffee?q=caffe")
        #expect(found.body.contains("<mark>Caffè</mark> Latte") && !found.body.contains("Espresso"))
        #expect(found.body.contains("Best matches first."))
        #expect(found.body.contains("value=\"caffe\""))
        let none = try await client.get("/coffee?q=%3Cscript%3E")
        #expect(none.body.contains("No coffee matches “<bdi>&lt;script&gt;</bdi>”."))
    }

    @Test func everyCoffeePageNeedsASession() async throws {
        let visitor = server.client()
        for path in ["/coffee", "/coffee/new", "/coffee/1", "/coffee/1/picture"] {
            let response = try await visitor.get(path)
            #expect(response.status == 303, "\(path)")
            #expect(response.location?.hasPrefix("/login") == true)
        }
    }

    // MARK: - Add, edit, delete

    @Test func addingACoffeeRedirectsToItsDetail() async throws {
        let form = try await client.get("/coffee/new")
        #expect(form.body.contains("<label for=\"field-name\">Name</label>"))
        #expect(form.body.contains("<label for=\"field-price\">Price</label>"))
        let added = try await client.post("/coffee", [("name", " Flat white "), ("price", "3.40")])
        #expect(added.status == 303)
        let coffee = try #require(try await store.all().first)
        #expect(coffee.name == "Flat white")
        #expect(added.location == "/coffee/\(coffee.id)")
        let detail = try await client.get(try #require(added.location))
        #expect(
            detail.body.contains(
                "<p role=\"status\" class=\"flash\" id=\"flash\">Added “\u{2068}Flat white\u{2069}”.</p>")
        )
        #expect(detail.body.contains("<dd id=\"price\">3.40</dd>"))
    }

    @Test func anInvalidFormIsShownAgainWithErrorsAndInput() async throws {
        _ = try await client.get("/coffee/new")
        let response = try await client.post("/coffee", [("name", ""), ("price", "3,50")])
        #expect(response.status == 422)
        #expect(response.body.contains("id=\"field-name-error\">Name is required."))
        #expect(response.body.contains("id=\"field-price-error\">Price must be a number such as 3.50"))
        #expect(response.body.contains("value=\"3,50\""))
        #expect(try await store.all().isEmpty)
    }

    @Test func aFormTheServerRefusesIsShownAgain() async throws {
        _ = try await client.get("/coffee/new")
        let response = try await client.post(
            "/coffee", body: Data("csrf=ada-csrf-token&name=a&name=b&price=1".utf8),
            contentType: "application/x-www-form-urlencoded")
        #expect(response.status == 400)
        #expect(response.body.contains("more than once"))
        #expect(response.body.contains("id=\"coffee-form\""))
        #expect(try await store.all().isEmpty)
    }

    @Test func editingSavesAndRedirects() async throws {
        let coffee = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
        let form = try await client.get("/coffee/\(coffee.id)/edit")
        #expect(form.body.contains("value=\"Mocha\"") && form.body.contains("value=\"3.00\""))
        let saved = try await client.postEdit("/coffee/\(coffee.id)/edit", [("name", "Iced mocha"), ("price", "4.5")])
        #expect(saved.status == 303)
        #expect(saved.location == "/coffee/\(coffee.id)")
        let stored = try #require(try await store.coffee(id: coffee.id))
        #expect(stored.name == "Iced mocha" && stored.price == Decimal(string: "4.5"))

        let invalid = try await client.postEdit("/coffee/\(coffee.id)/edit", [("name", "Mocha"), ("price", "-1")])
        #expect(invalid.status == 422)
        #expect(invalid.body.contains("Price must be 0 or more."))
        #expect(try await store.coffee(id: coffee.id)?.name == "Iced mocha")
    }

    @Test func deletingAsksFirstThenDeletes() async throws {
        let coffee = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
        let confirm = try await client.get("/coffee/\(coffee.id)/delete")
        #expect(confirm.status == 200)
        #expect(confirm.body.contains("<h1>Delete <bdi>Mocha</bdi>?</h1>"))
        #expect(confirm.body.contains("action=\"/coffee/\(coffee.id)/delete\""))
        #expect(try await store.coffee(id: coffee.id) != nil)
        let deleted = try await client.post("/coffee/\(coffee.id)/delete", [])
        #expect(deleted.status == 303)
        #expect(deleted.location == "/coffee")
        #expect(try await store.coffee(id: coffee.id) == nil)
        #expect(try await client.get("/coffee").body.contains("Deleted “\u{2068}Mocha\u{2069}”."))
    }

    @Test func aMissingCoffeeIsThe404Page() async throws {
        for path in [
            "/coffee/9", "/coffee/9/edit", "/coffee/9/delete", "/coffee/9/picture", "/coffee/abc", "/coffee/0",
        ] {
            let response = try await client.get(path)
            #expect(response.status == 404, "\(path)")
            #expect(response.body.contains("Page not found"))
        }
        _ = try await client.get("/coffee")
        #expect(try await client.post("/coffee/9/edit", [("name", "x"), ("price", "1")]).status == 404)
        #expect(try await client.post("/coffee/9/delete", []).status == 404)
    }

    @Test func everyPostWithoutTheFormTokenIsRefusedAndChangesNothing() async throws {
        let coffee = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
        try await store.setPicture(id: coffee.id, from: .data(WebPictures.make(count: 100)))
        let posts: [(String, [(String, String)])] = [
            ("/coffee", [("name", "Forged"), ("price", "1")]),
            ("/coffee/\(coffee.id)/edit", [("name", "Forged"), ("price", "1")]),
            ("/coffee/\(coffee.id)/delete", []), ("/coffee/\(coffee.id)/picture/remove", []),
        ]
        for (path, fields) in posts {
            let response = try await client.post(path, fields + [("csrf", "wrong")])
            #expect(response.status == 403, "\(path)")
        }
        let upload = try await client.postMultipart(
            "/coffee/\(coffee.id)/picture", fields: [("csrf", "wrong")],
            file: ("picture", "a.png", "image/png", WebPictures.make(count: 50)))
        #expect(upload.status == 403)
        #expect(try await store.all().map(\.name) == ["Mocha"])
        #expect(try await storedPicture(coffee.id) == WebPictures.make(count: 100))
    }

    @Test func hostileTextIsEscapedOnEveryPage() async throws {
        for name in hostileNames {
            let coffee = try await store.add(CoffeeDraft(name: name, price: 1))
            try await store.setPicture(id: coffee.id, from: .data(WebPictures.make(count: 20)))
            let escaped = HTML.escape(name)
            for path in ["/coffee", "/coffee/\(coffee.id)", "/coffee/\(coffee.id)/edit", "/coffee/\(coffee.id)/delete"]
            {
                let body = try await client.get(path).body
                #expect(body.contains(escaped), "\(path)")
                #expect(!body.contains("<script>alert(1)") && !body.contains("<img src=x"), "\(path)")
            }
        }
        // In a search, a refused form, an upload's file name.
        let search = try await client.get(
            "/coffee?q=" + (hostileNames[1].addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
        #expect(!search.body.contains("<img src=x"))
        _ = try await client.get("/coffee/new")
        let refused = try await client.post("/coffee", [("name", hostileNames[0]), ("price", "x")])
        #expect(refused.status == 422)
        #expect(refused.body.contains("value=\"&lt;script&gt;alert(1)&lt;/script&gt;\""))
        let notPicture = try await upload(
            1, name: "<img src=x onerror=alert(1)>\u{202E}.png", Data("<script>alert(1)</script>".utf8))
        #expect(notPicture.status == 400)
        #expect(!notPicture.body.contains("<img src=x") && !notPicture.body.contains("<script>alert(1)"))
        #expect(notPicture.body.contains("&lt;img src=x onerror=alert(1)&gt;\u{202E}.png is not a PNG"))
    }

    // MARK: - The picture

    @Test func theDetailShowsThePriceAndThePictureAsAnImage() async throws {
        let coffee = try await store.add(CoffeeDraft(name: "Mocha", price: Decimal(string: "3.2")!))
        let without = try await client.get("/coffee/\(coffee.id)")
        #expect(without.body.contains("<dd id=\"price\">3.20</dd>"))
        #expect(without.body.contains("<dd id=\"picture-summary\">none</dd>"))
        #expect(!without.body.contains("<img"))
        #expect(without.body.contains("enctype=\"multipart/form-data\""))
        #expect(without.body.contains("<label for=\"field-picture\">Picture</label>"))
        try await store.setPicture(id: coffee.id, from: .data(WebPictures.make(count: 2000)))
        let with = try await client.get("/coffee/\(coffee.id)")
        #expect(with.body.contains("<img class=\"picture\" id=\"picture\" src=\"/coffee/\(coffee.id)/picture\""))
        #expect(with.body.contains("PNG, 2.0 KiB (2,000 bytes)"))
        #expect(with.body.contains("id=\"remove-picture\""))
    }

    @Test func thePictureIsServedByteForByteWithItsHeaders() async throws {
        let coffee = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
        let bytes = WebPictures.make(WebPictures.jpeg, count: 1_000_003)
        try await roomyStore.setPicture(id: coffee.id, from: .data(bytes))
        let tag = try #require(try await store.openPicture(id: coffee.id).entityTag)
        let response = try await client.get("/coffee/\(coffee.id)/picture")
        #expect(response.status == 200)
        #expect(response.data == bytes)
        #expect(response.header("content-type") == "image/jpeg")
        #expect(response.header("content-length") == "1000003")
        #expect(response.header("etag") == tag)
        #expect(response.header("cache-control") == "private, no-cache")
        #expect(response.header("x-content-type-options") == "nosniff")

        let head = try await client.head("/coffee/\(coffee.id)/picture")
        #expect(head.status == 200)
        #expect(head.data.isEmpty)
        #expect(head.header("content-length") == "1000003")
        #expect(head.header("etag") == tag)
    }

    @Test func aMatchingETagIsA304AndAReplacedPictureIsNot() async throws {
        let coffee = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
        try await store.setPicture(id: coffee.id, from: .data(WebPictures.make(count: 5000)))
        let first = try await client.get("/coffee/\(coffee.id)/picture")
        let tag = try #require(first.header("etag"))
        for header in [tag, "W/\(tag)", "\"other\", \(tag)", "*"] {
            let cached = try await client.get("/coffee/\(coffee.id)/picture", headers: ["If-None-Match": header])
            #expect(cached.status == 304, "\(header)")
            #expect(cached.data.isEmpty)
            #expect(cached.header("etag") == tag)
        }
        let other = try await client.get("/coffee/\(coffee.id)/picture", headers: ["If-None-Match": "\"picture-0\""])
        #expect(other.status == 200)
        // The same bytes stored again are a new version.
        try await store.setPicture(id: coffee.id, from: .data(WebPictures.make(count: 5000)))
        let replaced = try await client.get("/coffee/\(coffee.id)/picture", headers: ["If-None-Match": tag])
        #expect(replaced.status == 200)
        #expect(replaced.header("etag") != tag)
        #expect(replaced.data == WebPictures.make(count: 5000))
    }

    @Test func uploadingStoresThePictureByteForByteAndReplacingChangesIt() async throws {
        let coffee = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
        let bytes = WebPictures.make(count: 200 * 1024)
        let uploaded = try await upload(coffee.id, bytes)
        #expect(uploaded.status == 303)
        #expect(uploaded.location == "/coffee/\(coffee.id)")
        #expect(try await storedPicture(coffee.id) == bytes)
        #expect(try await client.get("/coffee/\(coffee.id)/picture").data == bytes)
        let tag = try await store.openPicture(id: coffee.id).entityTag

        let replacement = WebPictures.make(WebPictures.jpeg, count: 70_000)
        #expect(try await upload(coffee.id, name: "mocha.jpg", type: "image/jpeg", replacement).status == 303)
        #expect(try await storedPicture(coffee.id) == replacement)
        #expect(try await store.openPicture(id: coffee.id).entityTag != tag)
        #expect(try await store.coffee(id: coffee.id)?.picture == CoffeePicture(size: 70_000, format: .jpeg))
        #expect(openUploadFiles().isEmpty)
    }

    @Test func anUploadOverTheLimitIsA413WithTheCommandsMessageAndNothingStored() async throws {
        let coffee = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
        try await store.setPicture(id: coffee.id, from: .data(WebPictures.make(count: 100)))
        // Within the slack the server allows for the form's fields: the
        // upload sees the bytes and stops at the limit.
        let over = try await upload(coffee.id, WebPictures.make(count: 256 * 1024 + 1))
        #expect(over.status == 413)
        #expect(
            over.body.contains(
                "id=\"field-picture-error\">latte.png holds more than the picture limit of 256.0 KiB (262,144 bytes); "
                    + "nothing was stored</p>"))
        // Announced far past it: refused before the body is read.
        let far = try await upload(coffee.id, WebPictures.make(count: 1 << 20))
        #expect(far.status == 413)
        #expect(far.body.contains("the picture holds more than the picture limit of 256.0 KiB"))
        #expect(try await storedPicture(coffee.id) == WebPictures.make(count: 100))
        #expect(openUploadFiles().isEmpty)
        // The limit itself is accepted.
        #expect(try await upload(coffee.id, WebPictures.make(count: 256 * 1024)).status == 303)
    }

    @Test func anUploadThatIsNotAPictureIsA400WithTheCommandsMessage() async throws {
        let coffee = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
        let response = try await upload(
            coffee.id, name: "notes.txt", type: "image/png", Data("hello, this is text".utf8))
        #expect(response.status == 400)
        #expect(
            response.body.contains(
                "notes.txt is not a PNG, JPEG, GIF or WebP picture (it starts with 68 65 6C 6C 6F 2C 20 74); "
                    + "nothing was stored"))
        #expect(response.body.contains("aria-invalid=\"true\""))
        let short = try await upload(coffee.id, name: "tiny.png", Data([0x89, 0x50]))
        #expect(short.status == 400)
        let none = try await client.postMultipart("/coffee/\(coffee.id)/picture", fields: [], file: nil)
        #expect(none.status == 400)
        #expect(none.body.contains("Choose a picture to upload."))
        #expect(try await store.coffee(id: coffee.id)?.picture == nil)
        #expect(openUploadFiles().isEmpty)
    }

    @Test func removingThePictureAsksFirstAndAStaleAnswerRemovesNothing() async throws {
        let coffee = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
        try await store.setPicture(id: coffee.id, from: .data(WebPictures.make(count: 100)))
        let detail = try await client.get("/coffee/\(coffee.id)")
        #expect(detail.body.contains("id=\"remove-picture\" href=\"/coffee/\(coffee.id)/picture/remove\""))
        #expect(!detail.body.contains("action=\"/coffee/\(coffee.id)/picture/remove\""))
        let question = try await client.get("/coffee/\(coffee.id)/picture/remove")
        #expect(question.status == 200)
        #expect(question.body.contains("<h1>Remove the picture of <bdi>Mocha</bdi>?</h1>"))
        #expect(question.body.contains("action=\"/coffee/\(coffee.id)/picture/remove\""))
        let version = try #require(
            question.body.firstMatch(of: /name="version" value="([0-9a-f]{16})"/).map { String($0.1) })
        #expect(try await store.coffee(id: coffee.id)?.version?.description == version)

        // Replaced in another tab meanwhile: the stale answer removes nothing.
        let replacement = WebPictures.make(count: 200)
        try await store.setPicture(id: coffee.id, from: .data(replacement))
        let stale = try await client.post("/coffee/\(coffee.id)/picture/remove", [("version", version)])
        #expect(stale.status == 409)
        #expect(stale.body.contains("id=\"conflict\""))
        #expect(try await storedPicture(coffee.id) == replacement)
        let current = try #require(
            stale.body.firstMatch(of: /name="version" value="([0-9a-f]{16})"/).map { String($0.1) })
        #expect(current != version)
        let removed = try await client.post("/coffee/\(coffee.id)/picture/remove", [("version", current)])
        #expect(removed.status == 303)
        #expect(try await storedPicture(coffee.id) == nil)
        // Nothing left to confirm.
        let again = try await client.get("/coffee/\(coffee.id)/picture/remove")
        #expect(again.status == 303 && again.location == "/coffee/\(coffee.id)")
    }

    @Test func aStalePictureUploadIsNotSaved() async throws {
        let coffee = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
        let detail = try await client.get("/coffee/\(coffee.id)")
        let version = try #require(
            detail.body.firstMatch(of: /name="version" value="([0-9a-f]{16})"/).map { String($0.1) })
        // Renamed in another tab after the page was opened.
        _ = try await store.update(id: coffee.id, with: CoffeeChanges(name: "Latte"))
        let stale = try await client.postMultipart(
            "/coffee/\(coffee.id)/picture", fields: [("version", version)],
            file: ("picture", "a.png", "image/png", WebPictures.make(count: 100)))
        #expect(stale.status == 409)
        #expect(stale.body.contains("Someone else changed this coffee after you opened this page"))
        #expect(stale.body.contains("<h1 id=\"coffee-name\">Latte</h1>"))
        #expect(try await storedPicture(coffee.id) == nil)
        let current = try #require(
            stale.body.firstMatch(of: /name="version" value="([0-9a-f]{16})"/).map { String($0.1) })
        let saved = try await client.postMultipart(
            "/coffee/\(coffee.id)/picture", fields: [("version", current)],
            file: ("picture", "a.png", "image/png", WebPictures.make(count: 100)))
        #expect(saved.status == 303)
        #expect(try await storedPicture(coffee.id) == WebPictures.make(count: 100))
    }

    @Test func removingThePictureRedirectsAndItIsGone() async throws {
        let coffee = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
        try await store.setPicture(id: coffee.id, from: .data(WebPictures.make(count: 100)))
        _ = try await client.get("/coffee/\(coffee.id)")
        let removed = try await client.post("/coffee/\(coffee.id)/picture/remove", [])
        #expect(removed.status == 303)
        #expect(removed.location == "/coffee/\(coffee.id)")
        #expect(try await client.get("/coffee/\(coffee.id)").body.contains("Removed the picture."))
        #expect(try await client.get("/coffee/\(coffee.id)/picture").status == 404)
        // Again: nothing to remove, said so.
        let again = try await client.post("/coffee/\(coffee.id)/picture/remove", [])
        #expect(again.status == 303)
    }

    @Test func aClientDisconnectingMidUploadStoresNothing() async throws {
        let coffee = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
        try await store.setPicture(id: coffee.id, from: .data(WebPictures.make(count: 100)))
        let boundary = "records-test-boundary"
        var body = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\nada-csrf-token\r\n".utf8)
        body.append(
            Data(
                ("--\(boundary)\r\nContent-Disposition: form-data; name=\"picture\"; filename=\"a.png\"\r\n"
                    + "Content-Type: image/png\r\n\r\n").utf8))
        body.append(WebPictures.make(count: 100_000))
        let head =
            "POST /coffee/\(coffee.id)/picture HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: records_session=ada-token\r\n"
            + "Content-Type: multipart/form-data; boundary=\(boundary)\r\nContent-Length: \(body.count + 200_000)\r\n\r\n"
        let socket = try RawSocket(port: server.server.port)
        try socket.send(Array(head.utf8) + Array(body))
        // The server spools what came...
        #expect(await eventually { !openUploadFiles().isEmpty }, "the condition never held")
        // ...and lets it go when the client leaves.
        socket.close()
        #expect(await eventually { openUploadFiles().isEmpty }, "the condition never held")
        #expect(try await storedPicture(coffee.id) == WebPictures.make(count: 100))
    }

    @Test func aPictureReplacedDuringADownloadEndsItShortNeverMixed() async throws {
        let coffee = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
        let size = 16 << 20
        let roomy = CoffeeStore(database: server.database, pictureSizeLimit: size)
        let original = WebPictures.large(count: size)
        try await roomy.setPicture(id: coffee.id, from: .data(original))
        // A small receive buffer: the server can run ahead of the reader by
        // its own send buffer (4 MiB at most here) and one chunk, not more.
        let socket = try RawSocket(port: server.server.port, receiveBuffer: 16 * 1024)
        try socket.send(
            "GET /coffee/\(coffee.id)/picture HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Cookie: records_session=ada-token\r\nConnection: close\r\n\r\n")
        try socket.read(atLeast: 100_000)
        try await roomy.setPicture(id: coffee.id, from: .data(WebPictures.large(WebPictures.jpeg, count: size)))
        #expect(try socket.readToEnd(), "the server ends the download")
        let received = Data(socket.bytes)
        socket.close()
        let separator = try #require(received.firstRange(of: Data("\r\n\r\n".utf8)))
        let head = String(decoding: received[..<separator.lowerBound], as: UTF8.self)
        let body = received[separator.upperBound...]
        #expect(head.hasPrefix("HTTP/1.1 200"))
        #expect(head.contains("Content-Length: \(size)"))
        #expect(body.count < size, "the download must stop short")
        #expect(body.elementsEqual(original.prefix(body.count)), "every byte received is the first picture's")
    }
}
