import Foundation
import RecordsApp

/// What a list page was asked for in its query: the page number, its
/// size, the order and its direction, and the search text
/// (`/people?q=ada&page=2&size=50`, `/people?sort=age&order=desc`).
struct ListQuery<Sort: RecordSort & RawRepresentable & CaseIterable & Equatable & Sendable>: Sendable
where Sort.RawValue == String {
    /// The page, from 1.
    var page: Int
    /// The items on a page: one of ``pageSizes``.
    var size: Int
    /// The order of the list (a search is ranked instead).
    var sort: Sort
    /// Which way ``sort`` runs: its own direction unless `order` says.
    var direction: SortDirection
    /// What to search for, trimmed; empty for the whole list.
    var search: String

    /// The items on a page when the query does not say.
    static var pageSize: Int { ListControls.defaultPageSize }

    /// The page sizes a person can choose.
    static var pageSizes: [Int] { ListControls.pageSizes }

    /// Reads the query of `request`.
    ///
    /// - Throws: ``HTTPError`` 400 when `page` is not a whole number from 1,
    ///   `size` is not one of ``pageSizes``, `sort` is not one of the
    ///   list's orders, or `order` is not `asc` or `desc`.
    init(_ request: Request, defaultSort: Sort) throws {
        if let text = request.query["page"], !text.isEmpty {
            guard let page = Int(text), page >= 1 else {
                throw HTTPError.badRequest("The page number must be a whole number from 1.")
            }
            self.page = page
        } else {
            page = 1
        }
        if let text = request.query["size"], !text.isEmpty {
            guard let size = Int(text), Self.pageSizes.contains(size) else {
                let sizes = Self.pageSizes.map(String.init)
                throw HTTPError.badRequest(
                    "The page size must be \(sizes.dropLast().joined(separator: ", ")) or \(sizes.last ?? "")."
                )
            }
            self.size = size
        } else {
            size = Self.pageSize
        }
        if let text = request.query["sort"], !text.isEmpty {
            guard let sort = Sort(rawValue: text) else {
                let names = Sort.allCases.map(\.rawValue).joined(separator: ", ")
                throw HTTPError.badRequest("The list cannot be sorted by that: choose one of \(names).")
            }
            self.sort = sort
        } else {
            sort = defaultSort
        }
        if let text = request.query["order"], !text.isEmpty {
            guard let direction = SortDirection(rawValue: text) else {
                throw HTTPError.badRequest(
                    "The order must be \(SortDirection.ascending.rawValue) (going up) or \(SortDirection.descending.rawValue) (going down)."
                )
            }
            self.direction = direction
        } else {
            direction = sort.defaultDirection
        }
        search = (request.query["q"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether the page shows a search's matches rather than the list.
    var isSearch: Bool { !search.isEmpty }
}

/// A column of a list's table: its heading, and the order its heading
/// chooses when it has one.
struct ListColumn<Sort: Sendable>: Sendable {
    /// The heading, also the cell's label when the rows are stacked on a
    /// phone.
    var label: String
    /// The order a click on the heading chooses; nil for a column the list
    /// cannot be sorted by.
    var sort: Sort?
    /// The cells' class, for their width and alignment.
    var style: String = ""
}

/// What a list is called in its counts: "1 person", "2 people".
struct ListNoun: Sendable {
    var one: String
    var many: String

    /// "0 people", "1 person", "1,234 people".
    func count(_ number: Int) -> String {
        "\(number.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US")))) \(number == 1 ? one : many)"
    }
}

/// The parts every list page shares: the search box, the sort links, the
/// pager and the matched words of a search.
enum ListControls {
    /// The items on a page when the query does not say.
    static let defaultPageSize = 20
    /// The page sizes a person can choose (``ListQuery/size``).
    static let pageSizes = [20, 50, 100]

    /// The address of a list page: `base` with the search, sort, its
    /// direction (the sort's own when nil), page size and page in the
    /// query (each left out when it is the default; a search is ranked, so
    /// it has neither sort nor direction).
    static func link<Sort: RecordSort & RawRepresentable>(
        _ base: String, search: String, sort: Sort, direction: SortDirection? = nil, defaultSort: Sort,
        size: Int = defaultPageSize, page: Int
    ) -> String where Sort.RawValue == String {
        let direction = direction ?? sort.defaultDirection
        return HTML.path(
            [base],
            query: [
                ("q", search.isEmpty ? nil : search),
                ("sort", search.isEmpty && sort.rawValue != defaultSort.rawValue ? sort.rawValue : nil),
                ("order", search.isEmpty && direction != sort.defaultDirection ? direction.rawValue : nil),
                ("size", size == defaultPageSize ? nil : String(size)),
                ("page", page > 1 ? String(page) : nil),
            ])
    }

    /// The address of another page (or page size) of the list `query`
    /// shows, in its order and direction.
    static func link<Sort>(
        _ base: String, query: ListQuery<Sort>, defaultSort: Sort, size: Int? = nil, page: Int
    ) -> String {
        link(
            base, search: query.search, sort: query.sort, direction: query.direction, defaultSort: defaultSort,
            size: size ?? query.size, page: page)
    }

    /// A search form (GET) for the list at `/base`.
    static func searchForm(base: String, label: String, search: String) -> HTML {
        let clear: HTML? = search.isEmpty ? nil : "<a href=\"/\(base)\" id=\"search-clear\">Show all</a>"
        return """
            <form method="get" action="/\(base)" role="search" class="toolbar" id="\(base)-search">
            \(Field.input("q", label: label, value: search, type: "search"))
            <button type="submit" class="secondary">Search</button>
            \(clear)
            </form>
            """
    }

    /// The list's table: a heading per column, those of the orders the
    /// list has being links that choose them in their own direction, the
    /// current one marked with `aria-sort` and an arrow for the direction
    /// it runs, its link choosing the other direction (a search is ranked,
    /// so its headings are plain), and `rows` (see
    /// ``row(id:columns:cells:)``). On a phone the
    /// style sheet stacks each row as a card and keeps the headings that
    /// sort as a line of links above them.
    static func table<Sort: RecordSort & RawRepresentable & CaseIterable & Equatable & Sendable>(
        id: String, caption: String, base: String, query: ListQuery<Sort>, defaultSort: Sort,
        columns: [ListColumn<Sort>], rows: [HTML]
    ) -> HTML where Sort.RawValue == String {
        let headings = columns.map { column -> HTML in
            let style: HTML? = column.style.isEmpty ? nil : " class=\"\(column.style)\""
            guard let sort = column.sort, !query.isSearch else {
                return "<th scope=\"col\"\(style)>\(column.label)</th>"
            }
            guard sort == query.sort else {
                let href = link(base, search: "", sort: sort, defaultSort: defaultSort, size: query.size, page: 1)
                return """
                    <th scope="col" class="sortable\(column.style.isEmpty ? "" : " \(column.style)")"><a href="\(href)" id="sort-\(sort.rawValue)">\(column.label)</a></th>
                    """
            }
            let href = link(
                base, search: "", sort: sort, direction: query.direction.reversed, defaultSort: defaultSort,
                size: query.size, page: 1)
            let isDescending = query.direction == .descending
            let (direction, arrow) = isDescending ? ("descending", "▼") : ("ascending", "▲")
            return """
                <th scope="col" class="sortable\(column.style.isEmpty ? "" : " \(column.style)")" aria-sort="\(direction)"><a href="\(href)" id="sort-\(sort.rawValue)" aria-current="true">\(column.label)<span class="sort-arrow" aria-hidden="true"> \(arrow)</span></a></th>
                """
        }
        return """
            <table class="records stacked" id="\(id)">
            <caption class="visually-hidden">\(caption)</caption>
            <thead><tr>\(headings)</tr></thead>
            <tbody>
            \(HTML(joining: rows, separator: "\n"))
            </tbody>
            </table>
            """
    }

    /// A row of a list's table: `cells` in the order of `columns`, each
    /// labelled with its column's heading for the stacked layout.
    static func row<Sort>(id: String, columns: [ListColumn<Sort>], cells: [HTML]) -> HTML {
        let tds = zip(columns, cells).map { column, cell -> HTML in
            let style: HTML? = column.style.isEmpty ? nil : " class=\"\(column.style)\""
            return "<td data-label=\"\(column.label)\"\(style)>\(cell)</td>"
        }
        return "<tr id=\"\(id)\">\(tds)</tr>"
    }

    /// The links choosing the orders no column's heading chooses (the
    /// newest first), or, for a search, a line saying the best matches
    /// come first. The current one is marked and named for the way it runs
    /// ("Oldest first" once reversed); like the active heading's, its link
    /// chooses the other way.
    static func sortLinks<Sort: RecordSort & RawRepresentable & CaseIterable & Equatable & Sendable>(
        base: String, query: ListQuery<Sort>, defaultSort: Sort, columns: [ListColumn<Sort>],
        labels: [SortLabel<Sort>]
    ) -> HTML where Sort.RawValue == String {
        if query.isSearch { return "<p class=\"sort\" id=\"sort\">Best matches first.</p>" }
        let others = labels.filter { label in !columns.contains { $0.sort == label.sort } }
        guard !others.isEmpty else { return "" }
        let links = others.map { label -> HTML in
            let sort = label.sort
            guard sort == query.sort else {
                let href = link(base, search: "", sort: sort, defaultSort: defaultSort, size: query.size, page: 1)
                return "<a href=\"\(href)\" id=\"sort-\(sort.rawValue)\">\(label.label)</a>"
            }
            let isReversed = query.direction != sort.defaultDirection
            let href = link(
                base, search: "", sort: sort, direction: query.direction.reversed, defaultSort: defaultSort,
                size: query.size, page: 1)
            let (text, other) = isReversed ? (label.reversed, label.label) : (label.label, label.reversed)
            return
                "<a href=\"\(href)\" id=\"sort-\(sort.rawValue)\" aria-current=\"true\" title=\"Show \(other.lowercased())\">\(text)</a>"
        }
        return "<p class=\"sort\" id=\"sort\">Also sorted: \(HTML(joining: links, separator: " · "))</p>"
    }

    /// "42 people · page 2 of 3", or for a search "3 matches · page 1 of
    /// 1"; nothing when the page was not counted.
    static func count<Item, Sort>(query: ListQuery<Sort>, page: RecordPage<Item>, noun: ListNoun) -> HTML {
        guard let total = page.total, let pages = page.pageCount else { return "" }
        let counted = query.isSearch ? ListNoun(one: "match", many: "matches").count(total) : noun.count(total)
        return "<p class=\"list-count\" id=\"list-count\">\(counted) · page \(page.number) of \(pages)</p>"
    }

    /// The previous and next links of a page with "Page X of Y" between
    /// them, or nothing when it is the only page; then the choice of page
    /// size, when the list has more than the smallest page holds.
    static func pager<Item, Sort>(
        base: String, query: ListQuery<Sort>, defaultSort: Sort, page: RecordPage<Item>
    ) -> HTML {
        func href(_ number: Int) -> String { link(base, query: query, defaultSort: defaultSort, page: number) }
        var parts: [HTML] = []
        if page.hasPrevious || page.hasNext {
            let previous: HTML =
                page.previousNumber.map { "<a href=\"\(href($0))\" rel=\"prev\" id=\"page-previous\">Previous</a>" }
                ?? "<span></span>"
            let next: HTML =
                page.nextNumber.map { "<a href=\"\(href($0))\" rel=\"next\" id=\"page-next\">Next</a>" }
                ?? "<span></span>"
            let of: HTML? = page.pageCount.map { " of \($0)" }
            parts.append(
                """
                <nav class="pager" aria-label="Pages">\(previous)<span id="page-number">Page \(page.number)\(of)</span>\(next)</nav>
                """)
        }
        if (page.total ?? 0) > pageSizes[0] || query.size != defaultPageSize {
            let choices = pageSizes.map { size -> HTML in
                let target = link(base, query: query, defaultSort: defaultSort, size: size, page: 1)
                let current: HTML? = size == query.size ? " aria-current=\"true\"" : nil
                return "<a href=\"\(target)\" id=\"page-size-\(size)\"\(current)>\(size)</a>"
            }
            parts.append(
                "<p class=\"page-size\" id=\"page-size\">Per page: \(HTML(joining: choices, separator: " · "))</p>")
        }
        return HTML(joining: parts, separator: "\n")
    }

    /// The notice of a page past the end of its list: what the list has,
    /// and a link back to its last page (the first when it is empty).
    static func pastTheEnd<Item, Sort>(
        base: String, query: ListQuery<Sort>, defaultSort: Sort, page: RecordPage<Item>, noun: ListNoun
    ) -> HTML {
        let last = page.pageCount ?? 1
        let back = link(base, query: query, defaultSort: defaultSort, page: last)
        let has: HTML =
            page.total.map {
                " The list has \(query.isSearch ? ListNoun(one: "match", many: "matches").count($0) : noun.count($0)) on \(last == 1 ? "1 page" : "\(last) pages")."
            } ?? ""
        let label = last == 1 ? "Back to the first page" : "Back to the last page (\(last))"
        return """
            <p class="notice" id="empty">Page \(page.number) is past the end of the list.\(has) <a href="\(back)" id="page-back">\(label)</a></p>
            """
    }

    /// A search match's text, the matching words in `<mark>`.
    static func marked(_ segments: [(text: String, isMatch: Bool)]) -> HTML {
        HTML(joining: segments.map { $0.isMatch ? "<mark>\($0.text)</mark>" : "\($0.text)" })
    }

    /// The rows of a page that could not be read, each named, or nothing.
    static func unreadable(_ rows: [UnreadableRowError]) -> HTML {
        guard !rows.isEmpty else { return "" }
        let items = rows.map { "<li>\($0.description)</li>" as HTML }
        return """
            <div class="notice" id="unreadable"><p>Some rows could not be read:</p><ul>\(items)</ul></div>
            """
    }

    /// The field problems of a validation error, by field.
    static func problems(_ error: ValidationError?) -> [String: String] {
        var messages: [String: String] = [:]
        for problem in error?.problems ?? [] where messages[problem.field] == nil {
            messages[problem.field] = problem.message
        }
        return messages
    }

    /// A list's live region (see ``Layout``): the note about unreadable
    /// rows, the count, the list, the empty notice (or, past the end of the
    /// list, ``pastTheEnd(base:query:defaultSort:page:noun:)`` instead of
    /// the pager) and the pager, in `<div id="BASE-results" data-live-topics="BASE">`, so that
    /// the region is there whatever the page shows. `base` is both the
    /// list's path and its app's topic.
    static func results<Item, Sort>(
        base: String, query: ListQuery<Sort>, defaultSort: Sort, page: RecordPage<Item>, noun: ListNoun, list: HTML,
        empty: HTML
    ) -> HTML {
        let notice: HTML
        let isPastTheEnd = page.isEmpty && page.number > 1
        if !page.isEmpty {
            notice = ""
        } else if isPastTheEnd {
            notice = pastTheEnd(base: base, query: query, defaultSort: defaultSort, page: page, noun: noun)
        } else {
            notice = empty
        }
        return """
            <div id="\(base)-results" data-live-topics="\(base)">
            \(unreadable(page.unreadable))
            \(page.isEmpty ? "" : count(query: query, page: page, noun: noun))
            \(page.isEmpty ? "" : list)
            \(notice)
            \(isPastTheEnd ? "" : pager(base: base, query: query, defaultSort: defaultSort, page: page))
            </div>
            """
    }

    /// The page that asks before a record is deleted: the POST form to
    /// `action`, a Cancel link back to `cancel`, and the note about an
    /// unreadable row when there is one.
    ///
    /// The form carries the record's `version` (nil for a row that cannot
    /// be read), so that a record changed after this page was shown is not
    /// deleted unseen: `changed` names its kind when that happened, and the
    /// page asks again (409) showing it as it is now. `consequence` says
    /// what else goes with it ("This deletes the coffee and its
    /// picture."), before "This cannot be undone."
    ///
    /// Every destructive action of the site asks on such a page, with the
    /// same red Delete button and Cancel link.
    static func confirmDelete(
        _ request: Request, shown: String, section: String, action: String, cancel: String,
        unreadable: UnreadableRowError?, version: RecordVersion? = nil, changed kind: String? = nil,
        consequence: String? = nil
    ) -> Response {
        let note: HTML? = unreadable.map { "<p class=\"notice\" id=\"unreadable\">\($0.description)</p>" }
        let changed: HTML? = kind.map {
            "<p class=\"form-error\" role=\"alert\" id=\"conflict\">Someone else changed this \($0) after you asked to delete it, so it was not deleted. Check it below, and delete it again if you still want to.</p>"
        }
        return Layout.page(
            request, title: "Delete \(Layout.isolated(shown))?", section: section, status: kind == nil ? 200 : 409,
            content: """
                <h1>Delete <bdi>\(shown)</bdi>?</h1>
                \(changed)
                \(note)
                <p id="delete-consequence">\(consequence.map { $0 + " " })This cannot be undone.</p>
                <form method="post" action="\(action)" id="delete-form" class="actions">
                \(Layout.csrfField(request))\(version.map { "<input type=\"hidden\" name=\"version\" value=\"\($0.description)\">" as HTML })
                <button type="submit" class="danger" id="confirm-delete">Delete</button>
                <a href="\(cancel)">Cancel</a>
                </form>
                """)
    }
}

/// How a list's order is named among the links above its table: `label`
/// the way it runs by default, `reversed` the other way.
struct SortLabel<Sort: Sendable>: Sendable {
    let sort: Sort
    let label: String
    let reversed: String

    init(_ sort: Sort, _ label: String, reversed: String) {
        self.sort = sort
        self.label = label
        self.reversed = reversed
    }
}
