import Foundation
import RecordsApp
import RecordsWeb

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The web app served on a free loopback port for a test, over a fresh
/// database: in memory, or a file in a temporary directory (for tests that
/// restart the server on the same data or run the `records` command
/// beside it).
final class TestServer: Sendable {
    let database: AppDatabase
    let app: WebApp
    let server: HTTPServer
    /// The temporary directory holding the database file, if any.
    let directory: URL?
    private let logLines = LogLines()

    /// `http://127.0.0.1:PORT`
    var baseURL: URL { URL(string: "http://127.0.0.1:\(server.port)")! }

    /// What the server logged.
    var log: [String] { logLines.lines }

    enum Storage { case memory, file }

    /// Starts a server.
    ///
    /// - Parameters:
    ///   - storage: Where the database lives.
    ///   - databaseURL: An existing database file to serve (a restart).
    ///   - authenticator: How sessions are found.
    ///   - configure: Changes to the web configuration.
    ///   - options: Changes to the server options.
    ///   - routes: Extra routes, for tests of the server itself.
    init(
        storage: Storage = .memory, databaseURL: URL? = nil, authenticator: (any SessionAuthenticator)? = nil,
        configure: (inout WebConfiguration) -> Void = { _ in }, options: (inout ServerOptions) -> Void = { _ in },
        routes: @escaping @Sendable (WebContext) -> [Route] = { _ in [] }
    ) throws {
        var directory: URL?
        if let databaseURL {
            database = try AppDatabase(url: databaseURL, start: .empty)
        } else if storage == .file {
            let made = FileManager.default.temporaryDirectory.appendingPathComponent("records-web-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
            directory = made
            database = try AppDatabase(url: made.appendingPathComponent("records.sqlite"), start: .empty)
        } else {
            database = try AppDatabase.inMemory()
        }
        self.directory = directory
        var configuration = WebConfiguration()
        let lines = logLines
        configuration.log = { lines.append($0) }
        configure(&configuration)
        app = WebApp(
            database: database, configuration: configuration, authenticator: authenticator, extraRoutes: routes)
        var serverOptions = ServerOptions()
        serverOptions.port = 0
        serverOptions.shutdownGrace = .seconds(5)
        options(&serverOptions)
        server = try HTTPServer(application: app, options: serverOptions)
    }

    /// The database file, when the server uses one.
    var databaseURL: URL? { directory?.appendingPathComponent("records.sqlite") }

    /// Stops the server and closes the database; removes the temporary
    /// directory unless `keepFiles`.
    ///
    /// It returns at once and stops on a thread of its own: stopping waits
    /// for requests in flight, which need Swift's concurrency threads to
    /// finish, and a test calling this from `defer` holds one of them (with
    /// two cores there are two, so two tests stopping side by side would
    /// deadlock). Use ``stopAndWait(keepFiles:)`` to know it has stopped.
    func stop(keepFiles: Bool = false) {
        let thread = Thread { self.stopNow(keepFiles: keepFiles) }
        thread.name = "test-server-stop"
        thread.start()
    }

    /// Stops the server and closes the database, waiting without holding
    /// a concurrency thread.
    func stopAndWait(keepFiles: Bool = false) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                self.stopNow(keepFiles: keepFiles)
                done.resume()
            }
            thread.name = "test-server-stop"
            thread.start()
        }
    }

    private func stopNow(keepFiles: Bool) {
        server.stop()
        database.close()
        if !keepFiles, let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// A client with its own cookies.
    func client() -> WebClient { WebClient(baseURL: baseURL) }
}

private final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    func append(_ line: String) { lock.withLock { stored.append(line) } }
    var lines: [String] { lock.withLock { stored } }
}
