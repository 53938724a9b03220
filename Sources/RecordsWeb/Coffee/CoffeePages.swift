import Foundation
import RecordsApp

/// The Coffee app's screens (the original tutorial's list, detail and
/// picture): the list loads IDs and names only, the detail the price and
/// the picture's size and type, and the picture itself is a route of its
/// own, streamed from the row with a strong `ETag`.
///
/// | Route | What |
/// |---|---|
/// | `GET /coffee` | the list: `q` searches the names' full-text index, `sort` (`name`, `newest`, `price`), `page` |
/// | `GET /coffee/new`, `POST /coffee` | the add form |
/// | `GET /coffee/:id` | the detail, with the picture and its forms |
/// | `GET /coffee/:id/edit`, `POST /coffee/:id/edit` | the edit form |
/// | `GET /coffee/:id/delete`, `POST /coffee/:id/delete` | the confirmation, the deletion |
/// | `GET /coffee/:id/picture` | the picture's bytes (`HEAD`, `If-None-Match` answered without reading them) |
/// | `POST /coffee/:id/picture` | upload or replace (multipart, field `picture`) |
/// | `POST /coffee/:id/picture/remove` | remove the picture |
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
                    to: "/coffee", flash: "Deleted \(Layout.isolated(deleted.name))", request: request)
            },
            Route.get("/coffee/:id/picture") { request in try await picture(request, store: store) },
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
            Route.post("/coffee/:id/picture/remove") { request in
                let id = try request.id()
                do {
                    try await store.removePicture(id: id)
                } catch let error as PictureError {
                    // Removed already (another tab): nothing to do.
                    return Layout.redirect(to: "/coffee/\(id)", flash: error.description, request: request)
                }
                return Layout.redirect(to: "/coffee/\(id)", flash: "Picture removed", request: request)
            },
        ]
    }

    // MARK: - The list

    static let sorts: [(CoffeeSort, String)] = [(.name, "name"), (.newest, "newest"), (.price, "price")]

    /// A coffee on the list, with the search's marked name when searching.
    struct Row: Sendable {
        var coffee: Coffee
        var snippet: [(text: String, isMatch: Bool)]?
    }

    static func list(_ request: Request, store: CoffeeStore) async throws -> Response {
        let query = try ListQuery(request, defaultSort: CoffeeSort.name)
        let size = ListQuery<CoffeeSort>.pageSize
        let page: RecordPage<Row>
        do {
            if query.isSearch {
                let found = try await store.fullTextSearch(query.search, page: query.page, size: size)
                page = RecordPage(
                    items: found.items.map { match in
                        Row(coffee: match.record, snippet: match.snippet.segments.map { ($0.text, $0.isMatch) })
                    }, unreadable: found.unreadable, number: found.number, size: found.size, hasNext: found.hasNext)
            } else {
                let found = try await store.page(sortedBy: query.sort, number: query.page, size: size)
                page = RecordPage(
                    items: found.items.map { Row(coffee: $0, snippet: nil) }, unreadable: found.unreadable,
                    number: found.number, size: found.size, hasNext: found.hasNext)
            }
        } catch let error as ValidationError {
            throw HTTPError.badRequest(error.description)
        }
        let items = page.items.map { row -> HTML in
            let name: HTML = row.snippet.map(ListControls.marked) ?? "\(displayName(row.coffee))"
            return
                "<li id=\"coffee-\(row.coffee.id)\"><a class=\"title\" href=\"/coffee/\(row.coffee.id)\">\(name)</a></li>"
        }
        let empty: HTML
        if !page.isEmpty {
            empty = ""
        } else if query.isSearch {
            empty = "<p class=\"notice\" id=\"empty\">No coffee matches “<bdi>\(query.search)</bdi>”.</p>"
        } else if page.number > 1 {
            empty =
                "<p class=\"notice\" id=\"empty\">This page is past the end of the list. "
                + "<a href=\"/coffee\">Back to the first page</a></p>"
        } else {
            empty = "<p class=\"notice\" id=\"empty\">No coffees yet. <a href=\"/coffee/new\">Add a coffee</a></p>"
        }
        let list: HTML = items.isEmpty ? "" : "<ul class=\"records\" id=\"coffee-list\">\(items)</ul>"
        let heading: HTML = query.isSearch ? "Coffees matching “<bdi>\(query.search)</bdi>”" : "Coffee"
        return Layout.page(
            request, title: query.isSearch ? "Coffee search" : "Coffee", section: "/coffee",
            content: """
                <h1>\(heading)</h1>
                <p class="actions"><a class="button" id="add-coffee" href="/coffee/new">Add a coffee</a></p>
                \(ListControls.searchForm(base: "coffee", label: "Search coffees", search: query.search))
                \(ListControls.sortLinks(base: "coffee", query: query, defaultSort: .name, labels: sorts))
                \(ListControls.results(base: "coffee", query: query, defaultSort: .name, page: page, list: list, empty: empty))
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
            removeForm = """
                <form method="post" action="/coffee/\(coffee.id)/picture/remove" class="inline" id="remove-picture">
                \(Layout.csrfField(request))<button type="submit" class="secondary">Remove the picture</button>
                </form>
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
                \(Layout.csrfField(request))
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
            stored: [("name", "Name", coffee.name), ("price", "Price", coffee.price.map(CoffeeRules.priceText) ?? "")])
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
                \(Field.input("name", label: "Name", value: name, error: errors?.message(for: "name"), required: true, autocomplete: "off"))
                \(Field.input("price", label: "Price", value: price, error: errors?.message(for: "price"), required: true, hint: "Such as 3.50", attributes: "inputmode=\"decimal\" autocomplete=\"off\""))
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
                to: "/coffee/\(added.id)", flash: "Added \(Layout.isolated(added.name))", request: request)
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
                to: "/coffee/\(saved.id)", flash: "Saved \(Layout.isolated(saved.name))", request: request)
        } catch let error as ValidationError {
            return self.form(
                request, coffee: coffee, values: values, hidden: EditConflict.carried(form), errors: error, status: 422)
        } catch is VersionConflictError {
            // Someone saved the coffee since the form was opened.
            return conflict(request, coffee: try await self.coffee(request, store: store), form: form)
        }
    }

    static func confirmDeletion(_ request: Request, coffee: Coffee, changed: Bool = false) -> Response {
        let conflict: HTML? =
            changed
            ? "<p class=\"form-error\" role=\"alert\" id=\"conflict\">Someone else changed this coffee after you asked to delete it, so it was not deleted. Check it below, and delete it again if you still want to.</p>"
            : nil
        let version: HTML? = coffee.version.map {
            "<input type=\"hidden\" name=\"version\" value=\"\($0.description)\">"
        }
        return Layout.page(
            request, title: "Delete \(Layout.isolated(displayName(coffee)))?", section: "/coffee",
            status: changed ? 409 : 200,
            content: """
                <h1>Delete <bdi>\(displayName(coffee))</bdi>?</h1>
                \(conflict)
                <p>This deletes the coffee\(coffee.picture == nil ? "" : " and its picture"). It cannot be undone.</p>
                <form method="post" action="/coffee/\(coffee.id)/delete" class="card" id="delete-form">
                \(Layout.csrfField(request))\(version)
                <p class="actions"><button type="submit" class="danger">Delete</button>
                <a href="/coffee/\(coffee.id)">Keep it</a></p>
                </form>
                """)
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

    static func storePicture(_ request: Request, store: CoffeeStore) async throws -> Response {
        let id = try request.id()
        if let refusal = request.uploadError { return try await pictureRefused(request, refusal, store: store) }
        guard let upload = request.upload as? PictureUpload else {
            return try await pictureRefused(
                request, HTTPError.badRequest("Choose a picture to upload."), store: store)
        }
        do {
            try await store.setPicture(id: id, from: .upload(upload))
        } catch let error as PictureError {
            return try await pictureRefused(request, error, store: store)
        }
        return Layout.redirect(to: "/coffee/\(id)", flash: "Picture saved", request: request)
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
