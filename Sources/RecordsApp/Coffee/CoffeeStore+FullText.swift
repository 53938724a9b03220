import SQLiteStore

extension CoffeeStore {
    /// How coffees are searched: by name; the snippet is the name with the
    /// matching words marked.
    static let indexedSearch = IndexedSearch(
        index: CoffeeSchema.searchIndex, weights: [1], snippet: .highlight(columns: [0], separator: ""))

    /// The coffees matching what a person typed, best first, from the
    /// names' full-text index; ID and name only (not hydrated), as the
    /// list reads them, unless `hydrated` (then with price and picture
    /// size and type): no picture's bytes are read.
    ///
    /// Every word must start a word of the name, in any order, ignoring
    /// case and diacritics: "lat caf" and "caffe" find Caffè Latte.
    /// Whatever is typed is text to look for; text with no word to look for
    /// finds nothing.
    ///
    /// - Parameters:
    ///   - text: What was typed.
    ///   - limit: At most this many matches; all when nil.
    ///   - offset: Skip this many of the best matches first.
    ///   - hydrated: Whether to read each match's price and picture too.
    /// - Returns: The matches read, with their rank and name marked, and the
    ///   matching rows whose name cannot be read.
    /// - Throws: ``ValidationError`` when `limit` or `offset` is negative.
    public func fullTextSearch(_ text: String, limit: Int? = nil, offset: Int = 0, hydrated: Bool = false)
        async throws -> FullTextResults<Coffee>
    {
        try await table.fullTextSearch(
            text, using: Self.indexedSearch, limit: limit, offset: offset, details: hydrated)
    }

    /// Page `number` (from 1) of `size` of the coffees matching what a
    /// person typed, best first (as ``fullTextSearch(_:limit:offset:)``
    /// finds them), whether another page follows, and how many match in
    /// all; only that page is read, ID and name only unless `hydrated`
    /// (then with price and picture, never its bytes).
    ///
    /// - Throws: ``ValidationError`` when `number` is below 1 or `size` is
    ///   not from 1 to ``PageRules/maxSize``.
    public func fullTextSearch(_ text: String, page number: Int, size: Int, hydrated: Bool = false) async throws
        -> RecordPage<FullTextMatch<Coffee>>
    {
        try await table.fullTextSearch(text, using: Self.indexedSearch, number: number, size: size, details: hydrated)
    }
}
