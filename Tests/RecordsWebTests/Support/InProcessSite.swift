import Foundation
import RecordsApp
import RecordsWeb

/// The web app over a fresh in-memory database, answered in process with
/// ``HTTPApplication/respond(to:)``: no socket, for tests of a page's
/// answer rather than of the transport.
struct InProcessSite: Sendable {
    let app: WebApp
    private let lines = Lines()

    /// What the app logged.
    var log: [String] { lines.all }

    init(routes: @escaping @Sendable (WebContext) -> [Route] = { _ in [] }) throws {
        var configuration = WebConfiguration()
        let lines = self.lines
        configuration.log = { lines.append($0) }
        app = WebApp(database: try AppDatabase.inMemory(), configuration: configuration, extraRoutes: routes)
    }

    /// The answer to `method` on `path` (with its query).
    func answer(_ path: String, method: String = "GET") async -> Answer {
        let parts = path.split(separator: "?", maxSplits: 1)
        var query: [String: String] = [:]
        for pair in parts.dropFirst().first?.split(separator: "&") ?? [] {
            let item = pair.split(separator: "=", maxSplits: 1).map(String.init)
            query[item[0]] = item.count > 1 ? item[1] : ""
        }
        return Answer(await app.respond(to: Request(method: method, path: String(parts[0]), query: query)))
    }

    /// A response with its body as text.
    struct Answer {
        let response: Response
        init(_ response: Response) { self.response = response }
        var status: Int { response.status }
        func header(_ name: String) -> String? { response.header(name) }
        var body: String {
            guard case .bytes(let bytes) = response.body else { return "" }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    private final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [String] = []
        func append(_ line: String) { lock.withLock { stored.append(line) } }
        var all: [String] { lock.withLock { stored } }
    }
}
