import Foundation
import RecordsApp

/// The Contacts app's pages: the original tutorial's screen (the form that
/// saves a contact, "Contact added" / "Failed to add contact", or finds one
/// by name and fills the fields, "Match found" / "Match not found"), the
/// list ("address | contact"), search, edit and delete.
///
/// | Route | Page |
/// |---|---|
/// | `GET /contacts?q=&sort=&page=&find=` | the screen: the form, then the list or a search's matches |
/// | `POST /contacts` | save the form as a new contact |
/// | `POST /contacts/find` | find by the form's name (to `GET /contacts?find=`) |
/// | `GET /contacts/:id/edit`, `POST /contacts/:id/edit` | edit |
/// | `GET /contacts/:id/delete`, `POST /contacts/:id/delete` | delete, after confirming |
enum ContactsPages {
    static func routes(_ context: WebContext) -> [Route] {
        let store = context.contacts
        return [
            Route.get("/contacts") { request in
                var screen = ContactsViews.Screen()
                if let name = request.query["find"] {
                    screen = await find(name: name, store: store)
                }
                return try await page(request, store: store, screen: screen)
            },
            Route.post(
                "/contacts",
                invalidForm: { request, problem in
                    var screen = ContactsViews.Screen(values: ContactFormValues(request.form))
                    screen.status = .failedToAdd(problem.description)
                    screen.summary = problem.description
                    return try await page(request, store: store, screen: screen, status: problem.status)
                }
            ) { request in
                let values = ContactFormValues(request.form)
                do {
                    try await store.add(
                        ContactDraft(name: values.name, address: values.address, contact: values.contact))
                    return Layout.redirect(
                        to: "/contacts", flash: ContactStatus.added.description, request: request)
                } catch let error as ValidationError {
                    var screen = ContactsViews.Screen(values: values)
                    screen.status = .failedToAdd(error.description)
                    screen.errors = error
                    return try await page(request, store: store, screen: screen, status: 422)
                }
            },
            Route.post(
                "/contacts/find",
                invalidForm: { request, problem in
                    var screen = ContactsViews.Screen(values: ContactFormValues(request.form))
                    screen.summary = problem.description
                    return try await page(request, store: store, screen: screen, status: problem.status)
                }
            ) { request in
                let values = ContactFormValues(request.form)
                guard !SearchFolding.nameKey(values.name).isEmpty else {
                    var screen = await find(name: values.name, store: store)
                    screen.values = values
                    return try await page(request, store: store, screen: screen, status: 422)
                }
                return Response.redirect(to: HTML.path(["contacts"], query: [("find", values.name)]))
            },
            Route.get("/contacts/:id/edit") { request in
                let contact = try await contact(request, store: store)
                return ContactsViews.form(
                    request, id: contact.id, values: ContactFormValues(contact),
                    hidden: ContactsViews.hiddenFields(contact))
            },
            Route.post(
                "/contacts/:id/edit",
                invalidForm: { request, problem in
                    ContactsViews.form(
                        request, id: try request.id(), values: ContactFormValues(request.form),
                        hidden: EditConflict.carried(request.form), summary: problem.description,
                        status: problem.status)
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
                        to: "/contacts", flash: "Updated \(Layout.isolated(contact.name)).", request: request)
                } catch let error as ValidationError {
                    return ContactsViews.form(
                        request, id: id, values: values, hidden: EditConflict.carried(form), errors: error, status: 422)
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
                return Layout.redirect(to: "/contacts", flash: "Deleted \(Layout.isolated(name)).", request: request)
            },
        ]
    }

    /// The original tutorial's "Find Contact": the first contact with that
    /// name fills the fields; the status says whether one was found.
    static func find(name: String, store: ContactsStore) async -> ContactsViews.Screen {
        var screen = ContactsViews.Screen(values: ContactFormValues(name: name))
        do {
            let listed = try await store.list(named: name)
            if let first = listed.records.first {
                screen.values = ContactFormValues(first)
                screen.status = .matchFound
                if listed.records.count > 1 {
                    screen.note = "\(listed.records.count) contacts have this name; the fields show the first."
                }
            } else if let unreadable = listed.unreadable.first {
                screen.status = .matchFound
                screen.note = unreadable.description
            } else {
                screen.status = .matchNotFound
            }
        } catch let error as ValidationError {
            screen.status = .matchNotFound
            screen.errors = error
        } catch {
            screen.status = .matchNotFound
            screen.summary = "The contacts could not be read. Try again in a moment."
        }
        return screen
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

    /// The screen with the list, or a search's matches, below the form.
    private static func page(
        _ request: Request, store: ContactsStore, screen: ContactsViews.Screen, status: Int = 200
    ) async throws -> Response {
        let query = try ListQuery(request, defaultSort: ContactSort.name)
        let size = ListQuery<ContactSort>.pageSize
        let page: RecordPage<ContactsViews.Row>
        do {
            if query.isSearch {
                let found = try await store.fullTextSearch(query.search, page: query.page, size: size)
                page = RecordPage(
                    items: found.items.map { match in
                        ContactsViews.Row(
                            contact: match.record, snippet: match.snippet.segments.map { ($0.text, $0.isMatch) })
                    }, unreadable: found.unreadable, number: found.number, size: found.size, hasNext: found.hasNext)
            } else {
                let listed = try await store.page(sortedBy: query.sort, number: query.page, size: size)
                page = RecordPage(
                    items: listed.items.map { ContactsViews.Row(contact: $0, snippet: nil) },
                    unreadable: listed.unreadable, number: listed.number, size: listed.size, hasNext: listed.hasNext)
            }
        } catch let error as ValidationError {
            throw HTTPError.badRequest(error.description)
        }
        return ContactsViews.screen(request, screen: screen, query: query, page: page, status: status)
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
