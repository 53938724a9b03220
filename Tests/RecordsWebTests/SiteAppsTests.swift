import Foundation
import RecordsApp
import Testing

@testable import RecordsWeb

/// The start page, the navigation and the live topics come from the apps'
/// pages (``SiteApps/all``), as they were written by hand before.
@Suite struct SiteAppsTests {
    @Test func theStartPageHasEachAppsTileInOrder() async throws {
        let server = try ListsWeb.server()
        defer { server.stop() }
        let home = try await ListsWeb.signedIn(server).get("/")
        #expect(home.status == 200)
        #expect(
            home.body.contains(
                """
                <ul class="apps">
                <li><a href="/people"><strong>People</strong><span>Names and ages</span></a></li>
                <li><a href="/contacts"><strong>Contacts</strong><span>Addresses and phone numbers</span></a></li>
                <li><a href="/coffee"><strong>Coffee</strong><span>Coffees, prices and pictures</span></a></li>
                <li><a href="/account"><strong>Your account</strong><span>Profile and password</span></a></li>
                </ul>
                """))
    }

    @Test func theNavigationHasEachAppWithAnEntry() {
        #expect(Layout.sections.map(\.name) == ["People", "Contacts", "Coffee"])
        #expect(Layout.sections.map(\.path) == ["/people", "/contacts", "/coffee"])
    }

    @Test func theEventsRouteNamesTheTopicsThePagesFollow() throws {
        let error = try #require(throws: HTTPError.self) { try LiveUpdates.topics(from: "nobody") }
        #expect(error.message == "There is no topic with that name: use people, contacts, coffee or users.")
        let empty = try #require(throws: HTTPError.self) { try LiveUpdates.topics(from: "") }
        #expect(empty.message == "Name what to follow: /events?topics=people,contacts,coffee,users.")
        #expect(try LiveUpdates.topics(from: "coffee,users") == [.coffee, .users])
    }
}
