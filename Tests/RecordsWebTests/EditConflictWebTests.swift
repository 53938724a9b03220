import Foundation
import RecordsWeb
import Testing

@testable import RecordsApp

/// No lost updates from the pages: every edit and delete form carries the
/// record's version; saving over a newer version writes nothing and shows
/// theirs beside yours (409).
@Suite("Edit forms: no lost updates")
struct EditConflictWebTests {
    let server: TestServer
    let client: WebClient
    var people: PeopleStore { server.app.context.people }

    init() throws {
        server = try ListsWeb.server()
        client = ListsWeb.signedIn(server)
    }

    /// The hidden version a form in `body` carries.
    static func version(in body: String) -> String? {
        body.firstMatch(of: /name="version" value="([0-9a-f]{16})"/).map { String($0.1) }
    }

    /// The edit form's fields as a browser sends them: the hidden ones as
    /// the form was opened, then the typed values.
    func opened(_ path: String, typing: [(String, String)]) async throws -> [(String, String)] {
        let form = try await client.get(path)
        #expect(form.status == 200)
        let hidden = form.body.matches(of: /<input type="hidden" name="((?:version|was-)[A-Za-z-]*)" value="([^"]*)"/)
            .map { (String($0.1), String($0.2)) }
        return hidden + typing
    }

    private func addAda() async throws -> Person {
        try await people.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
    }

    // MARK: - People

    @Test("The edit form carries the person's version and the values it was opened with")
    func editFormCarriesTheVersion() async throws {
        defer { server.stop() }
        let ada = try await addAda()
        let form = try await client.get("/people/\(ada.id)/edit")
        #expect(Self.version(in: form.body) == ada.version.description)
        #expect(form.body.contains("<input type=\"hidden\" name=\"was-lastName\" value=\"Lovelace\">"))
        #expect(form.body.contains("data-live-form=\"people\" data-live-source=\"/people/\(ada.id)/edit\""))
        #expect(form.body.contains("<script src=\"/static/live-"))
    }

    @Test("A stale save writes nothing and comes back 409 with theirs beside yours")
    func staleSaveIsAConflict() async throws {
        defer { server.stop() }
        let ada = try await addAda()
        let fields = try await opened(
            "/people/\(ada.id)/edit", typing: [("firstName", "Ada"), ("lastName", "Byron"), ("age", "37")])
        let theirs = try await people.update(id: ada.id, with: PersonChanges(lastName: "King"))
        let response = try await client.post("/people/\(ada.id)/edit", fields)
        #expect(response.status == 409)
        #expect(response.body.contains("id=\"conflict\">Someone else saved this person after you opened the form."))
        #expect(response.body.contains("id=\"field-lastName-theirs-value\"><bdi>King</bdi>"))
        #expect(response.body.contains("id=\"field-lastName-yours-value\"><bdi>Byron</bdi>"))
        // Only the person changed the age: it is no choice, the typed value stands.
        #expect(!response.body.contains("id=\"conflict-age\""))
        #expect(ListsWeb.value(of: "field-age", in: response.body) == "37")
        // Saving again is over the version now stored.
        #expect(Self.version(in: response.body) == theirs.version.description)
        #expect(try await people.person(id: ada.id) == theirs)
    }

    @Test("A field only someone else changed offers their value first; one both changed offers yours")
    func defaultsFollowWhoChangedWhat() async throws {
        defer { server.stop() }
        let ada = try await addAda()
        let fields = try await opened(
            "/people/\(ada.id)/edit", typing: [("firstName", "Augusta"), ("lastName", "Lovelace"), ("age", "36")])
        try await people.update(id: ada.id, with: PersonChanges(firstName: "Countess", lastName: "King"))
        let body = try await client.post("/people/\(ada.id)/edit", fields).body
        #expect(body.contains("id=\"field-lastName-theirs\" checked>"))
        #expect(body.contains("id=\"field-lastName-yours\">"))
        #expect(body.contains("id=\"field-firstName-yours\" checked>"))
    }

    @Test("Resubmitting the conflict's form saves the chosen values over the new version")
    func resubmittingSaves() async throws {
        defer { server.stop() }
        let ada = try await addAda()
        let fields = try await opened(
            "/people/\(ada.id)/edit", typing: [("firstName", "Ada"), ("lastName", "Byron"), ("age", "36")])
        try await people.update(id: ada.id, with: PersonChanges(age: 37))
        let conflict = try await client.post("/people/\(ada.id)/edit", fields)
        #expect(conflict.status == 409)
        let version = try #require(Self.version(in: conflict.body))
        let again = try await client.post(
            "/people/\(ada.id)/edit",
            [("version", version), ("firstName", "Ada"), ("lastName", "Byron"), ("age", "37")])
        #expect(again.status == 303)
        #expect(
            try await people.person(id: ada.id) == Person(id: ada.id, firstName: "Ada", lastName: "Byron", age: 37))
    }

    @Test("Keep all of mine saves every typed value, whatever the choices")
    func keepAllOfMine() async throws {
        defer { server.stop() }
        let ada = try await addAda()
        let fields = try await opened(
            "/people/\(ada.id)/edit", typing: [("firstName", "Ada"), ("lastName", "Byron"), ("age", "36")])
        try await people.update(id: ada.id, with: PersonChanges(lastName: "King"))
        let conflict = try await client.post("/people/\(ada.id)/edit", fields)
        let version = try #require(Self.version(in: conflict.body))
        #expect(conflict.body.contains("<input type=\"hidden\" name=\"yours-lastName\" value=\"Byron\">"))
        let kept = try await client.post(
            "/people/\(ada.id)/edit",
            [
                ("version", version), ("take", "yours"), ("yours-firstName", "Ada"), ("yours-lastName", "Byron"),
                ("yours-age", "36"), ("firstName", "Ada"), ("lastName", "King"), ("age", "36"),
            ])
        #expect(kept.status == 303)
        #expect(try await people.person(id: ada.id)?.lastName == "Byron")
    }

    @Test("A save over the current version still works")
    func freshSaveWorks() async throws {
        defer { server.stop() }
        let ada = try await addAda()
        let fields = try await opened(
            "/people/\(ada.id)/edit", typing: [("firstName", "Ada"), ("lastName", "King"), ("age", "36")])
        let response = try await client.post("/people/\(ada.id)/edit", fields)
        #expect(response.status == 303)
        #expect(try await people.person(id: ada.id)?.lastName == "King")
    }

    @Test("A version that is not one the site writes is a 400, and nothing is written")
    func malformedVersionIsRefused() async throws {
        defer { server.stop() }
        let ada = try await addAda()
        _ = try await client.get("/people/\(ada.id)/edit")
        for bad in ["abc", "\"\(ada.version)\"", ada.version.description.uppercased() + "0"] {
            let response = try await client.post(
                "/people/\(ada.id)/edit", [("version", bad), ("firstName", "X"), ("lastName", "Y"), ("age", "1")])
            #expect(response.status == 400)
        }
        #expect(try await people.person(id: ada.id) == ada)
    }

    @Test("A validation error keeps the version the form was opened with")
    func validationErrorKeepsTheVersion() async throws {
        defer { server.stop() }
        let ada = try await addAda()
        let fields = try await opened(
            "/people/\(ada.id)/edit", typing: [("firstName", "Ada"), ("lastName", " "), ("age", "36")])
        try await people.update(id: ada.id, with: PersonChanges(age: 40))
        let refused = try await client.post("/people/\(ada.id)/edit", fields)
        #expect(refused.status == 422)
        #expect(Self.version(in: refused.body) == ada.version.description)
    }

    @Test("Hostile text on either side of a conflict comes back escaped")
    func conflictEscapesHostileText() async throws {
        defer { server.stop() }
        let ada = try await addAda()
        let fields = try await opened(
            "/people/\(ada.id)/edit",
            typing: [("firstName", ListsWeb.attribute), ("lastName", ListsWeb.script), ("age", "36")])
        try await people.update(
            id: ada.id, with: PersonChanges(firstName: ListsWeb.script, lastName: ListsWeb.attribute))
        let response = try await client.post("/people/\(ada.id)/edit", fields)
        #expect(response.status == 409)
        #expect(ListsWeb.holdsNoHostileMarkup(response.body))
        #expect(response.body.contains(ListsWeb.escapedScript))
        #expect(response.body.contains(ListsWeb.escapedAttribute))
    }

    @Test("Deleting a person changed since the confirmation asks again (409) and deletes nothing")
    func staleDeleteAsksAgain() async throws {
        defer { server.stop() }
        let ada = try await addAda()
        let confirm = try await client.get("/people/\(ada.id)/delete")
        let shown = try #require(Self.version(in: confirm.body))
        #expect(shown == ada.version.description)
        let renamed = try await people.update(id: ada.id, with: PersonChanges(lastName: "King"))
        let stale = try await client.post("/people/\(ada.id)/delete", [("version", shown)])
        #expect(stale.status == 409)
        #expect(stale.body.contains("<h1>Delete <bdi>Ada King</bdi>?</h1>"))
        #expect(stale.body.contains("id=\"conflict\">Someone else changed this person"))
        #expect(Self.version(in: stale.body) == renamed.version.description)
        #expect(try await people.person(id: ada.id) == renamed)
        let confirmed = try await client.post("/people/\(ada.id)/delete", [("version", renamed.version.description)])
        #expect(confirmed.status == 303)
        #expect(try await people.person(id: ada.id) == nil)
    }

    // MARK: - A form without its version

    @Test(
        "An edit form sent without its version saves nothing in any app: a conflict, with the version to save over",
        arguments: ["people", "contacts", "coffee"])
    func editWithoutVersionSavesNothing(app: String) async throws {
        defer { server.stop() }
        let context = server.app.context
        let path: String
        let typed: [(String, String)]
        let stored: @Sendable () async throws -> String?
        switch app {
        case "people":
            let ada = try await addAda()
            path = "/people/\(ada.id)/edit"
            typed = [("firstName", "Ada"), ("lastName", "Byron"), ("age", "37")]
            stored = { try await context.people.person(id: ada.id)?.lastName }
        case "contacts":
            let jane = try await context.contacts.add(
                ContactDraft(name: "Jane Doe", address: "1 Main St", contact: "555-0100"))
            path = "/contacts/\(jane.id)/edit"
            typed = [("name", "Jane Doe"), ("address", "2 High St"), ("contact", "555-0100")]
            stored = { try await context.contacts.contact(id: jane.id)?.address }
        default:
            let cortado = try await context.coffee.add(CoffeeDraft(name: "Cortado", price: 3))
            path = "/coffee/\(cortado.id)/edit"
            typed = [("name", "Cortado Doble"), ("price", "3")]
            stored = { try await context.coffee.coffee(id: cortado.id)?.name }
        }
        let before = try await stored()
        _ = try await client.get(path)
        let response = try await client.post(path, typed)
        #expect(response.status == 409, "\(app)")
        #expect(response.body.contains("This form was sent without the version"), "\(app)")
        #expect(try await stored() == before, "\(app): nothing saved")
        // Saving from the conflict's form, which carries the version, works.
        let version = try #require(Self.version(in: response.body))
        let again = try await client.post(path, typed + [("version", version)])
        #expect(again.status == 303, "\(app)")
        #expect(try await stored() != before, "\(app): saved with the version")
    }

    @Test("An empty version is a form without one, not a malformed one")
    func emptyVersionIsMissing() async throws {
        defer { server.stop() }
        let ada = try await addAda()
        _ = try await client.get("/people/\(ada.id)/edit")
        let response = try await client.post(
            "/people/\(ada.id)/edit", [("version", ""), ("firstName", "Ada"), ("lastName", "Byron"), ("age", "37")])
        #expect(response.status == 409)
        #expect(try await people.person(id: ada.id) == ada)
    }

    // MARK: - The other apps

    @Test("A stale contact save writes nothing and shows theirs beside yours")
    func staleContactSave() async throws {
        defer { server.stop() }
        let contacts = server.app.context.contacts
        let jane = try await contacts.add(ContactDraft(name: "Jane Doe", address: "1 Main St", contact: "555-0100"))
        let fields = try await opened(
            "/contacts/\(jane.id)/edit",
            typing: [("name", "Jane Doe"), ("address", "2 High St"), ("contact", "555-0100")])
        let theirs = try await contacts.update(id: jane.id, with: ContactChanges(address: "3 Low Rd"))
        let response = try await client.post("/contacts/\(jane.id)/edit", fields)
        #expect(response.status == 409)
        #expect(response.body.contains("id=\"field-address-theirs-value\"><bdi>3 Low Rd</bdi>"))
        #expect(response.body.contains("id=\"field-address-yours-value\"><bdi>2 High St</bdi>"))
        #expect(try await contacts.contact(id: jane.id) == theirs)
        let version = try #require(Self.version(in: response.body))
        let again = try await client.post(
            "/contacts/\(jane.id)/edit",
            [("version", version), ("name", "Jane Doe"), ("address", "2 High St"), ("contact", "555-0100")])
        #expect(again.status == 303)
        #expect(try await contacts.contact(id: jane.id)?.address == "2 High St")
    }

    @Test("A stale coffee save writes nothing and shows theirs beside yours; a stale delete asks again")
    func staleCoffeeSaveAndDelete() async throws {
        defer { server.stop() }
        let coffee = server.app.context.coffee
        let cortado = try await coffee.add(CoffeeDraft(name: "Cortado", price: 3))
        let fields = try await opened("/coffee/\(cortado.id)/edit", typing: [("name", "Cortado"), ("price", "3.20")])
        try await coffee.update(id: cortado.id, with: CoffeeChanges(price: Decimal(string: "3.50")))
        let response = try await client.post("/coffee/\(cortado.id)/edit", fields)
        #expect(response.status == 409)
        #expect(response.body.contains("id=\"field-price-theirs-value\"><bdi>3.50</bdi>"))
        #expect(response.body.contains("id=\"field-price-yours-value\"><bdi>3.20</bdi>"))
        #expect(try await coffee.coffee(id: cortado.id)?.price == Decimal(string: "3.50"))

        let confirm = try await client.get("/coffee/\(cortado.id)/delete")
        let shown = try #require(Self.version(in: confirm.body))
        try await coffee.update(id: cortado.id, with: CoffeeChanges(name: "Cortado Doble"))
        let stale = try await client.post("/coffee/\(cortado.id)/delete", [("version", shown)])
        #expect(stale.status == 409)
        #expect(stale.body.contains("Cortado Doble"))
        #expect(try await coffee.coffee(id: cortado.id) != nil)
    }

    @Test("A stale profile save writes nothing and shows theirs beside yours")
    func staleProfileSave() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let owner = server.client()
        try await owner.register()
        let form = try await owner.get("/account/edit")
        let opened = form.body.matches(of: /<input type="hidden" name="((?:version|was-)[A-Za-z-]*)" value="([^"]*)"/)
            .map { (String($0.1), String($0.2)) }
        #expect(opened.contains { $0.0 == "version" })
        let users = server.app.context.users
        let user = try #require(try await users.user(email: "ada@example.com"))
        try await users.updateProfile(id: user.id, with: ProfileChanges(city: "Cambridge"))
        let typed = AccountsProfilePasswordTests.profileFields(["city": "Oxford"])
        let response = try await owner.post("/account/edit", opened + typed)
        #expect(response.status == 409)
        #expect(response.body.contains("id=\"field-city-theirs-value\"><bdi>Cambridge</bdi>"))
        #expect(response.body.contains("id=\"field-city-yours-value\"><bdi>Oxford</bdi>"))
        #expect(try await users.user(id: user.id)?.city == "Cambridge")
    }
}
