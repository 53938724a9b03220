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
/// | `GET /coffee/new`, `POST /coffee/new` | the add form |
/// | `GET /coffee/:id` | the detail, with the picture and its forms |
/// | `GET /coffee/:id/edit`, `POST /coffee/:id/edit` | the edit form |
/// | `GET /coffee/:id/delete`, `POST /coffee/:id/delete` | the confirmation, the deletion |
/// | `GET /coffee/:id/picture` | the picture's bytes (`HEAD`, `If-None-Match` answered without reading them) |
/// | `POST /coffee/:id/picture` | upload or replace (multipart, field `picture`) |
/// | `POST /coffee/:id/picture/remove` | remove the picture |
enum CoffeePages {
    /// Coffees on one page of the list.
    static let pageSize = 20

    static func routes(_ context: WebContext) -> [Route] {
        let store = context.coffee
        return [
            Route.get("/coffee") { request in try await list(request, store: store) },
            Route.get("/coffee/new") { request in form(request, coffee: nil) },
            Route.post("/coffee/new", invalidForm: { request, problem in formAgain(request, coffee: nil, problem) }) {
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
                let deleted = try await store.delete(id: id)
                return Layout.redirect(to: "/coffee", flash: "Deleted \(deleted.name)", request: request)
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

    static func list(_ request: Request, store: CoffeeStore) async throws -> Response {
        let query = (request.query["q"] ?? "").trimmingCharacters(in: .whitespaces)
        let sort = request.query["sort"].flatMap(CoffeeSort.init(rawValue:)) ?? .name
        let page = request.query["page"].flatMap(Int.init).map { min(max($0, 1), 1_000_000) } ?? 1
        let offset = (page - 1) * pageSize
        let found: RecordList<Coffee>
        if query.isEmpty {
            found = try await store.list(
                sortedBy: sort, prices: .any, page: ListPage(limit: pageSize + 1, offset: offset))
        } else {
            found = try await store.fullTextSearch(query, limit: pageSize + 1, offset: offset).list
        }
        let coffees = found.records.prefix(pageSize)
        let items = coffees.map { coffee -> HTML in
            "<li id=\"coffee-\(coffee.id)\"><a class=\"title\" href=\"/coffee/\(coffee.id)\">\(displayName(coffee))</a></li>"
        }
        let unreadable = found.unreadable.map { row -> HTML in
            "<li><a class=\"title\" href=\"/coffee/\(row.id)\">Coffee \(row.id)</a>"
                + "<span class=\"subtitle\">its name cannot be read</span></li>"
        }
        let empty: HTML =
            query.isEmpty
            ? (page == 1
                ? "<p class=\"notice\" id=\"empty\">No coffees yet.</p>"
                : "<p class=\"notice\" id=\"empty\">No coffees on this page.</p>")
            : "<p class=\"notice\" id=\"empty\">No coffee matches “\(query)”.</p>"
        let listing: HTML =
            items.isEmpty && unreadable.isEmpty
            ? empty : "<ul class=\"records\" id=\"coffee-list\">\(items)\(unreadable)</ul>"
        func link(_ target: Int) -> String {
            HTML.path(
                ["coffee"],
                query: [
                    ("q", query.isEmpty ? nil : query), ("sort", sort == .name ? nil : sort.rawValue),
                    ("page", target == 1 ? nil : String(target)),
                ])
        }
        let previous: HTML? =
            page > 1 ? "<a rel=\"prev\" id=\"previous-page\" href=\"\(link(page - 1))\">Previous</a>" : nil
        let next: HTML? =
            found.records.count > pageSize
            ? "<a rel=\"next\" id=\"next-page\" href=\"\(link(page + 1))\">Next</a>" : nil
        let pager: HTML? =
            previous == nil && next == nil
            ? nil : "<nav class=\"pager\" aria-label=\"Pages\"><span>\(previous)</span><span>\(next)</span></nav>"
        let sorts: [(CoffeeSort, String)] = [(.name, "Name"), (.newest, "Newest first"), (.price, "Price")]
        let options = sorts.map { option, label -> HTML in
            let selected: HTML = option == sort ? " selected" : ""
            return "<option value=\"\(option.rawValue)\"\(selected)>\(label)</option>"
        }
        return Layout.page(
            request, title: "Coffee", section: "/coffee",
            content: """
                <h1>Coffee</h1>
                <p class="actions"><a class="button" id="add-coffee" href="/coffee/new">Add a coffee</a></p>
                <form method="get" action="/coffee" class="toolbar" role="search" id="coffee-search">
                \(Field.input("q", label: "Search by name", value: query, type: "search"))
                <div class="field"><label for="field-sort">Sort by</label>
                <select id="field-sort" name="sort">\(options)</select></div>
                <button type="submit">Show</button>
                </form>
                \(listing)
                \(pager)
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
                <h1 id="coffee-name">\(displayName(coffee))</h1>
                <dl class="details">
                <dt>Price</dt><dd id="price">\(price)</dd>
                \(picture)
                <p class="actions">
                <a class="button" id="edit-coffee" href="/coffee/\(coffee.id)/edit">Edit</a>
                <a class="button secondary" id="delete-coffee" href="/coffee/\(coffee.id)/delete">Delete</a>
                </p>
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

    /// The coffee the route's `:id` names; 404 when there is none.
    static func coffee(_ request: Request, store: CoffeeStore) async throws -> Coffee {
        guard let coffee = try await store.coffee(id: try request.id()) else { throw HTTPError.notFound }
        return coffee
    }

    /// The name to show; a coffee's stored name may be empty.
    static func displayName(_ coffee: Coffee) -> String {
        coffee.unreadable.contains { $0.field == "name" }
            ? "Coffee \(coffee.id) (its name cannot be read)"
            : (coffee.name.isEmpty ? "Coffee \(coffee.id)" : coffee.name)
    }

    // MARK: - Add and edit

    static func form(
        _ request: Request, coffee: Coffee?, values: (name: String, price: String)? = nil,
        errors: ValidationError? = nil, summary: String? = nil, status: Int = 200
    ) -> Response {
        let name = values?.name ?? coffee?.name ?? ""
        let price = values?.price ?? coffee?.price.map(CoffeeRules.priceText) ?? ""
        let action = coffee.map { "/coffee/\($0.id)/edit" } ?? "/coffee/new"
        let title = coffee.map { "Edit \(displayName($0))" } ?? "Add a coffee"
        let cancel = coffee.map { "/coffee/\($0.id)" } ?? "/coffee"
        return Layout.page(
            request, title: title, section: "/coffee", status: status,
            content: """
                <h1>\(title)</h1>
                \(Field.errorSummary(summary ?? (errors == nil ? nil : "Check the fields marked below.")))
                <form method="post" action="\(action)" class="card" id="coffee-form" novalidate>
                \(Layout.csrfField(request))
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
            summary: problem.description, status: problem.status)
    }

    static func add(_ request: Request, store: CoffeeStore) async throws -> Response {
        let values = (name: request.form.text("name"), price: request.form.text("price"))
        do {
            let added = try await store.add(try CoffeeDraft.parse(name: values.name, price: values.price))
            return Layout.redirect(to: "/coffee/\(added.id)", flash: "Added \(added.name)", request: request)
        } catch let error as ValidationError {
            return form(request, coffee: nil, values: values, errors: error, status: 422)
        }
    }

    static func edit(_ request: Request, store: CoffeeStore) async throws -> Response {
        var coffee = try await coffee(request, store: store)
        let values = (name: request.form.text("name"), price: request.form.text("price"))
        do {
            let draft = try CoffeeDraft.parse(name: values.name, price: values.price)
            coffee.name = draft.name
            coffee.price = draft.price
            try await store.save(&coffee)
            return Layout.redirect(to: "/coffee/\(coffee.id)", flash: "Saved \(coffee.name)", request: request)
        } catch let error as ValidationError {
            return form(request, coffee: coffee, values: values, errors: error, status: 422)
        }
    }

    static func confirmDeletion(_ request: Request, coffee: Coffee) -> Response {
        Layout.page(
            request, title: "Delete \(displayName(coffee))?", section: "/coffee",
            content: """
                <h1>Delete \(displayName(coffee))?</h1>
                <p>This deletes the coffee\(coffee.picture == nil ? "" : " and its picture"). It cannot be undone.</p>
                <form method="post" action="/coffee/\(coffee.id)/delete" class="card" id="delete-form">
                \(Layout.csrfField(request))
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

    /// The detail again, with why the picture was refused beside its field:
    /// 413 for one over the limit, 400 for one that is not a picture (the
    /// command's messages); any other failure is the server's (500).
    static func pictureRefused(_ request: Request, _ error: any Error, store: CoffeeStore) async throws -> Response {
        let status: Int
        let message: String
        switch error {
        case let error as PictureError:
            switch error.reason {
            case .tooLarge: status = 413
            case .empty, .unrecognizedFormat: status = 400
            default: throw error
            }
            message = error.description
        case let error as HTTPError:
            status = error.status
            message = error.message
        case let error as FormProblem:
            status = error.status
            message = error.description
        default:
            throw error
        }
        return try await detail(
            request, coffee: try await coffee(request, store: store), store: store, pictureError: message,
            status: status)
    }
}
