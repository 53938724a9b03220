import Foundation
import RecordsApp

/// The Contacts pages' markup.
enum ContactsViews {
    /// A contact on the list, with the search's excerpt when searching.
    struct Row: Sendable {
        var contact: Contact
        var snippet: [(text: String, isMatch: Bool)]?
    }

    /// Which form: adding, or editing the contact with that ID and name.
    enum FormMode: Sendable, Equatable {
        case add
        case edit(Int64, name: String)

        /// The name of the contact edited; nil when adding.
        var name: String? {
            if case .edit(_, let name) = self { return name }
            return nil
        }
    }

    /// What a find by name gave.
    enum FindResult: Sendable {
        /// Nothing was asked yet.
        case none
        /// The contacts with the name, and those that cannot be read.
        case found(RecordList<Contact>)
        /// The name was blank.
        case refused(ValidationError)
    }

    static let sorts: [SortLabel<ContactSort>] = [
        SortLabel(.name, "name", reversed: "name, Z to A"),
        SortLabel(.newest, "Newest first", reversed: "Oldest first"),
    ]

    /// The list's columns: the name, the address, how to reach them, and
    /// the row's actions.
    static let columns: [ListColumn<ContactSort>] = [
        ListColumn(label: "Name", sort: .name), ListColumn(label: "Address"),
        ListColumn(label: "Phone or email"), ListColumn(label: "Actions", style: "row-actions"),
    ]

    static let noun = ListNoun(one: "contact", many: "contacts")

    /// How to reach a contact, as a link when it is a phone number
    /// (`tel:`, digits only) or an email address (`mailto:`, encoded), else
    /// as text; nothing for an empty one.
    static func reach(_ text: String) -> HTML {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return "" }
        // Anything else (a web address, a handle) may be one long word,
        // wider than a phone's card: it alone may break anywhere. A phone
        // number or an email, short, keeps to one line.
        guard let href = reachLink(trimmed) else { return "<span class=\"long-value\">\(text)</span>" }
        return "<a href=\"\(href)\">\(trimmed)</a>"
    }

    /// What an address may keep as it is in a `mailto:` link: ASCII
    /// letters and digits, `@ . - _ +`; everything else is encoded.
    private static let mailtoAllowed = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@.-_+")

    /// The `tel:` or `mailto:` address of a contact's phone or email; nil
    /// when it is neither.
    static func reachLink(_ text: String) -> String? {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        if parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."),
            !parts[1].hasSuffix("."), !text.contains(where: { $0.isWhitespace || $0.isNewline })
        {
            guard let encoded = text.addingPercentEncoding(withAllowedCharacters: mailtoAllowed) else { return nil }
            return "mailto:" + encoded
        }
        let phoneCharacters = Set("0123456789+-(). ")
        let digits = text.filter { $0.isASCII && $0.isNumber }
        guard text.allSatisfy(phoneCharacters.contains), digits.count >= 3,
            !text.dropFirst().contains("+")
        else { return nil }
        return "tel:" + (text.hasPrefix("+") ? "+" : "") + digits
    }

    static func fields(_ values: ContactFormValues, problems: [String: String]) -> HTML {
        """
        \(Field.input("name", label: ContactField.name.label, value: values.name, error: problems[ContactField.name.rawValue], autocomplete: "name"))
        \(Field.input("address", label: ContactField.address.label, value: values.address, error: problems[ContactField.address.rawValue], autocomplete: "street-address"))
        \(Field.input("contact", label: ContactField.contact.label, value: values.contact, error: problems[ContactField.contact.rawValue]))
        """
    }

    /// A contact as an item of the find page's matches or the duplicate
    /// page's existing contacts: the name, "address | contact", and Edit
    /// and Delete.
    static func item(_ contact: Contact) -> HTML {
        let name = contact.name.isEmpty ? "(no name)" : contact.name
        return """
            <li id="contact-\(contact.id)"><span class="title">\(name)</span>\
            <span class="subtitle">\(contact.details)</span>
            <span class="row-actions">\(actions(contact.id, name: name))</span></li>
            """
    }

    /// Edit and Delete links for a contact, named for screen readers.
    static func actions(_ id: Int64, name: String) -> HTML {
        """
        <a href="\(HTML.path(["contacts", String(id), "edit"]))">Edit<span class="visually-hidden"> \(name)</span></a> \
        <a href="\(HTML.path(["contacts", String(id), "delete"]))">Delete<span class="visually-hidden"> \(name)</span></a>
        """
    }

    static func list(_ request: Request, query: ListQuery<ContactSort>, page: RecordPage<Row>) -> Response {
        let rows = page.items.map { row -> HTML in
            let contact = row.contact
            let name = contact.name.isEmpty ? "(no name)" : contact.name
            let excerpt: HTML? = row.snippet.map { "<span class=\"snippet\">\(ListControls.marked($0))</span>" }
            return ListControls.row(
                id: "contact-\(contact.id)", columns: columns,
                cells: [
                    "<span class=\"title\">\(name)</span>\(excerpt)", "\(contact.address)", reach(contact.contact),
                    actions(contact.id, name: name),
                ])
        }
        let empty: HTML =
            query.isSearch
            ? "<p class=\"notice\" id=\"empty\">No contact matches “<bdi>\(query.search)</bdi>”.</p>"
            : "<p class=\"notice\" id=\"empty\">No contacts yet. <a href=\"/contacts/new\">Add a contact</a></p>"
        let list = ListControls.table(
            id: "contacts-list", caption: "Contacts", base: "contacts", query: query, defaultSort: .name,
            columns: columns, rows: rows)
        let heading: HTML = query.isSearch ? "Contacts matching “<bdi>\(query.search)</bdi>”" : "Contacts"
        return Layout.page(
            request, title: Layout.listTitle("Contacts", search: query.search, page: query.page),
            section: "/contacts",
            content: """
                <h1>\(heading)</h1>
                <p class="actions"><a class="button" href="/contacts/new" id="add-contact">Add a contact</a> \
                <a class="button secondary" href="/contacts/find" id="find-by-name">Find by name</a></p>
                \(ListControls.searchForm(base: "contacts", label: "Search contacts", search: query.search))
                \(ListControls.sortLinks(base: "contacts", query: query, defaultSort: .name, columns: columns, labels: sorts))
                \(ListControls.results(base: "contacts", query: query, defaultSort: .name, page: page, noun: noun, list: list, empty: empty))
                """)
    }

    /// The find page: the name's form, then each contact with that name,
    /// Edit beside it; what was found goes to the message banner.
    static func find(_ request: Request, name: String, result: FindResult, status: Int = 200) -> Response {
        let shown = name.trimmingCharacters(in: .whitespacesAndNewlines)
        var problems: [String: String] = [:]
        var summary: String?
        var message: String?
        var results: HTML = ""
        switch result {
        case .none:
            break
        case .refused(let error):
            problems = ListControls.problems(error)
            summary = "Type the name to find."
        case .found(let listed):
            let count = listed.records.count + listed.unreadable.count
            if count == 0 {
                message = "No match: no contact is named “\(Layout.isolated(shown))”."
                results = """
                    <p class="notice" id="empty">No contact is named “<bdi>\(shown)</bdi>”. \
                    <a href="\(HTML.path(["contacts", "new"], query: [("name", shown)]))" id="add-found-name">Add “<bdi>\(shown)</bdi>”</a></p>
                    """
            } else {
                message =
                    "Match found: \(count == 1 ? "1 contact" : "\(count) contacts") named “\(Layout.isolated(shown))”."
                let list: HTML =
                    listed.records.isEmpty
                    ? "" : "<ul class=\"records\" id=\"matches\">\(listed.records.map { item($0) })</ul>"
                results = "\(ListControls.unreadable(listed.unreadable))\(list)"
            }
        }
        let title = shown.isEmpty ? "Find a contact" : "Find: \(Layout.isolated(shown)) — Contacts"
        return Layout.page(
            request, title: title, section: "/contacts", status: status, message: message,
            content: """
                <h1>Find a contact</h1>
                \(Field.errorSummary(summary))
                <form method="get" action="/contacts/find" role="search" class="card" id="find-form" novalidate>
                \(Field.input("name", label: ContactField.name.label, value: name, error: problems[ContactField.name.rawValue], autocomplete: "off", hint: "The whole name; case, accents and spaces do not matter."))
                <p class="actions"><button type="submit" id="find-contact">Find</button> \
                <a href="/contacts">All contacts</a></p>
                </form>
                <div id="found" data-live-topics="contacts">
                \(results)
                </div>
                """)
    }

    /// The add or edit form.
    static func form(
        _ request: Request, mode: FormMode, values: ContactFormValues, hidden: HTML = "",
        errors: ValidationError? = nil,
        summary: String? = nil, status: Int = 200
    ) -> Response {
        let (title, heading) = Layout.formTitle(kind: "a contact", editing: mode.name)
        let action: String
        let formID: String
        var live: HTML = ""
        switch mode {
        case .add:
            action = "/contacts"
            formID = "contact-form"
        case .edit(let id, _):
            action = HTML.path(["contacts", String(id), "edit"])
            formID = "contact-edit-form"
            live = EditConflict.liveAttributes(topic: "contacts", source: action)
        }
        let summaryText =
            summary ?? (errors == nil ? nil : "The contact was not saved: correct the fields marked below.")
        return Layout.page(
            request, title: title, section: "/contacts", status: status,
            content: """
                <h1>\(heading)</h1>
                \(Field.errorSummary(summaryText))
                <form method="post" action="\(action)" class="card" id="\(formID)" novalidate\(live)>
                \(Layout.csrfField(request))\(hidden)
                \(fields(values, problems: ListControls.problems(errors)))
                <p class="actions"><button type="submit" id="save-contact">\(mode == .add ? "Add" : "Save")</button> <a href="/contacts">Cancel</a></p>
                </form>
                """)
    }

    /// The add form sent with a name other contacts have: they are shown,
    /// each with Edit, and a button adds this one all the same by sending
    /// the same fields again with `allowDuplicate=yes` (and the CSRF
    /// token); 409.
    static func confirmDuplicate(_ request: Request, values: ContactFormValues, duplicate: DuplicateContactError)
        -> Response
    {
        let count = duplicate.ids.count
        let existing =
            count == 1 ? "A contact with this name already exists" : "\(count) contacts with this name already exist"
        let hidden = HTML(
            joining: [("name", values.name), ("address", values.address), ("contact", values.contact)].map {
                "<input type=\"hidden\" name=\"\($0.0)\" value=\"\($0.1)\">" as HTML
            })
        let field = ContactsPages.allowDuplicateField
        let unreadableIDs = duplicate.ids.filter { id in !duplicate.existing.contains { $0.id == id } }
        let unreadable: HTML? =
            unreadableIDs.isEmpty
            ? nil
            : "<p class=\"notice\" id=\"unreadable\">Also: \(unreadableIDs.map { "contact \($0)" }.joined(separator: ", ")), which cannot be read.</p>"
        return Layout.page(
            request, title: "Add a second “\(Layout.isolated(duplicate.name))”?", section: "/contacts", status: 409,
            content: """
                <h1>Add a second “<bdi>\(duplicate.name)</bdi>”?</h1>
                \(Field.errorSummary("\(existing) (ignoring case, accents and spaces). Nothing was added yet."))
                <ul class="records" id="existing">\(duplicate.existing.map { item($0) })</ul>
                \(unreadable)
                <p>To change the existing contact instead, choose its Edit. To keep both, add this one:</p>
                <dl class="details" id="new-contact">
                <dt>\(ContactField.name.label)</dt><dd>\(values.name)</dd>
                <dt>\(ContactField.address.label)</dt><dd>\(values.address)</dd>
                <dt>\(ContactField.contact.label)</dt><dd>\(values.contact)</dd>
                </dl>
                <form method="post" action="/contacts" class="actions" id="duplicate-form">
                \(Layout.csrfField(request))\(hidden)
                <input type="hidden" name="\(field.name)" value="\(field.value)">
                <button type="submit" id="confirm-duplicate">Add a second “<bdi>\(duplicate.name)</bdi>”</button>
                <a href="\(HTML.path(["contacts", "new"], query: [("name", values.name)]))" id="change-name">Change the name</a>
                <a href="/contacts">Cancel</a>
                </form>
                """)
    }

    /// The edit form's hidden fields for `contact` as it is stored.
    static func hiddenFields(_ contact: Contact) -> HTML {
        EditConflict.hiddenFields(
            version: contact.version,
            originals: [("name", contact.name), ("address", contact.address), ("contact", contact.contact)])
    }

    /// The edit form after someone else saved the contact: theirs beside
    /// yours (see ``EditConflict``), 409.
    static func conflict(_ request: Request, contact: Contact, form: Form) -> Response {
        let values = EditConflict.values(
            form,
            stored: [
                ("name", ContactField.name.label, contact.name),
                ("address", ContactField.address.label, contact.address),
                ("contact", ContactField.contact.label, contact.contact),
            ])
        let action = HTML.path(["contacts", String(contact.id), "edit"])
        return Layout.page(
            request, title: Layout.formTitle(kind: "a contact", editing: contact.name).title,
            section: "/contacts", status: 409,
            content: """
                <h1>Edit a contact</h1>
                \(EditConflict.form(request, kind: "contact", formID: "contact-edit-form", action: action, reload: action, topic: "contacts", values: values, version: contact.version))
                """)
    }

    static func confirmDelete(
        _ request: Request, id: Int64, name: String?, version: RecordVersion? = nil, changed: Bool = false,
        unreadable: UnreadableRowError? = nil
    ) -> Response {
        let shown = name.map { $0.isEmpty ? "(no name)" : $0 } ?? "contact \(id)"
        return ListControls.confirmDelete(
            request, shown: shown, section: "/contacts",
            action: HTML.path(["contacts", String(id), "delete"]), cancel: "/contacts", unreadable: unreadable,
            version: version, changed: changed ? "contact" : nil)
    }
}
