import RecordsApp

extension APIResource {
    /// The Contacts app in the API: `/api/v1/contacts`.
    static let contacts = APIResource(
        app: .contacts, name: "contacts", kind: "contact",
        summary: "Contacts: a name, an address and a phone number or email.",
        fields: [
            APIField(
                name: "name", field: ContactField.name, kind: .text(maxLength: ContactRules.maxNameLength),
                summary: "The contact's name."),
            APIField(
                name: "address", field: ContactField.address, kind: .text(maxLength: ContactRules.maxAddressLength),
                summary: "The postal address."),
            APIField(
                name: "contact", field: ContactField.contact, kind: .text(maxLength: ContactRules.maxContactLength),
                summary: "A phone number or an email address."),
        ],
        sorts: ContactSort.allCases.map(\.rawValue), searchable: false,
        list: { context, query in
            let window = try await context.contacts.window(
                sortedBy: query.sort.flatMap(ContactSort.init(rawValue:)), direction: query.direction,
                limit: query.limit, offset: query.offset)
            return APIList(items: window.records.map { Self.contact($0).json }, total: window.total)
        },
        get: { context, id in try await context.contacts.contact(id: id).map(Self.contact) },
        create: { context, input in
            let draft = ContactDraft(
                name: input.text("name") ?? "", address: input.text("address") ?? "",
                contact: input.text("contact") ?? "")
            // The API creates what it is sent, as for the other apps: a program
            // that wants one contact per name finds by name first.
            return Self.contact(try await context.contacts.add(draft, allowingDuplicate: true))
        },
        update: { context, id, input, version in
            let changes = ContactChanges(
                name: input.text("name"), address: input.text("address"), contact: input.text("contact"))
            return Self.contact(try await context.contacts.update(id: id, with: changes, ifVersion: version))
        },
        delete: { context, id, version in _ = try await context.contacts.delete(id: id, ifVersion: version) })

    static func contact(_ contact: Contact) -> APIRecord {
        APIRecord(
            id: contact.id, version: contact.version,
            members: [
                ("name", .string(contact.name)), ("address", .string(contact.address)),
                ("contact", .string(contact.contact)),
            ])
    }
}
