import Foundation

/// The site's static files: one small stylesheet, the icon and the live
/// pages' script, served from memory with a strong ETag and a long cache
/// lifetime (their paths carry a version, so a new release gets new
/// paths).
public enum StaticFiles {
    /// The stylesheet's path.
    public static let stylesheetPath = "/static/style-\(version).css"
    /// The live pages' script's path (see ``Layout``).
    public static let liveScriptPath = "/static/live-\(version).js"

    /// The script tags of a page with this content: the live pages' script
    /// when the content declares a live region (an attribute
    /// `data-live-topics="…"`, which escaped text cannot spell, as its
    /// quote would be `&quot;`), else none: every page works without
    /// JavaScript.
    static func scriptTags(for content: HTML) -> HTML {
        guard content.markup.contains(" data-live-topics=\"") else { return "" }
        return "<script src=\"\(liveScriptPath)\" defer></script>"
    }

    static let version = "3"

    /// The files, by path: content type and bytes.
    static let files: [String: (type: String, bytes: [UInt8])] = [
        stylesheetPath: ("text/css; charset=utf-8", Array(Stylesheet.text.utf8)),
        "/static/icon.svg": ("image/svg+xml", Array(icon.utf8)),
        liveScriptPath: ("text/javascript; charset=utf-8", Array(LiveScript.text.utf8)),
    ]

    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2f5d50"/>\
        <path d="M9 10h14M9 16h14M9 22h9" stroke="#f4efe6" stroke-width="3" stroke-linecap="round"/></svg>
        """

    /// The routes serving them.
    static var routes: [Route] {
        [
            Route.get("/static/:file", access: .anyone) { request in
                guard let file = files[request.path] else { throw HTTPError.notFound }
                let etag = "\"\(version)-\(file.bytes.count)\""
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
