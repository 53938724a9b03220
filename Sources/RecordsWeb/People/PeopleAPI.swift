import RecordsApp

extension APIResource {
    /// The People app in the API: `/api/v1/people`.
    static let people = APIResource(
        app: .people, name: "people", kind: "person", summary: "People: first and last names and ages.",
        fields: [
            APIField(
                name: "firstName", field: PersonField.firstName, kind: .text(maxLength: PersonRules.maxNameLength),
                summary: "The first name."),
            APIField(
                name: "lastName", field: PersonField.lastName, kind: .text(maxLength: PersonRules.maxNameLength),
                summary: "The last name."),
            APIField(
                name: "age", field: PersonField.age, kind: .integer(PersonRules.ages), nullable: true, required: false,
                summary: "The age in years; null when not known."),
        ],
        sorts: PersonSort.allCases.map(\.rawValue), searchable: true,
        list: { context, query in
            let window = try await context.people.window(
                sortedBy: query.sort.flatMap(PersonSort.init(rawValue:)), direction: query.direction,
                matching: query.search, limit: query.limit,
                offset: query.offset)
            return APIList(items: window.records.map { Self.person($0).json }, total: window.total)
        },
        get: { context, id in try await context.people.person(id: id).map(Self.person) },
        create: { context, input in
            let draft = PersonDraft(
                firstName: input.text("firstName") ?? "", lastName: input.text("lastName") ?? "",
                age: input.integer("age"))
            return Self.person(try await context.people.add(draft))
        },
        update: { context, id, input, version in
            let changes = PersonChanges(
                firstName: input.text("firstName"), lastName: input.text("lastName"), age: input.integer("age"),
                clearsAge: input.isNull("age"))
            return Self.person(try await context.people.update(id: id, with: changes, ifVersion: version))
        },
        delete: { context, id, version in _ = try await context.people.delete(id: id, ifVersion: version) })

    static func person(_ person: Person) -> APIRecord {
        APIRecord(
            id: person.id, version: person.version,
            members: [
                ("firstName", .string(person.firstName)), ("lastName", .string(person.lastName)),
                ("age", .integer(person.age)),
            ])
    }
}
