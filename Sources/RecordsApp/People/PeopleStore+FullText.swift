import SQLiteStore

extension PeopleStore {
    /// How people are searched: both names weigh the same; the snippet is
    /// the full name with the matching words marked.
    static let indexedSearch = IndexedSearch(
        index: PeopleSchema.searchIndex, weights: [1, 1], snippet: .highlight(columns: [0, 1], separator: " "))

    /// The people matching what a person typed, best first, from the names'
    /// full-text index.
    ///
    /// Every word must start a word of the first or last name, in any
    /// order, ignoring case and diacritics: "ada love" and "lovelace" find
    /// Ada Lovelace, "akesson" finds Zoë Åkesson. Whatever is typed is
    /// text to look for (quotes, `*`, `AND`, `NEAR(` never fail); text with
    /// no word to look for (blank, punctuation only) finds no one.
    ///
    /// ```swift
    /// let found = try await store.fullTextSearch("gra hop", limit: 20)
    /// found.matches[0].snippet.marked(before: "[", after: "]")   // "[Grace] [Hopper]"
    /// ```
    ///
    /// - Parameters:
    ///   - text: What was typed.
    ///   - limit: At most this many matches; all when nil.
    ///   - offset: Skip this many of the best matches first.
    /// - Returns: The matches read, with their rank and full name marked,
    ///   and the matching rows that cannot be read.
    /// - Throws: ``ValidationError`` when `limit` or `offset` is negative.
    public func fullTextSearch(_ text: String, limit: Int? = nil, offset: Int = 0) async throws
        -> FullTextResults<Person>
    {
        try await table.fullTextSearch(text, using: Self.indexedSearch, limit: limit, offset: offset)
    }

    /// Page `number` (from 1) of `size` of the people matching what a person
    /// typed, best first (as ``fullTextSearch(_:limit:offset:)`` finds
    /// them), whether another page follows, and how many match in all; only
    /// that page is read.
    ///
    /// - Throws: ``ValidationError`` when `number` is below 1 or `size` is
    ///   not from 1 to ``PageRules/maxSize``.
    public func fullTextSearch(_ text: String, page number: Int, size: Int) async throws
        -> RecordPage<FullTextMatch<Person>>
    {
        try await table.fullTextSearch(text, using: Self.indexedSearch, number: number, size: size)
    }
}
