import Foundation
import RecordsApp

/// What a list page was asked for in its query: the page number, the
/// order, and the search text (`/people?q=ada&page=2`).
struct ListQuery<Sort: RawRepresentable & CaseIterable & Equatable & Sendable>: Sendable
where Sort.RawValue == String {
    /// The page, from 1.
    var page: Int
    /// The order of the list (a search is ranked instead).
    var sort: Sort
    /// What to search for, trimmed; empty for the whole list.
    var search: String

    /// The items on a page.
    static var pageSize: Int { 20 }

    /// Reads the query of `request`.
    ///
    /// - Throws: ``HTTPError`` 400 when `page` is not a whole number from 1
    ///   or `sort` is not one of the list's orders.
    init(_ request: Request, defaultSort: Sort) throws {
        if let text = request.query["page"], !text.isEmpty {
            guard let page = Int(text), page >= 1 else {
                throw HTTPError.badRequest("The page number must be a whole number from 1.")
            }
            self.page = page
        } else {
            page = 1
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
        search = (request.query["q"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether the page shows a search's matches rather than the list.
    var isSearch: Bool { !search.isEmpty }
}

/// The parts every list page shares: the search box, the sort links, the
/// pager and the matched words of a search.
enum ListControls {
    /// The address of a list page: `base` with the search, sort and page
    /// in the query (each left out when it is the default).
    static func link<Sort: RawRepresentable>(
        _ base: String, search: String, sort: Sort, defaultSort: Sort, page: Int
    ) -> String where Sort.RawValue == String {
        HTML.path(
            [base],
            query: [
                ("q", search.isEmpty ? nil : search),
                ("sort", search.isEmpty && sort.rawValue != defaultSort.rawValue ? sort.rawValue : nil),
                ("page", page > 1 ? String(page) : nil),
            ])
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

    /// The links choosing the order (the current one marked), or, for a
    /// search, a line saying the best matches come first.
    static func sortLinks<Sort: RawRepresentable>(
        base: String, query: ListQuery<Sort>, defaultSort: Sort, labels: [(Sort, String)]
    ) -> HTML {
        if query.isSearch { return "<p class=\"sort\" id=\"sort\">Best matches first.</p>" }
        let links = labels.map { sort, label -> HTML in
            let href = link(base, search: "", sort: sort, defaultSort: defaultSort, page: 1)
            let current: HTML? = sort == query.sort ? " aria-current=\"true\"" : nil
            return "<a href=\"\(href)\" id=\"sort-\(sort.rawValue)\"\(current)>\(label)</a>"
        }
        return "<p class=\"sort\" id=\"sort\">Sort by: \(HTML(joining: links, separator: " · "))</p>"
    }

    /// The previous and next links of a page, or nothing when it is the
    /// only page.
    static func pager<Item, Sort: RawRepresentable>(
        base: String, query: ListQuery<Sort>, defaultSort: Sort, page: RecordPage<Item>
    ) -> HTML {
        guard page.hasPrevious || page.hasNext else { return "" }
        func href(_ number: Int) -> String {
            link(base, search: query.search, sort: query.sort, defaultSort: defaultSort, page: number)
        }
        let previous: HTML =
            page.previousNumber.map { "<a href=\"\(href($0))\" rel=\"prev\" id=\"page-previous\">Previous</a>" }
            ?? "<span></span>"
        let next: HTML =
            page.nextNumber.map { "<a href=\"\(href($0))\" rel=\"next\" id=\"page-next\">Next</a>" } ?? "<span></span>"
        return """
            <nav class="pager" aria-label="Pages">\(previous)<span id="page-number">Page \(page.number)</span>\(next)</nav>
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
    /// rows, the list, the empty notice and the pager, in
    /// `<div id="BASE-results" data-live-topics="BASE">`, so that the
    /// region is there whatever the page shows. `base` is both the list's
    /// path and its app's topic.
    static func results<Item, Sort: RawRepresentable>(
        base: String, query: ListQuery<Sort>, defaultSort: Sort, page: RecordPage<Item>, list: HTML, empty: HTML
    ) -> HTML {
        """
        <div id="\(base)-results" data-live-topics="\(base)">
        \(unreadable(page.unreadable))
        \(list)
        \(empty)
        \(pager(base: base, query: query, defaultSort: defaultSort, page: page))
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
