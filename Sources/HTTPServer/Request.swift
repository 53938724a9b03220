import Foundation

/// One HTTP request, as the server hands it to a route: the method, path,
/// query, headers and cookies as libmicrohttpd parsed them, the form fields
/// of a POST, the uploaded file of an upload route, and what the
/// application's own steps learned about it (``context``).
public struct Request: Sendable {
    /// The request's values, shared by copies until one of them changes
    /// (copy on write): a request goes through many steps (middleware, the
    /// route, the body's reading), and each copy of some twenty values cost
    /// a retain and a release of each; one storage costs one.
    ///
    /// `@unchecked Sendable`: a storage is only changed through
    /// ``uniqueStorage()``, when no other request shares it. For the same
    /// reason its values need no run-time exclusivity checks: a change
    /// never overlaps another request's access.
    private final class Storage: @unchecked Sendable {
        @exclusivity(unchecked) var method: String
        @exclusivity(unchecked) var path: String
        @exclusivity(unchecked) var query: [String: String]
        @exclusivity(unchecked) var headers: [String: String]
        @exclusivity(unchecked) var cookies: [String: String]
        @exclusivity(unchecked) var parameters: [String: String] = [:]
        @exclusivity(unchecked) var form: Form = Form()
        @exclusivity(unchecked) var body: [UInt8] = []
        @exclusivity(unchecked) var upload: (any UploadSink)? = nil
        @exclusivity(unchecked) var uploadError: (any Error)? = nil
        @exclusivity(unchecked) var uploadWithheld: Bool = false
        @exclusivity(unchecked) var context: RequestContext = RequestContext()
        @exclusivity(unchecked) var route: Route? = nil
        @exclusivity(unchecked) var formProblem: FormProblem? = nil
        @exclusivity(unchecked) var matched: Router.Match? = nil
        @exclusivity(unchecked) var bodyGate: BodyGate? = nil
        @exclusivity(unchecked) var clientAddress: String
        @exclusivity(unchecked) var isSecure: Bool
        @exclusivity(unchecked) var receivedAt: Date

        init(
            method: String, path: String, query: [String: String], headers: [String: String], cookies: [String: String],
            clientAddress: String, isSecure: Bool, receivedAt: Date
        ) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.cookies = cookies
            self.clientAddress = clientAddress
            self.isSecure = isSecure
            self.receivedAt = receivedAt
        }

        /// A storage with the same values.
        func copy() -> Storage {
            let copy = Storage(
                method: method, path: path, query: query, headers: headers, cookies: cookies,
                clientAddress: clientAddress, isSecure: isSecure, receivedAt: receivedAt)
            copy.parameters = parameters
            copy.form = form
            copy.body = body
            copy.upload = upload
            copy.uploadError = uploadError
            copy.uploadWithheld = uploadWithheld
            copy.context = context
            copy.route = route
            copy.formProblem = formProblem
            copy.matched = matched
            copy.bodyGate = bodyGate
            return copy
        }
    }

    private var storage: Storage

    /// The storage, copied first when another request shares it.
    private mutating func uniqueStorage() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    /// The method, upper case (`GET`, `HEAD`, `POST`).
    public var method: String {
        get { storage.method }
        _modify { yield &uniqueStorage().method }
    }
    /// The path, without the query (percent-decoded by the server).
    public var path: String {
        get { storage.path }
        _modify { yield &uniqueStorage().path }
    }
    /// The query's parameters (first value of each name).
    public var query: [String: String] {
        get { storage.query }
        _modify { yield &uniqueStorage().query }
    }
    /// The headers, by lower-case name.
    public var headers: [String: String] {
        get { storage.headers }
        _modify { yield &uniqueStorage().headers }
    }
    /// The cookies, by name.
    public var cookies: [String: String] {
        get { storage.cookies }
        _modify { yield &uniqueStorage().cookies }
    }
    /// The values of the route pattern's `:name` segments.
    public var parameters: [String: String] {
        get { storage.parameters }
        _modify { yield &uniqueStorage().parameters }
    }
    /// A POST's fields (empty otherwise).
    public var form: Form {
        get { storage.form }
        _modify { yield &uniqueStorage().form }
    }
    /// The raw body of a route that takes it as bytes
    /// (``Route/Body/bytes(limit:)``), as the client sent it; empty for
    /// other routes. A test sets it on a request made in memory, as it
    /// sets ``form``.
    public var body: [UInt8] {
        get { storage.body }
        _modify { yield &uniqueStorage().body }
    }
    /// An upload route's file, or a streamed route's body
    /// (``Route/Body/stream(limit:sink:)``), spooled by the route's sink;
    /// nil when the form had no file or the file or body was empty.
    public var upload: (any UploadSink)? {
        get { storage.upload }
        _modify { yield &uniqueStorage().upload }
    }
    /// Why the upload was refused while it was received (too large, wrong
    /// type), if it was; the rest of the body was discarded.
    public var uploadError: (any Error)? {
        get { storage.uploadError }
        _modify { yield &uniqueStorage().uploadError }
    }
    /// Whether the body held a file that the application refused to
    /// receive before it started (the `acceptingFile` check of
    /// ``receivingBody(acceptingFile:)``): none of it was kept.
    public var uploadWithheld: Bool {
        get { storage.uploadWithheld }
        _modify { yield &uniqueStorage().uploadWithheld }
    }
    /// What the application's steps found out about the request (who is
    /// asking, for one), by type-keyed values.
    public var context: RequestContext {
        get { storage.context }
        _modify { yield &uniqueStorage().context }
    }
    /// The route the request matched, once it has (middleware sees it).
    public var route: Route? {
        get { storage.route }
        _modify { yield &uniqueStorage().route }
    }
    /// Why the server refused the form body (too large, malformed...), once
    /// the body is in; the route's handler then does not run.
    public var formProblem: FormProblem? {
        get { storage.formProblem }
        _modify { yield &uniqueStorage().formProblem }
    }
    /// The router's answer for the method and path, when the server found
    /// it already (to decide where the request starts): the application
    /// then does not look again.
    var matched: Router.Match? {
        get { storage.matched }
        _modify { yield &uniqueStorage().matched }
    }
    /// Where the body comes from while it has not been read; nil once it
    /// has, or for a request made in memory.
    var bodyGate: BodyGate? {
        get { storage.bodyGate }
        _modify { yield &uniqueStorage().bodyGate }
    }
    /// The client's IP address.
    public var clientAddress: String {
        get { storage.clientAddress }
        _modify { yield &uniqueStorage().clientAddress }
    }
    /// Whether the request came over TLS.
    public var isSecure: Bool {
        get { storage.isSecure }
        _modify { yield &uniqueStorage().isSecure }
    }
    /// The time the server received the request.
    public var receivedAt: Date {
        get { storage.receivedAt }
        _modify { yield &uniqueStorage().receivedAt }
    }

    /// Creates a request (the server does this; tests of a single handler
    /// may too).
    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
        cookies: [String: String] = [:], clientAddress: String = "127.0.0.1",
        isSecure: Bool = false, receivedAt: Date = Date()
    ) {
        storage = Storage(
            method: method, path: path, query: query, headers: headers, cookies: cookies,
            clientAddress: clientAddress, isSecure: isSecure, receivedAt: receivedAt)
    }

    /// The request with its body in: ``form``, ``body``, ``upload``,
    /// ``uploadError``, ``uploadWithheld`` and ``formProblem`` set. The
    /// server reads the body on the first call; later calls, and a request
    /// made in memory, return the request as it is.
    ///
    /// - Parameter acceptingFile: Whether an upload route may receive the
    ///   file that starts, from the request with the fields before it (a
    ///   streamed body's request has no fields); a file refused is
    ///   discarded and ``uploadWithheld`` set. Only the first call's
    ///   counts.
    /// - Throws: ``ClientDisconnected`` when the client went away first.
    public func receivingBody(acceptingFile: (@Sendable (Request) -> Bool)? = nil) async throws -> Request {
        guard let bodyGate else { return self }
        // No body is coming: no need to wait for the connection's thread.
        let received =
            bodyGate.bodiless ? BodyGate.Received() : try await bodyGate.receive(self, fileGuard: acceptingFile)
        var request = self
        request.bodyGate = nil
        request.form = received.form
        request.body = received.body
        request.upload = received.upload
        request.uploadError = received.uploadError
        request.uploadWithheld = received.withheld
        request.formProblem = received.problem
        return request
    }

    /// The path with its query, as the browser asked for it (for a `next`
    /// link back here after logging in).
    public var pathWithQuery: String {
        guard !query.isEmpty else { return path }
        return PathEncoding.path(
            path.split(separator: "/", omittingEmptySubsequences: true).map(String.init),
            query: query.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// A route parameter as a record ID.
    ///
    /// - Throws: ``HTTPError/notFound`` when it is missing or not a
    ///   positive integer: `/people/abc` is a page that does not exist.
    public func id(_ name: String = "id") throws -> Int64 {
        guard let text = parameters[name], let id = Int64(text), id > 0, String(id) == text else {
            throw HTTPError.notFound
        }
        return id
    }

    /// Whether the request's method is `HEAD` (the server sends no body).
    public var isHead: Bool { method == "HEAD" }

    /// The method and path for a log line. The path is percent-decoded, so
    /// it may hold any character: control characters (a line break would
    /// start a forged log line), spaces (which separate the line's fields),
    /// `%` itself and bidirectional overrides are percent-encoded again.
    public var logDescription: String { "\(Self.forLog(method)) \(Self.forLog(path))" }

    static func forLog(_ text: String) -> String {
        // Printable ASCII but the space and "%" is written as it is
        // (checked first, byte by byte: this runs for every request).
        if text.utf8.allSatisfy({ (0x21..<0x7F).contains($0) && $0 != UInt8(ascii: "%") }) { return text }
        func plain(_ scalar: Unicode.Scalar) -> Bool {
            scalar.properties.generalCategory != .control && scalar != " " && scalar != "%"
                && !(0x202A...0x202E).contains(scalar.value) && !(0x2066...0x2069).contains(scalar.value)
        }
        guard !text.unicodeScalars.allSatisfy(plain) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if plain(scalar) {
                result.unicodeScalars.append(scalar)
            } else {
                for byte in String(scalar).utf8 {
                    result += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
                }
            }
        }
        return result
    }
}

/// The values an application attaches to a request as it goes through its
/// steps, each under a key type that names the value's type: a typed
/// per-request context, which the server itself never reads.
///
/// ```swift
/// enum UserName: RequestContextKey { static let defaultValue: String? = nil }
/// request.context[UserName.self] = "ada"      // in a middleware
/// let name = request.context[UserName.self]   // in the handler
/// ```
public struct RequestContext: Sendable {
    /// Each value in a ``Box`` of its key's value type, under its key's
    /// identity: the key decides the box's type, so a value is read back
    /// with a class check, not a cast from an existential.
    @usableFromInline var values: [ObjectIdentifier: AnyObject & Sendable] = [:]

    /// An empty context.
    public init() {}

    /// A value stored in the context.
    @usableFromInline final class Box<Value: Sendable>: Sendable {
        @usableFromInline let value: Value
        @usableFromInline init(_ value: Value) { self.value = value }
    }

    /// The value stored under `key`, or the key's default.
    ///
    /// Inlinable, so that it is specialized where it is used: the steps of
    /// every request read and write it.
    @inlinable
    public subscript<Key: RequestContextKey>(_ key: Key.Type) -> Key.Value {
        get { (values[ObjectIdentifier(key)] as? Box<Key.Value>)?.value ?? Key.defaultValue }
        set { values[ObjectIdentifier(key)] = Box(newValue) }
    }
}

/// A key of ``RequestContext``: its type names the value's type and
/// default.
public protocol RequestContextKey {
    /// The type of the value.
    associatedtype Value: Sendable
    /// The value of a request that has none stored.
    static var defaultValue: Value { get }
}

/// Percent-encoding for paths built from parts.
public enum PathEncoding {
    /// A site-relative path from `segments`, each percent-encoded, and a
    /// query from the pairs whose value is not nil.
    public static func path(_ segments: [String], query: [(String, String?)] = []) -> String {
        var path = "/" + segments.map(encode).joined(separator: "/")
        let items = query.compactMap { key, value in value.map { encode(key) + "=" + encode($0) } }
        if !items.isEmpty { path += "?" + items.joined(separator: "&") }
        return path
    }

    /// `text` with every byte but the unreserved ones (letters, digits,
    /// `-`, `.`, `_`, `~`) percent-encoded.
    public static func encode(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            let unreserved =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
            if unreserved {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return encoded
    }
}
