import Foundation
import RecordsApp

/// One app's pages, declared once, in the app's folder
/// (`People/PeopleSite.swift`): the app they show, their routes, their
/// entry in the navigation, their tile on the start page, and the live
/// topics their regions follow.
///
/// ``SiteApps/all`` lists every app's pages; the site's routes,
/// ``Layout/sections``, the start page and the topics `/events` takes
/// iterate it.
struct AppPages: Sendable {
    /// A tile of the start page.
    struct Tile: Sendable {
        /// What it is called: "People".
        let title: String
        /// What is there: "Names and ages".
        let summary: String
        /// Where it leads.
        let path: String
    }

    /// The app whose records the pages show.
    let app: AppDatabase.App
    /// Its entry in the navigation (``Layout/sections``), if it has one.
    let navigation: (name: String, path: String)?
    /// Its tile on the start page.
    let tile: Tile
    /// The topics its pages' live regions name in `data-live-topics`.
    let liveTopics: [AppDatabase.App]
    /// Its routes, over the site's stores and settings.
    let routes: @Sendable (WebContext) -> [Route]
    /// Its records in the JSON API (`/api/v1/<name>`), if it has a
    /// collection there.
    var api: APIResource? = nil
}

/// Every app's pages, in the order of the navigation and the start page's
/// tiles. A new app adds its ``AppPages`` here.
enum SiteApps {
    static let all: [AppPages] = [.people, .contacts, .coffee, .account]

    /// The topics `/events` follows: those the pages name, in order.
    static var liveTopics: [AppDatabase.App] {
        var seen = Set<AppDatabase.App>()
        return all.flatMap(\.liveTopics).filter { seen.insert($0).inserted }
    }
}

/// Every route of the site: the static files, the start page and each
/// app's pages.
enum SiteRoutes {
    static func all(_ context: WebContext) -> [Route] {
        StaticFiles.routes + HomePage.routes(context) + SiteApps.all.flatMap { $0.routes(context) }
            + ServerStatus.routes(context)
    }
}

/// The start page: a tile for each app.
enum HomePage {
    static func routes(_ context: WebContext) -> [Route] {
        let tiles = HTML(
            joining: SiteApps.all.map { pages -> HTML in
                let tile = pages.tile
                return
                    "<li><a href=\"\(tile.path)\"><strong>\(tile.title)</strong><span>\(tile.summary)</span></a></li>"
            }, separator: "\n")
        return [
            Route.get("/") { request in
                Layout.page(
                    request, title: "Your records",
                    content: """
                        <h1>Your records</h1>
                        <ul class="apps">
                        \(tiles)
                        </ul>
                        <p><a href="/status" id="server-status">Server status</a>: whether the database is \
                        copied to a replica as it changes.</p>
                        """)
            }
        ]
    }
}
