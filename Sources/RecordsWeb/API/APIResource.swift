import Foundation
import RecordsApp

/// One app's records in the JSON API, declared once, in the app's folder
/// (`People/PeopleAPI.swift`): the members of a record, its orders, and
/// how each route reaches the app's store. The routes
/// (`/api/v1/<name>`, `/api/v1/<name>/:id`), the input checks and the
/// OpenAPI description are made from it (``APIRoutes``, ``OpenAPI``).
struct APIResource: Sendable {
    /// The app.
    let app: AppDatabase.App
    /// The collection's path segment: "people".
    let name: String
    /// What one record is called in messages: "person".
    let kind: String
    /// What the collection holds, for the OpenAPI description.
    let summary: String
    /// The members of a record besides `id` and `version`, in order.
    let fields: [APIField]
    /// The orders a list takes (`sort=`), the default first.
    let sorts: [String]
    /// Whether `q=` searches the app's full-text index.
    let searchable: Bool

    /// A window of the list: `limit` records from `offset`, in `sort`
    /// (nil: the default), or the best matches of `search`, and how many
    /// there are in all.
    let list: @Sendable (_ context: WebContext, _ query: APIListQuery) async throws -> APIList
    /// One record, or nil.
    let get: @Sendable (_ context: WebContext, _ id: Int64) async throws -> APIRecord?
    /// Creates a record from checked input (every required member present,
    /// every member of its type).
    let create: @Sendable (_ context: WebContext, _ input: APIInput) async throws -> APIRecord
    /// Changes the members given, if the record is still at `version`
    /// (when given); the input is checked and not empty.
    let update:
        @Sendable (_ context: WebContext, _ id: Int64, _ input: APIInput, _ version: RecordVersion?) async throws ->
            APIRecord
    /// Deletes the record, if it is still at `version` (when given).
    let delete: @Sendable (_ context: WebContext, _ id: Int64, _ version: RecordVersion?) async throws -> Void
    /// The app's other operations (the Coffee app's pictures).
    var moreOperations: @Sendable (_ context: WebContext) -> [APIOperation] = { _ in [] }

    /// The JSON member each of the app's validation fields is written as
    /// ("first name" → "firstName").
    var membersByLabel: [String: String] { APIField.membersByLabel(fields) }
}

/// A member of a record in the API.
struct APIField: Sendable {
    /// The kinds of value a member holds.
    enum Kind: Sendable {
        /// Text of at most `maxLength` characters.
        case text(maxLength: Int)
        /// A whole number in `range`.
        case integer(ClosedRange<Int>)
        /// An exact decimal written as a string ("3.50"), so that no
        /// binary floating point rounds it.
        case decimal
        /// One of `choices`.
        case choice([String])
        /// A date, `YYYY-MM-DD`.
        case date
        /// A read-only object the app describes (`schema` is its OpenAPI
        /// schema).
        case object(schema: JSONValue)
    }

    /// The JSON member: "firstName".
    let name: String
    /// The field as the app's messages name it: "first name".
    let label: String
    /// The field as forms show it, when messages should use that rather
    /// than ``label``: "Postal code" for the label "pincode".
    var displayLabel: String?
    let kind: Kind
    /// Whether it may be `null` (an age that is not known).
    var nullable = false
    /// Whether a new record must give it.
    var required = true
    /// Whether only the server sets it.
    var readOnly = false
    /// A sentence for the OpenAPI description.
    let summary: String
}

extension APIField {
    /// The member `name` for an app's form field: its problems are the
    /// field's (``FormField``'s raw value), its messages start with the
    /// field's label.
    init(
        name: String, field: some FormField, kind: Kind, nullable: Bool = false, required: Bool = true,
        summary: String
    ) {
        self.init(
            name: name, label: field.rawValue, displayLabel: field.label, kind: kind, nullable: nullable,
            required: required, summary: summary)
    }

    /// The JSON member each validation field of `fields` is written as.
    static func membersByLabel(_ fields: [APIField]) -> [String: String] {
        Dictionary(fields.map { ($0.label, $0.name) }, uniquingKeysWith: { first, _ in first })
    }
}

/// The query of a list: `?limit=20&offset=40&sort=age&order=desc&q=ada`.
struct APIListQuery: Sendable {
    var limit = 20
    var offset = 0
    var sort: String?
    /// Which way the order runs; nil for the order's own default.
    var direction: SortDirection?
    var search: String?

    static let maximumLimit = 500
}

/// A window of a list and the size of the whole.
struct APIList: Sendable {
    var items: [JSONObject]
    var total: Int
}

/// A record as the API sends it, with its version.
struct APIRecord: Sendable {
    let id: Int64
    let version: RecordVersion
    /// Its members: `id` first, `version` last.
    let json: JSONObject

    init(id: Int64, version: RecordVersion, members: [(name: String, value: JSONValue)]) {
        self.id = id
        self.version = version
        json = JSONObject([("id", .integer(id))] + members + [("version", .string(version.description))])
    }

    /// The `ETag` header's value.
    var entityTag: String { "\"\(version)\"" }
}

/// A request's members, checked against the resource's fields: each
/// member is one of them, writable, of its type (`null` only where
/// allowed). Absent and `null` stay apart: a PATCH leaves an absent member
/// as it is and clears one sent as `null`.
struct APIInput: Sendable {
    let object: JSONObject

    /// Whether the member was sent (even as `null`).
    func has(_ name: String) -> Bool { object[name] != nil }

    /// A text member, or nil when absent or `null`.
    func text(_ name: String) -> String? {
        if case .string(let text)? = object[name] { return text }
        return nil
    }

    /// A whole-number member, or nil when absent or `null`.
    func integer(_ name: String) -> Int? {
        switch object[name] {
        case .integer(let value)?: return Int(exactly: value)
        case .number(let value)?: return Int(exactly: value)
        default: return nil
        }
    }

    /// Whether the member was sent as `null`.
    func isNull(_ name: String) -> Bool { object[name] == .null }

    /// Checks `value` against `resource`'s fields.
    ///
    /// - Parameter creating: Whether every required member must be there.
    /// - Throws: ``Problem`` 422 naming each member at fault: an unknown
    ///   one, a read-only one, one of the wrong type, a missing one; or
    ///   400 when the body is not an object.
    init(_ value: JSONValue, for resource: APIResource, creating: Bool) throws {
        try self.init(value, fields: resource.fields, kind: resource.kind, creating: creating)
    }

    /// Checks `value` against `fields`, the members of a `kind` ("person").
    init(_ value: JSONValue, fields: [APIField], kind: String, creating: Bool) throws {
        guard case .object(let object) = value else {
            throw Problem(
                status: 400, code: "not-an-object",
                detail: "The body must be a JSON object of the \(kind)'s members, not \(value.typeDescription).")
        }
        var errors: [(member: String, message: String)] = []
        for (name, member) in object.members {
            guard let field = fields.first(where: { $0.name == name }) else {
                if name == "id" || name == "version" {
                    errors.append((name, "\(name) is set by the server; leave it out (send the version as If-Match)."))
                } else {
                    let known = fields.filter { !$0.readOnly }.map(\.name).joined(separator: ", ")
                    errors.append(
                        (
                            JSONParserNames.printable(name),
                            "There is no member \"\(JSONParserNames.printable(name))\" in a \(kind); use \(known)."
                        ))
                }
                continue
            }
            if field.readOnly {
                errors.append((name, "\(name) is set by the server; leave it out."))
                continue
            }
            if let problem = Self.typeProblem(member, field: field) { errors.append((name, problem)) }
        }
        if creating {
            for field in fields where field.required && !field.readOnly && object[field.name] == nil {
                errors.append(
                    (field.name, "\(Problem.sentence(field.displayLabel ?? field.label).dropLast()) is required."))
            }
        } else if object.members.isEmpty {
            let names = fields.filter { !$0.readOnly }.map(\.name).joined(separator: ", ")
            errors.append(("", "Nothing to change: send at least one of \(names)."))
        }
        guard errors.isEmpty else {
            throw Problem(
                status: 422, code: "validation", detail: errors.map(\.message).joined(separator: " "), errors: errors)
        }
        self.object = object
    }

    /// What is wrong with `value` for `field`'s kind, or nil.
    private static func typeProblem(_ value: JSONValue, field: APIField) -> String? {
        // Put together only for a problem: this runs for every field sent.
        var label: Substring { Problem.sentence(field.displayLabel ?? field.label).dropLast() }
        if value == .null {
            return field.nullable ? nil : "\(label) must not be null."
        }
        switch (field.kind, value) {
        case (.text, .string), (.decimal, .string), (.date, .string): return nil
        case (.choice(let choices), .string(let text)):
            return choices.contains(text) ? nil : "\(label) must be one of \(choices.joined(separator: ", "))."
        case (.integer, .integer): return nil
        case (.integer, .number(let number)) where number.rounded() == number && abs(number) < 1e15: return nil
        case (.decimal, .integer), (.decimal, .number):
            return "\(label) must be a string holding the decimal number (\"3.50\"), so that nothing rounds it."
        case (.text, _), (.choice, _), (.date, _): return "\(label) must be a string, not \(value.typeDescription)."
        case (.integer, _): return "\(label) must be a whole number, not \(value.typeDescription)."
        case (.decimal, _): return "\(label) must be a string holding a decimal number, not \(value.typeDescription)."
        case (.object, _): return "\(label) is set by the server; leave it out."
        }
    }
}

/// Member names in messages.
enum JSONParserNames {
    /// `name` with its control characters escaped, at most 60 characters.
    static func printable(_ name: String) -> String { JSONWriter.escaped(String(name.prefix(60))) }
}
