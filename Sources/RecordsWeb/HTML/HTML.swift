import Foundation
import HTTPServer

/// A fragment of HTML that is safe to send: text reaches it only escaped.
///
/// Like the library's `SQL`, where a string literal is SQL and an
/// interpolated value is bound, a string literal here is markup and an
/// interpolated value is text:
///
/// ```swift
/// let name = "<script>alert(1)</script>"
/// let item: HTML = "<li class=\"name\">\(name)</li>"
/// // <li class="name">&lt;script&gt;alert(1)&lt;/script&gt;</li>
/// ```
///
/// Interpolating another `HTML` value (or a sequence of them) inserts it as
/// it is, so fragments compose. Markup that did not come from a literal
/// needs the explicit `\(raw:)`, which is the one place to audit.
///
/// Escaping covers `&`, `<`, `>`, `"` and `'`, so an interpolation is safe
/// both in element content and inside a quoted attribute value. It does not
/// make a URL safe to follow: build links with ``HTML/path(_:query:)``.
public struct HTML: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// The markup.
    public private(set) var markup: String

    /// Markup taken as it is: the caller vouches that it holds no
    /// untrusted text.
    public init(unsafeMarkup markup: String) { self.markup = markup }

    /// An empty fragment.
    public init() { markup = "" }

    /// A literal is markup.
    public init(stringLiteral value: String) { markup = value }

    /// Builds the fragment from its literal parts and escaped values.
    public init(stringInterpolation: StringInterpolation) { markup = stringInterpolation.markup }

    /// Text as an HTML fragment: every special character escaped.
    public init(text: some StringProtocol) { markup = HTML.escape(text) }

    /// Fragments one after another.
    public init(joining fragments: some Sequence<HTML>, separator: HTML = HTML()) {
        markup = fragments.map(\.markup).joined(separator: separator.markup)
    }

    public var description: String { markup }

    /// Whether the fragment is empty.
    public var isEmpty: Bool { markup.isEmpty }

    /// Appends another fragment.
    public mutating func append(_ other: HTML) { markup += other.markup }

    /// Two fragments one after the other.
    public static func + (lhs: HTML, rhs: HTML) -> HTML { HTML(unsafeMarkup: lhs.markup + rhs.markup) }

    /// The UTF-8 bytes to send.
    public var bytes: [UInt8] { Array(markup.utf8) }

    /// `text` with `&`, `<`, `>`, `"` and `'` replaced by character
    /// references.
    public static func escape(_ text: some StringProtocol) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// A site-relative URL: each path segment and query value
    /// percent-encoded, so a value can neither leave its segment nor start
    /// a scheme (`javascript:`). Interpolate the result into an attribute.
    ///
    /// ```swift
    /// HTML.path(["people", "\(id)", "edit"], query: [("next", next)])  // "/people/7/edit?next=%2F"
    /// ```
    ///
    /// A query value that is nil is left out.
    public static func path(_ segments: [String], query: [(String, String?)] = []) -> String {
        PathEncoding.path(segments, query: query)
    }

    /// The interpolation of ``HTML``: literal segments are markup, values
    /// are escaped unless they already are ``HTML``.
    public struct StringInterpolation: StringInterpolationProtocol {
        var markup = ""

        public init(literalCapacity: Int, interpolationCount: Int) {
            markup.reserveCapacity(literalCapacity + interpolationCount * 16)
        }

        /// A literal segment: markup.
        public mutating func appendLiteral(_ literal: String) { markup += literal }

        /// Text: escaped.
        public mutating func appendInterpolation(_ text: some StringProtocol) { markup += HTML.escape(text) }

        /// Optional text: escaped, nothing for nil.
        public mutating func appendInterpolation(_ text: String?) {
            if let text { markup += HTML.escape(text) }
        }

        /// A number, in its plain decimal form.
        public mutating func appendInterpolation(_ number: some BinaryInteger) { markup += String(number) }

        /// A fragment: inserted as it is.
        public mutating func appendInterpolation(_ fragment: HTML) { markup += fragment.markup }

        /// An optional fragment: nothing for nil.
        public mutating func appendInterpolation(_ fragment: HTML?) {
            if let fragment { markup += fragment.markup }
        }

        /// Fragments one after another (a list's rows).
        public mutating func appendInterpolation(_ fragments: some Sequence<HTML>) {
            for fragment in fragments { markup += fragment.markup }
        }

        /// Markup inserted unchecked. Never pass text that came from a user
        /// or the database.
        public mutating func appendInterpolation(raw markup: String) { self.markup += markup }
    }
}

extension Response {
    /// An HTML page.
    public static func html(_ page: HTML, status: Int = 200) -> Response {
        Response(
            status: status, headers: [("Content-Type", "text/html; charset=utf-8")], body: .bytes(page.bytes))
    }
}
