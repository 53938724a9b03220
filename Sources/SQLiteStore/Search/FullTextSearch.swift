/// One record found by a full-text search, with its rank and, when asked
/// for, a snippet of the text that matched.
public struct SearchMatch<Record> {
    /// The matching row, decoded.
    public var record: Record
    /// The row's `bm25` rank: lower is a better match (FTS5 ranks with
    /// negative numbers, the best first). Results come sorted by it.
    public var rank: Double
    /// The snippet or highlighted text asked for with
    /// ``Database/search(_:in:matching:weights:snippet:limit:offset:)``, or
    /// nil (not asked for, or the column was NULL).
    public var snippet: Snippet?
}

extension SearchMatch: Sendable where Record: Sendable {}
extension SearchMatch: Equatable where Record: Equatable {}

/// Which text a search hands back with each match.
public enum SnippetRequest: Sendable, Hashable {
    /// A short excerpt around the matches, as FTS5's `snippet()` picks it.
    ///
    /// - column: The indexed column to take it from, or nil for the one
    ///   that matches best.
    /// - words: At most this many words, 1 to 64.
    /// - ellipsis: Text marking where the column's text was cut.
    case excerpt(column: String? = nil, words: Int = 12, ellipsis: String = "…")
    /// A column's whole text, with the matches marked (FTS5's
    /// `highlight()`).
    case highlight(column: String)
}

/// Text with its matching words marked, as segments: the caller renders
/// each one, escaping it for its output, and marks the matches as it likes.
///
/// The library never escapes anything (it does not know whether the text
/// goes to HTML, a terminal or JSON). Keeping the matches as separate
/// segments lets the caller escape the text *and* add markup safely:
///
/// ```swift
/// let html = snippet.rendered(
///     text: { escapeHTML($0) },
///     match: { "<mark>" + escapeHTML($0) + "</mark>" })
/// let terminal = snippet.marked(before: "\u{1B}[1m", after: "\u{1B}[0m")
/// ```
///
/// Do not insert HTML markers first and escape afterwards: escaping would
/// undo the markers, and text that was never escaped would reach the page.
///
/// FTS5 builds snippets as C strings: in a column whose text holds a NUL
/// character, the text after it comes out cut or misplaced (the search
/// itself is not affected).
public struct Snippet: Sendable, Hashable, CustomStringConvertible {
    /// A piece of the text, either a match or the text around matches.
    public struct Segment: Sendable, Hashable {
        /// The text, as stored (unescaped).
        public var text: String
        /// Whether the text is a match of the pattern.
        public var isMatch: Bool

        /// Creates a segment.
        public init(text: String, isMatch: Bool) {
            self.text = text
            self.isMatch = isMatch
        }
    }

    /// The text in order, split into matches and the text between them.
    public var segments: [Segment]

    /// Creates a snippet from its segments.
    public init(segments: [Segment]) {
        self.segments = segments
    }

    /// The plain text, without marks.
    public var text: String { segments.map(\.text).joined() }

    /// The text with each segment rendered by the caller: `text` for the
    /// text around matches, `match` for the matches. Escape in both.
    public func rendered(text: (String) -> String, match: (String) -> String) -> String {
        segments.map { $0.isMatch ? match($0.text) : text($0.text) }.joined()
    }

    /// The text with `before` and `after` around each match, nothing
    /// escaped: for plain-text outputs (a terminal). For HTML, use
    /// ``rendered(text:match:)`` and escape.
    public func marked(before: String, after: String) -> String {
        rendered(text: { $0 }, match: { before + $0 + after })
    }

    /// The plain text.
    public var description: String { text }

    /// The private-use character to pass as FTS5's opening marker to
    /// `snippet()` or `highlight()` in hand-written SQL, so that the result
    /// reads back with ``init(marked:)``. A column that holds these
    /// characters itself only gets odd marks: every segment is still text
    /// for the caller to escape.
    public static let openMark = "\u{F8F0}"
    /// The closing marker that goes with ``openMark``.
    public static let closeMark = "\u{F8F1}"
    private static let openScalar: Unicode.Scalar = "\u{F8F0}"
    private static let closeScalar: Unicode.Scalar = "\u{F8F1}"

    /// Splits the text of an FTS5 `snippet()` or `highlight()` call that
    /// used ``openMark`` and ``closeMark`` into matches and the text
    /// between them.
    public init(marked text: String) {
        var segments: [Segment] = []
        var current = ""
        var isMatch = false
        func flush() {
            if !current.isEmpty { segments.append(Segment(text: current, isMatch: isMatch)) }
            current = ""
        }
        for scalar in text.unicodeScalars {
            if scalar == Self.openScalar {
                flush()
                isMatch = true
            } else if scalar == Self.closeScalar {
                flush()
                isMatch = false
            } else {
                current.unicodeScalars.append(scalar)
            }
        }
        flush()
        self.init(segments: segments)
    }
}

extension Database {
    /// The records of an index's table that match a pattern, best first
    /// (by `bm25`), with their rank and optionally a snippet.
    ///
    /// ```swift
    /// guard let pattern = SearchPattern(typed: searchBarText) else { return [] }
    /// let matches = try db.search(
    ///     Person.self, in: peopleSearch, matching: pattern,
    ///     weights: ["lastname": 2], snippet: .highlight(column: "lastname"), limit: 20)
    /// for match in matches { print(match.record.name, match.rank) }
    /// ```
    ///
    /// Each record is decoded from all the columns of the table's row
    /// (`SELECT table.*`), so any ``FetchableRecord`` of that table works.
    ///
    /// - Parameters:
    ///   - type: The record type to decode.
    ///   - index: The index to search, as created by ``create(_:)``.
    ///   - pattern: What to look for.
    ///   - weights: A weight for each column that counts more (or less)
    ///     than the others in the rank; unnamed columns weigh 1.
    ///   - snippet: The text to hand back with each match, if any.
    ///   - limit: At most this many matches (nil: all).
    ///   - offset: Skip this many of the best matches first (paging).
    /// - Throws: ``FullTextSearchError`` for an invalid advanced pattern,
    ///   a weight or snippet column that is not indexed, or a negative
    ///   limit or offset; ``SQLiteError`` and ``ValueConversionError`` as
    ///   any fetch.
    public func search<Record: FetchableRecord>(
        _ type: Record.Type, in index: FullTextIndex, matching pattern: SearchPattern,
        weights: [String: Double] = [:], snippet: SnippetRequest? = nil, limit: Int? = nil, offset: Int = 0
    ) throws -> [SearchMatch<Record>] {
        let query = try FullTextQuery(
            index: index, pattern: pattern, weights: weights, snippet: snippet, limit: limit, offset: offset)
        return try runSearch(pattern: pattern, index: index) {
            let cursor = try fetchCursor(query.sql)
            var matches: [SearchMatch<Record>] = []
            while let row = try cursor.next() {
                let record = try Record(row: row)
                matches.append(try query.match(record, from: row))
            }
            return matches
        }
    }

    /// The number of rows of an index's table that match a pattern.
    ///
    /// - Throws: ``FullTextSearchError`` for an invalid advanced pattern.
    public func searchCount(in index: FullTextIndex, matching pattern: SearchPattern) throws -> Int {
        try runSearch(pattern: pattern, index: index) {
            try fetchOne(
                Int.self,
                "SELECT count(*) FROM \(identifier: index.name) WHERE \(identifier: index.name) MATCH \(pattern.fts5Query)"
            ) ?? 0
        }
    }

    /// Checks that a pattern is valid for an index (an advanced one's
    /// syntax and column names), without fetching its matches.
    ///
    /// - Throws: ``FullTextSearchError`` of kind
    ///   ``FullTextSearchError/Kind/invalidPattern`` naming the problem.
    public func validate(_ pattern: SearchPattern, in index: FullTextIndex) throws {
        // FTS5 parses the query when the statement first steps, not when
        // it is prepared: run it, for one row at most.
        try runSearch(pattern: pattern, index: index) {
            _ = try fetchOne(
                "SELECT 1 FROM \(identifier: index.name) WHERE \(identifier: index.name) MATCH \(pattern.fts5Query) LIMIT 1"
            )
        }
    }

    /// Runs a search, turning FTS5's complaints about an advanced pattern
    /// into a ``FullTextSearchError``. The message is FTS5's, which names
    /// the place (`syntax error near "AND"`); like ``SQLiteError``, it does
    /// not repeat the searched text, which may be private.
    private func runSearch<T>(pattern: SearchPattern, index: FullTextIndex, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError where pattern.isAdvanced && Self.isPatternError(error) {
            throw FullTextSearchError(
                .invalidPattern,
                message: "invalid search pattern for the full-text index \(quotedIdentifier(index.name)): "
                    + error.message)
        }
    }

    /// FTS5's messages about a query: its syntax errors start with
    /// "fts5:", an unclosed quote is an "unterminated string", a column
    /// filter naming a column the index does not have gives "no such
    /// column", and a word that names no special query gives "unknown
    /// special query".
    private static func isPatternError(_ error: SQLiteError) -> Bool {
        guard error.code == .error else { return false }
        return error.message.hasPrefix("fts5:") || error.message.hasPrefix("unterminated string")
            || error.message.hasPrefix("no such column")
            || error.message.hasPrefix("unknown special query")
    }
}

/// The SQL of one search, checked against the index's declaration.
struct FullTextQuery {
    let sql: SQL
    let hasSnippet: Bool

    init(
        index: FullTextIndex, pattern: SearchPattern, weights: [String: Double], snippet: SnippetRequest?,
        limit: Int?, offset: Int
    ) throws {
        func invalid(_ message: String) -> FullTextSearchError {
            FullTextSearchError(.invalidArgument, message: message)
        }
        func position(of column: String) throws -> Int {
            guard let position = index.columns.firstIndex(where: { $0.lowercased() == column.lowercased() }) else {
                throw invalid(
                    "the full-text index \(quotedIdentifier(index.name)) has no column \(quotedIdentifier(column))")
            }
            return position
        }
        var columnWeights = [Double](repeating: 1, count: index.columns.count)
        for (column, weight) in weights {
            guard weight.isFinite else {
                throw invalid("the weight of \(quotedIdentifier(column)) must be a finite number, not \(weight)")
            }
            columnWeights[try position(of: column)] = weight
        }
        if let limit, limit < 0 { throw invalid("the limit must not be negative (\(limit))") }
        guard offset >= 0 else { throw invalid("the offset must not be negative (\(offset))") }

        let fts: SQL = "\(identifier: index.name)"
        // The weights are written as numbers, not bound, so that ORDER BY
        // can repeat the very same expression: SQLite then computes it once.
        // (Ordering by an alias would pick a table column of that name
        // that `table.*` brings in first.) A finite Double's description
        // is a valid SQL number.
        let rank = SQL(
            unsafeLiteral: "bm25(\(quotedIdentifier(index.name))"
                + columnWeights.map { ", \($0)" }.joined() + ")")
        var sql: SQL = "SELECT \(identifier: index.table).*, \(rank)"
        switch snippet {
        case nil:
            break
        case .excerpt(let column, let words, let ellipsis):
            guard (1...64).contains(words) else { throw invalid("a snippet has 1 to 64 words, not \(words)") }
            let columnPosition = try column.map(position(of:)) ?? -1
            sql += """
                , snippet(\(fts), \(columnPosition), \(Snippet.openMark), \(Snippet.closeMark), \
                \(ellipsis), \(words))
                """
        case .highlight(let column):
            let columnPosition = try position(of: column)
            sql += ", highlight(\(fts), \(columnPosition), \(Snippet.openMark), \(Snippet.closeMark))"
        }
        sql += """
             FROM \(fts) JOIN \(identifier: index.table) \
            ON \(identifier: index.table, index.rowID) = \(fts).rowid \
            WHERE \(fts) MATCH \(pattern.fts5Query) \
            ORDER BY \(rank), \(fts).rowid
            """
        if let limit {
            sql += " LIMIT \(limit) OFFSET \(offset)"
        } else if offset > 0 {
            sql += " LIMIT -1 OFFSET \(offset)"
        }
        self.sql = sql
        hasSnippet = snippet != nil
    }

    /// The match of a row: the rank and snippet are its last columns,
    /// read by position so a table column of the same name cannot shadow
    /// them.
    func match<Record>(_ record: Record, from row: Row) throws -> SearchMatch<Record> {
        let rankIndex = row.count - (hasSnippet ? 2 : 1)
        let rank = try row.decode(Double.self, at: rankIndex)
        var snippet: Snippet?
        if hasSnippet, let text = try row.decode(String?.self, at: row.count - 1) {
            snippet = Snippet(marked: text)
        }
        return SearchMatch(record: record, rank: rank, snippet: snippet)
    }
}
