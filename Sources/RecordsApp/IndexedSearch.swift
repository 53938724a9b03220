import SQLiteStore

/// One record found by an app's full-text search, with its rank and the
/// text that matched.
public struct FullTextMatch<Record: Sendable>: Sendable {
    /// The record, as the app's list reads it.
    public var record: Record
    /// FTS5's `bm25` rank: lower is a better match. Matches come sorted by
    /// it, best first.
    public var rank: Double
    /// The searched text of the record with the matching words marked as
    /// segments; the caller escapes and marks them for its output.
    public var snippet: Snippet
}

extension FullTextMatch: Equatable where Record: Equatable {}

/// What an app's full-text search found: the matches that could be read,
/// best first, and the matching rows that could not (a stored value that is
/// not what its field holds), each named with its ID and columns.
public struct FullTextResults<Record: Sendable>: Sendable {
    /// The matches read, best first.
    public var matches: [FullTextMatch<Record>]
    /// The matching rows that could not be read.
    public var unreadable: [UnreadableRowError]

    /// Creates results.
    public init(matches: [FullTextMatch<Record>], unreadable: [UnreadableRowError] = []) {
        self.matches = matches
        self.unreadable = unreadable
    }

    /// The records, best first.
    public var records: [Record] { matches.map(\.record) }

    /// The records and the unreadable rows, as a list of the app's.
    public var list: RecordList<Record> { RecordList(records: records, unreadable: unreadable) }

    /// The records, or the first unreadable row as the error.
    public func get() throws -> [Record] { try list.get() }
}

/// How an app searches its full-text index: which index, how much each
/// column weighs in the rank, and which text comes back as the snippet.
struct IndexedSearch: Sendable {
    /// The text handed back with each match.
    enum SnippetText: Sendable {
        /// These columns' whole text, matches marked, the non-empty ones
        /// joined by `separator`.
        case highlight(columns: [Int], separator: String)
        /// An excerpt of at most `words` words from the best-matching
        /// column (FTS5's `snippet()`).
        case excerpt(words: Int)
    }

    let index: FoldedSearchIndex
    /// One weight per column of ``index``, in order.
    let weights: [Double]
    let snippet: SnippetText

    /// The pattern for what a person typed: every word must match the
    /// start of a word, in any searched column, in any order, ignoring case
    /// and diacritics. The text is folded as the index's text is (see
    /// ``FoldedSearchIndex``), so "ł" and "l" find the same words. Nil when
    /// the text holds no word to look for (blank, punctuation, emoji only).
    static func pattern(_ text: String) -> SearchPattern? {
        SearchPattern(typed: SearchFolding.fold(text), prefix: .everyWord)
    }

    /// The statement: the record's list columns from a subquery (so that
    /// the index's columns of the same names cannot clash, and a column the
    /// list does not read, such as a picture, is never loaded), then the
    /// rank and the snippet columns. With `details`, the record's detail
    /// columns instead (which never hold a picture's bytes either).
    func sql<Record: AppRecord>(
        for _: Record.Type, pattern: SearchPattern, limit: Int?, offset: Int, details: Bool = false
    ) -> SQL {
        let selection = details ? Record.detailSelection : Record.selection
        let fts: SQL = "\(identifier: index.name)"
        let rank = SQL(
            unsafeLiteral: "bm25(\(quotedIdentifier(index.name))" + weights.map { ", \($0)" }.joined() + ")")
        let open = Snippet.openMark
        let close = Snippet.closeMark
        let snippets: [SQL]
        switch snippet {
        case .highlight(let columns, _):
            snippets = columns.map { "highlight(\(fts), \($0), \(open), \(close))" }
        case .excerpt(let words):
            snippets = ["snippet(\(fts), -1, \(open), \(close), '…', \(words))"]
        }
        var sql: SQL = """
            SELECT t.*, \(rank), \(snippets.joined(separator: ", ")) \
            FROM \(fts) JOIN (SELECT \(selection) FROM \(identifier: Record.tableName)) AS t \
            ON t.\(identifier: Record.primaryKey) = \(fts).rowid \
            WHERE \(fts) MATCH \(pattern.fts5Query) \
            ORDER BY \(rank), \(fts).rowid
            """
        if limit != nil || offset > 0 { sql += " LIMIT \(Int64(limit ?? -1)) OFFSET \(Int64(offset))" }
        return sql
    }

    /// The snippet from a row's last columns.
    func snippet(from row: Row) throws -> Snippet {
        let count: Int
        let separator: String
        switch snippet {
        case .highlight(let columns, let joiner):
            count = columns.count
            separator = joiner
        case .excerpt:
            count = 1
            separator = ""
        }
        var segments: [Snippet.Segment] = []
        // Text next to text is one segment: "Zoë" and " " make "Zoë ".
        func append(_ segment: Snippet.Segment) {
            if let last = segments.last, !last.isMatch, !segment.isMatch {
                segments[segments.count - 1].text += segment.text
            } else {
                segments.append(segment)
            }
        }
        for position in (row.count - count)..<row.count {
            guard let text = try row.decode(String?.self, at: position), !text.isEmpty else { continue }
            if !segments.isEmpty && !separator.isEmpty { append(Snippet.Segment(text: separator, isMatch: false)) }
            Snippet(marked: text).segments.forEach(append)
        }
        return Snippet(segments: segments)
    }

    /// The rank, just before the snippet columns.
    func rank(from row: Row) throws -> Double {
        let snippetColumns: Int
        switch snippet {
        case .highlight(let columns, _): snippetColumns = columns.count
        case .excerpt: snippetColumns = 1
        }
        return try row.decode(Double.self, at: row.count - snippetColumns - 1)
    }
}

extension RecordTable {
    /// The records matching what a person typed, best first (see
    /// ``IndexedSearch/pattern(_:)``), read as the list reads them, with
    /// their rank and snippet, and the matching rows that cannot be read;
    /// with `details`, read with the record's detail columns.
    ///
    /// Text with nothing to look for gives no match.
    ///
    /// - Throws: ``ValidationError`` when `limit` or `offset` is negative.
    func fullTextSearch(
        _ text: String, using search: IndexedSearch, limit: Int?, offset: Int, details: Bool = false
    ) async throws -> FullTextResults<Record> {
        var validator = Validator()
        if let limit, limit < 0 { validator.fail("limit", "limit must not be negative") }
        if offset < 0 { validator.fail("offset", "offset must not be negative") }
        try validator.check()
        guard let pattern = IndexedSearch.pattern(text) else { return FullTextResults(matches: []) }
        let sql = search.sql(for: Record.self, pattern: pattern, limit: limit, offset: offset, details: details)
        return try await searching(search.index) { db in
            var results = FullTextResults<Record>(matches: [])
            let cursor = try db.fetchCursor(sql)
            while let row = try cursor.next() {
                do {
                    results.matches.append(try search.match(Record.self, from: row))
                } catch let error as UnreadableRowError {
                    results.unreadable.append(error)
                }
            }
            return results
        }
    }

    /// Runs a search's read in a reader when every row's text is folded
    /// (the usual case), else in a write that first folds the rows another
    /// program wrote since (see ``FoldedSearchIndex/fill(_:)``), so that a
    /// search never misses a row for want of its folded text.
    func searching<T: Sendable>(
        _ index: FoldedSearchIndex, _ read: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await database.readFolded(for: Record.app, index, read)
    }

    /// Page `number` (from 1) of `size` of the matches for what a person
    /// typed, best first, as ``fullTextSearch(_:using:limit:offset:)``
    /// finds them, whether more follow, and how many match in all; with
    /// `details`, read with the record's detail columns. Text with nothing
    /// to look for gives an empty page.
    ///
    /// - Throws: ``ValidationError`` for a page number or size out of
    ///   range (see ``PageRules/offset(number:size:)``).
    func fullTextSearch(
        _ text: String, using search: IndexedSearch, number: Int, size: Int, details: Bool = false
    ) async throws -> RecordPage<FullTextMatch<Record>> {
        let offset = try PageRules.offset(number: number, size: size)
        guard let pattern = IndexedSearch.pattern(text) else {
            return RecordPage(items: [], number: number, size: size, hasNext: false, total: 0)
        }
        let sql = search.sql(
            for: Record.self, pattern: pattern, limit: size + 1, offset: offset, details: details)
        let fts: SQL = "\(identifier: search.index.name)"
        let count: SQL = "SELECT count(*) FROM \(fts) WHERE \(fts) MATCH \(pattern.fts5Query)"
        return try await searching(search.index) { db in
            var page = try RecordPage.read(db.fetchCursor(sql), number: number, size: size) { row in
                try search.match(Record.self, from: row)
            }
            page.total = try db.fetchOne(Int.self, count) ?? 0
            return page
        }
    }
}

extension IndexedSearch {
    /// A match from a row of ``sql(for:pattern:limit:offset:)``, the
    /// record read strictly.
    ///
    /// - Throws: ``UnreadableRowError`` when the record cannot be read.
    func match<Record: AppRecord>(_: Record.Type, from row: Row) throws -> FullTextMatch<Record> {
        FullTextMatch(
            record: try Record(row: row, strict: true), rank: try rank(from: row), snippet: try snippet(from: row))
    }
}
