import Dispatch
import Foundation
import RecordsApp
import RecordsWeb

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `records serve`: the apps' screens in a browser, over the same database
/// as the other commands.
let serveCommand = Command(
    name: "serve", summary: "Serve the apps as a web site (People, Contacts, Coffee, Users)",
    options: [
        Command.Option(
            name: "listen", valueName: "HOST:PORT",
            help: "Address and port to listen on (default 127.0.0.1:8080; port 0 picks a free one)"),
        Command.Option(name: "tls-cert", valueName: "FILE", help: "Serve HTTPS with this PEM certificate chain"),
        Command.Option(name: "tls-key", valueName: "FILE", help: "The PEM private key of --tls-cert"),
        Command.Option(
            name: "registration", valueName: "POLICY",
            help:
                "Who may register: first-user (the default: anyone until the first account exists), open (anyone), "
                + "or closed (nobody; add accounts with records users register)"),
    ],
    discussion: """
        Serves the People, Contacts, Coffee and Users apps as web pages, rendered on the
        server: every page works without JavaScript. The Users app's accounts are the way
        in: every page but log-in and registration needs a signed-in account. Since every
        account sees the same People, Contacts and Coffee records, registration is open by
        default only until the first account exists (--registration).

        The server listens on the loopback address unless told otherwise, so only this
        machine can reach it. Listening on another address without --tls-cert and --tls-key
        sends passwords and session cookies in the clear, and prints a warning.

        It prints its address once it listens, logs one line per request on standard error
        (never passwords, cookies or form contents), and on Ctrl-C or SIGTERM stops
        accepting connections, lets the requests in flight finish (up to 10 seconds), and
        closes the database.
        """,
    examples: [
        "records serve",
        "records serve --listen 0.0.0.0:8443 --tls-cert cert.pem --tls-key key.pem",
    ],
    run: { invocation in
        let arguments = invocation.arguments
        var options = ServerOptions()
        if let listen = arguments.value("listen") {
            (options.host, options.port) = try parseListenAddress(listen, path: invocation.path)
        }
        switch (arguments.value("tls-cert"), arguments.value("tls-key")) {
        case (let certificate?, let key?):
            do {
                options.tls = try TLSCredentials.load(certificate: certificate, key: key)
            } catch let error as ServerError {
                throw CommandFailure(message: error.message)
            }
        case (nil, nil):
            break
        default:
            throw UsageError(message: "--tls-cert and --tls-key go together", helpPath: invocation.path)
        }
        var registration = RegistrationPolicy.default
        if let text = arguments.value("registration") {
            guard let policy = RegistrationPolicy(argument: text) else {
                throw UsageError(
                    message: "--registration takes first-user, open or closed, not '\(text)'", helpPath: invocation.path
                )
            }
            registration = policy
        }
        let database = try invocation.database()
        var configuration = WebConfiguration()
        configuration.registration = registration
        configuration.secureCookies = options.tls != nil
        configuration.log = { line in Console.error("records serve: \(line)") }
        let app = WebApp(database: database, configuration: configuration)
        // Ctrl-C and SIGTERM stop the server rather than the process.
        let stop = SignalWaiter(signals: [SIGINT, SIGTERM])
        let server: HTTPServer
        do {
            server = try HTTPServer(application: app, options: options)
        } catch let error as ServerError {
            throw CommandFailure(message: error.message)
        }
        if options.tls == nil && !isLoopback(options.host) {
            Console.error(
                "records serve: warning: listening on \(options.host) without TLS: passwords and session "
                    + "cookies cross the network in the clear (use --tls-cert and --tls-key)")
        }
        try Console.out("Serving the Records apps at \(server.url) (Ctrl-C to stop)")
        let signal = await stop.wait()
        Console.error("records serve: \(signal == SIGINT ? "interrupted" : "terminated"), stopping")
        await server.stop()
        database.close()
    })

/// `HOST:PORT`, `[IPv6]:PORT`, or `:PORT` for the loopback address.
func parseListenAddress(_ text: String, path: [String]) throws -> (String, UInt16) {
    let usage = UsageError(
        message: "--listen takes HOST:PORT, such as 127.0.0.1:8080 or [::1]:8080, not '\(text)'", helpPath: path)
    guard let colon = text.lastIndex(of: ":") else { throw usage }
    var host = String(text[..<colon])
    guard let port = UInt16(text[text.index(after: colon)...]) else { throw usage }
    if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    if host.isEmpty || host == "localhost" { host = "127.0.0.1" }
    return (host, port)
}

private func isLoopback(_ host: String) -> Bool { host == "::1" || host.hasPrefix("127.") }

/// Waits for one of some signals, which then no longer end the process.
final class SignalWaiter: @unchecked Sendable {  // The sources are only kept alive, never touched after init.
    private let sources: [any DispatchSourceSignal]
    private let received = AsyncStream<Int32>.makeStream()

    init(signals: [Int32]) {
        let continuation = received.continuation
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
    }

    /// The first signal that arrives.
    func wait() async -> Int32 {
        for await number in received.stream { return number }
        return SIGTERM
    }
}
