import Foundation
import HTTPServer
import RecordsApp
import SQLiteStoreSync

/// The sync endpoints devices use (`records sync`, an app's
/// ``HTTPSyncTransport``): `POST /api/v1/sync/push` with a read-write
/// token, `POST /api/v1/sync/pull` with any token. Bodies are
/// ``SyncWire`` messages (`application/vnd.sqlitestore.sync`); refusals
/// are problem documents whose `code` names the engine's error.
enum SyncAPI {
    /// The largest push a device may send (the client sends at most 2,000
    /// changes per push, far below it).
    static let pushLimit = 16 * 1024 * 1024
    /// A pull request is a few bytes (a catch-up names some columns).
    static let pullLimit = 64 * 1024
    /// A piece of a large value: the engine sends at most 4 MiB at a time.
    static let chunkLimit = 4 * 1024 * 1024 + 1024

    static func operations(_ context: WebContext) -> [APIOperation] {
        let refusals: [APIOperation.Answer] = [
            .problem(
                400,
                "The body is not a sync message, or its change batch is cut short or garbled (code malformed-batch)."),
            .problem(401, "No valid token (missing, unknown, expired or revoked)."),
            .problem(415, "The body is not \(SyncWire.contentType)."),
            .problem(
                507,
                "The server's disk is full (code storage-full): nothing of the request was kept; send it again once the server has room."
            ),
        ]
        return [
            APIOperation(
                method: "POST", path: "/sync/push", operationID: "syncPush",
                summary:
                    "Send a device's changes since the server's last acknowledgement; all of them are applied, or none.",
                access: .write, tag: "sync", requestBody: .binary(types: [SyncWire.contentType]),
                answers: [
                    .init(
                        status: 200, summary: "Applied: the acknowledgement, the server's position and the conflicts.",
                        content: .binary(types: [SyncWire.contentType])),
                    .problem(403, "The token may only read."),
                    .problem(
                        409,
                        "Already applied (code replayed-push) or starting after what the server has (code push-out-of-order): acknowledgedThrough says where to resume."
                    ),
                    .problem(413, "The body is larger than \(pushLimit / 1024 / 1024) MiB."),
                    .problem(
                        422,
                        "A table or column the server does not sync (codes unknown-table, unknown-column), a change dated beyond the allowed clock skew (clock-skew), changes of another device (foreign-changes), or a record the apps' rules refuse (invalid-record: table, globalID and errors by column)."
                    ),
                ] + refusals,
                body: .bytes(limit: pushLimit)
            ) { request in
                _ = try request.requireWriter()
                let push = try engine { try SyncWire.pushRequest(Data(try body(request))) }
                let response = try await engine {
                    try await context.database.syncPush(push, on: context.database.syncServer())
                }
                return answer(SyncWire.encode(response))
            },
            APIOperation(
                method: "POST", path: "/sync/pull", operationID: "syncPull",
                summary: "Get the changes the server accepted after a device's position, in the server's order.",
                access: .read, tag: "sync", requestBody: .binary(types: [SyncWire.contentType]),
                answers: [
                    .init(
                        status: 200, summary: "The changes, the position they reach, and whether more wait.",
                        content: .binary(types: [SyncWire.contentType])),
                    .problem(413, "The body is larger than \(pullLimit) bytes."),
                ] + refusals,
                body: .bytes(limit: pullLimit)
            ) { request in
                let pull = try engine { try SyncWire.pullRequest(Data(try body(request))) }
                let response = try await engine {
                    try await context.database.syncPull(pull, on: context.database.syncServer())
                }
                return answer(SyncWire.encode(response))
            },
            APIOperation(
                method: "POST", path: "/sync/chunks/upload", operationID: "syncUploadChunk",
                summary:
                    "Send a piece of a large value (a picture) a push will reference, from where the server's copy stands; with no bytes, ask how much of it the server holds.",
                access: .write, tag: "sync", requestBody: .binary(types: [SyncWire.contentType]),
                answers: [
                    .init(
                        status: 200, summary: "How many bytes of the value the server holds, from the start.",
                        content: .binary(types: [SyncWire.contentType])),
                    .problem(403, "The token may only read."),
                    .problem(
                        409,
                        "The piece does not start where the server's copy stands (code chunk-out-of-order: expectedOffset says where)."
                    ),
                    .problem(
                        413,
                        "The body is larger than \(chunkLimit / 1024 / 1024) MiB (code too-large), or the picture is larger than the server's picture limit (code picture-too-large)."
                    ),
                    .problem(
                        422,
                        "The piece does not fit the value (malformed-chunk), or the whole value does not match its SHA-256 and was discarded (large-value-mismatch)."
                    ),
                ] + refusals,
                body: .bytes(limit: chunkLimit)
            ) { request in
                _ = try request.requireWriter()
                let chunk = try engine { try SyncWire.chunkUpload(Data(try body(request))) }
                // Coffee pictures are the only large values: the pages' limit holds.
                guard chunk.reference.size <= Int64(context.configuration.pictureSizeLimit) else {
                    throw Problem(
                        status: 413, code: "picture-too-large",
                        detail:
                            "The picture is \(ByteCount.text(Int(clamping: chunk.reference.size))); the server takes pictures of at most \(ByteCount.text(context.configuration.pictureSizeLimit))."
                    )
                }
                let response = try await engine {
                    try await context.database.syncUploadChunk(chunk, on: context.database.syncServer())
                }
                return answer(SyncWire.encode(response))
            },
            APIOperation(
                method: "POST", path: "/sync/chunks/download", operationID: "syncDownloadChunk",
                summary: "Get a piece of a large value a pull referenced.",
                access: .read, tag: "sync", requestBody: .binary(types: [SyncWire.contentType]),
                answers: [
                    .init(
                        status: 200, summary: "The bytes from the offset asked, at most the length asked.",
                        content: .binary(types: [SyncWire.contentType])),
                    .problem(
                        404,
                        "No record holds the value any more: it was replaced since the pull (code unknown-large-value); pull again."
                    ),
                    .problem(413, "The body is larger than \(pullLimit) bytes."),
                    .problem(422, "The offset is outside the value (malformed-chunk)."),
                ] + refusals,
                body: .bytes(limit: pullLimit)
            ) { request in
                let chunk = try engine { try SyncWire.chunkDownload(Data(try body(request))) }
                let response = try await engine {
                    try await context.database.syncDownloadChunk(chunk, on: context.database.syncServer())
                }
                return answer(SyncWire.encode(response))
            },
            APIOperation(
                method: "GET", path: "/sync/conflicts", operationID: "listSyncConflicts",
                summary: "The server's conflict log: every synced value that lost a merge, oldest first.",
                access: .read, tag: "sync",
                answers: [
                    .init(
                        status: 200, summary: "The conflicts, each with the value that beat it.",
                        content: .json(schema: "SyncConflictList")),
                    .problem(401, "No valid token."),
                ]
            ) { _ in
                let conflicts = try await context.database.syncConflicts()
                return APIRoutes.json(.object(JSONObject([("items", .array(conflicts.map(json)))])))
            },
        ]
    }

    /// A conflict as the API gives it.
    private static func json(_ entry: AppSyncConflict) -> JSONValue {
        let conflict = entry.conflict
        func version(_ version: Version) -> JSONValue {
            .object(JSONObject([("clock", .integer(version.clock)), ("replica", .string(version.replica.uuidString))]))
        }
        return .object(
            JSONObject([
                ("app", entry.app.map { .string($0.rawValue) } ?? .null), ("table", .string(conflict.table)),
                ("globalID", .string(conflict.globalID.uuidString)), ("column", .string(conflict.column)),
                ("losingValue", entry.losingText.map { .string($0) } ?? .null),
                ("losingVersion", version(conflict.losingVersion)),
                ("winningValue", entry.winningText.map { .string($0) } ?? .null),
                ("winningVersion", version(conflict.winningVersion)),
                ("winnerIsDelete", .bool(conflict.winnerIsDelete)), ("position", .integer(conflict.position)),
            ]))
    }

    /// The OpenAPI schema of the conflict list.
    static var conflictListSchema: JSONValue {
        func type(_ name: String) -> JSONValue { .object(JSONObject([("type", .string(name))])) }
        let nullableString = JSONValue.object(JSONObject([("type", .array([.string("string"), .string("null")]))]))
        let version = JSONValue.object(
            JSONObject([
                ("type", .string("object")),
                ("properties", .object(JSONObject([("clock", type("integer")), ("replica", type("string"))]))),
            ]))
        let conflict = JSONValue.object(
            JSONObject([
                ("type", .string("object")),
                (
                    "properties",
                    .object(
                        JSONObject([
                            ("app", nullableString),
                            ("table", type("string")), ("globalID", type("string")), ("column", type("string")),
                            ("losingValue", nullableString), ("losingVersion", version),
                            ("winningValue", nullableString), ("winningVersion", version),
                            ("winnerIsDelete", type("boolean")), ("position", type("integer")),
                        ]))
                ),
            ]))
        return .object(
            JSONObject([
                ("type", .string("object")),
                (
                    "properties",
                    .object(
                        JSONObject([("items", .object(JSONObject([("type", .string("array")), ("items", conflict)])))]))
                ),
            ]))
    }

    private static func body(_ request: Request) throws -> [UInt8] {
        let type = request.headers["content-type"]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
        guard type?.lowercased() == SyncWire.contentType else {
            throw Problem(
                status: 415, code: "unsupported-media-type",
                detail: "A sync message is sent as \(SyncWire.contentType).")
        }
        return request.body
    }

    private static func answer(_ data: Data) -> Response {
        Response(status: 200, headers: [("Content-Type", SyncWire.contentType)], body: .bytes(Array(data)))
    }

    private static func engine<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw problem(error) ?? error }
    }

    private static func engine<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw problem(error) ?? error }
    }

    /// A large value's reference as a problem's members: `sha256` (hex)
    /// and `size`.
    private static func valueExtras(_ reference: LargeValueReference) -> [(name: String, value: JSONValue)] {
        [
            ("sha256", .string(reference.hexDigest)),
            ("size", .integer(reference.size)),
        ]
    }

    /// The problem document of an engine's refusal.
    static func problem(_ error: any Error) -> Problem? {
        if let error = error as? SyncValidationError {
            let app = AppDatabase.app(syncing: error.table)?.rawValue ?? error.table
            var problem = Problem(
                status: 422, code: "invalid-record",
                detail: "The push was refused, nothing of it was applied: a \(app) record is not valid. "
                    + error.problems.map { Problem.sentence($0.message) }.joined(separator: " ")
                    + " Fix it and sync again.",
                errors: error.problems.map { ($0.column, Problem.sentence($0.message)) })
            problem.extra = [
                ("table", .string(error.table)), ("app", .string(app)),
                ("globalID", .string(error.globalID.uuidString)),
            ]
            return problem
        }
        guard let error = error as? SyncError else { return nil }
        let detail = Problem.sentence(error.message)
        switch error.kind {
        case .malformedBatch: return Problem(status: 400, code: "malformed-batch", detail: detail)
        case .replayedPush(let acknowledged), .pushOutOfOrder(let acknowledged):
            let replay = if case .replayedPush = error.kind { true } else { false }
            var problem = Problem(
                status: 409, code: replay ? "replayed-push" : "push-out-of-order", detail: detail)
            problem.extra = [("acknowledgedThrough", .integer(acknowledged))]
            return problem
        case .clockSkew: return Problem(status: 422, code: "clock-skew", detail: detail)
        case .foreignChanges: return Problem(status: 422, code: "foreign-changes", detail: detail)
        case .unknownTable(let table):
            var problem = Problem(status: 422, code: "unknown-table", detail: detail)
            problem.extra = [("table", .string(table))]
            return problem
        case .unknownColumn(let table, let column):
            var problem = Problem(status: 422, code: "unknown-column", detail: detail)
            problem.extra = [("table", .string(table)), ("column", .string(column))]
            return problem
        case .malformedChunk: return Problem(status: 422, code: "malformed-chunk", detail: detail)
        case .chunkOutOfOrder(let expected):
            var problem = Problem(status: 409, code: "chunk-out-of-order", detail: detail)
            problem.extra = [("expectedOffset", .integer(expected))]
            return problem
        case .largeValueMismatch(let reference):
            var problem = Problem(status: 422, code: "large-value-mismatch", detail: detail)
            problem.extra = valueExtras(reference)
            return problem
        case .largeValueMissing(let reference):
            var problem = Problem(status: 422, code: "large-value-missing", detail: detail)
            problem.extra = valueExtras(reference)
            return problem
        case .unknownLargeValue(let reference):
            var problem = Problem(status: 404, code: "unknown-large-value", detail: detail)
            problem.extra = valueExtras(reference)
            return problem
        case .storageFull: return Problem(status: 507, code: "storage-full", detail: detail)
        case .invalidDeclaration, .notInstalled, .largeValuesUnsupported: return nil
        }
    }
}
