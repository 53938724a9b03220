import Foundation
import RecordsWeb
import Testing

@testable import RecordsApp

/// What every page shares: the skip link as the first stop, titles that
/// say what the page is, the error summary the script focuses, one wording
/// of success messages in every app, one confirmation for deleting, and
/// the live script that shows the connection's state.
@Suite("Page frame")
struct PageFrameWebTests {
    let server: TestServer
    let client: WebClient

    init() throws {
        server = try ListsWeb.server()
        client = ListsWeb.signedIn(server)
    }

    /// The `<title>` of a page.
    static func title(_ body: String) -> String? {
        body.firstMatch(of: /<title>([^<]*)<\/title>/).map { String($0.1) }
    }

    /// The first element of the body a keyboard can reach: a link, a
    /// button, a field (hidden fields aside) or anything with a tabindex
    /// from 0.
    static func firstFocusable(_ body: String) -> String? {
        guard let start = body.range(of: "<body>") else { return nil }
        let rest = body[start.upperBound...]
        let pattern =
            /<(a\s[^>]*href|button|select|textarea|input(?![^>]*type="hidden")|[a-z]+\s[^>]*tabindex="[0-9])[^>]*>/
        return rest.firstMatch(of: pattern).map { String($0.0) }
    }

    @Test(
        "The skip link is the first thing a keyboard reaches, on every kind of page, and leads to main",
        arguments: [
            "/", "/people", "/people/new", "/contacts", "/contacts/find", "/contacts/new", "/coffee", "/nowhere",
        ])
    func skipLinkFirst(path: String) async throws {
        defer { server.stop() }
        let page = try await client.get(path)
        #expect(Self.firstFocusable(page.body) == "<a class=\"skip-link\" href=\"#main\" id=\"skip-link\">")
        #expect(page.body.contains("<main id=\"main\" tabindex=\"-1\">"))
    }

    @Test("The skip link is first for a visitor too (the log-in page)")
    func skipLinkFirstSignedOut() async throws {
        defer { server.stop() }
        let page = try await server.client().get("/login")
        #expect(Self.firstFocusable(page.body) == "<a class=\"skip-link\" href=\"#main\" id=\"skip-link\">")
    }

    @Test("Titles say what the page is: the list, a search, a page of it, an edit, an error")
    func titles() async throws {
        defer { server.stop() }
        let ada = try await server.app.context.people.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        let expected: [(String, String)] = [
            ("/people", "People · Records"),
            ("/people?q=ada", "Search: \u{2068}ada\u{2069} — People · Records"),
            ("/people?page=2", "People — page 2 · Records"),
            ("/coffee?q=mocha", "Search: \u{2068}mocha\u{2069} — Coffee · Records"),
            ("/contacts?q=jane", "Search: \u{2068}jane\u{2069} — Contacts · Records"),
            ("/people/\(ada.id)/edit", "Edit \u{2068}Ada Lovelace\u{2069} · Records"),
            ("/people/\(ada.id)/delete", "Delete \u{2068}Ada Lovelace\u{2069}? · Records"),
            ("/nowhere", "Error: Page not found · Records"),
            ("/people/999", "Error: Page not found · Records"),
        ]
        for (path, title) in expected {
            #expect(Self.title(try await client.get(path).body) == title, "\(path)")
        }
    }

    @Test("A search's title escapes what was typed")
    func searchTitleEscaped() async throws {
        defer { server.stop() }
        let page = try await client.get("/people?q=\(WebClient.formEncode("</title><script>x"))")
        #expect(Self.title(page.body) == "Search: \u{2068}&lt;/title&gt;&lt;script&gt;x\u{2069} — People · Records")
        #expect(ListsWeb.holdsNoHostileMarkup(page.body))
    }

    @Test("A form sent back with problems: title starts with Error, summary is an alert focusable by script")
    func errorSummary() async throws {
        defer { server.stop() }
        _ = try await client.get("/people/new")
        let page = try await client.post("/people", [("firstName", ""), ("lastName", "Lovelace"), ("age", "x")])
        #expect(page.status == 422)
        #expect(Self.title(page.body) == "Error: Add a person · Records")
        #expect(page.body.contains("<p class=\"form-error\" role=\"alert\" id=\"form-error\" tabindex=\"-1\">"))
        // The script that focuses it is on the page, though the form is not live.
        #expect(page.body.contains("<script src=\"\(StaticFiles.liveScriptPath)\" defer></script>"))
        #expect(!(try await client.get("/people/new").body.contains("<script")))
    }

    @Test("The site's script focuses the summary and shows the connection's state in words, politely")
    func scriptDoesBoth() async throws {
        defer { server.stop() }
        let script = try await client.get(StaticFiles.liveScriptPath).body
        #expect(script.contains("getElementById('form-error')") && script.contains(".focus()"))
        #expect(script.contains("indicator.setAttribute('aria-live', 'polite')"))
        for words in ["Live: connected", "Live: reconnecting", "Live: offline"] {
            #expect(script.contains(words), "\(words)")
        }
        // Its reads of pages are marked, so that they leave a redirect's
        // status line to the page the browser loads (see PeopleWebTests).
        #expect(script.contains("var reading = { 'Accept': 'text/html', 'X-Records-Live': '1' };"))
        let fetches = script.components(separatedBy: "fetch(").dropFirst()
        #expect(fetches.count == 2)
        for call in fetches { #expect(call.prefix(while: { $0 != "}" }).contains("headers: reading")) }
    }

    @Test("Success messages have one wording in every app: verb, name in quotes, full stop")
    func oneWording() async throws {
        defer { server.stop() }
        _ = try await client.get("/people/new")
        let person = try await client.post("/people", [("firstName", "Ada"), ("lastName", "Lovelace"), ("age", "36")])
        #expect(
            try await ListsWeb.follow(person, with: client).body.contains(">Added “\u{2068}Ada Lovelace\u{2069}”.</p>"))
        let coffee = try await client.post("/coffee", [("name", "Cortado"), ("price", "3")])
        #expect(try await ListsWeb.follow(coffee, with: client).body.contains(">Added “\u{2068}Cortado\u{2069}”.</p>"))
        let contact = try await client.post(
            "/contacts", [("name", "Jane Doe"), ("address", "1 Main St"), ("contact", "5")])
        #expect(
            try await ListsWeb.follow(contact, with: client).body.contains(">Added “\u{2068}Jane Doe\u{2069}”.</p>"))
        let cortado = try #require(try await server.app.context.coffee.all().first)
        let edited = try await client.postEdit("/coffee/\(cortado.id)/edit", [("name", "Cortado"), ("price", "3.5")])
        #expect(
            try await ListsWeb.follow(edited, with: client).body.contains(">Updated “\u{2068}Cortado\u{2069}”.</p>"))
        let deleted = try await client.post("/coffee/\(cortado.id)/delete", [])
        #expect(
            try await ListsWeb.follow(deleted, with: client).body.contains(">Deleted “\u{2068}Cortado\u{2069}”.</p>"))
    }

    @Test("Deleting asks on the same page in every app: the red Delete button, Cancel, and that it cannot be undone")
    func oneConfirmation() async throws {
        defer { server.stop() }
        let context = server.app.context
        let person = try await context.people.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
        let contact = try await context.contacts.add(ContactDraft(name: "Jane", address: "1 Main St", contact: "5"))
        let coffee = try await context.coffee.add(CoffeeDraft(name: "Mocha", price: 3))
        for path in ["/people/\(person.id)/delete", "/contacts/\(contact.id)/delete", "/coffee/\(coffee.id)/delete"] {
            let page = try await client.get(path)
            #expect(page.status == 200, "\(path)")
            #expect(
                page.body.contains("<form method=\"post\" action=\"\(path)\" id=\"delete-form\" class=\"actions\">"),
                "\(path)")
            #expect(
                page.body.contains("<button type=\"submit\" class=\"danger\" id=\"confirm-delete\">Delete</button>"),
                "\(path)")
            #expect(page.body.contains("This cannot be undone.</p>"), "\(path)")
        }
        let counts = [
            try await context.people.count(), try await context.contacts.count(), try await context.coffee.count(),
        ]
        #expect(counts == [1, 1, 1])
    }
}
