import Foundation
import RecordsWeb
import SQLiteStore
import Testing

@testable import RecordsApp

/// The People pages: the list, sorted and paged, with search;
/// a person's page; the add and edit forms; delete with confirmation.
@Suite("People pages")
struct PeopleWebTests {
    let server: TestServer
    let client: WebClient
    var store: PeopleStore { server.app.context.people }

    init() throws {
        server = try ListsWeb.server()
        client = ListsWeb.signedIn(server)
    }

    @discardableResult
    private func add(_ first: String, _ last: String, _ age: Int?) async throws -> Person {
        try await store.add(PersonDraft(firstName: first, lastName: last, age: age))
    }

    // MARK: - List

    @Test("The list needs a session: a visitor is sent to log in and back")
    func listNeedsASession() async throws {
        defer { server.stop() }
        let response = try await server.client().get("/people?sort=age")
        #expect(response.status == 303)
        #expect(response.location == "/login?next=%2Fpeople%3Fsort%3Dage")
    }

    @Test("The list is a table of last name, first name and age, by last name by default")
    func listShowsNamesAndAges() async throws {
        defer { server.stop() }
        let ada = try await add("Ada", "Lovelace", 36)
        let alan = try await add("Alan", "Turing", nil)
        let response = try await client.get("/people")
        #expect(response.status == 200)
        #expect(response.body.contains("<table class=\"records stacked\" id=\"people-list\">"))
        #expect(
            response.body.contains(
                "<tr id=\"person-\(ada.id)\"><td data-label=\"Last name\"><a class=\"title\" href=\"/people/\(ada.id)\">Lovelace</a></td>"
                    + "<td data-label=\"First name\">Ada</td><td data-label=\"Age\" class=\"number\">36</td></tr>"))
        #expect(response.body.contains("<td data-label=\"Age\" class=\"number\">unknown</td>"))
        #expect(ListsWeb.rowIDs(in: response.body, prefix: "person") == [ada.id, alan.id])
        #expect(
            response.body.contains(
                "<th scope=\"col\" class=\"sortable\" aria-sort=\"ascending\"><a href=\"/people?order=desc\" id=\"sort-name\" aria-current=\"true\">Last name<span class=\"sort-arrow\" aria-hidden=\"true\"> ▲</span></a></th>"
            ))
        #expect(response.body.contains("<th scope=\"col\">First name</th>"))
        #expect(response.body.contains("<p class=\"list-count\" id=\"list-count\">2 people · page 1 of 1</p>"))
    }

    @Test("The count names one person in the singular")
    func countNoun() async throws {
        defer { server.stop() }
        try await add("Ada", "Lovelace", 36)
        #expect(try await client.get("/people").body.contains(">1 person · page 1 of 1</p>"))
    }

    @Test("An empty list says so and offers to add someone")
    func emptyList() async throws {
        defer { server.stop() }
        let response = try await client.get("/people")
        #expect(response.status == 200)
        #expect(response.body.contains("id=\"empty\">No one yet."))
        #expect(!response.body.contains("id=\"people-list\""))
    }

    @Test("Sorting by age puts the youngest first and unknown ages last; the age heading shows it")
    func sortByAge() async throws {
        defer { server.stop() }
        let old = try await add("Old", "Zed", 90)
        let none = try await add("No", "Age", nil)
        let young = try await add("Young", "Abel", 20)
        let body = try await client.get("/people?sort=age").body
        #expect(ListsWeb.rowIDs(in: body, prefix: "person") == [young.id, old.id, none.id])
        #expect(
            body.contains(
                "aria-sort=\"ascending\"><a href=\"/people?sort=age&amp;order=desc\" id=\"sort-age\" aria-current=\"true\">Age<span class=\"sort-arrow\" aria-hidden=\"true\"> ▲</span></a>"
            ))
        #expect(
            body.contains(
                "<th scope=\"col\" class=\"sortable\"><a href=\"/people\" id=\"sort-name\">Last name</a></th>"))
        #expect(body.matches(of: /aria-sort=/).count == 1)
        let newest = try await client.get("/people?sort=newest").body
        #expect(ListsWeb.rowIDs(in: newest, prefix: "person") == [young.id, none.id, old.id])
        // The current order's link is marked and, like the active
        // heading's, chooses the other way.
        #expect(
            newest.contains(
                "<a href=\"/people?sort=newest&amp;order=asc\" id=\"sort-newest\" aria-current=\"true\" title=\"Show oldest first\">Newest first</a>"
            ))
        #expect(!newest.contains("aria-sort="))
        let oldest = try await client.get("/people?sort=newest&order=asc").body
        #expect(ListsWeb.rowIDs(in: oldest, prefix: "person") == [old.id, none.id, young.id])
        #expect(
            oldest.contains(
                "<a href=\"/people?sort=newest\" id=\"sort-newest\" aria-current=\"true\" title=\"Show newest first\">Oldest first</a>"
            ))
    }

    @Test("The active heading's link reverses the order; the arrow, aria-sort and the other headings follow")
    func headingReversesOrder() async throws {
        defer { server.stop() }
        let old = try await add("Old", "Zed", 90)
        let none = try await add("No", "Age", nil)
        let young = try await add("Young", "Abel", 20)
        let twin = try await add("Twin", "Abel", 20)
        let down = try await client.get("/people?sort=age&order=desc")
        #expect(down.status == 200)
        // Oldest first, the tie of age by name the other way too, the unknown age still last.
        #expect(ListsWeb.rowIDs(in: down.body, prefix: "person") == [old.id, young.id, twin.id, none.id])
        #expect(
            down.body.contains(
                "aria-sort=\"descending\"><a href=\"/people?sort=age\" id=\"sort-age\" aria-current=\"true\">Age<span class=\"sort-arrow\" aria-hidden=\"true\"> ▼</span></a>"
            ))
        // Another heading chooses its own order in its own direction.
        #expect(down.body.contains("<a href=\"/people\" id=\"sort-name\">Last name</a>"))
        #expect(down.body.matches(of: /aria-sort=/).count == 1)
        let byName = try await client.get("/people?order=desc")
        #expect(ListsWeb.rowIDs(in: byName.body, prefix: "person") == [old.id, none.id, young.id, twin.id])
        #expect(
            byName.body.contains(
                "aria-sort=\"descending\"><a href=\"/people\" id=\"sort-name\" aria-current=\"true\">Last name<span class=\"sort-arrow\" aria-hidden=\"true\"> ▼</span></a>"
            ))
        // The default direction is not written out: the ascending address is the plain one.
        let up = try await client.get("/people?sort=age&order=asc")
        #expect(ListsWeb.rowIDs(in: up.body, prefix: "person") == [twin.id, young.id, old.id, none.id])
        #expect(up.body.contains("aria-sort=\"ascending\"><a href=\"/people?sort=age&amp;order=desc\" id=\"sort-age\""))
    }

    @Test("The direction is kept by the paging links, the page-size links and the way back from past the end")
    func directionKeptByLinks() async throws {
        defer { server.stop() }
        for index in 1...45 { try await add("Person", String(format: "P%02d", index), index) }
        let first = try await client.get("/people?sort=age&order=desc")
        #expect(first.body.contains(">P45</a>") && !first.body.contains(">P25</a>"))
        #expect(
            first.body.contains("<a href=\"/people?sort=age&amp;order=desc&amp;page=2\" rel=\"next\" id=\"page-next\">")
        )
        #expect(
            first.body.contains("<a href=\"/people?sort=age&amp;order=desc&amp;size=50\" id=\"page-size-50\">50</a>"))
        let second = try await client.get("/people?sort=age&order=desc&page=2")
        #expect(
            second.body.contains(">P25</a>") && second.body.contains(">P06</a>") && !second.body.contains(">P05</a>"))
        #expect(second.body.contains("<a href=\"/people?sort=age&amp;order=desc\" rel=\"prev\" id=\"page-previous\">"))
        let past = try await client.get("/people?order=desc&page=9")
        #expect(past.body.contains("<a href=\"/people?order=desc&amp;page=3\" id=\"page-back\">"))
        // A search is ranked: the direction is not carried into it or out of it.
        let search = try await client.get("/people?q=person&order=desc")
        #expect(search.status == 200)
        #expect(search.body.contains("<a href=\"/people?q=person&amp;page=2\" rel=\"next\""))
    }

    @Test("An order that is neither asc nor desc is a 400 that says which it must be")
    func badDirection() async throws {
        defer { server.stop() }
        for order in ["descending", "DESC", "up", "1", "asc%20"] {
            let response = try await client.get("/people?sort=age&order=\(order)")
            #expect(response.status == 400, "\(order)")
            #expect(response.body.contains("The order must be asc (going up) or desc (going down)."), "\(order)")
        }
    }

    @Test("The list comes in pages of 20 with next and previous links that keep the sort, and says page X of Y")
    func paging() async throws {
        defer { server.stop() }
        for index in 1...45 { try await add("Person", String(format: "P%02d", index), index) }
        let first = try await client.get("/people?sort=age")
        #expect(ListsWeb.itemCount(in: first.body, prefix: "person") == 20)
        #expect(first.body.contains("<a href=\"/people?sort=age&amp;page=2\" rel=\"next\" id=\"page-next\">"))
        #expect(!first.body.contains("id=\"page-previous\""))
        #expect(first.body.contains(">45 people · page 1 of 3</p>"))
        let third = try await client.get("/people?sort=age&page=3")
        #expect(third.status == 200)
        #expect(ListsWeb.itemCount(in: third.body, prefix: "person") == 5)
        #expect(third.body.contains(">P41</a>") && third.body.contains(">P45</a>"))
        #expect(third.body.contains("<a href=\"/people?sort=age&amp;page=2\" rel=\"prev\" id=\"page-previous\">"))
        #expect(!third.body.contains("id=\"page-next\""))
        #expect(third.body.contains("<span id=\"page-number\">Page 3 of 3</span>"))
    }

    @Test("A page size of 20, 50 or 100 can be chosen; the links keep it; others are a clear 400")
    func pageSize() async throws {
        defer { server.stop() }
        for index in 1...55 { try await add("Person", String(format: "P%02d", index), index) }
        let first = try await client.get("/people")
        #expect(first.body.contains("<a href=\"/people\" id=\"page-size-20\" aria-current=\"true\">20</a>"))
        #expect(first.body.contains("<a href=\"/people?size=50\" id=\"page-size-50\">50</a>"))
        let fifty = try await client.get("/people?sort=age&size=50")
        #expect(fifty.status == 200)
        #expect(ListsWeb.itemCount(in: fifty.body, prefix: "person") == 50)
        #expect(fifty.body.contains(">55 people · page 1 of 2</p>"))
        #expect(fifty.body.contains("<a href=\"/people?sort=age&amp;size=50&amp;page=2\" rel=\"next\""))
        #expect(
            fifty.body.contains(
                "<a href=\"/people?sort=age&amp;order=desc&amp;size=50\" id=\"sort-age\" aria-current=\"true\">"))
        let hundred = try await client.get("/people?size=100")
        #expect(ListsWeb.itemCount(in: hundred.body, prefix: "person") == 55)
        #expect(!hundred.body.contains("id=\"page-next\""))
        for size in ["0", "10", "21", "101", "500", "-20", "abc", "1e2"] {
            let response = try await client.get("/people?size=\(size)")
            #expect(response.status == 400, "\(size)")
            #expect(response.body.contains("The page size must be 20, 50 or 100."), "\(size)")
        }
    }

    @Test("A page past the end says so, with what the list has, and leads back to its last page")
    func pagePastTheEnd() async throws {
        defer { server.stop() }
        try await add("Ada", "Lovelace", 36)
        let response = try await client.get("/people?page=7")
        #expect(response.status == 200)
        #expect(
            response.body.contains(
                "Page 7 is past the end of the list. The list has 1 person on 1 page. "
                    + "<a href=\"/people\" id=\"page-back\">Back to the first page</a>"))
        // The way back is the notice's link, not a Previous to another page past the end.
        #expect(!response.body.contains("rel=\"prev\""))
        #expect(!response.body.contains("id=\"people-list\""))
        for index in 1...44 { try await add("Person", String(format: "P%02d", index), index) }
        let past = try await client.get("/people?sort=age&page=9")
        #expect(
            past.body.contains(
                "The list has 45 people on 3 pages. <a href=\"/people?sort=age&amp;page=3\" id=\"page-back\">Back to the last page (3)</a>"
            ))
    }

    @Test("A page number or sort that is not one the list has is a 400 page")
    func badListQuery() async throws {
        defer { server.stop() }
        for query in ["page=0", "page=-1", "page=abc", "page=99999999999999999999", "sort=salary", "page=\(Int.max)"] {
            let response = try await client.get("/people?\(query)")
            #expect(response.status == 400, "\(query)")
            #expect(response.body.contains("class=\"notice\""))
        }
    }

    @Test("Search shows the index's matches, marked, best first, paged with the search kept")
    func search() async throws {
        defer { server.stop() }
        try await add("Ada", "Lovelace", 36)
        try await add("Alan", "Turing", 41)
        for index in 1...21 { try await add("Adam", String(format: "A%02d", index), nil) }
        let response = try await client.get("/people?q=ada+LOVE")
        #expect(response.status == 200)
        #expect(response.body.contains("<mark>Ada</mark> <mark>Lovelace</mark>"))
        #expect(!response.body.contains("Turing"))
        #expect(response.body.contains("Best matches first."))
        #expect(ListsWeb.value(of: "field-q", in: response.body) == "ada LOVE")
        let paged = try await client.get("/people?q=adam")
        #expect(ListsWeb.itemCount(in: paged.body, prefix: "person") == 20)
        #expect(paged.body.contains("<a href=\"/people?q=adam&amp;page=2\" rel=\"next\""))
        #expect(paged.body.contains(">21 matches · page 1 of 2</p>"))
        #expect(response.body.contains(">1 match · page 1 of 1</p>"))
        // A search is ranked: its headings do not sort.
        #expect(!response.body.contains("aria-sort=") && !response.body.contains("id=\"sort-name\""))
        let second = try await client.get("/people?q=adam&page=2")
        #expect(ListsWeb.itemCount(in: second.body, prefix: "person") == 1)
    }

    @Test("A search that finds no one says so; one with nothing to look for too, without an error")
    func searchFindsNoOne() async throws {
        defer { server.stop() }
        try await add("Ada", "Lovelace", 36)
        for text in ["nobody", "%22*"] {
            let response = try await client.get("/people?q=\(text)")
            #expect(response.status == 200)
            #expect(response.body.contains("id=\"empty\">No one matches"))
        }
    }

    @Test("Hostile search text comes back escaped in the search box and the heading")
    func hostileSearchTextEscaped() async throws {
        defer { server.stop() }
        try await add("Ada", "Lovelace", 36)
        for text in [ListsWeb.script, ListsWeb.attribute] {
            let query = WebClient.formEncode(text)
            let response = try await client.get("/people?q=\(query)")
            #expect(response.status == 200)
            #expect(ListsWeb.holdsNoHostileMarkup(response.body))
            #expect(response.body.contains("People matching “<bdi>\(HTML.escape(text))</bdi>”"))
            #expect(ListsWeb.value(of: "field-q", in: response.body) == HTML.escape(text))
        }
    }

    // MARK: - Add

    @Test("The add form labels every field")
    func addForm() async throws {
        defer { server.stop() }
        let response = try await client.get("/people/new")
        #expect(response.status == 200)
        for field in ["firstName", "lastName", "age"] {
            #expect(response.body.contains("<label for=\"field-\(field)\">"))
            #expect(response.body.contains("<input id=\"field-\(field)\" name=\"\(field)\""))
        }
        #expect(response.body.contains("<form method=\"post\" action=\"/people\""))
    }

    @Test("Adding redirects to the new person's page with a status line")
    func addRedirects() async throws {
        defer { server.stop() }
        _ = try await client.get("/people/new")
        let response = try await client.post(
            "/people", [("firstName", " Ada "), ("lastName", "Lovelace"), ("age", "36")])
        #expect(response.status == 303)
        let person = try #require(try await store.all().first)
        #expect(person.fullName == "Ada Lovelace" && person.age == 36)
        #expect(response.location == "/people/\(person.id)")
        let page = try await ListsWeb.follow(response, with: client)
        #expect(page.body.contains("id=\"flash\">Added “\u{2068}Ada Lovelace\u{2069}”.</p>"))
        #expect(page.body.contains("<dd id=\"person-age\">36</dd>"))
    }

    @Test("An empty age is unknown")
    func addWithoutAge() async throws {
        defer { server.stop() }
        _ = try await client.get("/people/new")
        let response = try await client.post("/people", [("firstName", "Ada"), ("lastName", "Lovelace"), ("age", "")])
        #expect(response.status == 303)
        #expect(try await store.all().map(\.age) == [nil])
    }

    @Test("A refused add shows each error beside its field, keeps the input, saves nothing")
    func addValidation() async throws {
        defer { server.stop() }
        _ = try await client.get("/people/new")
        let response = try await client.post("/people", [("firstName", ""), ("lastName", "Lovelace"), ("age", "200")])
        #expect(response.status == 422)
        #expect(
            response.body.contains("<p class=\"error\" id=\"field-firstName-error\">First name is required.</p>"))
        #expect(
            response.body.contains(
                "<p class=\"error\" id=\"field-age-error\">Age must be a whole number from 0 to 150.</p>"))
        #expect(!response.body.contains("field-lastName-error"))
        #expect(ListsWeb.value(of: "field-lastName", in: response.body) == "Lovelace")
        #expect(ListsWeb.value(of: "field-age", in: response.body) == "200")
        #expect(response.body.contains("role=\"alert\""))
        #expect(try await store.count() == 0)
    }

    @Test("Hostile text in every field comes back escaped on every page that shows it")
    func hostileTextEscaped() async throws {
        defer { server.stop() }
        _ = try await client.get("/people/new")
        let added = try await client.post(
            "/people",
            [
                ("firstName", ListsWeb.script + ListsWeb.rightToLeft),
                ("lastName", ListsWeb.attribute + ListsWeb.zeroWidth), ("age", "1"),
            ])
        #expect(added.status == 303)
        let id = try #require(try await store.all().first?.id)
        var pages = [try await ListsWeb.follow(added, with: client)]
        for path in ["/people", "/people?q=script", "/people/\(id)/edit", "/people/\(id)/delete"] {
            pages.append(try await client.get(path))
        }
        for page in pages {
            #expect(page.status == 200)
            #expect(ListsWeb.holdsNoHostileMarkup(page.body))
            #expect(page.body.contains(ListsWeb.escapedScript) || page.body.contains("&lt;<mark>script</mark>"))
            #expect(page.body.contains(ListsWeb.escapedAttribute))
            #expect(page.body.contains(ListsWeb.rightToLeft) && page.body.contains(ListsWeb.zeroWidth))
        }
        // A refused form shows the hostile age it was given, escaped.
        let refused = try await client.post(
            "/people", [("firstName", ListsWeb.script), ("lastName", ListsWeb.attribute), ("age", ListsWeb.attribute)])
        #expect(refused.status == 422)
        #expect(ListsWeb.holdsNoHostileMarkup(refused.body))
        #expect(ListsWeb.value(of: "field-age", in: refused.body) == ListsWeb.escapedAttribute)
    }

    @Test("A form sent with a field twice is refused with the form again and the input kept")
    func duplicateFieldRefused() async throws {
        defer { server.stop() }
        let form = try await client.get("/people/new")
        let csrf = try #require(form.csrfToken)
        let body = "csrf=\(csrf)&firstName=Ada&lastName=Lovelace&age=36&age=37"
        let response = try await client.post(
            "/people", body: Data(body.utf8), contentType: "application/x-www-form-urlencoded")
        #expect(response.status == 400)
        #expect(response.body.contains("id=\"person-form\""))
        #expect(response.body.contains("more than once"))
        #expect(ListsWeb.value(of: "field-lastName", in: response.body) == "Lovelace")
        #expect(try await store.count() == 0)
    }

    // MARK: - Detail, edit, delete

    @Test("A person's page shows the fields and links to edit and delete")
    func detail() async throws {
        defer { server.stop() }
        let ada = try await add("Ada", "Lovelace", nil)
        let response = try await client.get("/people/\(ada.id)")
        #expect(response.status == 200)
        #expect(response.body.contains("<h1 id=\"person-name\">Ada Lovelace</h1>"))
        #expect(response.body.contains("<dd id=\"person-age\">unknown</dd>"))
        #expect(response.body.contains("href=\"/people/\(ada.id)/edit\""))
        #expect(response.body.contains("href=\"/people/\(ada.id)/delete\""))
    }

    @Test("The edit form is filled; saving redirects with a status line; an empty age clears it")
    func edit() async throws {
        defer { server.stop() }
        let ada = try await add("Ada", "Lovelace", 36)
        let form = try await client.get("/people/\(ada.id)/edit")
        #expect(form.status == 200)
        #expect(ListsWeb.value(of: "field-firstName", in: form.body) == "Ada")
        #expect(ListsWeb.value(of: "field-age", in: form.body) == "36")
        let response = try await client.postEdit(
            "/people/\(ada.id)/edit", [("firstName", "Augusta Ada"), ("lastName", "King"), ("age", "")])
        #expect(response.status == 303)
        #expect(response.location == "/people/\(ada.id)")
        #expect(
            try await store.person(id: ada.id)
                == Person(id: ada.id, firstName: "Augusta Ada", lastName: "King", age: nil))
        let page = try await ListsWeb.follow(response, with: client)
        #expect(page.body.contains("id=\"flash\">Updated “\u{2068}Augusta Ada King\u{2069}”.</p>"))
    }

    @Test(
        "The live script's reads between a save's redirect and the page leave the status line to the page",
        arguments: [["X-Records-Live": "1"], ["Sec-Fetch-Mode": "cors"]])
    func scriptReadsLeaveTheStatusLine(marks: [String: String]) async throws {
        defer { server.stop() }
        let ada = try await add("Ada", "Lovelace", 36)
        let response = try await client.postEdit(
            "/people/\(ada.id)/edit", [("firstName", "Ada"), ("lastName", "Byron"), ("age", "37")])
        #expect(response.status == 303)
        // The save's change is announced to the page still open, whose
        // script reads the edit form and the page while the browser
        // follows the redirect.
        for path in ["/people/\(ada.id)/edit", "/people/\(ada.id)"] {
            let read = try await client.get(path, headers: marks)
            #expect(read.status == 200)
            #expect(!read.body.contains("id=\"flash\""), "\(path)")
            #expect(!read.setCookies.contains { $0.hasPrefix(WebApp.flashCookie + "=") }, "\(path)")
        }
        let page = try await ListsWeb.follow(response, with: client)
        #expect(page.body.contains("id=\"flash\">Updated “\u{2068}Ada Byron\u{2069}”.</p>"))
        // Shown once: the browser's next load of the page has no status line.
        let again = try await client.get("/people/\(ada.id)", headers: ["Sec-Fetch-Mode": "navigate"])
        #expect(!again.body.contains("id=\"flash\""))
    }

    @Test("A refused edit shows the errors beside the fields, keeps the input, changes nothing")
    func editValidation() async throws {
        defer { server.stop() }
        let ada = try await add("Ada", "Lovelace", 36)
        _ = try await client.get("/people/\(ada.id)/edit")
        let response = try await client.postEdit(
            "/people/\(ada.id)/edit", [("firstName", "Ada"), ("lastName", "   "), ("age", "old")])
        #expect(response.status == 422)
        #expect(response.body.contains("id=\"field-lastName-error\">Last name is required.</p>"))
        #expect(response.body.contains("id=\"field-age-error\">Age must be a whole number from 0 to 150.</p>"))
        #expect(ListsWeb.value(of: "field-age", in: response.body) == "old")
        #expect(try await store.person(id: ada.id) == ada)
    }

    @Test("Delete asks first; confirming deletes and redirects to the list with a status line")
    func delete() async throws {
        defer { server.stop() }
        let ada = try await add("Ada", "Lovelace", 36)
        let confirm = try await client.get("/people/\(ada.id)/delete")
        #expect(confirm.status == 200)
        #expect(confirm.body.contains("<h1>Delete <bdi>Ada Lovelace</bdi>?</h1>"))
        #expect(confirm.body.contains("<form method=\"post\" action=\"/people/\(ada.id)/delete\""))
        #expect(try await store.count() == 1)
        let response = try await client.post("/people/\(ada.id)/delete", [])
        #expect(response.status == 303)
        #expect(response.location == "/people")
        #expect(try await store.count() == 0)
        let list = try await ListsWeb.follow(response, with: client)
        #expect(list.body.contains("id=\"flash\">Deleted “\u{2068}Ada Lovelace\u{2069}”.</p>"))
        #expect(try await client.get("/people/\(ada.id)").status == 404)
    }

    @Test("A person that does not exist is the 404 page on every route")
    func missingPersonIsNotFound() async throws {
        defer { server.stop() }
        _ = try await client.get("/people/new")
        for path in ["/people/99", "/people/99/edit", "/people/99/delete", "/people/abc", "/people/0/edit"] {
            #expect(try await client.get(path).status == 404, "\(path)")
        }
        let edit = try await client.post("/people/99/edit", [("firstName", "A"), ("lastName", "B"), ("age", "1")])
        #expect(edit.status == 404)
        #expect(try await client.post("/people/99/delete", []).status == 404)
    }

    @Test("Every form is refused without the page's CSRF token, and changes nothing")
    func csrfRefused() async throws {
        defer { server.stop() }
        let ada = try await add("Ada", "Lovelace", 36)
        let fields = [("firstName", "Eve"), ("lastName", "Evil"), ("age", "1")]
        #expect(try await client.post("/people", fields, addCSRF: false).status == 403)
        #expect(try await client.post("/people", fields + [("csrf", "forged")]).status == 403)
        #expect(try await client.post("/people/\(ada.id)/edit", fields, addCSRF: false).status == 403)
        #expect(try await client.post("/people/\(ada.id)/delete", [], addCSRF: false).status == 403)
        #expect(try await store.all() == [ada])
    }

    @Test("A row another tool wrote badly is named on the list, refused on its page, and can be deleted")
    func unreadableRow() async throws {
        defer { server.stop() }
        try await add("Ada", "Lovelace", 36)
        try server.database.write { db in
            try db.execute(
                "INSERT INTO peopleInfo (peopleInfoID, firstname, lastname, age) VALUES (9, 'Bad', 'Age', 'x')")
        }
        let list = try await client.get("/people")
        #expect(list.status == 200)
        #expect(list.body.contains(">Lovelace</a>"))
        #expect(list.body.contains("<div class=\"notice\" id=\"unreadable\">"))
        #expect(list.body.contains("person 9 cannot be read"))
        #expect(try await client.get("/people/9").status == 409)
        let confirm = try await client.get("/people/9/delete")
        #expect(confirm.status == 200)
        #expect(try await client.post("/people/9/delete", []).status == 303)
        #expect(try await store.count() == 1)
    }
}
