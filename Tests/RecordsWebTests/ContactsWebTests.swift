import Foundation
import RecordsWeb
import SQLiteStore
import Testing

@testable import RecordsApp

/// The Contacts pages: the list ("address | contact"), sorted, paged and
/// searched; find by name (the original tutorial's "Find Contact"), which
/// lists each match with Edit beside it and says "Match found" / "No
/// match" in the message banner; the add form, which asks before a second
/// contact of a name; edit and delete.
@Suite("Contacts pages")
struct ContactsWebTests {
    let server: TestServer
    let client: WebClient
    var store: ContactsStore { server.app.context.contacts }

    init() throws {
        server = try ListsWeb.server()
        client = ListsWeb.signedIn(server)
    }

    @discardableResult
    private func add(_ name: String, _ address: String = "12 Main St", _ contact: String = "+1 555 0100")
        async throws -> Contact
    {
        try await store.add(ContactDraft(name: name, address: address, contact: contact), allowingDuplicate: true)
    }

    // MARK: - The list

    @Test("The pages need a session")
    func needsASession() async throws {
        defer { server.stop() }
        for path in ["/contacts", "/contacts/find", "/contacts/new"] {
            let response = try await server.client().get(path)
            #expect(response.status == 303, "\(path)")
            #expect(response.location == "/login?next=" + WebClient.formEncode(path), "\(path)")
        }
    }

    @Test("The list links to adding and to finding by name, and holds no form that saves")
    func listPage() async throws {
        defer { server.stop() }
        let response = try await client.get("/contacts")
        #expect(response.status == 200)
        #expect(
            response.body.contains("<a class=\"button\" href=\"/contacts/new\" id=\"add-contact\">Add a contact</a>"))
        #expect(response.body.contains("href=\"/contacts/find\" id=\"find-by-name\">Find by name</a>"))
        #expect(!response.body.contains("method=\"post\" action=\"/contacts\""))
        #expect(!response.body.contains("formaction"))
        #expect(response.body.contains("id=\"empty\">No contacts yet."))
        #expect(response.body.contains("<title>Contacts · Records</title>"))
    }

    @Test("The list is a table of name, address, and phone or email as tel: and mailto: links")
    func list() async throws {
        defer { server.stop() }
        let jane = try await add("Jane Doe", "12 Main St", "+1 (555) 0100")
        let john = try await add("John Roe", "3 High St", "john.roe+news@example.org")
        let site = try await add("Web Site", "1 Web Way", "https://example.org")
        let body = try await client.get("/contacts").body
        #expect(body.contains("<table class=\"records stacked\" id=\"contacts-list\">"))
        #expect(
            body.contains(
                "<tr id=\"contact-\(jane.id)\"><td data-label=\"Name\"><span class=\"title\">Jane Doe</span></td>"
                    + "<td data-label=\"Address\">12 Main St</td>"
                    + "<td data-label=\"Phone or email\"><a href=\"tel:+15550100\">+1 (555) 0100</a></td>"))
        #expect(body.contains("<a href=\"mailto:john.roe+news@example.org\">john.roe+news@example.org</a>"))
        #expect(
            body.contains(
                "<td data-label=\"Phone or email\"><span class=\"long-value\">https://example.org</span></td>"))
        #expect(ListsWeb.rowIDs(in: body, prefix: "contact") == [jane.id, john.id, site.id])
        #expect(body.contains("href=\"/contacts/\(jane.id)/edit\""))
        #expect(body.contains("href=\"/contacts/\(jane.id)/delete\""))
        #expect(body.contains(">3 contacts · page 1 of 1</p>"))
        #expect(
            body.contains(
                "aria-sort=\"ascending\"><a href=\"/contacts?order=desc\" id=\"sort-name\" aria-current=\"true\">Name"))
    }

    @Test("Hostile phone and email text is escaped in the cell and never makes a link of its own")
    func hostileReach() async throws {
        defer { server.stop() }
        let cases: [(stored: String, expected: String)] = [
            (
                "a\"onmouseover=alert(1)@x.org",
                "<a href=\"mailto:a%22onmouseover%3Dalert%281%29@x.org\">a&quot;onmouseover=alert(1)@x.org</a>"
            ),
            ("<b>@x.org", "<a href=\"mailto:%3Cb%3E@x.org\">&lt;b&gt;@x.org</a>"),
            (
                "javascript:alert(1)",
                "<td data-label=\"Phone or email\"><span class=\"long-value\">javascript:alert(1)</span></td>"
            ),
            (
                "+1 555\"><script>",
                "<td data-label=\"Phone or email\"><span class=\"long-value\">+1 555&quot;&gt;&lt;script&gt;</span></td>"
            ),
            ("12", "<td data-label=\"Phone or email\"><span class=\"long-value\">12</span></td>"),
            ("1+2+3", "<td data-label=\"Phone or email\"><span class=\"long-value\">1+2+3</span></td>"),
        ]
        for (index, item) in cases.enumerated() {
            try await add("Name \(index)", ListsWeb.script, item.stored)
        }
        let body = try await client.get("/contacts").body
        #expect(ListsWeb.holdsNoHostileMarkup(body))
        #expect(!body.contains("<b>") && !body.contains("href=\"javascript"))
        #expect(body.contains("<td data-label=\"Address\">\(ListsWeb.escapedScript)</td>"))
        for item in cases { #expect(body.contains(item.expected), "\(item.stored)") }
    }

    // MARK: - Add

    @Test("The add form is a page of its own, its name filled from the query")
    func addForm() async throws {
        defer { server.stop() }
        let response = try await client.get("/contacts/new?name=Jane%20Doe")
        #expect(response.status == 200)
        #expect(response.body.contains("<form method=\"post\" action=\"/contacts\" class=\"card\" id=\"contact-form\""))
        for field in ["name", "address", "contact"] {
            #expect(response.body.contains("<label for=\"field-\(field)\">"))
        }
        #expect(response.body.contains("id=\"save-contact\">Add</button>"))
        #expect(ListsWeb.value(of: "field-name", in: response.body) == "Jane Doe")
        #expect(response.body.contains("<title>Add a contact · Records</title>"))
    }

    @Test("Adding redirects to the list, whose banner says Added “name”.")
    func save() async throws {
        defer { server.stop() }
        _ = try await client.get("/contacts/new")
        let response = try await client.post(
            "/contacts", [("name", "Jane Doe"), ("address", "12 Main St"), ("contact", "+1 555 0100")])
        #expect(response.status == 303)
        #expect(response.location == "/contacts")
        #expect(try await store.all().map(\.name) == ["Jane Doe"])
        let page = try await ListsWeb.follow(response, with: client)
        #expect(
            page.body.contains("<p role=\"status\" class=\"flash\" id=\"flash\">Added “\u{2068}Jane Doe\u{2069}”.</p>"))
        #expect(page.body.contains("<td data-label=\"Address\">12 Main St</td>"))
        #expect(page.body.contains("<a href=\"tel:+15550100\">+1 555 0100</a>"))
    }

    @Test("A refused add shows the summary, focusable, and the errors beside the fields, and keeps the input")
    func saveRefused() async throws {
        defer { server.stop() }
        _ = try await client.get("/contacts/new")
        let response = try await client.post(
            "/contacts", [("name", "Jane Doe"), ("address", " "), ("contact", String(repeating: "5", count: 201))])
        #expect(response.status == 422)
        #expect(
            response.body.contains(
                "<p class=\"form-error\" role=\"alert\" id=\"form-error\" tabindex=\"-1\">The contact was not saved"))
        #expect(response.body.contains("<title>Error: Add a contact · Records</title>"))
        #expect(response.body.contains("<script src=\"\(StaticFiles.liveScriptPath)\" defer></script>"))
        #expect(response.body.contains("id=\"field-address-error\">Address is required.</p>"))
        #expect(
            response.body.contains(
                "id=\"field-contact-error\">Phone, email or web address must be at most 200 characters"))
        #expect(ListsWeb.value(of: "field-name", in: response.body) == "Jane Doe")
        #expect(try await store.count() == 0)
    }

    @Test("An add sent with a field twice is refused with the form again, the input kept")
    func duplicateFieldRefused() async throws {
        defer { server.stop() }
        let csrf = try #require(try await client.get("/contacts/new").csrfToken)
        let body = "csrf=\(csrf)&name=Jane&address=Main&contact=555&contact=666"
        let response = try await client.post(
            "/contacts", body: Data(body.utf8), contentType: "application/x-www-form-urlencoded")
        #expect(response.status == 400)
        #expect(response.body.contains("id=\"form-error\" tabindex=\"-1\">"))
        #expect(response.body.contains("more than once"))
        #expect(ListsWeb.value(of: "field-address", in: response.body) == "Main")
        #expect(try await store.count() == 0)
    }

    // MARK: - A name that exists

    @Test("Adding a name that exists (other case and spaces) asks first, showing the existing one with Edit")
    func duplicateAsks() async throws {
        defer { server.stop() }
        let jane = try await add("Jane Doe", "12 Main St")
        _ = try await client.get("/contacts/new")
        let response = try await client.post(
            "/contacts", [("name", "  jane   DOE "), ("address", "1 High St"), ("contact", "555")])
        #expect(response.status == 409)
        #expect(try await store.count() == 1)
        #expect(response.body.contains("<h1>Add a second “<bdi>jane   DOE</bdi>”?</h1>"))
        #expect(response.body.contains("id=\"form-error\" tabindex=\"-1\">A contact with this name already exists"))
        #expect(response.body.contains("<li id=\"contact-\(jane.id)\">"))
        #expect(response.body.contains("href=\"/contacts/\(jane.id)/edit\""))
        #expect(response.body.contains("<input type=\"hidden\" name=\"allowDuplicate\" value=\"yes\">"))
        #expect(response.body.contains("id=\"confirm-duplicate\""))
    }

    @Test("Confirming adds the second contact; without the allow field, or with another value, it asks again")
    func duplicateConfirmed() async throws {
        defer { server.stop() }
        try await add("Jane Doe")
        _ = try await client.get("/contacts/new")
        let fields = [("name", "Jane Doe"), ("address", "1 High St"), ("contact", "555")]
        #expect(try await client.post("/contacts", fields).status == 409)
        #expect(try await client.post("/contacts", fields + [("allowDuplicate", "no")]).status == 409)
        #expect(try await store.count() == 1)
        let confirmed = try await client.post("/contacts", fields + [("allowDuplicate", "yes")])
        #expect(confirmed.status == 303)
        #expect(try await store.find(name: "jane doe").map(\.address) == ["12 Main St", "1 High St"])
    }

    @Test("The confirmation is refused without the CSRF token, and adds nothing")
    func duplicateConfirmNeedsCSRF() async throws {
        defer { server.stop() }
        try await add("Jane Doe")
        _ = try await client.get("/contacts/new")
        let fields = [("name", "Jane Doe"), ("address", "1 High St"), ("contact", "555"), ("allowDuplicate", "yes")]
        #expect(try await client.post("/contacts", fields, addCSRF: false).status == 403)
        #expect(try await client.post("/contacts", fields + [("csrf", "forged")]).status == 403)
        #expect(try await store.count() == 1)
    }

    @Test("A hostile name that exists comes back escaped on the confirmation, in its hidden fields too")
    func duplicateHostileEscaped() async throws {
        defer { server.stop() }
        let name = ListsWeb.attribute + ListsWeb.script
        try await add(name, ListsWeb.script)
        _ = try await client.get("/contacts/new")
        let response = try await client.post(
            "/contacts", [("name", name), ("address", ListsWeb.attribute), ("contact", ListsWeb.rightToLeft)])
        #expect(response.status == 409)
        #expect(ListsWeb.holdsNoHostileMarkup(response.body))
        #expect(response.body.contains("<input type=\"hidden\" name=\"name\" value=\"\(HTML.escape(name))\">"))
        #expect(
            response.body.contains("<input type=\"hidden\" name=\"address\" value=\"\(ListsWeb.escapedAttribute)\">"))
        #expect(response.body.contains(ListsWeb.rightToLeft))
        // What the hidden fields carry is what was typed: confirming adds exactly that.
        let confirmed = try await client.post(
            "/contacts",
            [
                ("name", name), ("address", ListsWeb.attribute), ("contact", ListsWeb.rightToLeft),
                ("allowDuplicate", "yes"),
            ])
        #expect(confirmed.status == 303)
        #expect(try await store.find(name: name).map(\.address) == [ListsWeb.script, ListsWeb.attribute])
    }

    // MARK: - Find

    @Test(
        "Find by name lists each match with Edit beside it, says \"Match found\" in the banner, and has no form that saves"
    )
    func findShowsMatches() async throws {
        defer { server.stop() }
        let jane = try await add("Jane Doe", "12 Main St", "+1 555 0100")
        let other = try await add("jane doe", "Second St")
        try await add("John Roe")
        let page = try await client.get("/contacts/find?name=%20%20jane%20%20%20DOE%20")
        #expect(page.status == 200)
        #expect(
            page.body.contains(
                "<p role=\"status\" class=\"flash\" id=\"flash\">Match found: 2 contacts named “\u{2068}jane   DOE\u{2069}”.</p>"
            ))
        // The matches are a list of their own, not the contacts table.
        #expect(page.body.matches(of: /<li id="contact-[0-9]+"/).count == 2)
        for contact in [jane, other] {
            #expect(page.body.contains("<a href=\"/contacts/\(contact.id)/edit\">Edit"))
        }
        #expect(!page.body.contains("John Roe"))
        let main = try #require(page.body.range(of: "<main")).lowerBound
        #expect(!page.body[main...].contains("method=\"post\""))
        #expect(page.body.contains("<form method=\"get\" action=\"/contacts/find\""))
        #expect(ListsWeb.value(of: "field-name", in: page.body) == "  jane   DOE ")
        #expect(page.body.contains("<title>Find: \u{2068}jane   DOE\u{2069} — Contacts · Records</title>"))
    }

    @Test("Finding a name no contact has says \"No match\" in the banner and offers to add it")
    func findNoMatch() async throws {
        defer { server.stop() }
        try await add("Jane Doe")
        let page = try await client.get("/contacts/find?name=John")
        #expect(page.status == 200)
        #expect(page.body.contains("id=\"flash\">No match: no contact is named “\u{2068}John\u{2069}”.</p>"))
        #expect(page.body.contains("href=\"/contacts/new?name=John\" id=\"add-found-name\""))
        #expect(!page.body.contains("<li id=\"contact-"))
    }

    @Test("The find page alone has the form; a blank name is refused beside the field")
    func findBlank() async throws {
        defer { server.stop() }
        let empty = try await client.get("/contacts/find")
        #expect(empty.status == 200)
        #expect(!empty.body.contains("id=\"flash\""))
        let response = try await client.get("/contacts/find?name=%20%20")
        #expect(response.status == 422)
        #expect(response.body.contains("id=\"field-name-error\">Name is required.</p>"))
        #expect(response.body.contains("id=\"form-error\" tabindex=\"-1\">"))
    }

    @Test("The old screen's find address leads to the find page")
    func oldFindAddress() async throws {
        defer { server.stop() }
        let response = try await client.get("/contacts?find=Jane%20Doe")
        #expect(response.status == 303)
        #expect(response.location == "/contacts/find?name=Jane%20Doe")
    }

    @Test("A hostile name to find comes back escaped")
    func hostileFindEscaped() async throws {
        defer { server.stop() }
        try await add(ListsWeb.script)
        for text in [ListsWeb.script, ListsWeb.attribute] {
            let response = try await client.get("/contacts/find?name=\(WebClient.formEncode(text))")
            #expect(response.status == 200)
            #expect(ListsWeb.holdsNoHostileMarkup(response.body))
            #expect(ListsWeb.value(of: "field-name", in: response.body) == HTML.escape(text))
        }
    }

    // MARK: - List, search

    @Test("The list is by name or newest, in pages of 20 with next and previous links")
    func sortAndPaging() async throws {
        defer { server.stop() }
        for index in 1...25 { try await add(String(format: "Name %02d", index)) }
        let first = try await client.get("/contacts")
        #expect(ListsWeb.itemCount(in: first.body, prefix: "contact") == 20)
        #expect(first.body.contains("<a href=\"/contacts?page=2\" rel=\"next\" id=\"page-next\">"))
        let newest = try await client.get("/contacts?sort=newest&page=2")
        #expect(ListsWeb.itemCount(in: newest.body, prefix: "contact") == 5)
        let order = ["Name 05", "Name 01"].compactMap { newest.body.range(of: $0)?.lowerBound }
        #expect(order.count == 2 && order == order.sorted())
        #expect(newest.body.contains("<a href=\"/contacts?sort=newest\" rel=\"prev\" id=\"page-previous\">"))
        #expect(newest.body.contains("id=\"sort-newest\" aria-current=\"true\""))
        for query in ["page=0", "page=x", "sort=age"] {
            #expect(try await client.get("/contacts?\(query)").status == 400, "\(query)")
        }
    }

    @Test("Search finds by any field's words, shows the excerpt marked, and keeps the search in the pager")
    func search() async throws {
        defer { server.stop() }
        try await add("Marco Rossi", "Via Roma 1, Milano", "+39 02 1234")
        try await add("Jane Doe", "12 Main Street", "jane@example.com")
        let page = try await client.get("/contacts?q=milano")
        #expect(page.status == 200)
        #expect(page.body.contains("Marco Rossi"))
        #expect(!page.body.contains("Jane Doe"))
        #expect(page.body.contains("<mark>Milano</mark>"))
        #expect(page.body.contains("Best matches first."))
        for index in 1...21 { try await add("Rossi \(index)") }
        let paged = try await client.get("/contacts?q=rossi")
        #expect(paged.body.contains("<a href=\"/contacts?q=rossi&amp;page=2\" rel=\"next\""))
        let none = try await client.get("/contacts?q=nowhere")
        #expect(none.body.contains("No contact matches"))
    }

    // MARK: - Edit, delete

    @Test("Editing fills the form; saving redirects with a status line; a refused edit keeps the input")
    func edit() async throws {
        defer { server.stop() }
        let jane = try await add("Jane Doe")
        let form = try await client.get("/contacts/\(jane.id)/edit")
        #expect(form.status == 200)
        #expect(form.body.contains("<title>Edit \u{2068}Jane Doe\u{2069} · Records</title>"))
        #expect(form.body.contains("<h1>Edit <bdi>Jane Doe</bdi></h1>"))
        #expect(ListsWeb.value(of: "field-address", in: form.body) == "12 Main St")
        let refused = try await client.postEdit(
            "/contacts/\(jane.id)/edit", [("name", ""), ("address", "1 High St"), ("contact", "555")])
        #expect(refused.status == 422)
        #expect(refused.body.contains("id=\"field-name-error\">Name is required.</p>"))
        #expect(ListsWeb.value(of: "field-address", in: refused.body) == "1 High St")
        #expect(try await store.contact(id: jane.id) == jane)
        let saved = try await client.postEdit(
            "/contacts/\(jane.id)/edit", [("name", "Jane Roe"), ("address", "1 High St"), ("contact", "555")])
        #expect(saved.status == 303)
        #expect(saved.location == "/contacts")
        #expect(try await store.contact(id: jane.id)?.details == "1 High St | 555")
        let page = try await ListsWeb.follow(saved, with: client)
        #expect(page.body.contains("id=\"flash\">Updated “\u{2068}Jane Roe\u{2069}”.</p>"))
    }

    @Test("Delete asks first; confirming deletes and redirects with a status line")
    func delete() async throws {
        defer { server.stop() }
        let jane = try await add("Jane Doe")
        let confirm = try await client.get("/contacts/\(jane.id)/delete")
        #expect(confirm.status == 200)
        #expect(confirm.body.contains("<h1>Delete <bdi>Jane Doe</bdi>?</h1>"))
        let response = try await client.post("/contacts/\(jane.id)/delete", [])
        #expect(response.status == 303)
        #expect(try await store.count() == 0)
        let page = try await ListsWeb.follow(response, with: client)
        #expect(page.body.contains("id=\"flash\">Deleted “\u{2068}Jane Doe\u{2069}”.</p>"))
    }

    @Test("A contact that does not exist is the 404 page on every route")
    func missingContactIsNotFound() async throws {
        defer { server.stop() }
        _ = try await client.get("/contacts")
        for path in ["/contacts/99/edit", "/contacts/99/delete", "/contacts/x/edit"] {
            #expect(try await client.get(path).status == 404, "\(path)")
        }
        let edit = try await client.post("/contacts/99/edit", [("name", "A"), ("address", "B"), ("contact", "C")])
        #expect(edit.status == 404)
        #expect(try await client.post("/contacts/99/delete", []).status == 404)
    }

    @Test("Every form is refused without the page's CSRF token, and changes nothing")
    func csrfRefused() async throws {
        defer { server.stop() }
        let jane = try await add("Jane Doe")
        let fields = [("name", "Eve"), ("address", "Evil St"), ("contact", "666")]
        #expect(try await client.post("/contacts", fields, addCSRF: false).status == 403)
        #expect(try await client.post("/contacts/\(jane.id)/edit", fields + [("csrf", "forged")]).status == 403)
        #expect(try await client.post("/contacts/\(jane.id)/delete", [], addCSRF: false).status == 403)
        #expect(try await store.all() == [jane])
    }

    @Test("Hostile text in every field comes back escaped on every page that shows it")
    func hostileTextEscaped() async throws {
        defer { server.stop() }
        _ = try await client.get("/contacts/new")
        let name = ListsWeb.script + ListsWeb.rightToLeft
        let saved = try await client.post(
            "/contacts",
            [("name", name), ("address", ListsWeb.attribute), ("contact", ListsWeb.zeroWidth + ListsWeb.script)])
        #expect(saved.status == 303)
        let id = try #require(try await store.all().first?.id)
        var pages = [try await ListsWeb.follow(saved, with: client)]
        pages.append(try await client.get("/contacts/find?name=\(WebClient.formEncode(name))"))
        for path in ["/contacts/\(id)/edit", "/contacts/\(id)/delete", "/contacts?q=onerror"] {
            pages.append(try await client.get(path))
        }
        for page in pages {
            #expect(page.status == 200)
            #expect(ListsWeb.holdsNoHostileMarkup(page.body))
            #expect(page.body.contains(ListsWeb.escapedScript))
            #expect(page.body.contains(ListsWeb.rightToLeft))
        }
        #expect(pages[0].body.contains(ListsWeb.escapedAttribute) && pages[0].body.contains(ListsWeb.zeroWidth))
        #expect(pages[1].body.contains(">Match found: 1 contact named"))
        let refused = try await client.post(
            "/contacts", [("name", ListsWeb.attribute), ("address", ListsWeb.script), ("contact", "")])
        #expect(refused.status == 422)
        #expect(ListsWeb.holdsNoHostileMarkup(refused.body))
        #expect(ListsWeb.value(of: "field-name", in: refused.body) == ListsWeb.escapedAttribute)
    }
}
