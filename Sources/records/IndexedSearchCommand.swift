import RecordsApp
import SQLiteStore

/// The options of every `search` command: paging through the ranked
/// matches.
let indexedSearchOptions: [Command.Option] = [
    Command.Option(name: "limit", valueName: "N", help: "Show at most N matches, the best ones"),
    Command.Option(name: "offset", valueName: "N", help: "Skip the N best matches first (with --limit: a page)"),
    .json,
]

/// What the help of every `search` command says about matching and JSON.
let indexedSearchDiscussion = """
    Every word must start a word of a searched field, in any order, ignoring case
    and accents; the best matches come first. Anything typed is text to look
    for: quotes, *, AND, NEAR( are never operators. With --json, each match
    also has "rank" (lower is better) and "snippet", the matching text with
    each matching word between \(IndexedSearchOutput.openMarker) and \(IndexedSearchOutput.closeMarker).
    """

/// How a `search` command prints what the store's full-text search found.
enum IndexedSearchOutput {
    /// The marks around a matching word in a snippet.
    static let openMarker = "**"
    static let closeMarker = "**"

    /// A snippet as text: every piece escaped with ``Terminal/clean(_:)``,
    /// as all text of the command is, and the matches between the markers.
    static func render(_ snippet: Snippet) -> String {
        snippet.rendered(text: Terminal.clean, match: { openMarker + Terminal.clean($0) + closeMarker })
    }
}

/// A match in JSON: the record's own keys, then `rank` and `snippet`.
struct IndexedSearchMatchJSON<Record: Encodable & Sendable>: Encodable {
    let match: FullTextMatch<Record>

    private enum CodingKeys: String, CodingKey {
        case rank, snippet
    }

    func encode(to encoder: any Encoder) throws {
        try match.record.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(match.rank, forKey: .rank)
        try container.encode(IndexedSearchOutput.render(match.snippet), forKey: .snippet)
    }
}

extension Invocation {
    /// The `search` commands' run: the text, `--limit` and `--offset`
    /// checked, the store's full-text search, then the matches as JSON or
    /// as the app's table, and the unreadable matching rows named.
    ///
    /// - Parameters:
    ///   - nothingFound: The start of the message for no match ("No one
    ///     matches"); the text is added.
    ///   - noun: The matches' plural, for unreadable rows ("matching people").
    ///   - search: The store's `fullTextSearch(_:limit:offset:)`.
    ///   - printTable: Prints the records as the app's list does, or the
    ///     message when there are none.
    func runIndexedSearch<Record: Encodable & Sendable>(
        nothingFound: String, noun: String,
        search: (_ text: String, _ limit: Int?, _ offset: Int) async throws -> FullTextResults<Record>,
        printTable: ([Record], _ empty: String?) throws -> Void
    ) async throws {
        let text = arguments.positionals.first ?? ""
        if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw UsageError(message: "search TEXT must not be empty", helpPath: path)
        }
        let limit = try wholeNumber("limit")
        let offset = try wholeNumber("offset") ?? 0
        let results = try await search(text, limit, offset)
        if wantsJSON {
            try Console.json(results.matches.map(IndexedSearchMatchJSON.init))
        } else {
            try printTable(
                results.records, results.unreadable.isEmpty ? "\(nothingFound) \"\(Terminal.clean(text))\"." : nil)
        }
        try finishList(results.list, noun: noun)
    }

    /// An option's value as a whole number, 0 or more; nil when not given.
    private func wholeNumber(_ option: String) throws -> Int? {
        guard let text = arguments.value(option) else { return nil }
        guard let number = Int(text), number >= 0 else {
            throw UsageError(
                message: "--\(option) must be a whole number, 0 or more, not \"\(Terminal.clean(text))\"",
                helpPath: path)
        }
        return number
    }
}
