import Foundation
import HTTPServer
import RecordsApp

/// The API's OpenAPI 3.1 description, served at `/api/v1/openapi.json`,
/// made from the same ``APIOperation``s the server's routes are made from
/// and the apps' ``APIResource`` fields, so it lists every route the API
/// has and nothing else.
enum OpenAPI {
    static func operation(_ context: WebContext, events: APIEvents) -> APIOperation {
        APIOperation(
            method: "GET", path: "/openapi.json", operationID: "describeAPI",
            summary: "This description of the API (OpenAPI 3.1).", access: .anyone, tag: "meta",
            answers: [.init(status: 200, summary: "The description.", content: .json(schema: "OpenAPIDocument"))]
        ) { _ in
            let document = OpenAPI.document(APIRoutes.operations(context, events: events))
            return APIRoutes.json(document)
        }
    }

    // MARK: - The document

    static func document(_ operations: [APIOperation]) -> JSONValue {
        var paths = JSONObject()
        var grouped: [(path: String, operations: [APIOperation])] = []
        for operation in operations {
            let path = openAPIPath(operation.path)
            if let index = grouped.firstIndex(where: { $0.path == path }) {
                grouped[index].operations.append(operation)
            } else {
                grouped.append((path, [operation]))
            }
        }
        for (path, operations) in grouped {
            var item = JSONObject()
            for operation in operations { item.append(operation.method.lowercased(), describe(operation)) }
            paths.append(APIOperation.prefix + path, .object(item))
        }
        return .object(
            JSONObject([
                ("openapi", .string("3.1.0")),
                (
                    "info",
                    object([
                        ("title", .string("Records API")), ("version", .string("1")),
                        (
                            "description",
                            .string(
                                "The Records apps (People, Contacts, Coffee and the signed-in user's profile) for programs. Send a token made on the account page or with `records token create` as `Authorization: Bearer <token>`. Every record carries a version, its ETag: send it as If-Match to change or delete only what you read. Errors are problem documents (RFC 9457)."
                            )
                        ),
                    ])
                ),
                ("paths", .object(paths)),
                ("components", components()),
            ]))
    }

    /// `/people/:id` as `/people/{id}`.
    static func openAPIPath(_ path: String) -> String {
        path.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
            .reduce("") { $0 + "/" + $1 }
    }

    private static func describe(_ operation: APIOperation) -> JSONValue {
        var description = JSONObject([
            ("operationId", .string(operation.operationID)), ("summary", .string(operation.summary)),
            ("tags", .array([.string(operation.tag)])),
        ])
        var parameters: [JSONValue] = operation.path.split(separator: "/").filter { $0.hasPrefix(":") }.map {
            object([
                ("name", .string(String($0.dropFirst()))), ("in", .string("path")), ("required", .bool(true)),
                ("description", .string("The record's ID.")), ("schema", integerSchema(1...Int(Int64.max))),
            ])
        }
        for parameter in operation.parameters {
            parameters.append(
                object([
                    ("name", .string(parameter.name)), ("in", .string(parameter.place.rawValue)),
                    ("required", .bool(false)), ("description", .string(parameter.summary)),
                    ("schema", parameter.schema),
                ]))
        }
        if !parameters.isEmpty { description.append("parameters", .array(parameters)) }
        switch operation.requestBody {
        case .json(let schema)?:
            description.append(
                "requestBody",
                object([
                    ("required", .bool(true)),
                    ("content", object([("application/json", object([("schema", reference(schema))]))])),
                ]))
        case .binary(let types)?:
            description.append(
                "requestBody",
                object([
                    ("required", .bool(true)),
                    (
                        "content",
                        .object(
                            JSONObject(
                                types.map { ($0, object([("schema", object([("contentMediaType", .string($0))]))])) }))
                    ),
                ]))
        case nil: break
        }
        var responses = JSONObject()
        // Every write may be refused by WriteAcknowledgement, whatever its route.
        var answers = operation.answers
        if !["GET", "HEAD"].contains(operation.method) && !answers.contains(where: { $0.status == 503 }) {
            answers.append(
                .problem(
                    503,
                    "Not acknowledged: the server's database file was deleted or replaced (code "
                        + "database-file-lost), or, on a server run with --durable, the replica did not confirm "
                        + "the write (code not-replicated: it is saved on the server, not yet replicated), or "
                        + "the server is a read replica (code read-only-replica: send changes to the primary)."))
        }
        for answer in answers {
            var response = JSONObject([("description", .string(answer.summary))])
            switch answer.content {
            case .json(let schema)?:
                response.append("content", object([("application/json", object([("schema", reference(schema))]))]))
            case .problem?:
                response.append(
                    "content", object([("application/problem+json", object([("schema", reference("Problem"))]))]))
            case .binary(let types)?:
                response.append(
                    "content",
                    .object(
                        JSONObject(
                            types.map { ($0, object([("schema", object([("contentMediaType", .string($0))]))])) })))
            case .eventStream?:
                response.append("content", object([("text/event-stream", object([("schema", stringSchema)]))]))
            case nil: break
            }
            responses.append(String(answer.status), .object(response))
        }
        description.append("responses", .object(responses))
        description.append(
            "security", operation.access == .anyone ? .array([]) : .array([object([("bearerToken", .array([]))])]))
        return .object(description)
    }

    // MARK: - Schemas

    static func schemaName(_ resource: APIResource) -> String { capitalized(resource.kind) }
    static func inputSchemaName(_ resource: APIResource) -> String { capitalized(resource.kind) + "Input" }
    static func patchSchemaName(_ resource: APIResource) -> String { capitalized(resource.kind) + "Changes" }
    static func listSchemaName(_ resource: APIResource) -> String { capitalized(resource.kind) + "List" }

    private static func capitalized(_ text: String) -> String { text.prefix(1).uppercased() + text.dropFirst() }

    private static func components() -> JSONValue {
        var schemas = JSONObject()
        for resource in APIEvents.apps {
            schemas.append(schemaName(resource), recordSchema(resource.fields))
            schemas.append(inputSchemaName(resource), inputSchema(resource.fields, creating: true))
            schemas.append(patchSchemaName(resource), inputSchema(resource.fields, creating: false))
            schemas.append(
                listSchemaName(resource),
                object([
                    ("type", .string("object")),
                    (
                        "properties",
                        object([
                            (
                                "items",
                                object([("type", .string("array")), ("items", reference(schemaName(resource)))])
                            ),
                            ("total", object([("type", .string("integer")), ("minimum", .integer(0))])),
                            ("limit", integerSchema(1...APIListQuery.maximumLimit)),
                            ("offset", object([("type", .string("integer")), ("minimum", .integer(0))])),
                        ])
                    ),
                    ("required", .array(["items", "total", "limit", "offset"].map { .string($0) })),
                ]))
        }
        let profileFields = UsersAPI.fields.filter { $0.name != "currentPassword" }
        schemas.append("Profile", recordSchema(profileFields))
        schemas.append("ProfileChanges", inputSchema(UsersAPI.fields, creating: false))
        schemas.append("Registration", inputSchema(UsersAPI.registrationFields, creating: true))
        schemas.append("Status", ServerStatus.schema)
        schemas.append("SyncConflictList", SyncAPI.conflictListSchema)
        schemas.append("Problem", problemSchema)
        schemas.append("OpenAPIDocument", object([("type", .string("object"))]))
        return object([
            ("schemas", .object(schemas)),
            (
                "securitySchemes",
                object([
                    (
                        "bearerToken",
                        object([
                            ("type", .string("http")), ("scheme", .string("bearer")),
                            ("description", .string("A token from the account page or `records token create`.")),
                        ])
                    )
                ])
            ),
        ])
    }

    private static func recordSchema(_ fields: [APIField]) -> JSONValue {
        var properties = JSONObject([("id", object([("type", .string("integer")), ("minimum", .integer(1))]))])
        for field in fields { properties.append(field.name, schema(field)) }
        properties.append("version", versionSchema)
        return object([
            ("type", .string("object")), ("properties", .object(properties)),
            ("required", .array((["id"] + fields.map(\.name) + ["version"]).map { .string($0) })),
        ])
    }

    private static func inputSchema(_ fields: [APIField], creating: Bool) -> JSONValue {
        var properties = JSONObject()
        for field in fields where !field.readOnly { properties.append(field.name, schema(field)) }
        var schema = JSONObject([
            ("type", .string("object")), ("properties", .object(properties)), ("additionalProperties", .bool(false)),
        ])
        if creating {
            schema.append("required", .array(fields.filter { $0.required && !$0.readOnly }.map { .string($0.name) }))
        } else {
            schema.append("minProperties", .integer(1))
        }
        return .object(schema)
    }

    private static func schema(_ field: APIField) -> JSONValue {
        var schema: JSONObject
        switch field.kind {
        case .text(let maxLength):
            schema = JSONObject([("type", .string("string")), ("maxLength", .integer(Int64(maxLength)))])
        case .integer(let range):
            schema = JSONObject([
                ("type", .string("integer")), ("minimum", .integer(Int64(range.lowerBound))),
                ("maximum", .integer(Int64(range.upperBound))),
            ])
        case .decimal:
            schema = JSONObject([("type", .string("string")), ("pattern", .string("^[0-9]+(\\.[0-9]+)?$"))])
        case .choice(let choices):
            schema = JSONObject([("type", .string("string")), ("enum", .array(choices.map { .string($0) }))])
        case .date:
            schema = JSONObject([("type", .string("string")), ("format", .string("date"))])
        case .object(let described):
            if case .object(let object) = described { schema = object } else { schema = JSONObject() }
        }
        if field.nullable, let index = schema.members.firstIndex(where: { $0.name == "type" }) {
            schema.members[index].value = .array([schema.members[index].value, .string("null")])
        }
        if field.readOnly { schema.append("readOnly", .bool(true)) }
        schema.append("description", .string(field.summary))
        return .object(schema)
    }

    static let versionSchema = object([
        ("type", .string("string")), ("pattern", .string("^[0-9a-f]{16}$")),
        ("description", .string("The record's version, also its ETag: it changes whenever the record does.")),
    ])

    /// The Coffee app's picture member.
    static let pictureSchema = object([
        ("type", .string("object")),
        (
            "properties",
            object([
                ("type", stringSchema), ("size", object([("type", .string("integer")), ("minimum", .integer(0))])),
                ("url", stringSchema),
            ])
        ),
        ("required", .array([.string("type"), .string("size"), .string("url")])),
    ])

    private static let problemSchema = object([
        ("type", .string("object")),
        (
            "properties",
            object([
                ("type", stringSchema), ("title", stringSchema), ("status", object([("type", .string("integer"))])),
                ("code", stringSchema), ("detail", stringSchema),
                ("errors", object([("type", .string("object")), ("additionalProperties", stringSchema)])),
                ("current", object([("type", .string("object"))])),
            ])
        ),
        ("required", .array(["type", "title", "status", "code", "detail"].map { .string($0) })),
    ])

    static let stringSchema = object([("type", .string("string"))])

    static func integerSchema(_ range: ClosedRange<Int>) -> JSONValue {
        object([
            ("type", .string("integer")), ("minimum", .integer(Int64(range.lowerBound))),
            ("maximum", .integer(Int64(range.upperBound))),
        ])
    }

    static func enumSchema(_ choices: [String]) -> JSONValue {
        object([("type", .string("string")), ("enum", .array(choices.map { .string($0) }))])
    }

    private static func reference(_ name: String) -> JSONValue {
        object([("$ref", .string("#/components/schemas/\(name)"))])
    }

    private static func object(_ members: [(name: String, value: JSONValue)]) -> JSONValue {
        .object(JSONObject(members))
    }
}
