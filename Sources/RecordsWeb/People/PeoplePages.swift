import Foundation
import RecordsApp

/// The People app's pages: the list (sortable by name or age, paged, with
/// a search box), a person's page, the add and edit forms, and deleting
/// with a confirmation.
///
/// | Route | Page |
/// |---|---|
/// | `GET /people?q=&sort=&size=&page=` | the list (a table), or a search's matches |
/// | `GET /people/new`, `POST /people` | add |
/// | `GET /people/:id` | one person |
/// | `GET /people/:id/edit`, `POST /people/:id/edit` | edit |
/// | `GET /people/:id/delete`, `POST /people/:id/delete` | delete, after confirming |
enum PeoplePages {
    static func routes(_ context: WebContext) -> [Route] {
        let store = context.people
        return [
            Route.get("/people") { request in try await list(request, store: store) },
            Route.get("/people/new") { request in
                PeopleViews.form(request, mode: .add, values: PersonFormValues())
            },
            Route.post(
                "/people",
                invalidForm: { request, problem in
                    PeopleViews.form(
                        request, mode: .add, values: PersonFormValues(request.form), summary: problem.description,
                        status: problem.status)
                }
            ) { request in
                let values = PersonFormValues(request.form)
                do {
                    let draft = try PersonDraft.parse(
                        firstName: values.firstName, lastName: values.lastName, age: values.age)
                    let person = try await store.add(draft)
                    return Layout.redirect(
                        to: path(person.id), flash: Layout.message(.added, person.fullName), request: request)
                } catch let error as ValidationError {
                    return PeopleViews.form(request, mode: .add, values: values, errors: error, status: 422)
                }
            },
            Route.get("/people/:id") { request in
                let person = try await person(request, store: store)
                return PeopleViews.detail(request, person: person)
            },
            Route.get("/people/:id/edit") { request in
                let person = try await person(request, store: store)
                return PeopleViews.form(
                    request, mode: .edit(person.id, name: person.fullName), values: PersonFormValues(person),
                    hidden: PeopleViews.hiddenFields(person))
            },
            Route.post(
                "/people/:id/edit",
                invalidForm: { request, problem in
                    PeopleViews.form(
                        request, mode: .edit(try request.id(), name: PersonFormValues(request.form).fullName),
                        values: PersonFormValues(request.form),
                        hidden: EditConflict.carried(request.form), summary: problem.description,
                        status: problem.status)
                }
            ) { request in
                let id = try request.id()
                let form = EditConflict.resolved(request.form)
                guard let version = try EditConflict.submittedVersion(form) else {
                    // No version: nothing saved over changes it may not have seen.
                    return PeopleViews.conflict(request, person: try await person(request, store: store), form: form)
                }
                let values = PersonFormValues(form)
                do {
                    // An empty age makes it unknown, as on the add form.
                    let age = values.age.trimmingCharacters(in: .whitespaces).isEmpty ? "none" : values.age
                    let changes = try PersonChanges.parse(
                        firstName: values.firstName, lastName: values.lastName, age: age)
                    let person = try await store.update(id: id, with: changes, ifVersion: version)
                    return Layout.redirect(
                        to: path(person.id), flash: Layout.message(.updated, person.fullName), request: request)
                } catch let error as ValidationError {
                    return PeopleViews.form(
                        request, mode: .edit(id, name: values.fullName), values: values,
                        hidden: EditConflict.carried(form),
                        errors: error,
                        status: 422)
                } catch is VersionConflictError {
                    // Someone saved the person since the form was opened.
                    return PeopleViews.conflict(request, person: try await person(request, store: store), form: form)
                }
            },
            Route.get("/people/:id/delete") { request in
                let id = try request.id()
                let person: Person
                do {
                    guard let found = try await store.person(id: id) else { throw HTTPError.notFound }
                    person = found
                } catch let error as UnreadableRowError {
                    // A row that cannot be read can still be deleted.
                    return PeopleViews.confirmDelete(request, id: id, name: nil, unreadable: error)
                }
                return PeopleViews.confirmDelete(request, id: id, name: person.fullName, version: person.version)
            },
            Route.post("/people/:id/delete") { request in
                let id = try request.id()
                let person: Person
                do {
                    person = try await store.delete(id: id, ifVersion: try EditConflict.submittedVersion(request.form))
                } catch is VersionConflictError {
                    // Changed since the confirmation was shown: ask again, showing it as it is now.
                    let current = try await self.person(request, store: store)
                    return PeopleViews.confirmDelete(
                        request, id: id, name: current.fullName, version: current.version, changed: true)
                }
                return Layout.redirect(
                    to: "/people",
                    flash: Layout.message(.deleted, person.fullName.isEmpty ? "person \(person.id)" : person.fullName),
                    request: request)
            },
        ]
    }

    /// The address of a person's page.
    static func path(_ id: Int64) -> String { HTML.path(["people", String(id)]) }

    /// The person the route's `:id` names.
    ///
    /// - Throws: ``RecordNotFoundError`` when there is none (its page says
    ///   the person was deleted); an ``HTTPError`` 409 naming the problem
    ///   when the row cannot be read.
    private static func person(_ request: Request, store: PeopleStore) async throws -> Person {
        do {
            let id = try request.id()
            guard let person = try await store.person(id: id) else { throw RecordNotFoundError(kind: "person", id: id) }
            return person
        } catch let error as UnreadableRowError {
            throw HTTPError(status: 409, message: error.description)
        }
    }

    private static func list(_ request: Request, store: PeopleStore) async throws -> Response {
        let query = try ListQuery(request, defaultSort: PersonSort.name)
        do {
            if query.isSearch {
                let page = try await store.fullTextSearch(query.search, page: query.page, size: query.size)
                return PeopleViews.list(
                    request, query: query,
                    page: page.map { match in
                        PeopleViews.Row(
                            person: match.record, snippet: match.snippet.segments.map { ($0.text, $0.isMatch) })
                    })
            }
            let page = try await store.page(
                sortedBy: query.sort, direction: query.direction, number: query.page, size: query.size)
            return PeopleViews.list(
                request, query: query, page: page.map { PeopleViews.Row(person: $0, snippet: nil) })
        } catch let error as ValidationError {
            throw HTTPError.badRequest(error.description)
        }
    }
}

/// What the person form shows: the fields as typed.
struct PersonFormValues: Sendable {
    var firstName = ""
    var lastName = ""
    var age = ""

    init() {}

    init(_ form: Form) {
        firstName = form.text("firstName")
        lastName = form.text("lastName")
        age = form.text("age")
    }

    init(_ person: Person) {
        firstName = person.firstName
        lastName = person.lastName
        age = person.age.map(String.init) ?? ""
    }

    /// The name as typed, for the form's title.
    var fullName: String {
        [firstName, lastName].map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
            .joined(separator: " ")
    }
}
