import Foundation
import RecordsApp
import TestSupport
import Testing

@testable import RecordsWeb

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The site's upload routes: a file before the CSRF field is never
/// spooled. (The server's own streaming tests are HTTPServerTests'
/// StreamingTests; this suite's sinks serve ResilienceTests too.)
@Suite(.tags(.concurrency)) struct ServerStreamingTests {
    typealias RecordingSink = TestSupport.RecordingSink
    typealias Sinks = RecordingSinks

    static func uploadRoutes(_ sinks: Sinks, limit: Int) -> @Sendable (WebContext) -> [Route] {
        { _ in
            [
                Route.get("/upload", access: .anyone) { request in
                    Layout.page(request, title: "Upload", content: "<form>\(Layout.csrfField(request))</form>")
                },
                Route(
                    "POST", "/upload", access: .anyone,
                    body: .upload(field: "file", limit: limit) { _ in sinks.make(limit: limit) }
                ) { request in
                    if request.uploadError != nil {
                        return Layout.page(request, title: "Upload", status: 413, content: "<p>too large</p>")
                    }
                    guard let sink = request.upload as? RecordingSink else {
                        return Layout.page(request, title: "Upload", status: 400, content: "<p>no file</p>")
                    }
                    return Layout.page(
                        request, title: "Upload",
                        content: "<p id=\"size\">\(sink.bytes.count)</p><p id=\"note\">\(request.form.text("note"))</p>"
                    )
                },
            ]
        }
    }

    static func payload(_ count: Int) -> Data {
        PatternBytes.data(count: count, seed: 7)
    }

    @Test func aFileBeforeTheCSRFFieldIsNeverSpooled() async throws {
        let sinks = Sinks()
        let server = try TestServer(routes: Self.uploadRoutes(sinks, limit: 1 << 20))
        defer { server.stop() }
        let client = server.client()
        _ = try await client.get("/upload")
        let forged = try await client.postMultipart(
            "/upload", fields: [], file: ("file", "a.bin", "application/octet-stream", Self.payload(1000)),
            addCSRF: false)
        #expect(forged.status == 403)
        #expect(sinks.all.isEmpty)
    }

}
