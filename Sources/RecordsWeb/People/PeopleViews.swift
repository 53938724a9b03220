import Foundation
import RecordsApp

/// The People pages' markup.
enum PeopleViews {
    /// A person on the list, with the search's marked name when searching.
    struct Row: Sendable {
        var person: Person
        var snippet: [(text: String, isMatch: Bool)]?
    }

    /// Which form: adding, or editing the person with that ID.
    enum FormMode: Sendable, Equatable {
        case add
        case edit(Int64, name: String)

        /// The name of the person edited; nil when adding.
        var name: String? {
            if case .edit(_, let name) = self { return name }
            return nil
        }
    }

    static let sorts: [SortLabel<PersonSort>] = [
        SortLabel(.name, "name", reversed: "name, Z to A"), SortLabel(.age, "age", reversed: "age, oldest first"),
        SortLabel(.newest, "Newest first", reversed: "Oldest first"),
    ]

    /// The list's columns: the last name sorts by name (last, then first),
    /// the age by age.
    static let columns: [ListColumn<PersonSort>] = [
        ListColumn(label: "Last name", sort: .name), ListColumn(label: "First name"),
        ListColumn(label: "Age", sort: .age, style: "number"),
    ]

    static let noun = ListNoun(one: "person", many: "people")

    /// The age as the list shows it.
    static func ageText(_ age: Int?) -> String { age.map(String.init) ?? "unknown" }

    /// A search's columns: its matches are ranked, and the name is shown
    /// whole, with the matched words marked.
    static let searchColumns: [ListColumn<PersonSort>] = [
        ListColumn(label: "Name"), ListColumn(label: "Age", style: "number"),
    ]

    static func list(_ request: Request, query: ListQuery<PersonSort>, page: RecordPage<Row>) -> Response {
        let columns = query.isSearch ? searchColumns : columns
        let rows = page.items.map { row -> HTML in
            let person = row.person
            let href = PeoplePages.path(person.id)
            let age: HTML = "\(ageText(person.age))"
            if let snippet = row.snippet {
                return ListControls.row(
                    id: "person-\(person.id)", columns: columns,
                    cells: ["<a class=\"title\" href=\"\(href)\">\(ListControls.marked(snippet))</a>", age])
            }
            // The link is on the last name (the first name when there is none): a row has one link.
            let last: HTML = person.lastName.isEmpty ? "" : "<a class=\"title\" href=\"\(href)\">\(person.lastName)</a>"
            let first: HTML =
                !person.lastName.isEmpty
                ? "\(person.firstName)"
                : "<a class=\"title\" href=\"\(href)\">\(person.firstName.isEmpty ? "(no name)" : person.firstName)</a>"
            return ListControls.row(id: "person-\(person.id)", columns: columns, cells: [last, first, age])
        }
        let empty: HTML =
            query.isSearch
            ? "<p class=\"notice\" id=\"empty\">No one matches “<bdi>\(query.search)</bdi>”.</p>"
            : "<p class=\"notice\" id=\"empty\">No one yet. <a href=\"/people/new\">Add a person</a></p>"
        let heading: HTML = query.isSearch ? "People matching “<bdi>\(query.search)</bdi>”" : "People"
        let list = ListControls.table(
            id: "people-list", caption: "People", base: "people", query: query, defaultSort: .name, columns: columns,
            rows: rows)
        return Layout.page(
            request, title: Layout.listTitle("People", search: query.search, page: query.page), section: "/people",
            content: """
                <h1>\(heading)</h1>
                <p class="actions"><a class="button" href="/people/new" id="add-person">Add a person</a></p>
                \(ListControls.searchForm(base: "people", label: "Search people", search: query.search))
                \(ListControls.sortLinks(base: "people", query: query, defaultSort: .name, columns: columns, labels: sorts))
                \(ListControls.results(base: "people", query: query, defaultSort: .name, page: page, noun: noun, list: list, empty: empty))
                """)
    }

    static func detail(_ request: Request, person: Person) -> Response {
        let name = person.fullName.isEmpty ? "(no name)" : person.fullName
        return Layout.page(
            request, title: name, section: "/people",
            content: """
                <section id="person" data-live-topics="people">
                <h1 id="person-name">\(name)</h1>
                <dl class="details" id="person-details">
                <dt>\(PersonField.firstName.label)</dt><dd id="person-first-name">\(person.firstName)</dd>
                <dt>\(PersonField.lastName.label)</dt><dd id="person-last-name">\(person.lastName)</dd>
                <dt>\(PersonField.age.label)</dt><dd id="person-age">\(person.age.map(String.init) ?? "unknown")</dd>
                </dl>
                <p class="actions">
                <a class="button" href="\(HTML.path(["people", String(person.id), "edit"]))" id="edit-person">Edit</a>
                <a class="button secondary" href="\(HTML.path(["people", String(person.id), "delete"]))" id="delete-person">Delete</a>
                </p>
                </section>
                <p><a href="/people">Back to People</a></p>
                """)
    }

    /// The edit form's hidden fields for `person` as it is stored.
    static func hiddenFields(_ person: Person) -> HTML {
        let values = PersonFormValues(person)
        return EditConflict.hiddenFields(
            version: person.version,
            originals: [("firstName", values.firstName), ("lastName", values.lastName), ("age", values.age)])
    }

    /// The edit form after someone else saved the person: theirs beside
    /// yours (see ``EditConflict``), 409.
    static func conflict(_ request: Request, person: Person, form: Form) -> Response {
        let stored = PersonFormValues(person)
        let values = EditConflict.values(
            form,
            stored: [
                ("firstName", PersonField.firstName.label, stored.firstName),
                ("lastName", PersonField.lastName.label, stored.lastName), ("age", PersonField.age.label, stored.age),
            ])
        return Layout.page(
            request, title: Layout.formTitle(kind: "a person", editing: person.fullName).title,
            section: "/people", status: 409,
            content: """
                <h1>Edit a person</h1>
                \(EditConflict.form(request, kind: "person", formID: "person-form", action: HTML.path(["people", String(person.id), "edit"]), reload: HTML.path(["people", String(person.id), "edit"]), topic: "people", values: values, version: person.version))
                """)
    }

    static func form(
        _ request: Request, mode: FormMode, values: PersonFormValues, hidden: HTML = "",
        errors: ValidationError? = nil, summary: String? = nil, status: Int = 200
    ) -> Response {
        let problems = ListControls.problems(errors)
        let (title, heading) = Layout.formTitle(kind: "a person", editing: mode.name)
        let action: String
        let cancel: String
        var live: HTML = ""
        switch mode {
        case .add:
            action = "/people"
            cancel = "/people"
        case .edit(let id, _):
            action = HTML.path(["people", String(id), "edit"])
            cancel = PeoplePages.path(id)
            live = EditConflict.liveAttributes(topic: "people", source: action)
        }
        let summaryText =
            summary ?? (errors == nil ? nil : "The person was not saved: correct the fields marked below.")
        return Layout.page(
            request, title: title, section: "/people", status: status,
            content: """
                <h1>\(heading)</h1>
                \(Field.errorSummary(summaryText))
                <form method="post" action="\(action)" class="card" id="person-form" novalidate\(live)>
                \(Layout.csrfField(request))\(hidden)
                \(Field.input("firstName", label: PersonField.firstName.label, value: values.firstName, error: problems[PersonField.firstName.rawValue], required: true, autocomplete: "given-name"))
                \(Field.input("lastName", label: PersonField.lastName.label, value: values.lastName, error: problems[PersonField.lastName.rawValue], required: true, autocomplete: "family-name"))
                \(Field.input("age", label: PersonField.age.label, value: values.age, error: problems[PersonField.age.rawValue] ?? problems["changes"], hint: "A whole number from \(PersonRules.ages.lowerBound) to \(PersonRules.ages.upperBound); leave it empty when unknown.", attributes: "inputmode=\"numeric\""))
                <p class="actions"><button type="submit" id="save-person">Save</button> <a href="\(cancel)">Cancel</a></p>
                </form>
                """)
    }

    static func confirmDelete(
        _ request: Request, id: Int64, name: String?, version: RecordVersion? = nil, changed: Bool = false,
        unreadable: UnreadableRowError? = nil
    ) -> Response {
        let shown = name.map { $0.isEmpty ? "(no name)" : $0 } ?? "person \(id)"
        return ListControls.confirmDelete(
            request, shown: shown, section: "/people",
            action: HTML.path(["people", String(id), "delete"]), cancel: PeoplePages.path(id), unreadable: unreadable,
            version: version, changed: changed ? "person" : nil)
    }
}
