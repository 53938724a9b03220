import RecordsApp

/// `records contacts ...`: the original tutorial's Contacts app.
let contactsCommands = CommandFamily(
    app: .contacts,
    summary: "contacts with a name, address and phone, email or URL",
    commands: [
        Command(
            name: "list", summary: "List every contact: name, then \"address | contact\"",
            options: [
                Command.Option(
                    name: "sort", valueName: "name|newest", help: "Order by name (default) or last added first"),
                .order, .limit, .offset, .json,
            ],
            examples: ["records contacts list", "records contacts list --json"],
            run: { invocation in
                let sort = try invocation.choice("sort", default: ContactSort.name)
                let direction = try invocation.direction(for: sort)
                let list = contactsList(invocation)
                try await ContactsStore(database: invocation.database()).forEach(
                    sortedBy: sort, direction: direction, page: invocation.page()
                ) { try list.take($0) }
                try await invocation.finish(
                    list,
                    empty:
                        "No contacts yet. Add one: records contacts add --name NAME --address ADDRESS --contact CONTACT",
                    noun: "contacts", count: { try await ContactsStore(database: invocation.database()).count() })
            }),
        Command(
            name: "add", summary: "Add a contact",
            options: [
                Command.Option(name: "name", valueName: "NAME", help: "Name (1-100 characters)", isRequired: true),
                Command.Option(
                    name: "address", valueName: "ADDRESS", help: "Address (1-200 characters)", isRequired: true),
                Command.Option(
                    name: "contact", valueName: "CONTACT", help: "Phone number, email or URL (1-200 characters)",
                    isRequired: true),
                Command.Option.flag(
                    "allow-duplicate", "Add it even when a contact with the same name exists (ignoring case and spaces)"
                ),
                .json,
            ],
            discussion: "A contact whose name another already has (ignoring case, accents and spaces: \"jane  DOE\" is "
                + "\"Jane Doe\") is not added: the command names the existing one and fails, unless --allow-duplicate "
                + "is given.",
            examples: [
                "records contacts add --name \"Jane Roe\" --address \"12 Main St\" --contact \"+1 555 0100\"",
                "records contacts add --name \"Jane Doe\" --address \"1 High St\" --contact \"+1 555 0199\" --allow-duplicate",
            ],
            run: { invocation in
                let draft = try ContactDraft(
                    name: invocation.required("name"), address: invocation.required("address"),
                    contact: invocation.required("contact")
                ).validated()
                let contact: Contact
                do {
                    contact = try await ContactsStore(database: invocation.database()).add(
                        draft, allowingDuplicate: invocation.arguments.flag("allow-duplicate"))
                } catch let error as DuplicateContactError {
                    throw CommandFailure(
                        message: "\(Terminal.clean(error.description)); nothing was added. "
                            + "To add a second one, run the command again with --allow-duplicate.")
                }
                try invocation.afterChange("contact \(contact.id) was added", lost: "its ID") {
                    try invocation.emit(contact, text: RecordOutcome.added.message(describe(contact)))
                }
            }),
        Command(
            name: "find", summary: "Find contacts by name (exact, ignoring case and accents)",
            positionals: [
                Command.Positional(name: "NAME", help: "The name; several words are one name", takesRest: true)
            ],
            options: [.json],
            discussion: "Prints \"Match found\" and each match, or exits with status 1 and \"Match not found\".",
            examples: ["records contacts find Jane Doe", "records contacts find \"jane doe\" --json"],
            run: { invocation in
                let name = invocation.arguments.positionals.first ?? ""
                if name.trimmingCharacters(in: .whitespaces).isEmpty {
                    throw UsageError(message: "NAME must not be empty", helpPath: invocation.path)
                }
                let listed = try await ContactsStore(database: invocation.database()).list(named: name)
                let matches = listed.records
                if invocation.wantsJSON { try Console.json(matches) }
                guard !matches.isEmpty || !listed.isComplete else {
                    throw CommandFailure(
                        message: "\(ContactStatus.matchNotFound): no contact is named \"\(Terminal.clean(name))\"")
                }
                if !invocation.wantsJSON {
                    try Console.out(ContactStatus.matchFound.description)
                    if !matches.isEmpty { try Console.out(matches.map(contactFields).joined(separator: "\n\n")) }
                }
                try finishList(listed, noun: "matching contacts")
            }),
        Command(
            name: "search", summary: "Find contacts by the start of words of their name, address or contact",
            positionals: [
                Command.Positional(
                    name: "TEXT", help: "What to look for: words, each the start of a word", takesRest: true)
            ],
            options: indexedSearchOptions,
            discussion: indexedSearchDiscussion + "\nMatches in the name come first. For an exact name, see find.",
            examples: [
                "records contacts search jane", "records contacts search main spring",
                "records contacts search mil --json",
            ],
            run: { invocation in
                let store = try ContactsStore(database: invocation.database())
                try await invocation.runIndexedSearch(
                    nothingFound: "No contact matches", noun: "matching contacts",
                    search: { try await store.fullTextSearch($0, limit: $1, offset: $2) },
                    printTable: { try contactsList(invocation).print($0, empty: $1, noun: "matching contacts") })
            }),
        Command(
            name: "show", summary: "Show one contact",
            positionals: [Command.Positional(name: "ID", help: "The contact's ID, as listed")],
            options: [.json],
            examples: ["records contacts show 1"],
            run: { invocation in
                let id = try invocation.recordID()
                guard let contact = try await ContactsStore(database: invocation.database()).contact(id: id) else {
                    throw RecordNotFoundError(kind: "contact", id: id)
                }
                try invocation.emit(Versioned(record: contact, version: contact.version), text: contactFields(contact))
            }),
        Command(
            name: "edit", summary: "Change a contact's name, address or contact",
            positionals: [Command.Positional(name: "ID", help: "The contact's ID, as listed")],
            options: [
                Command.Option(name: "name", valueName: "NAME", help: "New name"),
                Command.Option(name: "address", valueName: "ADDRESS", help: "New address"),
                Command.Option(name: "contact", valueName: "CONTACT", help: "New phone number, email or URL"),
                .ifVersion, .json,
            ],
            discussion: "Fields not given are left as they are; give at least one. With --if-version (the version "
                + "'show' prints), nothing is written if someone changed the record since.",
            examples: ["records contacts edit 1 --address \"14 Main St\""],
            run: { invocation in
                let id = try invocation.recordID()
                let version = try invocation.ifVersion()
                let changes = try ContactChanges(
                    name: invocation.arguments.value("name"), address: invocation.arguments.value("address"),
                    contact: invocation.arguments.value("contact")
                ).validated()
                // A row with a value it cannot read has no "before"; the edit mends it.
                let before = try? await ContactsStore(database: invocation.database()).contact(id: id)
                let contact = try await ContactsStore(database: invocation.database()).update(
                    id: id, with: changes, ifVersion: version)
                try invocation.afterChange("contact \(id) was updated") {
                    try invocation.emit(contact, text: updateMessage(describe(contact), changed: before != contact))
                }
            }),
        Command(
            name: "delete", summary: "Delete contacts, after asking",
            positionals: [.ids(of: "contact")],
            options: [.yes, .json],
            discussion: deleteDiscussion,
            examples: ["records contacts delete 2", "records contacts delete 1 2 --yes"],
            run: { invocation in
                let store = try ContactsStore(database: invocation.database())
                try await invocation.deleteRecords(
                    kind: "contact", noun: "contacts", find: { try await store.contact(id: $0) },
                    delete: { try await store.delete(ids: $0) }, describe: describe)
            }),
    ])

private func contactFields(_ contact: Contact) -> String {
    fieldList([
        ("ID", String(contact.id)), (ContactField.name.label, contact.name),
        (ContactField.address.label, contact.address), (ContactField.contact.label, contact.contact),
        ("Version", contact.version.description),
    ])
}

/// "Jane Doe (ID 1)"
/// `“Jane Doe” (ID 3)`.
private func describe(_ contact: Contact) -> RecordMention {
    RecordMention(Terminal.clean(contact.name), details: "ID \(contact.id)")
}

/// The list of contacts, printed as it is read.
@MainActor
private func contactsList(_ invocation: Invocation) -> StreamingList<Contact> {
    StreamingList(
        [.init(title: "ID", alignment: .right), .init(title: "NAME"), .init(title: "ADDRESS | CONTACT")],
        json: invocation.wantsJSON
    ) { contact in [String(contact.id), contact.name, contact.details] }
}
