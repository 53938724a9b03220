import Foundation
import PasswordHashing

/// The site's static files: one small stylesheet and the live pages'
/// script (package resources, `Resources/style.css` and
/// `Resources/live.js`), and the icon, served from memory with a strong
/// ETag and a long cache lifetime. The stylesheet's and the script's paths
/// carry a hash of their content, so a changed file gets a new path and no
/// browser keeps an old copy.
public enum StaticFiles {
    /// The stylesheet's path, named for its content (`/static/style-<hash>.css`).
    public static let stylesheetPath = hashedPath("style", "css", Stylesheet.text)
    /// The live pages' script's path, named for its content (see ``Layout``).
    public static let liveScriptPath = hashedPath("live", "js", LiveScript.text)

    /// The text of a resource, which the build embeds in the code
    /// (`.embedInCode`): no bundle to find at run time, so an installed
    /// `records` binary cannot miss it.
    static func resource(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// `/static/name-<hash>.type`, the hash the first 16 hexadecimal digits
    /// of the SHA-256 of `text`.
    static func hashedPath(_ name: String, _ type: String, _ text: String) -> String {
        "/static/\(name)-\(contentHash(Array(text.utf8))).\(type)"
    }

    /// The first 16 hexadecimal digits of the SHA-256 of `bytes`.
    static func contentHash(_ bytes: [UInt8]) -> String {
        let digest = (try? SHA256.digest(bytes)) ?? []
        return digest.prefix(8).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// The script tags of a page with this content: the live pages' script
    /// when the content declares a live region (an attribute
    /// `data-live-topics="…"`, which escaped text cannot spell, as its
    /// quote would be `&quot;`), else none: every page works without
    /// JavaScript.
    ///
    /// A page with a form's error summary (``Field/errorSummary(_:)``,
    /// `id="form-error"`) gets it too: the script moves the focus there.
    static func scriptTags(for content: HTML) -> HTML {
        // Live regions, open edit forms (told of a change to their record),
        // and the error summary to focus.
        guard
            content.markup.contains(" data-live-topics=\"") || content.markup.contains(" data-live-form=\"")
                || content.markup.contains(" id=\"form-error\"")
        else {
            return ""
        }
        return "<script src=\"\(liveScriptPath)\" defer></script>"
    }

    /// The files, by path: content type, bytes and entity tag (their
    /// content's hash).
    static let files: [String: (type: String, bytes: [UInt8], etag: String)] = [
        stylesheetPath: ("text/css; charset=utf-8", Array(Stylesheet.text.utf8)),
        "/static/icon.svg": ("image/svg+xml", Array(icon.utf8)),
        liveScriptPath: ("text/javascript; charset=utf-8", Array(LiveScript.text.utf8)),
    ].mapValues { type, bytes in (type, bytes, "\"\(contentHash(bytes))\"") }

    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2f5d50"/>\
        <path d="M9 10h14M9 16h14M9 22h9" stroke="#f4efe6" stroke-width="3" stroke-linecap="round"/></svg>
        """

    /// The routes serving them.
    static var routes: [Route] {
        [
            Route.get("/static/:file", access: .anyone) { request in
                guard let file = files[request.path] else { throw HTTPError.notFound }
                let etag = file.etag
                let headers: [(name: String, value: String)] = [
                    ("Content-Type", file.type), ("ETag", etag),
                    ("Cache-Control", "public, max-age=31536000, immutable"),
                ]
                if request.headers["if-none-match"] == etag { return Response(status: 304, headers: headers) }
                return Response(status: 200, headers: headers, body: .bytes(file.bytes))
            }
        ]
    }
}
