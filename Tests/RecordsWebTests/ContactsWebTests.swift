import Foundation
import RecordsWeb
import SQLiteStore
import Testing

@testable import RecordsApp

/// The Contacts screen: the original tutorial's form that saves
/// ("Contact added" / "Failed to add contact") or finds by name, filling
/// the fields ("Match found" / "Match not found"); the list ("address |
/// contact"), sorted, paged and searched; edit and delete.
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
        try await store.add(ContactDraft(name: name, address: address, contact: contact))
    }

    // MARK: - The screen

    @Test("The screen needs a session")
    func needsASession() async throws {
        defer { server.stop() }
        let response = try await server.client().get("/contacts")
        #expect(response.status == 303)
        #expect(response.location == "/login?next=%2Fcontacts")
    }

    @Test("The screen has the form with labelled fields, Save and Find, and the empty list")
    func screen() async throws {
        defer { server.stop() }
        let response = try await client.get("/contacts")
        #expect(response.status == 200)
        #expect(response.body.contains("<form method=\"post\" action=\"/contacts\" class=\"card\" id=\"contact-form\""))
        for field in ["name", "address", "contact"] {
            #expect(response.body.contains("<label for=\"field-\(field)\">"))
        }
        #expect(response.body.contains("id=\"save-contact\">Save</button>"))
        #expect(response.body.contains("formaction=\"/contacts/find\" id=\"find-contact\">Find</button>"))
        #expect(response.body.contains("id=\"empty\">No contacts yet."))
        #expect(!response.body.contains("contact-status"))
    }

    @Test("The list shows each name with \"address | contact\" beneath")
    func list() async throws {
        defer { server.stop() }
        let jane = try await add("Jane Doe", "12 Main St", "+1 555 0100")
        let body = try await client.get("/contacts").body
        #expect(body.contains("<ul class=\"records\" id=\"contacts-list\">"))
        #expect(
            body.contains(
                "<li id=\"contact-\(jane.id)\"><span class=\"title\">Jane Doe</span>"
                    + "<span class=\"subtitle\">12 Main St | +1 555 0100</span>"))
        #expect(body.contains("href=\"/contacts/\(jane.id)/edit\""))
        #expect(body.contains("href=\"/contacts/\(jane.id)/delete\""))
    }

    // MARK: - Save

    @Test("Saving redirects to the screen, whose status line says \"Contact added\"; the list has the contact")
    func save() async throws {
        defer { server.stop() }
        _ = try await client.get("/contacts")
        let response = try await client.post(
            "/contacts", [("name", "Jane Doe"), ("address", "12 Main St"), ("contact", "+1 555 0100")])
        #expect(response.status == 303)
        #expect(response.location == "/contacts")
        #expect(try await store.all().map(\.name) == ["Jane Doe"])
        let page = try await ListsWeb.follow(response, with: client)
        #expect(page.body.contains("<p role=\"status\" class=\"flash\" id=\"flash\">Contact added</p>"))
        #expect(page.body.contains("12 Main St | +1 555 0100"))
        #expect(ListsWeb.value(of: "field-name", in: page.body) == "")
    }

    @Test("A refused save says \"Failed to add contact\", shows the errors beside the fields, keeps the input")
    func saveRefused() async throws {
        defer { server.stop() }
        _ = try await client.get("/contacts")
        let response = try await client.post(
            "/contacts", [("name", "Jane Doe"), ("address", " "), ("contact", String(repeating: "5", count: 201))])
        #expect(response.status == 422)
        #expect(
            response.body.contains(
                "<p role=\"status\" id=\"contact-status\" class=\"form-error\">Failed to add contact</p>"))
        #expect(response.body.contains("id=\"field-address-error\">address must not be empty</p>"))
        #expect(response.body.contains("id=\"field-contact-error\">contact must be at most 200 characters"))
        #expect(ListsWeb.value(of: "field-name", in: response.body) == "Jane Doe")
        #expect(try await store.count() == 0)
    }

    @Test("A save sent with a field twice is refused with the screen again, the input kept")
    func duplicateFieldRefused() async throws {
        defer { server.stop() }
        let csrf = try #require(try await client.get("/contacts").csrfToken)
        let body = "csrf=\(csrf)&name=Jane&address=Main&contact=555&contact=666"
        let response = try await client.post(
            "/contacts", body: Data(body.utf8), contentType: "application/x-www-form-urlencoded")
        #expect(response.status == 400)
        #expect(response.body.contains(">Failed to add contact</p>"))
        #expect(response.body.contains("more than once"))
        #expect(ListsWeb.value(of: "field-address", in: response.body) == "Main")
        #expect(try await store.count() == 0)
    }

    // MARK: - Find

    @Test("Find by name redirects to the screen, which fills the fields and says \"Match found\"")
    func findFillsTheFields() async throws {
        defer { server.stop() }
        try await add("Jane Doe", "12 Main St", "+1 555 0100")
        _ = try await client.get("/contacts")
        let response = try await client.post(
            "/contacts/find", [("name", "  jane   DOE "), ("address", ""), ("contact", "")])
        #expect(response.status == 303)
        #expect(response.location == "/contacts?find=%20%20jane%20%20%20DOE%20")
        let page = try await ListsWeb.follow(response, with: client)
        #expect(page.status == 200)
        #expect(page.body.contains("id=\"contact-status\" class=\"flash\">Match found</p>"))
        #expect(ListsWeb.value(of: "field-name", in: page.body) == "Jane Doe")
        #expect(ListsWeb.value(of: "field-address", in: page.body) == "12 Main St")
        #expect(ListsWeb.value(of: "field-contact", in: page.body) == "+1 555 0100")
    }

    @Test("Finding a name no contact has says \"Match not found\" and keeps the name")
    func findNoMatch() async throws {
        defer { server.stop() }
        try await add("Jane Doe")
        let page = try await client.get("/contacts?find=John")
        #expect(page.status == 200)
        #expect(page.body.contains("id=\"contact-status\" class=\"form-error\">Match not found</p>"))
        #expect(ListsWeb.value(of: "field-name", in: page.body) == "John")
        #expect(ListsWeb.value(of: "field-address", in: page.body) == "")
    }

    @Test("Finding a blank name says \"Match not found\" with the error beside the name")
    func findBlank() async throws {
        defer { server.stop() }
        _ = try await client.get("/contacts")
        let response = try await client.post("/contacts/find", [("name", "   "), ("address", "kept"), ("contact", "")])
        #expect(response.status == 422)
        #expect(response.body.contains(">Match not found</p>"))
        #expect(response.body.contains("id=\"field-name-error\">name must not be empty</p>"))
        #expect(ListsWeb.value(of: "field-address", in: response.body) == "kept")
    }

    @Test("When several contacts have the name, the first fills the fields and the page says how many")
    func findSeveral() async throws {
        defer { server.stop() }
        try await add("Jane Doe", "First St")
        try await add("jane doe", "Second St")
        let page = try await client.get("/contacts?find=Jane%20Doe")
        #expect(page.body.contains(">Match found</p>"))
        #expect(ListsWeb.value(of: "field-address", in: page.body) == "First St")
        #expect(page.body.contains("2 contacts have this name"))
    }

    @Test("A hostile name to find comes back escaped in the name field")
    func hostileFindEscaped() async throws {
        defer { server.stop() }
        for text in [ListsWeb.script, ListsWeb.attribute] {
            let response = try await client.get("/contacts?find=\(WebClient.formEncode(text))")
            #expect(response.status == 200)
            #expect(response.body.contains(">Match not found</p>"))
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
        #expect(ListsWeb.value(of: "field-address", in: form.body) == "12 Main St")
        let refused = try await client.postEdit(
            "/contacts/\(jane.id)/edit", [("name", ""), ("address", "1 High St"), ("contact", "555")])
        #expect(refused.status == 422)
        #expect(refused.body.contains("id=\"field-name-error\">name must not be empty</p>"))
        #expect(ListsWeb.value(of: "field-address", in: refused.body) == "1 High St")
        #expect(try await store.contact(id: jane.id) == jane)
        let saved = try await client.postEdit(
            "/contacts/\(jane.id)/edit", [("name", "Jane Roe"), ("address", "1 High St"), ("contact", "555")])
        #expect(saved.status == 303)
        #expect(saved.location == "/contacts")
        #expect(try await store.contact(id: jane.id)?.details == "1 High St | 555")
        let page = try await ListsWeb.follow(saved, with: client)
        #expect(page.body.contains("id=\"flash\">Updated \u{2068}Jane Roe\u{2069}.</p>"))
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
        #expect(page.body.contains("id=\"flash\">Deleted \u{2068}Jane Doe\u{2069}.</p>"))
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
        #expect(try await client.post("/contacts/find", fields, addCSRF: false).status == 403)
        #expect(try await client.post("/contacts/\(jane.id)/edit", fields + [("csrf", "forged")]).status == 403)
        #expect(try await client.post("/contacts/\(jane.id)/delete", [], addCSRF: false).status == 403)
        #expect(try await store.all() == [jane])
    }

    @Test("Hostile text in every field comes back escaped on every page that shows it")
    func hostileTextEscaped() async throws {
        defer { server.stop() }
        _ = try await client.get("/contacts")
        let name = ListsWeb.script + ListsWeb.rightToLeft
        let saved = try await client.post(
            "/contacts",
            [("name", name), ("address", ListsWeb.attribute), ("contact", ListsWeb.zeroWidth + ListsWeb.script)])
        #expect(saved.status == 303)
        let id = try #require(try await store.all().first?.id)
        var pages = [try await ListsWeb.follow(saved, with: client)]
        let find = try await client.post("/contacts/find", [("name", name), ("address", ""), ("contact", "")])
        pages.append(try await ListsWeb.follow(find, with: client))
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
        #expect(pages[1].body.contains(">Match found</p>"))
        let refused = try await client.post(
            "/contacts", [("name", ListsWeb.attribute), ("address", ListsWeb.script), ("contact", "")])
        #expect(refused.status == 422)
        #expect(ListsWeb.holdsNoHostileMarkup(refused.body))
        #expect(ListsWeb.value(of: "field-name", in: refused.body) == ListsWeb.escapedAttribute)
    }
}
