import Foundation
import RecordsApp

/// The site's page frame: the document head, the header with the apps'
/// navigation and the account menu, the one-time status message, and the
/// main content.
///
/// ## Live regions
///
/// A part of a page can refresh itself when the records it shows change,
/// whoever changed them (another browser, the `records` command). Give the
/// element that holds them (the list's `<ul>` or `<table>`, the detail's
/// `<section>`) an `id` unique on the page and a `data-live-topics`
/// attribute naming the apps whose changes concern it, comma-separated,
/// by their names (``AppDatabase/App``: `people`, `coffee`, ...); an app's
/// ``AppPages`` lists the topics its pages name.
///
/// ```swift
/// content: """
///     <table id="people-list" data-live-topics="people">\(rows)</table>
///     """
/// ```
///
/// A page whose content declares such a region gets the live script
/// (``StaticFiles/liveScriptPath``). On each change of a topic (see
/// ``LiveUpdates``) it fetches the page's own URL again and replaces the
/// region's children with those of the element with the same `id` in the
/// fresh page. When that fetch answers 404 (the record was deleted) the
/// region shows the 404 page's message instead (``RecordNotFoundError``
/// gives "This person (ID 3) was deleted, or never existed."). A region
/// holding a form the user is typing in, or has changed, is left alone.
/// While the page follows the changes, its `<html>` element has
/// `data-live="open"` (`"reconnecting"` after the stream was lost).
/// The script also shows the connection's state in the header
/// (`#live-status`, "Live: connected", "Live: reconnecting…", "Live:
/// offline", announced politely to screen readers).
/// Without JavaScript nothing changes: the page is simply not live. Keep
/// the region's `id` the same from one rendering to the next, and keep
/// anything that must not be replaced (a search box being typed in)
/// outside it.
public enum Layout {
    /// The apps in the navigation, in order: label and path (each app's
    /// pages give theirs).
    public static let sections: [(name: String, path: String)] = SiteApps.all.compactMap(\.navigation)

    /// A page in the site's frame.
    ///
    /// The first thing a keyboard reaches is the "Skip to content" link to
    /// `<main id="main">`. The message banner (`#flash`) shows the message
    /// a redirect left (``redirect(to:flash:request:)``), or `message`.
    ///
    /// - Parameters:
    ///   - title: What the page is: "People", "Search: ada — People",
    ///     "Edit Ada Lovelace" (the `<title>`, before the site's name, and
    ///     after "Error: " for a status from 400, such as a form sent back
    ///     with its problems).
    ///   - section: The navigation entry to mark as current (its path).
    ///   - status: The HTTP status.
    ///   - message: A line for the message banner, such as a search's
    ///     outcome ("Match found: …"), when no redirect left one.
    ///   - content: The page's main content.
    public static func page(
        _ request: Request, title: String, section: String? = nil, status: Int = 200, message: String? = nil,
        content: HTML
    ) -> Response {
        // A script's read of the page (the live script refreshing a region)
        // neither shows nor takes the status line a redirect left: it is
        // for the page the browser loads next, which may be a moment later.
        let flashCookie = isScriptRead(request) ? nil : request.cookies[WebApp.flashCookie]
        let flash =
            flashCookie.flatMap { $0.removingPercentEncoding }.flatMap { $0.isEmpty ? nil : $0 } ?? message
        let navigation = HTML(
            joining: sections.map { item in
                let current: HTML = item.path == section ? " aria-current=\"page\"" : ""
                return "<li><a href=\"\(item.path)\"\(current)>\(item.name)</a></li>"
            })
        let account: HTML
        if let session = request.session {
            account = """
                <div class="account">
                <a href="/account" class="who">\(session.displayName)</a>
                <form method="post" action="/logout" class="inline">\(csrfField(request))<button type="submit" class="link">Log out</button></form>
                </div>
                """
        } else {
            account = """
                <div class="account"><a href="/login">Log in</a> <a href="/register">Register</a></div>
                """
        }
        let statusLine: HTML? = flash.map { "<p role=\"status\" class=\"flash\" id=\"flash\">\($0)</p>" }
        let page: HTML = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(status >= 400 ? "Error: " : "")\(title) · Records</title>
            <link rel="stylesheet" href="\(StaticFiles.stylesheetPath)">
            <link rel="icon" href="/static/icon.svg" type="image/svg+xml">
            \(StaticFiles.scriptTags(for: content))
            </head>
            <body>
            <a class="skip-link" href="#main" id="skip-link">Skip to content</a>
            <header class="site">
            <a class="brand" href="/">Records</a>
            <nav aria-label="Apps"><ul>\(navigation)</ul></nav>
            \(account)
            </header>
            <main id="main" tabindex="-1">
            \(statusLine)
            \(content)
            </main>
            </body>
            </html>
            """
        var response = Response.html(page, status: status)
        if flashCookie != nil {
            response = response.setting(.deleting(WebApp.flashCookie, secure: request.isSecure))
        }
        return response
    }

    /// Whether `request` is a script's read of a page rather than the
    /// browser loading it: the site's live script marks its reads with
    /// `X-Records-Live`, and browsers mark every request that is not a
    /// navigation with a `Sec-Fetch-Mode` other than `navigate`. Such a read
    /// runs beside the navigation after a form's redirect (a change the
    /// form's own save announced), so it must leave that redirect's status
    /// line to the page.
    static func isScriptRead(_ request: Request) -> Bool {
        if request.headers["x-records-live"] != nil { return true }
        if let mode = request.headers["sec-fetch-mode"], mode != "navigate" { return true }
        return false
    }

    /// A redirect after a POST that shows `message` as the next page's
    /// status line.
    public static func redirect(to path: String, flash message: String, request: Request) -> Response {
        let encoded = message.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return Response.redirect(to: path).setting(
            Cookie(name: WebApp.flashCookie, value: encoded, maxAge: 60, secure: request.isSecure))
    }

    /// The one wording of a success message in every app and front end
    /// (``RecordOutcome/message(_:)``), with the record's name isolated
    /// (see ``isolated(_:)``): `Added “Cortado”.`, `Updated “Ada
    /// Lovelace”.`, `Deleted “Jane Doe”.`
    public static func message(_ outcome: RecordOutcome, _ name: String) -> String {
        outcome.message(isolated(name))
    }

    /// The title of a list page: the app's name, after the search when
    /// there is one ("Search: ada — People"), with the page number after
    /// the first ("People — page 2").
    public static func listTitle(_ app: String, search: String, page: Int) -> String {
        let base = search.isEmpty ? app : "Search: \(isolated(search)) — \(app)"
        return page > 1 ? "\(base) — page \(page)" : base
    }

    /// The title and the heading of a form: "Add a person" when adding
    /// (`name` nil), "Edit Ada Lovelace" when editing (the name isolated in
    /// the title, in `<bdi>` in the heading), "Edit a person" for a record
    /// without a name.
    public static func formTitle(kind: String, editing name: String?) -> (title: String, heading: HTML) {
        guard let name else { return ("Add \(kind)", "Add \(kind)") }
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { return ("Edit \(kind)", "Edit \(kind)") }
        return ("Edit \(isolated(trimmed))", "Edit <bdi>\(trimmed)</bdi>")
    }

    /// `text` set apart inside a sentence of plain text (a status line):
    /// between Unicode's first-strong isolate and pop-directional isolate
    /// marks, so right-to-left text or a stray direction override in a name
    /// cannot reorder the words around it. In markup, use `<bdi>`.
    public static func isolated(_ text: String) -> String { "\u{2068}\(text)\u{2069}" }

    /// The hidden field every POST form carries.
    public static func csrfField(_ request: Request) -> HTML {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(request.csrfToken)\">"
    }
}
