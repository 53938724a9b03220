import Foundation
import RecordsApp

/// The Contacts pages' markup.
enum ContactsViews {
    /// A contact on the list, with the search's excerpt when searching.
    struct Row: Sendable {
        var contact: Contact
        var snippet: [(text: String, isMatch: Bool)]?
    }

    /// The state of the screen's form: the fields, the status line after a
    /// save or a find, and the problems to show.
    struct Screen: Sendable {
        var values = ContactFormValues()
        var status: ContactStatus?
        var errors: ValidationError?
        /// A line above the form (a refused form body).
        var summary: String?
        /// A line under the status (several matches, an unreadable one).
        var note: String?
    }

    static let sorts: [(ContactSort, String)] = [(.name, "name"), (.newest, "Newest first")]

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
        guard let href = reachLink(trimmed) else { return "\(text)" }
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

    /// The status line's text: the original tutorial's words.
    static func statusText(_ status: ContactStatus) -> String {
        switch status {
        case .failedToAdd: "Failed to add contact"
        default: status.description
        }
    }

    static func fields(_ values: ContactFormValues, problems: [String: String]) -> HTML {
        """
        \(Field.input("name", label: "Name", value: values.name, error: problems["name"], autocomplete: "name"))
        \(Field.input("address", label: "Address", value: values.address, error: problems["address"], autocomplete: "street-address"))
        \(Field.input("contact", label: "Phone, email or web address", value: values.contact, error: problems["contact"]))
        """
    }

    static func screen(
        _ request: Request, screen: Screen, query: ListQuery<ContactSort>, page: RecordPage<Row>, status: Int
    ) -> Response {
        let problems = ListControls.problems(screen.errors)
        let statusLine: HTML? = screen.status.map {
            "<p role=\"status\" id=\"contact-status\" class=\"\($0 == .added || $0 == .matchFound ? "flash" : "form-error")\">\(statusText($0))</p>"
        }
        let note: HTML? = screen.note.map { "<p class=\"notice\" id=\"contact-note\">\($0)</p>" }
        let rows = page.items.map { row -> HTML in
            let contact = row.contact
            let name = contact.name.isEmpty ? "(no name)" : contact.name
            let excerpt: HTML? = row.snippet.map { "<span class=\"snippet\">\(ListControls.marked($0))</span>" }
            let actions: HTML = """
                <a href="\(HTML.path(["contacts", String(contact.id), "edit"]))">Edit<span class="visually-hidden"> \(name)</span></a> \
                <a href="\(HTML.path(["contacts", String(contact.id), "delete"]))">Delete<span class="visually-hidden"> \(name)</span></a>
                """
            return ListControls.row(
                id: "contact-\(contact.id)", columns: columns,
                cells: [
                    "<span class=\"title\">\(name)</span>\(excerpt)", "\(contact.address)", reach(contact.contact),
                    actions,
                ])
        }
        let empty: HTML =
            query.isSearch
            ? "<p class=\"notice\" id=\"empty\">No contact matches “<bdi>\(query.search)</bdi>”.</p>"
            : "<p class=\"notice\" id=\"empty\">No contacts yet.</p>"
        let list = ListControls.table(
            id: "contacts-list", caption: "Contacts", base: "contacts", query: query, defaultSort: .name,
            columns: columns, rows: rows)
        let heading: HTML = query.isSearch ? "Contacts matching “<bdi>\(query.search)</bdi>”" : "All contacts"
        return Layout.page(
            request, title: "Contacts", section: "/contacts", status: status,
            content: """
                <h1>Contacts</h1>
                \(Field.errorSummary(screen.summary))
                <form method="post" action="/contacts" class="card" id="contact-form" novalidate>
                \(Layout.csrfField(request))
                \(fields(screen.values, problems: problems))
                <p class="actions"><button type="submit" id="save-contact">Save</button> \
                <button type="submit" class="secondary" formaction="/contacts/find" id="find-contact">Find</button></p>
                </form>
                \(statusLine)
                \(note)
                <h2>\(heading)</h2>
                \(ListControls.searchForm(base: "contacts", label: "Search contacts", search: query.search))
                \(ListControls.sortLinks(base: "contacts", query: query, defaultSort: .name, columns: columns, labels: sorts))
                \(ListControls.results(base: "contacts", query: query, defaultSort: .name, page: page, noun: noun, list: list, empty: empty))
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
                ("name", "Name", contact.name), ("address", "Address", contact.address),
                ("contact", "Phone, email or web address", contact.contact),
            ])
        let action = HTML.path(["contacts", String(contact.id), "edit"])
        return Layout.page(
            request, title: "Edit a contact", section: "/contacts", status: 409,
            content: """
                <h1>Edit a contact</h1>
                \(EditConflict.form(request, kind: "contact", formID: "contact-edit-form", action: action, reload: action, topic: "contacts", values: values, version: contact.version))
                """)
    }

    static func form(
        _ request: Request, id: Int64, values: ContactFormValues, hidden: HTML = "", errors: ValidationError? = nil,
        summary: String? = nil, status: Int = 200
    ) -> Response {
        let action = HTML.path(["contacts", String(id), "edit"])
        let summaryText =
            summary ?? (errors == nil ? nil : "The contact was not saved: correct the fields marked below.")
        return Layout.page(
            request, title: "Edit a contact", section: "/contacts", status: status,
            content: """
                <h1>Edit a contact</h1>
                \(Field.errorSummary(summaryText))
                <form method="post" action="\(action)" class="card" id="contact-edit-form" novalidate\(EditConflict.liveAttributes(topic: "contacts", source: action))>
                \(Layout.csrfField(request))\(hidden)
                \(fields(values, problems: ListControls.problems(errors)))
                <p class="actions"><button type="submit" id="save-contact">Save</button> <a href="/contacts">Cancel</a></p>
                </form>
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
