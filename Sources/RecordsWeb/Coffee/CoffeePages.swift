import Foundation
import RecordsApp

/// The Coffee app's screens (the original tutorial's list, detail and
/// picture): the list is a table of thumbnails, names and prices, the
/// detail adds the picture's size and type, and the picture itself is a route of its
/// own, streamed from the row with a strong `ETag`.
///
/// | Route | What |
/// |---|---|
/// | `GET /coffee` | the list: `q` searches the names' full-text index, `sort` (`name`, `newest`, `price`), `size`, `page` |
/// | `GET /coffee/new`, `POST /coffee` | the add form |
/// | `GET /coffee/:id` | the detail, with the picture and its forms |
/// | `GET /coffee/:id/edit`, `POST /coffee/:id/edit` | the edit form |
/// | `GET /coffee/:id/delete`, `POST /coffee/:id/delete` | the confirmation, the deletion |
/// | `GET /coffee/:id/picture` | the picture's bytes (`HEAD`, `If-None-Match` answered without reading them) |
/// | `GET /coffee/:id/thumbnail` | the picture's thumbnail (``CoffeeThumbnails``); `v`, the coffee's version, makes it cacheable for good |
/// | `POST /coffee/:id/picture` | upload or replace (multipart, field `picture`) |
/// | `GET /coffee/:id/picture/remove`, `POST /coffee/:id/picture/remove` | the confirmation, the removal |
enum CoffeePages {
    static func routes(_ context: WebContext) -> [Route] {
        let store = context.coffee
        return [
            Route.get("/coffee") { request in try await list(request, store: store) },
            Route.get("/coffee/new") { request in form(request, coffee: nil) },
            Route.post("/coffee", invalidForm: { request, problem in formAgain(request, coffee: nil, problem) }) {
                request in try await add(request, store: store)
            },
            Route.get("/coffee/:id") { request in
                try await detail(request, coffee: try await coffee(request, store: store), store: store)
            },
            Route.get("/coffee/:id/edit") { request in form(request, coffee: try await coffee(request, store: store)) },
            Route.post(
                "/coffee/:id/edit",
                invalidForm: { request, problem in
                    formAgain(request, coffee: try await coffee(request, store: store), problem)
                }
            ) { request in try await edit(request, store: store) },
            Route.get("/coffee/:id/delete") { request in
                confirmDeletion(request, coffee: try await coffee(request, store: store))
            },
            Route.post("/coffee/:id/delete") { request in
                let id = try request.id()
                let deleted: Coffee
                do {
                    deleted = try await store.delete(id: id, ifVersion: try EditConflict.submittedVersion(request.form))
                } catch is VersionConflictError {
                    // Changed since the confirmation was shown: ask again, showing it as it is now.
                    return confirmDeletion(request, coffee: try await coffee(request, store: store), changed: true)
                }
                return Layout.redirect(
                    to: "/coffee", flash: Layout.message(.deleted, displayName(deleted)), request: request)
            },
            Route.get("/coffee/:id/picture") { request in try await picture(request, store: store) },
            Route.get("/coffee/:id/thumbnail") { request in
                try await thumbnail(request, store: store, thumbnails: context.thumbnails)
            },
            Route(
                "POST", "/coffee/:id/picture",
                body: .upload(field: "picture", limit: store.pictureSizeLimit) { start in
                    store.makePictureUpload(name: start.fileName.isEmpty ? "the picture" : start.fileName)
                },
                invalidForm: { request, problem in
                    let refusal: any Error =
                        problem.kind == .tooLarge
                        ? PictureError(.tooLarge(size: nil, limit: store.pictureSizeLimit), subject: "the picture")
                        : problem
                    return try await pictureRefused(request, refusal, store: store)
                }
            ) { request in try await storePicture(request, store: store) },
            Route.get("/coffee/:id/picture/remove") { request in
                let coffee = try await coffee(request, store: store)
                guard coffee.picture != nil else {
                    // Removed already (another tab): nothing to confirm.
                    return Layout.redirect(
                        to: "/coffee/\(coffee.id)", flash: "\(displayName(coffee)) has no picture", request: request)
                }
                return confirmPictureRemoval(request, coffee: coffee)
            },
            Route.post("/coffee/:id/picture/remove") { request in
                let id = try request.id()
                do {
                    try await store.removePicture(id: id, ifVersion: try EditConflict.submittedVersion(request.form))
                } catch let error as PictureError {
                    // Removed already (another tab): nothing to do.
                    return Layout.redirect(to: "/coffee/\(id)", flash: error.description, request: request)
                } catch is VersionConflictError {
                    // Changed since the confirmation was shown: ask again, showing it as it is now.
                    let coffee = try await coffee(request, store: store)
                    guard coffee.picture != nil else {
                        return Layout.redirect(
                            to: "/coffee/\(id)", flash: "\(displayName(coffee)) has no picture", request: request)
                    }
                    return confirmPictureRemoval(request, coffee: coffee, changed: true)
                }
                return Layout.redirect(to: "/coffee/\(id)", flash: "Removed the picture.", request: request)
            },
        ]
    }

    // MARK: - The list

    static let sorts: [SortLabel<CoffeeSort>] = [
        SortLabel(.name, "name", reversed: "name, Z to A"),
        SortLabel(.newest, "Newest first", reversed: "Oldest first"),
        SortLabel(.price, "price", reversed: "price, highest first"),
    ]

    /// The list's columns: the picture's thumbnail, the name, the price.
    static let columns: [ListColumn<CoffeeSort>] = [
        ListColumn(label: "Picture", style: "thumbnail"), ListColumn(label: "Name", sort: .name),
        ListColumn(label: "Price", sort: .price, style: "number"),
    ]

    static let noun = ListNoun(one: "coffee", many: "coffees")

    /// A coffee on the list, with the search's marked name when searching.
    struct Row: Sendable {
        var coffee: Coffee
        var snippet: [(text: String, isMatch: Bool)]?
    }

    /// The address of a coffee's thumbnail; `v` changes whenever the coffee
    /// (its picture included) does, so a browser never shows a stale one.
    static func thumbnailPath(_ coffee: Coffee) -> String {
        HTML.path(
            ["coffee", String(coffee.id), "thumbnail"], query: [("v", coffee.version?.description)])
    }

    /// The thumbnail cell: the picture's thumbnail, or nothing for a coffee
    /// without a picture.
    static func thumbnail(_ coffee: Coffee) -> HTML {
        guard coffee.picture != nil else { return "" }
        return """
            <img src="\(thumbnailPath(coffee))" alt="" width="48" height="48" loading="lazy">
            """
    }

    static func list(_ request: Request, store: CoffeeStore) async throws -> Response {
        let query = try ListQuery(request, defaultSort: CoffeeSort.name)
        let page: RecordPage<Row>
        do {
            if query.isSearch {
                page = try await store.fullTextSearch(query.search, page: query.page, size: query.size, hydrated: true)
                    .map { match in
                        Row(coffee: match.record, snippet: match.snippet.segments.map { ($0.text, $0.isMatch) })
                    }
            } else {
                page = try await store.page(
                    sortedBy: query.sort, direction: query.direction, number: query.page, size: query.size,
                    hydrated: true
                )
                .map { Row(coffee: $0, snippet: nil) }
            }
        } catch let error as ValidationError {
            throw HTTPError.badRequest(error.description)
        }
        let rows = page.items.map { row -> HTML in
            let coffee = row.coffee
            let name: HTML = row.snippet.map(ListControls.marked) ?? "\(displayName(coffee))"
            let price: HTML =
                coffee.unreadable.contains { $0.field == "price" }
                ? "<em>cannot be read</em>" : "\(coffee.price.map(CoffeeRules.priceText) ?? "—")"
            return ListControls.row(
                id: "coffee-\(coffee.id)", columns: columns,
                cells: [thumbnail(coffee), "<a class=\"title\" href=\"/coffee/\(coffee.id)\">\(name)</a>", price])
        }
        let empty: HTML =
            query.isSearch
            ? "<p class=\"notice\" id=\"empty\">No coffee matches “<bdi>\(query.search)</bdi>”.</p>"
            : "<p class=\"notice\" id=\"empty\">No coffees yet. <a href=\"/coffee/new\">Add a coffee</a></p>"
        let list = ListControls.table(
            id: "coffee-list", caption: "Coffees", base: "coffee", query: query, defaultSort: .name, columns: columns,
            rows: rows)
        let heading: HTML = query.isSearch ? "Coffees matching “<bdi>\(query.search)</bdi>”" : "Coffee"
        return Layout.page(
            request, title: Layout.listTitle("Coffee", search: query.search, page: query.page), section: "/coffee",
            content: """
                <h1>\(heading)</h1>
                <p class="actions"><a class="button" id="add-coffee" href="/coffee/new">Add a coffee</a></p>
                \(ListControls.searchForm(base: "coffee", label: "Search coffees", search: query.search))
                \(ListControls.sortLinks(base: "coffee", query: query, defaultSort: .name, columns: columns, labels: sorts))
                \(ListControls.results(base: "coffee", query: query, defaultSort: .name, page: page, noun: noun, list: list, empty: empty))
                """)
    }

    // MARK: - The detail

    static func detail(
        _ request: Request, coffee: Coffee, store: CoffeeStore, pictureError: String? = nil, status: Int = 200
    ) async throws -> Response {
        let price: HTML =
            coffee.unreadable.contains { $0.field == "price" }
            ? "<em>cannot be read</em>" : "\(coffee.price.map(CoffeeRules.priceText) ?? "none")"
        let picture: HTML
        let removeForm: HTML?
        if let stored = coffee.picture {
            picture = """
                <dt>Picture</dt><dd id="picture-summary">\(stored.summary)</dd>
                </dl>
                <p><img class="picture" id="picture" src="/coffee/\(coffee.id)/picture" alt="Picture of \(displayName(coffee))"></p>
                """
            // Asks first, as deleting the coffee does.
            removeForm = """
                <p class="actions"><a class="button secondary" id="remove-picture" href="/coffee/\(coffee.id)/picture/remove">Remove the picture</a></p>
                """
        } else {
            picture = "<dt>Picture</dt><dd id=\"picture-summary\">none</dd>\n</dl>"
            removeForm = nil
        }
        let limit = CoffeePicture.sizeText(store.pictureSizeLimit)
        let fileError: HTML? = pictureError.map { "<p class=\"error\" id=\"field-picture-error\">\($0)</p>" }
        let invalid: HTML = pictureError == nil ? "" : " aria-invalid=\"true\" aria-describedby=\"field-picture-error\""
        return Layout.page(
            request, title: displayName(coffee), section: "/coffee", status: status,
            content: """
                <p><a href="/coffee">All coffees</a></p>
                <section id="coffee" data-live-topics="coffee">
                <h1 id="coffee-name">\(displayName(coffee))</h1>
                <dl class="details">
                <dt>Price</dt><dd id="price">\(price)</dd>
                \(picture)
                <p class="actions">
                <a class="button" id="edit-coffee" href="/coffee/\(coffee.id)/edit">Edit</a>
                <a class="button secondary" id="delete-coffee" href="/coffee/\(coffee.id)/delete">Delete</a>
                </p>
                </section>
                <h2>\(coffee.picture == nil ? "Add a picture" : "Replace the picture")</h2>
                <form method="post" action="/coffee/\(coffee.id)/picture" enctype="multipart/form-data" class="card" id="picture-form">
                \(Layout.csrfField(request))\(versionField(coffee))
                <div class="field\(pictureError == nil ? "" : " invalid")">
                <label for="field-picture">Picture</label>
                <p class="hint" id="field-picture-hint">PNG, JPEG, GIF or WebP, up to \(limit)</p>
                <input id="field-picture" name="picture" type="file" accept="image/png,image/jpeg,image/gif,image/webp" required\(invalid)>
                \(fileError)
                </div>
                <p class="actions"><button type="submit">Upload</button></p>
                </form>
                \(removeForm)
                """)
    }

    /// The coffee the route's `:id` names; a 404 saying it was deleted
    /// (``RecordNotFoundError``) when there is none.
    static func coffee(_ request: Request, store: CoffeeStore) async throws -> Coffee {
        let id = try request.id()
        guard let coffee = try await store.coffee(id: id) else { throw RecordNotFoundError(kind: "coffee", id: id) }
        return coffee
    }

    /// The name to show; a coffee's stored name may be empty.
    static func displayName(_ coffee: Coffee) -> String {
        coffee.unreadable.contains { $0.field == "name" }
            ? "Coffee \(coffee.id) (its name cannot be read)"
            : (coffee.name.isEmpty ? "Coffee \(coffee.id)" : coffee.name)
    }

    // MARK: - Add and edit

    /// The edit form's hidden fields for `coffee` as it is stored (none
    /// for a coffee read without its version).
    static func hiddenFields(_ coffee: Coffee) -> HTML {
        guard let version = coffee.version else { return "" }
        return EditConflict.hiddenFields(
            version: version,
            originals: [("name", coffee.name), ("price", coffee.price.map(CoffeeRules.priceText) ?? "")])
    }

    /// The edit form after someone else saved the coffee: theirs beside
    /// yours (see ``EditConflict``), 409.
    static func conflict(_ request: Request, coffee: Coffee, form: Form) -> Response {
        guard let version = coffee.version else {
            return formAgainAfterConflict(request, coffee: coffee, form: form)
        }
        let values = EditConflict.values(
            form,
            stored: [
                ("name", CoffeeField.name.label, coffee.name),
                ("price", CoffeeField.price.label, coffee.price.map(CoffeeRules.priceText) ?? ""),
            ])
        let action = "/coffee/\(coffee.id)/edit"
        return Layout.page(
            request, title: "Edit \(displayName(coffee))", section: "/coffee", status: 409,
            content: """
                <h1>Edit \(displayName(coffee))</h1>
                \(EditConflict.form(request, kind: "coffee", formID: "coffee-form", action: action, reload: action, topic: "coffee", values: values, version: version))
                """)
    }

    /// The plain form with the stored values, for a coffee whose version
    /// could not be read (never expected for a detail).
    private static func formAgainAfterConflict(_ request: Request, coffee: Coffee, form: Form) -> Response {
        self.form(
            request, coffee: coffee,
            summary: "Someone else saved this coffee after you opened the form. Nothing was saved.",
            status: 409)
    }

    static func form(
        _ request: Request, coffee: Coffee?, values: (name: String, price: String)? = nil, hidden: HTML? = nil,
        errors: ValidationError? = nil, summary: String? = nil, status: Int = 200
    ) -> Response {
        let name = values?.name ?? coffee?.name ?? ""
        let price = values?.price ?? coffee?.price.map(CoffeeRules.priceText) ?? ""
        // The form as opened carries the stored coffee's version; one sent
        // back carries what it came with.
        let carried = hidden ?? coffee.map { Self.hiddenFields($0) } ?? ""
        let live = coffee.map { EditConflict.liveAttributes(topic: "coffee", source: "/coffee/\($0.id)/edit") }
        let action = coffee.map { "/coffee/\($0.id)/edit" } ?? "/coffee"
        let title = coffee.map { "Edit \(displayName($0))" } ?? "Add a coffee"
        let cancel = coffee.map { "/coffee/\($0.id)" } ?? "/coffee"
        return Layout.page(
            request, title: title, section: "/coffee", status: status,
            content: """
                <h1>\(title)</h1>
                \(Field.errorSummary(summary ?? (errors == nil ? nil : "Check the fields marked below.")))
                <form method="post" action="\(action)" class="card" id="coffee-form" novalidate\(live)>
                \(Layout.csrfField(request))\(carried)
                \(Field.input("name", label: CoffeeField.name.label, value: name, error: errors?.message(for: CoffeeField.name.rawValue), required: true, autocomplete: "off"))
                \(Field.input("price", label: CoffeeField.price.label, value: price, error: errors?.message(for: CoffeeField.price.rawValue), required: true, hint: "Such as 3.50", attributes: "inputmode=\"decimal\" autocomplete=\"off\""))
                <p class="actions"><button type="submit">\(coffee == nil ? "Add" : "Save")</button>
                <a href="\(cancel)">Cancel</a></p>
                </form>
                """)
    }

    /// The form again after the server refused its body.
    static func formAgain(_ request: Request, coffee: Coffee?, _ problem: FormProblem) -> Response {
        form(
            request, coffee: coffee, values: (request.form.text("name"), request.form.text("price")),
            hidden: EditConflict.carried(request.form), summary: problem.description, status: problem.status)
    }

    static func add(_ request: Request, store: CoffeeStore) async throws -> Response {
        let values = (name: request.form.text("name"), price: request.form.text("price"))
        do {
            let added = try await store.add(try CoffeeDraft.parse(name: values.name, price: values.price))
            return Layout.redirect(
                to: "/coffee/\(added.id)", flash: Layout.message(.added, added.name), request: request)
        } catch let error as ValidationError {
            return form(request, coffee: nil, values: values, errors: error, status: 422)
        }
    }

    static func edit(_ request: Request, store: CoffeeStore) async throws -> Response {
        let coffee = try await coffee(request, store: store)
        let form = EditConflict.resolved(request.form)
        guard let version = try EditConflict.submittedVersion(form) else {
            // No version: nothing saved over changes it may not have seen.
            return conflict(request, coffee: coffee, form: form)
        }
        let values = (name: form.text("name"), price: form.text("price"))
        do {
            let draft = try CoffeeDraft.parse(name: values.name, price: values.price)
            // Both fields are written, conditional on the version the form
            // was opened at (a save of unchanged values is checked too).
            let saved = try await store.update(
                id: coffee.id, with: CoffeeChanges(name: draft.name, price: draft.price), ifVersion: version)
            return Layout.redirect(
                to: "/coffee/\(saved.id)", flash: Layout.message(.updated, saved.name), request: request)
        } catch let error as ValidationError {
            return self.form(
                request, coffee: coffee, values: values, hidden: EditConflict.carried(form), errors: error, status: 422)
        } catch is VersionConflictError {
            // Someone saved the coffee since the form was opened.
            return conflict(request, coffee: try await self.coffee(request, store: store), form: form)
        }
    }

    /// The page that asks before a coffee is deleted, as every app's
    /// (``ListControls/confirmDelete(_:shown:section:action:cancel:unreadable:version:changed:consequence:)``).
    static func confirmDeletion(_ request: Request, coffee: Coffee, changed: Bool = false) -> Response {
        ListControls.confirmDelete(
            request, shown: displayName(coffee), section: "/coffee", action: "/coffee/\(coffee.id)/delete",
            cancel: "/coffee/\(coffee.id)", unreadable: nil, version: coffee.version, changed: changed ? "coffee" : nil,
            consequence: coffee.picture == nil ? nil : "This deletes the coffee and its picture.")
    }

    /// The hidden field carrying the version of the coffee a form was
    /// opened at (nothing for a coffee read without its version): saving
    /// over a newer version is refused (``VersionConflictError``).
    static func versionField(_ coffee: Coffee) -> HTML? {
        coffee.version.map { "<input type=\"hidden\" name=\"version\" value=\"\($0.description)\">" }
    }

    /// Asks before removing the picture, as ``confirmDeletion(_:coffee:changed:)``
    /// asks before deleting the coffee; 409 after the coffee changed
    /// since the question was shown.
    static func confirmPictureRemoval(_ request: Request, coffee: Coffee, changed: Bool = false) -> Response {
        let conflict: HTML? =
            changed
            ? "<p class=\"form-error\" role=\"alert\" id=\"conflict\">Someone else changed this coffee after you asked to remove its picture, so it was not removed. Check it below, and remove it again if you still want to.</p>"
            : nil
        let summary: HTML = coffee.picture.map { "<p id=\"picture-summary\">\($0.summary)</p>" } ?? ""
        return Confirmation(
            title: "Remove the picture of \(Layout.isolated(displayName(coffee)))?",
            heading: "Remove the picture of <bdi>\(displayName(coffee))</bdi>?",
            details: """
                \(conflict)
                \(summary)
                <p>This removes the picture from the coffee. It cannot be undone.</p>
                """,
            action: "/coffee/\(coffee.id)/picture/remove", formID: "remove-picture-form",
            button: ("Remove", "confirm-remove"), cancel: ("/coffee/\(coffee.id)", "Keep it"),
            hidden: versionField(coffee), section: "/coffee"
        ).page(request, status: changed ? 409 : 200)
    }

    // MARK: - The picture

    /// The picture's bytes, streamed from the row. `HEAD` and a matching
    /// `If-None-Match` are answered from the row's header and the version,
    /// without reading the bytes.
    static func picture(_ request: Request, store: CoffeeStore) async throws -> Response {
        let picture: PictureReader
        do {
            picture = try await store.openPicture(id: try request.id())
        } catch is PictureError {
            throw HTTPError.notFound
        }
        return pictureResponse(request, picture)
    }

    /// A stored picture as a response: its bytes streamed in chunks, its
    /// version as a strong `ETag`, and 304 for a matching
    /// `If-None-Match` (no byte read). Coffee and profile pictures alike.
    static func pictureResponse(_ request: Request, _ picture: PictureReader) -> Response {
        var headers: [(name: String, value: String)] = [
            ("Content-Type", picture.mimeType), ("Cache-Control", "private, no-cache"),
        ]
        if let tag = picture.entityTag {
            headers.append(("ETag", tag))
            if EntityTags.ifNoneMatch(request.headers["if-none-match"], matches: tag) {
                return Response(status: 304, headers: headers)
            }
        }
        return Response(
            status: 200, headers: headers, body: .stream(length: UInt64(picture.size), PictureResponseStream(picture)))
    }

    /// The picture's thumbnail, made once per picture version
    /// (``CoffeeThumbnails``): a small JPEG or PNG, or a placeholder SVG
    /// for a picture that cannot be decoded. Its `ETag` is the picture's
    /// version's. With `v` naming the coffee's current version (the
    /// address the pages write, which changes with the picture), the
    /// browser keeps it for good; without, or with another `v`, it asks
    /// again each time (answered 304 while the picture is the same).
    /// 404 for a coffee without a picture.
    static func thumbnail(
        _ request: Request, store: CoffeeStore, thumbnails: CoffeeThumbnails, retried: Bool = false
    ) async throws -> Response {
        let id = try request.id()
        // The coffee's version first, then the picture: the picture served
        // is never older than the version `v` is compared with.
        let current = request.query["v"] == nil ? nil : try await store.coffee(id: id)?.version
        let picture: PictureReader
        do {
            picture = try await store.openPicture(id: id)
        } catch is PictureError {
            throw HTTPError.notFound
        }
        let lasting = current != nil && request.query["v"] == current?.description
        var headers: [(name: String, value: String)] = [
            ("Cache-Control", lasting ? "private, max-age=31536000, immutable" : "private, no-cache")
        ]
        let tag = picture.version.map { "\"thumbnail-\($0)\"" }
        if let tag {
            headers.append(("ETag", tag))
            if EntityTags.ifNoneMatch(request.headers["if-none-match"], matches: tag) {
                return Response(status: 304, headers: headers)
            }
        }
        let image: CoffeeThumbnails.Image
        do {
            image = try await thumbnails.thumbnail(of: picture)
        } catch let error as PictureError {
            guard case .changed = error.reason, !retried else { throw error }
            // Replaced or removed while it was read: the current one, once.
            return try await thumbnail(request, store: store, thumbnails: thumbnails, retried: true)
        }
        headers.append(("Content-Type", image.mimeType))
        return Response(status: 200, headers: headers, body: .bytes(Array(image.data)))
    }

    static func storePicture(_ request: Request, store: CoffeeStore) async throws -> Response {
        let id = try request.id()
        if let refusal = request.uploadError { return try await pictureRefused(request, refusal, store: store) }
        guard let upload = request.upload as? PictureUpload else {
            return try await pictureRefused(
                request, HTTPError.badRequest("Choose a picture to upload."), store: store)
        }
        do {
            try await store.setPicture(
                id: id, from: .upload(upload), ifVersion: try EditConflict.submittedVersion(request.form))
        } catch let error as PictureError {
            return try await pictureRefused(request, error, store: store)
        } catch is VersionConflictError {
            // Changed since the page was opened: show it as it is now.
            return try await detail(
                request, coffee: try await coffee(request, store: store), store: store,
                pictureError:
                    "Someone else changed this coffee after you opened this page, so the picture was not saved. "
                    + "Check the coffee above, and upload the picture again if you still want to.",
                status: 409)
        }
        return Layout.redirect(to: "/coffee/\(id)", flash: "Saved the picture.", request: request)
    }

    /// The status and message for a picture refused: 413 for one over the
    /// limit, 400 for one that is not a picture or a form at fault; any
    /// other error is thrown again (the server's: 500).
    static func pictureRefusal(_ error: any Error) throws -> (status: Int, message: String) {
        switch error {
        case let error as PictureError:
            switch error.reason {
            case .tooLarge: return (413, error.description)
            case .empty, .unrecognizedFormat: return (400, error.description)
            default: throw error
            }
        case let error as HTTPError: return (error.status, error.message)
        case let error as FormProblem: return (error.status, error.description)
        default: throw error
        }
    }

    /// The detail again, with why the picture was refused beside its field:
    /// 413 for one over the limit, 400 for one that is not a picture (the
    /// command's messages); any other failure is the server's (500).
    static func pictureRefused(_ request: Request, _ error: any Error, store: CoffeeStore) async throws -> Response {
        let (status, message) = try pictureRefusal(error)
        return try await detail(
            request, coffee: try await coffee(request, store: store), store: store, pictureError: message,
            status: status)
    }
}
