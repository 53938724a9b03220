import Foundation

/// The fields of a submitted form, as libmicrohttpd's post processor
/// decoded them (URL-encoded or multipart).
///
/// Each name appears at most once: the server refuses a form that repeats
/// a field, sends bytes that are not UTF-8, is malformed, or is larger than
/// the route allows, before the route's handler runs (see
/// ``Route/invalidForm``).
public struct Form: Sendable, Equatable {
    /// The fields, by name.
    public private(set) var fields: [String: String]

    /// A form with these fields.
    public init(_ fields: [String: String] = [:]) { self.fields = fields }

    /// A field's value, or nil when the form did not send it.
    public subscript(_ name: String) -> String? { fields[name] }

    /// A field's value, or the empty string when the form did not send it
    /// (a browser leaves out unchecked boxes and disabled fields).
    public func text(_ name: String) -> String { fields[name] ?? "" }

    /// Whether the form sent this field.
    public func has(_ name: String) -> Bool { fields[name] != nil }
}

/// Why the server refused a form body before the route's handler ran; for
/// a raw body (``Route/Body/bytes(limit:)``,
/// ``Route/Body/stream(limit:sink:)``), only ever ``Kind/tooLarge``.
public struct FormProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of refusal.
    public enum Kind: Sendable, Equatable {
        /// The body is larger than the route accepts (413).
        case tooLarge
        /// A field appears more than once (400).
        case duplicateField(String)
        /// A field's bytes are not UTF-8 (400).
        case notUTF8(String)
        /// The body could not be decoded, or has an unexpected content type
        /// (400).
        case malformed
    }

    /// The kind of refusal.
    public var kind: Kind

    /// Creates a problem.
    public init(_ kind: Kind) { self.kind = kind }

    /// The status the answer carries: 413 for a body too large, else 400.
    public var status: Int { kind == .tooLarge ? 413 : 400 }

    /// A sentence for the page, naming no internals.
    public var description: String {
        switch kind {
        case .tooLarge: "The form was too large to accept. Shorten what you entered and try again."
        case .duplicateField(let name):
            "The form sent the field “\(name)” more than once. Reload the page and try again."
        case .notUTF8(let name): "The field “\(name)” was not valid text (UTF-8). Check what you entered and try again."
        case .malformed: "The form could not be read. Reload the page and try again."
        }
    }
}

/// Where an upload route puts a file while it arrives: the server hands it
/// the file's bytes chunk by chunk, on the connection's thread, and never
/// holds the whole file.
///
/// A sink checks what it receives as it goes (its size limit, the file's
/// type from its first bytes) and throws to refuse it; the server then
/// discards the rest of the body and gives the route the error in
/// ``Request/uploadError``. When the client disconnects or the request
/// fails, the server calls ``cancel()``.
public protocol UploadSink: AnyObject, Sendable {
    /// Takes the next chunk of the file.
    func write(_ chunk: UnsafeRawBufferPointer) throws
    /// The file is complete.
    func finish() throws
    /// The upload will not be used: release what it holds (its temporary
    /// file). Called at most once, also after ``finish()``.
    func cancel()
}

/// What a route's upload sink is made from: the request's headers and
/// fields received before the file (which the application accepted), and
/// the file's name and declared type. For a streamed body
/// (``Route/Body/stream(limit:sink:)``) the name is empty and the type is
/// the request's `Content-Type`.
public struct UploadStart: Sendable {
    /// The request so far (no upload yet).
    public var request: Request
    /// The file name the browser sent.
    public var fileName: String
    /// The content type the browser declared (not trusted).
    public var contentType: String?
}
