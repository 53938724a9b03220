import Foundation
import HTTPServer
import PasswordHashing
import RecordsApp

/// The JSON API, `/api/v1/…`: every app's records (list, get, create,
/// update, delete), the Coffee app's pictures, the signed-in user's
/// profile, registration, the live events and the OpenAPI description.
///
/// Each app's collection comes from its ``APIResource``, declared in the
/// app's folder; ``SiteApps`` lists them with the pages.
enum APIRoutes {
    /// The largest JSON body a route takes.
    static let bodyLimit = 64 * 1024

    /// Every operation of the API, in the order the description lists them.
    static func operations(_ context: WebContext, events: APIEvents) -> [APIOperation] {
        SiteApps.all.compactMap(\.api).flatMap { resource in
            collection(resource, context) + resource.moreOperations(context)
        } + UsersAPI.operations(context) + SyncAPI.operations(context) + [
            events.operation, ServerStatus.operation(context), OpenAPI.operation(context, events: events),
        ]
    }

    /// The server's routes for the operations.
    static func routes(_ context: WebContext, events: APIEvents) -> [Route] {
        operations(context, events: events).map(\.route)
    }

    // MARK: - A collection

    static func collection(_ resource: APIResource, _ context: WebContext) -> [APIOperation] {
        let name = resource.name
        let capitalized = name.prefix(1).uppercased() + name.dropFirst()
        let kind = resource.kind
        let schema = OpenAPI.schemaName(resource)
        let input = OpenAPI.inputSchemaName(resource)
        let idempotency = IdempotencyStore(database: context.database)
        var listParameters: [APIOperation.Parameter] = [
            .query(
                "limit", "How many records to give: 1 to \(APIListQuery.maximumLimit) (20 when left out).",
                schema: OpenAPI.integerSchema(1...APIListQuery.maximumLimit)),
            .query(
                "offset", "How many records to skip first (0 when left out).",
                schema: OpenAPI.integerSchema(0...Int(Int32.max))),
            .query(
                "sort", "The order: \(resource.sorts.joined(separator: ", ")) (\(resource.sorts[0]) when left out).",
                schema: OpenAPI.enumSchema(resource.sorts)),
            .query(
                "order",
                "Which way the order runs: asc or desc (the order's own way when left out: newest first for "
                    + "newest, else up). Ignored with q.",
                schema: OpenAPI.enumSchema(SortDirection.allCases.map(\.rawValue))),
        ]
        if resource.searchable {
            listParameters.append(
                .query(
                    "q", "Words to search for, best matches first: case and accents ignored, a word's start finds it.",
                    schema: OpenAPI.stringSchema))
        }
        let versionAnswers: [APIOperation.Answer] = [
            .problem(
                412, "The \(kind) changed since that version: the document's `current` member is the \(kind) now."),
            .problem(400, "If-Match is not a version this server gave."),
        ]
        let operations = [
            APIOperation(
                method: "GET", path: "/\(name)", operationID: "list\(capitalized)", summary: "List \(name).",
                access: .read, tag: name, parameters: listParameters,
                answers: [
                    .init(
                        status: 200, summary: "A window of the list and the count of all.",
                        content: .json(schema: OpenAPI.listSchemaName(resource))),
                    .problem(401, "No valid token."), .problem(422, "A query parameter is out of range."),
                ]
            ) { request in
                let query = try Self.listQuery(request, resource: resource)
                let list = try await resource.list(context, query)
                let document = JSONObject([
                    ("items", .array(list.items.map { .object($0) })), ("total", .integer(Int64(list.total))),
                    ("limit", .integer(Int64(query.limit))), ("offset", .integer(Int64(query.offset))),
                ])
                return json(.object(document))
            },
            APIOperation(
                method: "GET", path: "/\(name)/:id", operationID: "get\(capitalized)", summary: "Get one \(kind).",
                access: .read, tag: name,
                parameters: [.header("If-None-Match", "A version seen before: 304 while it is current.")],
                answers: [
                    .init(
                        status: 200, summary: "The \(kind); its ETag is its version.", content: .json(schema: schema)),
                    .init(status: 304, summary: "Not changed since the version in If-None-Match."),
                    .problem(401, "No valid token."), .problem(404, "No \(kind) has that ID."),
                ]
            ) { request in
                let id = try request.id()
                guard let record = try await resource.get(context, id) else {
                    throw Problem.notFound("There is no \(kind) with ID \(id).")
                }
                if EntityTags.ifNoneMatch(request.headers["if-none-match"], matches: record.entityTag) {
                    return Response(status: 304, headers: [("ETag", record.entityTag)])
                }
                return json(.object(record.json), headers: [("ETag", record.entityTag)])
            },
            APIOperation(
                method: "POST", path: "/\(name)", operationID: "create\(capitalized)", summary: "Create a \(kind).",
                access: .write, tag: name,
                parameters: [
                    .header(
                        "Idempotency-Key",
                        "Any text of 1 to 200 characters: sending the same key and body again within 24 hours answers what the first request got, without a second \(kind)."
                    )
                ],
                requestBody: .json(schema: input),
                answers: [
                    .init(
                        status: 201, summary: "Created; Location names it and its ETag is its version.",
                        content: .json(schema: schema)),
                    .problem(401, "No valid token."), .problem(403, "The token may only read."),
                    .problem(409, "A request with the same Idempotency-Key is still running."),
                    .problem(413, "The body is larger than \(bodyLimit / 1024) KiB."),
                    .problem(
                        422,
                        "A member is missing, unknown, of the wrong type or not valid; or the Idempotency-Key was used with another body."
                    ),
                ],
                body: .bytes(limit: bodyLimit)
            ) { request in
                let client = try request.requireWriter()
                return try await Idempotency.run(request, owner: client.user.id, store: idempotency) {
                    let input = try APIInput(try JSONValue.parse(request.body), for: resource, creating: true)
                    let record = try await validated(resource) { try await resource.create(context, input) }
                    return json(
                        .object(record.json), status: 201,
                        headers: [
                            ("Location", "\(APIOperation.prefix)/\(name)/\(record.id)"), ("ETag", record.entityTag),
                        ])
                }
            },
            APIOperation(
                method: "PATCH", path: "/\(name)/:id", operationID: "update\(capitalized)",
                summary: "Change some members of a \(kind): those sent; null clears a member that may be empty.",
                access: .write, tag: name,
                parameters: [
                    .header("If-Match", "The version the change is based on: 412 when the \(kind) changed since.")
                ],
                requestBody: .json(schema: OpenAPI.patchSchemaName(resource)),
                answers: [
                    .init(status: 200, summary: "The \(kind) as it is now.", content: .json(schema: schema)),
                    .problem(401, "No valid token."), .problem(403, "The token may only read."),
                    .problem(404, "No \(kind) has that ID."),
                    .problem(422, "A member is unknown, of the wrong type or not valid."),
                ] + versionAnswers,
                body: .bytes(limit: bodyLimit)
            ) { request in
                _ = try request.requireWriter()
                let id = try request.id()
                let version = try ifMatch(request)
                let input = try APIInput(try JSONValue.parse(request.body), for: resource, creating: false)
                do {
                    let record = try await validated(resource) {
                        try await resource.update(context, id, input, version)
                    }
                    return json(.object(record.json), headers: [("ETag", record.entityTag)])
                } catch let error as VersionConflictError {
                    throw try await conflict(error, resource: resource, context: context)
                }
            },
            APIOperation(
                method: "DELETE", path: "/\(name)/:id", operationID: "delete\(capitalized)",
                summary: "Delete a \(kind).",
                access: .write, tag: name,
                parameters: [
                    .header("If-Match", "The version the deletion is based on: 412 when the \(kind) changed since.")
                ],
                answers: [
                    .init(status: 204, summary: "Deleted."), .problem(401, "No valid token."),
                    .problem(403, "The token may only read."), .problem(404, "No \(kind) has that ID."),
                ] + versionAnswers
            ) { request in
                _ = try request.requireWriter()
                let id = try request.id()
                let version = try ifMatch(request)
                do {
                    try await resource.delete(context, id, version)
                } catch let error as VersionConflictError {
                    throw try await conflict(error, resource: resource, context: context)
                }
                return Response(status: 204)
            },
        ]
        // Each reads or writes one app's rows as JSON: quick enough to start
        // on the event loop.
        return operations.map { operation in
            var operation = operation
            operation.isQuick = true
            return operation
        }
    }

    // MARK: - Helpers

    /// A JSON answer.
    static func json(_ value: JSONValue, status: Int = 200, headers: [(name: String, value: String)] = []) -> Response {
        Response(
            status: status, headers: [("Content-Type", "application/json")] + headers,
            body: .bytes(JSONWriter.encode(value)))
    }

    /// The list's query parameters, checked.
    static func listQuery(_ request: Request, resource: APIResource) throws -> APIListQuery {
        var query = APIListQuery()
        var errors: [(member: String, message: String)] = []
        if let text = request.query["limit"] {
            if let limit = Int(text), (1...APIListQuery.maximumLimit).contains(limit) {
                query.limit = limit
            } else {
                errors.append(("limit", "Limit must be a whole number from 1 to \(APIListQuery.maximumLimit)."))
            }
        }
        if let text = request.query["offset"] {
            if let offset = Int(text), offset >= 0, offset <= Int(Int32.max) {
                query.offset = offset
            } else {
                errors.append(("offset", "Offset must be a whole number from 0."))
            }
        }
        if let sort = request.query["sort"] {
            if resource.sorts.contains(sort) {
                query.sort = sort
            } else {
                errors.append(("sort", "Sort must be one of \(resource.sorts.joined(separator: ", "))."))
            }
        }
        if let text = request.query["order"] {
            if let direction = SortDirection(rawValue: text) {
                query.direction = direction
            } else {
                errors.append(("order", "Order must be asc or desc."))
            }
        }
        if let search = request.query["q"] {
            if !resource.searchable {
                errors.append(("q", "The \(resource.name) list cannot be searched."))
            } else if !search.trimmingCharacters(in: .whitespaces).isEmpty {
                query.search = search
            }
        }
        guard errors.isEmpty else {
            throw Problem(
                status: 422, code: "validation", detail: errors.map(\.message).joined(separator: " "), errors: errors)
        }
        return query
    }

    /// The version of an `If-Match` header, or nil without one.
    ///
    /// - Throws: ``Problem`` 400 when it is not one version this server
    ///   gives (a list, `*` or a weak tag are refused: a change must name
    ///   the one version it was based on).
    static func ifMatch(_ request: Request) throws -> RecordVersion? {
        guard let header = request.headers["if-match"] else { return nil }
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.count >= 2, trimmed.hasPrefix("\""), trimmed.hasSuffix("\""),
            let version = RecordVersion(String(trimmed.dropFirst().dropLast()))
        else {
            throw Problem(
                status: 400, code: "malformed-version",
                detail: "If-Match must be one version as the ETag header gave it, in quotes.")
        }
        return version
    }

    /// Runs a store call, turning its validation error into a 422 that
    /// names the JSON members.
    static func validated<T>(_ resource: APIResource, _ body: () async throws -> T) async throws -> T {
        try await validated(resource.fields, body)
    }

    /// Runs a store call, turning its validation error into a 422 that
    /// names the members of `fields`.
    static func validated<T>(_ fields: [APIField], _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ValidationError {
            throw Problem.validation(error, members: APIField.membersByLabel(fields))
        }
    }

    /// The 412 for a version mismatch, with the record as it is now.
    static func conflict(_ error: VersionConflictError, resource: APIResource, context: WebContext) async throws
        -> Problem
    {
        var problem = Problem(
            status: 412, code: "version-mismatch",
            detail:
                "This \(resource.kind) changed since version \(error.expected): it is at version \(error.current) now. Read it again, apply your change and send it with the new version."
        )
        if let current = try await resource.get(context, error.id) {
            problem.extra = [("current", .object(current.json))]
            problem.headers = [("ETag", current.entityTag)]
        }
        return problem
    }
}

/// `Idempotency-Key` on a POST: the first answer is kept for 24 hours and
/// given again for the same key and body, so a program that retries after
/// losing an answer does not create a second record.
enum Idempotency {
    /// Runs `body` once for a key of `owner` and the same request, and
    /// gives its answer again for the retries.
    ///
    /// - Parameter digestedBody: The body as it identifies the request,
    ///   compared with the first request's (hashed with its method and
    ///   path, ``digest(_:body:)``); by default the body as sent. A route
    ///   whose body holds a password gives it without, so that no fast hash
    ///   of a password is kept for 24 hours. Called only when the request
    ///   has a key.
    static func run(
        _ request: Request, owner: Int64, store: IdempotencyStore, digestedBody: (() -> [UInt8])? = nil,
        _ body: () async throws -> Response
    ) async throws -> Response {
        guard let key = request.headers["idempotency-key"] else { return try await body() }
        guard (1...200).contains(key.count), key.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F })
        else {
            throw Problem(
                status: 400, code: "malformed-idempotency-key",
                detail: "Idempotency-Key must be 1 to 200 printable ASCII characters.")
        }
        let digest = try digest(request, body: digestedBody?() ?? request.body)
        switch try await store.begin(owner: owner, key: key, requestDigest: digest, now: Date()) {
        case .replay(let stored):
            var headers = stored.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            headers.append(("Idempotent-Replayed", "true"))
            return Response(status: stored.status, headers: headers, body: .bytes(stored.body))
        case .keyReusedWithAnotherRequest:
            throw Problem(
                status: 422, code: "idempotency-key-reused",
                detail: "This Idempotency-Key was used with another request; use a new key for a new request.")
        case .inProgress:
            throw Problem(
                status: 409, code: "idempotency-key-in-use",
                detail: "A request with this Idempotency-Key is still running; retry in a moment.",
                headers: [("Retry-After", "1")])
        case .proceed:
            break
        }
        let response: Response
        do {
            response = try await body()
        } catch {
            // Only a success is kept: a retry of a request that failed
            // (the database was busy, the record was invalid) runs again.
            try? await store.abandon(owner: owner, key: key)
            throw error
        }
        if case .bytes(let bytes) = response.body, (200..<300).contains(response.status) {
            var headers: [String: String] = [:]
            for (name, value) in response.headers { headers[name] = value }
            try await store.finish(
                owner: owner, key: key, response: StoredResponse(status: response.status, headers: headers, body: bytes)
            )
        } else {
            try? await store.abandon(owner: owner, key: key)
        }
        return response
    }

    /// The request's method and path, and `body`, hashed.
    static func digest(_ request: Request, body: [UInt8]) throws -> String {
        let bytes = Array("\(request.method) \(request.path)\n".utf8) + body
        return try SHA256.digest(bytes).map { String(format: "%02x", $0) }.joined()
    }
}
