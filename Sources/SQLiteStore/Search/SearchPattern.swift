/// What to look for in a full-text index: built safely from what a person
/// typed, or, in the advanced mode, from FTS5's own query syntax.
///
/// ```swift
/// SearchPattern(typed: "gra hop")       // "gra" "hop"*: both words, the last one a prefix
/// SearchPattern(typed: "  ")            // nil: nothing to search for
/// SearchPattern(typed: "kept AND \"")   // "kept" "AND" *: plain words, never operators
/// SearchPattern(fts5Query: "grace OR ada")   // FTS5 syntax, checked when it runs
/// ```
///
/// A typed pattern is split into words at white space; each word is put
/// in FTS5's double quotes (a double quote in it doubled), so whatever was
/// typed (`AND`, `NEAR(`, `*`, `-`, `:`, parentheses, quotes) is text to
/// find and never reaches FTS5's query language: no input can make the
/// search fail with a syntax error. Every word must match (AND), in any
/// indexed column and in any order. Case and diacritics are ignored by the
/// index's tokenizer, so "akesson" finds "Åkesson" with the default one.
///
/// Inside a word, what the tokenizer does not count as part of a word
/// splits it: "o'bri" looks for "o" followed by a word starting with "bri".
/// Words with nothing the tokenizer would index (punctuation only, emoji)
/// are left out; when nothing is left, there is no pattern.
public struct SearchPattern: Sendable, Hashable, CustomStringConvertible {
    /// Which words of a typed pattern match as prefixes.
    public enum PrefixMatching: Sendable, Hashable {
        /// Whole words only.
        case none
        /// The last word is a prefix ("gra" finds "Grace"), as a person
        /// types it; the others are whole words. The default.
        case lastWord
        /// Every word is a prefix: "gr ho" finds "Grace Hopper".
        case everyWord
    }

    /// The FTS5 query text, bound as the right-hand side of `MATCH`.
    ///
    /// To search with your own SQL, bind it:
    /// `WHERE people_search MATCH \(pattern.fts5Query)`.
    public let fts5Query: String
    /// Whether the pattern was given in FTS5's syntax (see
    /// ``init(fts5Query:)``) rather than built from typed text.
    public let isAdvanced: Bool

    /// A pattern from what a person typed, or nil when it holds no word to
    /// search for (empty, white space, punctuation only).
    ///
    /// - Parameters:
    ///   - text: The text as typed; any text is accepted.
    ///   - prefix: Which words match as prefixes; the last one by default.
    public init?(typed text: String, prefix: PrefixMatching = .lastWord) {
        let words = Self.words(in: text)
        guard !words.isEmpty else { return nil }
        var query = ""
        for (position, word) in words.enumerated() {
            if position > 0 { query += " " }
            query += quoted(word, in: "\"")
            switch prefix {
            case .none: break
            case .lastWord: if position == words.count - 1 { query += "*" }
            case .everyWord: query += "*"
            }
        }
        fts5Query = query
        isAdvanced = false
    }

    /// A pattern in FTS5's own query syntax (`AND`, `OR`, `NOT`, `NEAR`,
    /// column filters, `*` prefixes, `^` first-token anchors), for people
    /// who want it.
    ///
    /// Its syntax is checked when it runs: a search with an invalid one
    /// throws a ``FullTextSearchError`` of kind
    /// ``FullTextSearchError/Kind/invalidPattern`` with FTS5's explanation,
    /// and ``Database/validate(_:in:)`` checks it beforehand. Never build
    /// one by pasting typed text into it; use ``init(typed:prefix:)``.
    public init(fts5Query: String) {
        self.fts5Query = fts5Query
        isAdvanced = true
    }

    /// The FTS5 query text.
    public var description: String { fts5Query }

    /// The words of typed text: split at white space and at characters
    /// that cannot be part of an indexed word. A NUL would end FTS5's
    /// reading of the query inside a quoted word, so it separates too.
    static func words(in text: String) -> [String] {
        var words: [String] = []
        var current = String.UnicodeScalarView()
        var hasWordCharacter = false
        func finish() {
            if hasWordCharacter { words.append(String(current)) }
            current = String.UnicodeScalarView()
            hasWordCharacter = false
        }
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace || scalar.value == 0 || isControl(scalar) {
                finish()
            } else {
                current.append(scalar)
                if isWordCharacter(scalar) { hasWordCharacter = true }
            }
        }
        finish()
        return words
    }

    /// Whether the tokenizers would index the character as (part of) a
    /// word: letters, digits and private-use characters, as `unicode61`
    /// has it, or any ASCII letter or digit.
    private static func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber, .privateUse:
            true
        default:
            false
        }
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control
    }
}
