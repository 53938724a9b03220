import Foundation
import HTTPServer
import RecordsApp

extension APIResource {
    /// The Coffee app in the API: `/api/v1/coffee`, and each coffee's
    /// picture at `/api/v1/coffee/:id/picture`.
    static let coffee = APIResource(
        app: .coffee, name: "coffee", kind: "coffee", summary: "Coffees: a name, an exact price and a picture.",
        fields: [
            APIField(
                name: "name", field: CoffeeField.name, kind: .text(maxLength: CoffeeRules.maxNameLength),
                summary: "The name."),
            APIField(
                name: "price", field: CoffeeField.price, kind: .decimal,
                summary:
                    "The price as a decimal string (\"3.50\"), at most \(CoffeeRules.maxFractionDigits) digits after the point."
            ),
            APIField(
                name: "picture", label: "picture", kind: .object(schema: OpenAPI.pictureSchema), nullable: true,
                required: false, readOnly: true,
                summary: "The picture's type and size, or null; its bytes are at /api/v1/coffee/{id}/picture."),
        ],
        sorts: CoffeeSort.allCases.map(\.rawValue), searchable: true,
        list: { context, query in
            let window = try await context.coffee.window(
                sortedBy: query.sort.flatMap(CoffeeSort.init(rawValue:)), direction: query.direction,
                matching: query.search, limit: query.limit,
                offset: query.offset)
            return APIList(items: try window.records.map { try Self.coffee($0).json }, total: window.total)
        },
        get: { context, id in try await context.coffee.coffee(id: id).map { try Self.coffee($0) } },
        create: { context, input in
            let draft = try CoffeeDraft.parse(name: input.text("name") ?? "", price: input.text("price") ?? "")
            return try Self.coffee(try await context.coffee.add(draft))
        },
        update: { context, id, input, version in
            let changes = try CoffeeChanges.parse(name: input.text("name"), price: input.text("price"))
            return try Self.coffee(try await context.coffee.update(id: id, with: changes, ifVersion: version))
        },
        delete: { context, id, version in _ = try await context.coffee.delete(id: id, ifVersion: version) },
        moreOperations: CoffeeAPI.pictureOperations)

    /// A hydrated coffee as the API sends it.
    ///
    /// - Throws: An error when the coffee was not read with its details
    ///   (a list's ID and name only), which carry its version.
    static func coffee(_ coffee: Coffee) throws -> APIRecord {
        guard let version = coffee.version else { throw NotHydrated(id: coffee.id) }
        let picture: JSONValue =
            coffee.picture.map { picture in
                .object(
                    JSONObject([
                        ("type", .string(picture.format?.mimeType ?? "application/octet-stream")),
                        ("size", .integer(Int64(picture.size))),
                        ("url", .string("\(APIOperation.prefix)/coffee/\(coffee.id)/picture")),
                    ]))
            } ?? .null
        return APIRecord(
            id: coffee.id, version: version,
            members: [
                ("name", .string(coffee.name)), ("price", .string(coffee.price.map(CoffeeRules.priceText))),
                ("picture", picture),
            ])
    }
}

/// A coffee read without its details reached the API: a bug, answered 500.
struct NotHydrated: Error, CustomStringConvertible {
    let id: Int64
    var description: String { "coffee \(id) was read without its details" }
}

/// The Coffee app's pictures in the API: read (whole, a byte range, or
/// "not modified"), replaced by a `PUT` of the bytes, removed.
enum CoffeeAPI {
    static let pictureTypes = PictureFormat.allCases.map(\.mimeType)

    static func pictureOperations(_ context: WebContext) -> [APIOperation] {
        let store = context.coffee
        return [
            APIOperation(
                method: "GET", path: "/coffee/:id/picture", operationID: "getCoffeePicture",
                summary: "A coffee's picture: whole, or one byte range (to resume a download).", access: .read,
                tag: "coffee",
                parameters: [
                    .header("Range", "One byte range, bytes=START-END, bytes=START- or bytes=-LAST."),
                    .header("If-None-Match", "The picture's ETag seen before: 304 while it is current."),
                    .header("If-Range", "The picture's ETag: the range is sent only if it is still that picture."),
                ],
                answers: [
                    .init(status: 200, summary: "The picture.", content: .binary(types: pictureTypes)),
                    .init(status: 206, summary: "The byte range asked for.", content: .binary(types: pictureTypes)),
                    .init(status: 304, summary: "Not changed since the ETag in If-None-Match."),
                    .problem(401, "No valid token."), .problem(404, "No coffee has that ID, or it has no picture."),
                    .problem(416, "The range starts past the picture's end."),
                ]
            ) { request in try await picture(request, store: store) },
            APIOperation(
                method: "PUT", path: "/coffee/:id/picture", operationID: "putCoffeePicture",
                summary: "Store or replace a coffee's picture: the body is the file (PNG, JPEG, GIF or WebP).",
                access: .write, tag: "coffee", requestBody: .binary(types: pictureTypes),
                answers: [
                    .init(status: 200, summary: "Stored: the coffee as it is now.", content: .json(schema: "Coffee")),
                    .problem(401, "No valid token."), .problem(403, "The token may only read."),
                    .problem(404, "No coffee has that ID."),
                    .problem(413, "Larger than \(CoffeePicture.sizeText(store.pictureSizeLimit))."),
                    .problem(415, "Not a PNG, JPEG, GIF or WebP picture."),
                ],
                body: .stream(limit: store.pictureSizeLimit) { start in
                    store.makePictureUpload(name: "the picture")
                }
            ) { request in try await storePicture(request, store: store, context: context) },
            APIOperation(
                method: "DELETE", path: "/coffee/:id/picture", operationID: "deleteCoffeePicture",
                summary: "Remove a coffee's picture.", access: .write, tag: "coffee",
                answers: [
                    .init(status: 204, summary: "Removed."), .problem(401, "No valid token."),
                    .problem(403, "The token may only read."),
                    .problem(404, "No coffee has that ID, or it has no picture."),
                ]
            ) { request in
                do {
                    try await store.removePicture(id: try request.id())
                } catch let error as PictureError {
                    throw Problem.notFound(Problem.sentence(error.description))
                }
                return Response(status: 204)
            },
        ]
    }

    /// The picture's bytes, streamed from the row; a `Range` gives a part
    /// (206) so that a broken download resumes where it stopped.
    static func picture(_ request: Request, store: CoffeeStore) async throws -> Response {
        let picture: PictureReader
        do {
            picture = try await store.openPicture(id: try request.id())
        } catch let error as PictureError {
            throw Problem.notFound(Problem.sentence(error.description))
        }
        var headers: [(name: String, value: String)] = [
            ("Content-Type", picture.mimeType), ("Cache-Control", "private, no-cache"), ("Accept-Ranges", "bytes"),
        ]
        let tag = picture.entityTag
        if let tag {
            headers.append(("ETag", tag))
            if EntityTags.ifNoneMatch(request.headers["if-none-match"], matches: tag) {
                return Response(status: 304, headers: headers)
            }
        }
        // If-Range with another tag: the picture changed, so send it whole.
        let rangeApplies = request.headers["if-range"].map { $0 == tag } ?? true
        switch rangeApplies ? ByteRange.parse(request.headers["range"], size: picture.size) : .whole {
        case .whole:
            return Response(
                status: 200, headers: headers,
                body: .stream(length: UInt64(picture.size), PictureResponseStream(picture)))
        case .partial(let range):
            headers.append(("Content-Range", "bytes \(range.lowerBound)-\(range.upperBound)/\(picture.size)"))
            return Response(
                status: 206, headers: headers,
                body: .stream(
                    length: UInt64(range.count),
                    PictureResponseStream(picture, range: range.lowerBound..<(range.upperBound + 1))))
        case .unsatisfiable:
            var problem = Problem(
                status: 416, code: "range-not-satisfiable",
                detail: "The range starts past the picture's end: it has \(picture.size) bytes.")
            problem.headers = [("Content-Range", "bytes */\(picture.size)")]
            throw problem
        }
    }

    static func storePicture(_ request: Request, store: CoffeeStore, context: WebContext) async throws -> Response {
        let id = try request.id()
        do {
            if let refusal = request.uploadError { throw refusal }
            guard let upload = request.upload as? PictureUpload else {
                throw Problem(status: 400, code: "empty", detail: "Send the picture's bytes as the body.")
            }
            try await store.setPicture(id: id, from: .upload(upload))
        } catch let error as PictureError {
            let status =
                switch error.reason {
                case .tooLarge: 413
                case .unrecognizedFormat: 415
                case .empty: 400
                default: throw error
                }
            throw Problem(status: status, code: "picture-refused", detail: Problem.sentence(error.description))
        }
        guard let coffee = try await context.coffee.coffee(id: id) else {
            throw Problem.notFound("There is no coffee with ID \(id).")
        }
        let record = try APIResource.coffee(coffee)
        return APIRoutes.json(.object(record.json), headers: [("ETag", record.entityTag)])
    }
}
