import Foundation

/// Every route of the site, in one list: each app adds its pages here.
enum SiteRoutes {
    static func all(_ context: WebContext) -> [Route] {
        StaticFiles.routes + HomePage.routes(context) + AccountPages.routes(context) + PeoplePages.routes(context)
            + ContactsPages.routes(context) + CoffeePages.routes(context)
    }
}

/// The start page: the four apps.
enum HomePage {
    static func routes(_ context: WebContext) -> [Route] {
        [
            Route.get("/") { request in
                Layout.page(
                    request, title: "Your records",
                    content: """
                        <h1>Your records</h1>
                        <ul class="apps">
                        <li><a href="/people"><strong>People</strong><span>Names and ages</span></a></li>
                        <li><a href="/contacts"><strong>Contacts</strong><span>Addresses and phone numbers</span></a></li>
                        <li><a href="/coffee"><strong>Coffee</strong><span>Coffees, prices and pictures</span></a></li>
                        <li><a href="/account"><strong>Your account</strong><span>Profile and password</span></a></li>
                        </ul>
                        """)
            }
        ]
    }
}
