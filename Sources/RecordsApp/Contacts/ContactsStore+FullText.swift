import SQLiteStore

extension ContactsStore {
    /// How contacts are searched: a word of the name weighs more than one
    /// of the address or contact; the snippet is an excerpt of the column
    /// that matches best.
    static let indexedSearch = IndexedSearch(
        index: ContactsSchema.searchIndex, weights: [4, 1, 1], snippet: .excerpt(words: 12))

    /// The contacts matching what a person typed, best first, from the
    /// full-text index of their name, address and contact.
    ///
    /// Every word must start a word of the name, the address or the
    /// contact, in any order, ignoring case and diacritics: "jane main"
    /// finds Jane Doe of 12 Main Street, "milano" finds Marco Rossi. A
    /// match in the name ranks above one in the other columns. Whatever is
    /// typed is text to look for; text with no word to look for finds
    /// nothing. The original tutorial's exact "Find Contact" is
    /// ``find(name:)``.
    ///
    /// - Parameters:
    ///   - text: What was typed.
    ///   - limit: At most this many matches; all when nil.
    ///   - offset: Skip this many of the best matches first.
    /// - Returns: The matches read, with their rank and an excerpt of the
    ///   best-matching column, and the matching rows that cannot be read.
    /// - Throws: ``ValidationError`` when `limit` or `offset` is negative.
    public func fullTextSearch(_ text: String, limit: Int? = nil, offset: Int = 0) async throws
        -> FullTextResults<Contact>
    {
        try await table.fullTextSearch(text, using: Self.indexedSearch, limit: limit, offset: offset)
    }

    /// Page `number` (from 1) of `size` of the contacts matching what a person
    /// typed, best first (as ``fullTextSearch(_:limit:offset:)`` finds
    /// them), whether another page follows, and how many match in all; only
    /// that page is read.
    ///
    /// - Throws: ``ValidationError`` when `number` is below 1 or `size` is
    ///   not from 1 to ``PageRules/maxSize``.
    public func fullTextSearch(_ text: String, page number: Int, size: Int) async throws
        -> RecordPage<FullTextMatch<Contact>>
    {
        try await table.fullTextSearch(text, using: Self.indexedSearch, number: number, size: size)
    }
}
