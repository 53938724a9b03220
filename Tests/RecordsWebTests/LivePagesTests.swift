import Foundation
import RecordsWeb
import Testing

@testable import RecordsApp

/// The apps' pages mark the parts that follow the database (see
/// `Layout`'s live regions): the live script refreshes an element by its
/// `id` from a fresh copy of the page, so the region must be there, with
/// the same `id`, in every state of the page (empty, full, searched), and a
/// deleted record's page must say it was deleted.
@Suite("Live regions on the apps' pages")
struct LivePagesTests {
    let server: TestServer
    let client: WebClient

    init() throws {
        server = try ListsWeb.server()
        client = ListsWeb.signedIn(server)
    }

    /// The opening tag of the element with `id`, or nil.
    static func openingTag(id: String, in body: String) -> String? {
        guard let idRange = body.range(of: "id=\"\(id)\"") else { return nil }
        guard let start = body[..<idRange.lowerBound].lastIndex(of: "<"),
            let end = body[idRange.upperBound...].firstIndex(of: ">")
        else { return nil }
        return String(body[start...end])
    }

    static func expectRegion(_ id: String, topics: String, in response: WebResponse) {
        #expect(response.status == 200)
        let tag = openingTag(id: id, in: response.body)
        #expect(tag?.contains("data-live-topics=\"\(topics)\"") == true, "no live region #\(id): \(tag ?? "none")")
        #expect(response.body.contains(StaticFiles.liveScriptPath))
    }

    /// The page at `path` is the 404 that says the record was deleted.
    func expectDeletedPage(_ path: String, kind: String, id: Int64) async throws {
        let gone = try await client.get(path)
        #expect(gone.status == 404)
        #expect(gone.body.contains("This \(kind) (ID \(id)) was deleted, or never existed."))
    }

    @Test("The People list is one region whether empty, full or searched, and the search box is outside it")
    func peopleList() async throws {
        defer { server.stop() }
        Self.expectRegion("people-results", topics: "people", in: try await client.get("/people"))
        _ = try await server.app.context.people.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        let full = try await client.get("/people")
        Self.expectRegion("people-results", topics: "people", in: full)
        // The list and its pager are inside; the search form is not, so a
        // refresh never replaces what is being typed.
        let region = try #require(full.body.range(of: "id=\"people-results\""))
        let list = try #require(full.body.range(of: "id=\"people-list\""))
        let search = try #require(full.body.range(of: "id=\"people-search\""))
        #expect(region.lowerBound < list.lowerBound)
        #expect(search.lowerBound < region.lowerBound)
        Self.expectRegion("people-results", topics: "people", in: try await client.get("/people?q=nobody"))
    }

    @Test("A person's page is a region, and once the person is deleted it says so")
    func personDetail() async throws {
        defer { server.stop() }
        let store = server.app.context.people
        let ada = try await store.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        let page = try await client.get("/people/\(ada.id)")
        Self.expectRegion("person", topics: "people", in: page)
        #expect(page.body.contains("<h1 id=\"person-name\">Ada Lovelace</h1>"))
        _ = try await store.delete(id: ada.id)
        try await expectDeletedPage("/people/\(ada.id)", kind: "person", id: ada.id)
    }

    @Test("The Contacts list is a region, and so are a find's matches, below the find form, which stays outside")
    func contactsList() async throws {
        defer { server.stop() }
        Self.expectRegion("contacts-results", topics: "contacts", in: try await client.get("/contacts"))
        _ = try await server.app.context.contacts.add(
            ContactDraft(name: "Ada", address: "12 Oak Street", contact: "ada@example.com"))
        let full = try await client.get("/contacts")
        Self.expectRegion("contacts-results", topics: "contacts", in: full)
        #expect(full.body.contains("<td data-label=\"Address\">12 Oak Street</td>"))
        #expect(full.body.contains("<a href=\"mailto:ada@example.com\">ada@example.com</a>"))
        let found = try await client.get("/contacts/find?name=ada")
        Self.expectRegion("found", topics: "contacts", in: found)
        let form = try #require(found.body.range(of: "id=\"find-form\""))
        let region = try #require(found.body.range(of: "id=\"found\""))
        #expect(form.lowerBound < region.lowerBound)
        #expect(found.body.contains("12 Oak Street | ada@example.com"))
    }

    @Test("A deleted contact's edit page says it was deleted")
    func deletedContact() async throws {
        defer { server.stop() }
        try await expectDeletedPage("/contacts/4242/edit", kind: "contact", id: 4242)
    }

    @Test("The Coffee list and a coffee's page are regions; the picture form is outside the detail's")
    func coffeePages() async throws {
        defer { server.stop() }
        Self.expectRegion("coffee-results", topics: "coffee", in: try await client.get("/coffee"))
        let store = server.app.context.coffee
        let mocha = try await store.add(CoffeeDraft(name: "Mocha", price: 3))
        Self.expectRegion("coffee-results", topics: "coffee", in: try await client.get("/coffee"))
        let page = try await client.get("/coffee/\(mocha.id)")
        Self.expectRegion("coffee", topics: "coffee", in: page)
        let region = try #require(page.body.range(of: "id=\"coffee\""))
        let regionEnd = try #require(page.body.range(of: "</section>", range: region.upperBound..<page.body.endIndex))
        let form = try #require(page.body.range(of: "id=\"picture-form\""))
        #expect(form.lowerBound > regionEnd.upperBound)
        _ = try await store.delete(id: mocha.id)
        try await expectDeletedPage("/coffee/\(mocha.id)", kind: "coffee", id: mocha.id)
    }

    @Test("Names in status lines and headings are isolated, so a direction override cannot reorder the sentence")
    func userTextIsIsolated() async throws {
        defer { server.stop() }
        _ = try await client.get("/people/new")
        let added = try await client.post(
            "/people", [("firstName", ListsWeb.rightToLeft), ("lastName", "Byron"), ("age", "36")])
        #expect(added.status == 303)
        let page = try await ListsWeb.follow(added, with: client)
        #expect(page.body.contains("Added “\u{2068}\(ListsWeb.rightToLeft) Byron\u{2069}”."))
        let search = try await client.get("/people?q=zzz")
        #expect(search.body.contains("No one matches “<bdi>zzz</bdi>”."))
    }
}
