import Foundation
import RecordsApp

/// The Contacts app's pages: the list ("address | contact"), sorted,
/// paged and searched; the original tutorial's "Find Contact" as a search
/// by name that lists each match with Edit beside it ("Match found" / "No
/// match" in the page's message banner); adding on a form of its own,
/// which asks before saving a second contact with a name that exists; edit
/// and delete.
///
/// | Route | Page |
/// |---|---|
/// | `GET /contacts?q=&sort=&page=` | the list, or a search's matches |
/// | `GET /contacts/find?name=` | find by name: the matches, each with Edit |
/// | `GET /contacts/new?name=`, `POST /contacts` | add (`allowDuplicate=yes` after confirming a name that exists) |
/// | `GET /contacts/:id/edit`, `POST /contacts/:id/edit` | edit |
/// | `GET /contacts/:id/delete`, `POST /contacts/:id/delete` | delete, after confirming |
enum ContactsPages {
    /// The field a confirmed duplicate carries, and its value.
    static let allowDuplicateField = (name: "allowDuplicate", value: "yes")

    static func routes(_ context: WebContext) -> [Route] {
        let store = context.contacts
        return [
            Route.get("/contacts") { request in
                // The old screen's "find" address, from bookmarks: the find page now.
                if let name = request.query["find"] {
                    return Response.redirect(to: HTML.path(["contacts", "find"], query: [("name", name)]))
                }
                return try await page(request, store: store)
            },
            Route.get("/contacts/find") { request in try await find(request, store: store) },
            Route.get("/contacts/new") { request in
                ContactsViews.form(request, mode: .add, values: ContactFormValues(name: request.query["name"] ?? ""))
            },
            Route.post(
                "/contacts",
                invalidForm: { request, problem in
                    ContactsViews.form(
                        request, mode: .add, values: ContactFormValues(request.form), summary: problem.description,
                        status: problem.status)
                }
            ) { request in
                let values = ContactFormValues(request.form)
                let allowed = request.form[allowDuplicateField.name] == allowDuplicateField.value
                do {
                    let contact = try await store.add(
                        ContactDraft(name: values.name, address: values.address, contact: values.contact),
                        allowingDuplicate: allowed)
                    return Layout.redirect(
                        to: "/contacts", flash: Layout.message(.added, contact.name), request: request)
                } catch let error as ValidationError {
                    return ContactsViews.form(request, mode: .add, values: values, errors: error, status: 422)
                } catch let error as DuplicateContactError {
                    return ContactsViews.confirmDuplicate(request, values: values, duplicate: error)
                }
            },
            Route.get("/contacts/:id/edit") { request in
                let contact = try await contact(request, store: store)
                return ContactsViews.form(
                    request, mode: .edit(contact.id, name: contact.name), values: ContactFormValues(contact),
                    hidden: ContactsViews.hiddenFields(contact))
            },
            Route.post(
                "/contacts/:id/edit",
                invalidForm: { request, problem in
                    ContactsViews.form(
                        request, mode: .edit(try request.id(), name: request.form.text("name")),
                        values: ContactFormValues(request.form), hidden: EditConflict.carried(request.form),
                        summary: problem.description, status: problem.status)
                }
            ) { request in
                let id = try request.id()
                let form = EditConflict.resolved(request.form)
                guard let version = try EditConflict.submittedVersion(form) else {
                    // No version: nothing saved over changes it may not have seen.
                    return ContactsViews.conflict(
                        request, contact: try await contact(request, store: store), form: form)
                }
                let values = ContactFormValues(form)
                do {
                    let contact = try await store.update(
                        id: id,
                        with: ContactChanges(name: values.name, address: values.address, contact: values.contact),
                        ifVersion: version)
                    return Layout.redirect(
                        to: "/contacts", flash: Layout.message(.updated, contact.name), request: request)
                } catch let error as ValidationError {
                    return ContactsViews.form(
                        request, mode: .edit(id, name: values.name), values: values, hidden: EditConflict.carried(form),
                        errors: error, status: 422)
                } catch is VersionConflictError {
                    // Someone saved the contact since the form was opened.
                    return ContactsViews.conflict(
                        request, contact: try await contact(request, store: store), form: form)
                }
            },
            Route.get("/contacts/:id/delete") { request in
                let id = try request.id()
                do {
                    guard let contact = try await store.contact(id: id) else { throw HTTPError.notFound }
                    return ContactsViews.confirmDelete(request, id: id, name: contact.name, version: contact.version)
                } catch let error as UnreadableRowError {
                    // A row that cannot be read can still be deleted.
                    return ContactsViews.confirmDelete(request, id: id, name: nil, unreadable: error)
                }
            },
            Route.post("/contacts/:id/delete") { request in
                let id = try request.id()
                let contact: Contact
                do {
                    contact = try await store.delete(
                        id: id, ifVersion: try EditConflict.submittedVersion(request.form))
                } catch is VersionConflictError {
                    // Changed since the confirmation was shown: ask again, showing it as it is now.
                    let current = try await Self.contact(request, store: store)
                    return ContactsViews.confirmDelete(
                        request, id: id, name: current.name, version: current.version, changed: true)
                }
                let name = contact.name.isEmpty ? "contact \(contact.id)" : contact.name
                return Layout.redirect(to: "/contacts", flash: Layout.message(.deleted, name), request: request)
            },
        ]
    }

    /// The original tutorial's "Find Contact": the contacts with the name
    /// in the query (ignoring case, accents and spaces), each with Edit
    /// beside it; the banner says "Match found" or "No match". Without a
    /// name, the form alone; a blank one is refused beside the field (422).
    static func find(_ request: Request, store: ContactsStore) async throws -> Response {
        guard let name = request.query["name"] else { return ContactsViews.find(request, name: "", result: .none) }
        do {
            let listed = try await store.list(named: name)
            return ContactsViews.find(request, name: name, result: .found(listed))
        } catch let error as ValidationError {
            return ContactsViews.find(request, name: name, result: .refused(error), status: 422)
        }
    }

    /// The contact the route's `:id` names.
    ///
    /// - Throws: ``RecordNotFoundError`` when there is none (its page says
    ///   the contact was deleted); an ``HTTPError`` 409 naming the problem
    ///   when the row cannot be read.
    private static func contact(_ request: Request, store: ContactsStore) async throws -> Contact {
        do {
            let id = try request.id()
            guard let contact = try await store.contact(id: id) else {
                throw RecordNotFoundError(kind: "contact", id: id)
            }
            return contact
        } catch let error as UnreadableRowError {
            throw HTTPError(status: 409, message: error.description)
        }
    }

    /// The list, or a search's matches.
    private static func page(_ request: Request, store: ContactsStore) async throws -> Response {
        let query = try ListQuery(request, defaultSort: ContactSort.name)
        let page: RecordPage<ContactsViews.Row>
        do {
            if query.isSearch {
                page = try await store.fullTextSearch(query.search, page: query.page, size: query.size).map { match in
                    ContactsViews.Row(
                        contact: match.record, snippet: match.snippet.segments.map { ($0.text, $0.isMatch) })
                }
            } else {
                page = try await store.page(
                    sortedBy: query.sort, direction: query.direction, number: query.page, size: query.size
                ).map {
                    ContactsViews.Row(contact: $0, snippet: nil)
                }
            }
        } catch let error as ValidationError {
            throw HTTPError.badRequest(error.description)
        }
        return ContactsViews.list(request, query: query, page: page)
    }
}

/// What the contact form shows: the fields as typed.
struct ContactFormValues: Sendable {
    var name = ""
    var address = ""
    var contact = ""

    init(name: String = "", address: String = "", contact: String = "") {
        self.name = name
        self.address = address
        self.contact = contact
    }

    init(_ form: Form) {
        name = form.text("name")
        address = form.text("address")
        contact = form.text("contact")
    }

    init(_ contact: Contact) {
        name = contact.name
        address = contact.address
        self.contact = contact.contact
    }
}
