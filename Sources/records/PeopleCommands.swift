import RecordsApp

/// `records people ...`: the original tutorial's People app.
let peopleCommands = CommandFamily(
    app: .people,
    summary: "people with a first name, last name and age",
    commands: [
        Command(
            name: "list", summary: "List everyone",
            options: [
                Command.Option(
                    name: "sort", valueName: "name|age|newest",
                    help: "Order by last and first name (default), age (youngest first), or last added first"),
                .order, .limit, .offset, .json,
            ],
            examples: [
                "records people list", "records people list --sort newest --json",
                "records people list --sort age --order desc",
            ],
            run: { invocation in
                let sort = try invocation.choice("sort", default: PersonSort.name)
                let direction = try invocation.direction(for: sort)
                let list = peopleList(invocation)
                try await PeopleStore(database: invocation.database()).forEach(
                    sortedBy: sort, direction: direction, page: invocation.page()
                ) { try list.take($0) }
                try await invocation.finish(
                    list, empty: "No people yet. Add one: records people add --first NAME --last NAME --age N",
                    noun: "people", count: { try await PeopleStore(database: invocation.database()).count() })
            }),
        Command(
            name: "add", summary: "Add a person",
            options: [
                Command.Option(
                    name: "first", valueName: "NAME", help: "First name (1-100 characters)", isRequired: true),
                Command.Option(name: "last", valueName: "NAME", help: "Last name (1-100 characters)", isRequired: true),
                Command.Option(
                    name: "age", valueName: "N", help: "Age, a whole number from 0 to 150; unknown when not given"),
                .json,
            ],
            examples: [
                "records people add --first Ada --last Lovelace --age 36",
                "records people add --first Seán --last \"O'Brien\" --age 29",
            ],
            run: { invocation in
                let draft = try PersonDraft.parse(
                    firstName: invocation.required("first"), lastName: invocation.required("last"),
                    age: invocation.arguments.value("age"))
                let person = try await PeopleStore(database: invocation.database()).add(draft)
                try invocation.afterChange("person \(person.id) was added", lost: "its ID") {
                    try invocation.emit(person, text: RecordOutcome.added.message(describe(person)))
                }
            }),
        Command(
            name: "show", summary: "Show one person",
            positionals: [Command.Positional(name: "ID", help: "The person's ID, as listed")],
            options: [.json],
            examples: ["records people show 1"],
            run: { invocation in
                let id = try invocation.recordID()
                guard let person = try await PeopleStore(database: invocation.database()).person(id: id) else {
                    throw RecordNotFoundError(kind: "person", id: id)
                }
                try invocation.emit(Versioned(record: person, version: person.version), text: personFields(person))
            }),
        Command(
            name: "edit", summary: "Change a person's names or age",
            positionals: [Command.Positional(name: "ID", help: "The person's ID, as listed")],
            options: [
                Command.Option(name: "first", valueName: "NAME", help: "New first name"),
                Command.Option(name: "last", valueName: "NAME", help: "New last name"),
                Command.Option(name: "age", valueName: "N|none", help: "New age, from 0 to 150, or none for unknown"),
                .ifVersion, .json,
            ],
            discussion: "Fields not given are left as they are; give at least one. With --if-version (the version "
                + "'show' prints), nothing is written if someone changed the record since.",
            examples: ["records people edit 1 --age 37", "records people edit 2 --first Alan --last Turing"],
            run: { invocation in
                let id = try invocation.recordID()
                let version = try invocation.ifVersion()
                let changes = try PersonChanges.parse(
                    firstName: invocation.arguments.value("first"), lastName: invocation.arguments.value("last"),
                    age: invocation.arguments.value("age"))
                // A row with a value it cannot read has no "before"; the edit mends it.
                let before = try? await PeopleStore(database: invocation.database()).person(id: id)
                let person = try await PeopleStore(database: invocation.database()).update(
                    id: id, with: changes, ifVersion: version)
                try invocation.afterChange("person \(id) was updated") {
                    try invocation.emit(person, text: updateMessage(describe(person), changed: before != person))
                }
            }),
        Command(
            name: "delete", summary: "Delete people, after asking",
            positionals: [.ids(of: "person")],
            options: [.yes, .json],
            discussion: deleteDiscussion,
            examples: ["records people delete 3", "records people delete 3 4 --yes"],
            run: { invocation in
                let store = try PeopleStore(database: invocation.database())
                try await invocation.deleteRecords(
                    kind: "person", noun: "people", find: { try await store.person(id: $0) },
                    delete: { try await store.delete(ids: $0) }, describe: describe)
            }),
        Command(
            name: "search", summary: "Find people by the start of their first and last names, best matches first",
            positionals: [
                Command.Positional(
                    name: "TEXT", help: "What to look for: words, each the start of a name", takesRest: true)
            ],
            options: indexedSearchOptions,
            discussion: indexedSearchDiscussion,
            examples: [
                "records people search love", "records people search ada lov", "records people search akesson",
                "records people search gr --limit 10 --json",
            ],
            run: { invocation in
                let store = try PeopleStore(database: invocation.database())
                try await invocation.runIndexedSearch(
                    nothingFound: "No one matches", noun: "matching people",
                    search: { try await store.fullTextSearch($0, limit: $1, offset: $2) },
                    printTable: { try peopleList(invocation).print($0, empty: $1, noun: "matching people") })
            }),
    ])

/// The list of people, printed as it is read.
@MainActor
private func peopleList(_ invocation: Invocation) -> StreamingList<Person> {
    StreamingList(
        [
            .init(title: "ID", alignment: .right), .init(title: "FIRST NAME"), .init(title: "LAST NAME"),
            .init(title: "AGE", alignment: .right),
        ], json: invocation.wantsJSON
    ) { person in [String(person.id), person.firstName, person.lastName, person.age.map(String.init) ?? "-"] }
}

private func personFields(_ person: Person) -> String {
    fieldList([
        ("ID", String(person.id)), (PersonField.firstName.label, person.firstName),
        (PersonField.lastName.label, person.lastName),
        (PersonField.age.label, person.age.map(String.init) ?? "unknown"),
        ("Version", person.version.description),
    ])
}

/// "Ada Lovelace (ID 1, age 36)"
/// `“Ada Lovelace” (ID 1, age 36)`.
private func describe(_ person: Person) -> RecordMention {
    let age = person.age.map { ", age \($0)" } ?? ""
    return RecordMention(Terminal.clean(person.fullName), details: "ID \(person.id)\(age)")
}
