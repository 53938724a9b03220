import Foundation
import RecordsApp

// Lists printed as their rows arrive from the store, chunk by chunk, so
// that `records people list | head -1` prints at once and memory stays
// flat however long the list: the text table takes its column widths from
// the first chunk (a longer cell later only makes its own line longer);
// JSON is one array, written element by element.

extension Command.Option {
    /// `--limit N`.
    static let limit = Command.Option(name: "limit", valueName: "N", help: "Show at most N rows")
    /// `--offset N`.
    static let offset = Command.Option(name: "offset", valueName: "N", help: "Skip the first N rows")
    /// `--order asc|desc`.
    static let order = Command.Option(
        name: "order", valueName: "asc|desc",
        help: "Run the --sort order up (asc) or down (desc); by default the order's own way (newest: desc, "
            + "the others: asc). Unknown values (an age, a price) stay last either way")
}

extension Invocation {
    /// The direction `--order` asks for `sort` to run; the order's own
    /// when not given.
    ///
    /// - Throws: ``UsageError`` for a value other than `asc` or `desc`.
    func direction<Sort: RecordSort>(for sort: Sort) throws -> SortDirection {
        try choice("order", default: sort.defaultDirection)
    }
}

extension Invocation {
    /// The page `--limit` and `--offset` ask for; all rows by default.
    ///
    /// - Throws: ``UsageError`` for a value that is not a whole number from 0.
    func page() throws -> ListPage {
        func count(_ option: String) throws -> Int? {
            guard let text = arguments.value(option) else { return nil }
            guard let value = Int(text), value >= 0 else {
                throw UsageError(
                    message: "option '--\(option)' needs a whole number from 0, not '\(Terminal.clean(text))'",
                    helpPath: path)
            }
            return value
        }
        return ListPage(limit: try count("limit"), offset: try count("offset") ?? 0)
    }
}

extension Invocation {
    /// Ends an app's list. When the page (`--offset`, `--limit 0`) left out
    /// every row of a list that has some, says so on standard error, with
    /// how many there are, rather than `empty`, the hint for an empty
    /// table: standard output stays empty, as a script paging through the
    /// list expects at the end.
    ///
    /// - Parameters:
    ///   - empty: The text for a list with no rows at all.
    ///   - noun: "people", for messages.
    ///   - count: How many rows the list has without the page.
    func finish<Record: Encodable & Sendable>(
        _ list: StreamingList<Record>, empty: String, noun: String, count: () async throws -> Int
    ) async throws {
        let page = try page()
        guard list.taken == 0, page.offset > 0 || page.limit == 0 else {
            try list.finish(empty: empty, noun: noun)
            return
        }
        let total = try await count()
        guard total > 0 else {
            try list.finish(empty: empty, noun: noun)
            return
        }
        try list.finish(empty: nil, noun: noun)
        if wantsJSON { return }
        let there = total == 1 ? "there is 1" : "there are \(total)"
        if page.limit == 0 {
            Console.error("No \(noun) shown, as --limit 0 asks for none; \(there).")
        } else {
            Console.error("No \(noun) at offset \(page.offset); \(there).")
        }
    }
}

/// Prints a list as it is read. Fed chunk by chunk from the store's reader
/// thread (one chunk at a time), then finished on the command's own.
///
/// The text table is laid out from the first chunk and fitted to the
/// output's width (``Presentation/tableWidth``, as for every table): later
/// rows keep those widths, cut with "…" on a terminal. JSON is one compact
/// array on one line, as ``Console/json(_:)`` prints, written element by
/// element.
///
/// `@unchecked Sendable`: its state is only touched under `lock`.
final class StreamingList<Record: Encodable & Sendable>: @unchecked Sendable {
    private let columns: [Table.Column]
    private let cells: (Record) -> [String]
    private let json: Bool
    private let maximumWidth: Int?
    private let lock = NSLock()
    private var layout: TableLayout?
    private var printed = 0
    private var unreadable: [UnreadableRowError] = []

    /// - Parameters:
    ///   - columns: The text table's columns.
    ///   - json: Print a JSON array instead.
    ///   - cells: A record's cells, one per column.
    @MainActor
    init(_ columns: [Table.Column], json: Bool, cells: @escaping (Record) -> [String]) {
        self.columns = columns
        self.json = json
        self.cells = cells
        self.maximumWidth = Presentation.tableWidth
    }

    /// Prints a chunk's records and keeps its unreadable rows for the end.
    func take(_ chunk: RecordList<Record>) throws {
        try lock.withLock {
            unreadable += chunk.unreadable
            guard !chunk.records.isEmpty else { return }
            if json {
                try write(try jsonElements(chunk.records))
            } else {
                try Console.out(tableLines(chunk.records))
            }
            printed += chunk.records.count
        }
    }

    /// Ends the list: `]`, or `[]`, for JSON, `empty` for text when nothing
    /// was listed; then warns of each unreadable row.
    ///
    /// - Throws: ``CommandFailure`` when rows could not be read (the others
    ///   were listed).
    func finish(empty: String?, noun: String) throws {
        try lock.withLock {
            if json {
                try write(printed == 0 ? "[]\n" : "]\n")
            } else if printed == 0 && unreadable.isEmpty, let empty {
                try Console.out(empty)
            }
            guard !unreadable.isEmpty else { return }
            for row in unreadable { Console.error("records: warning: \(row)") }
            throw CommandFailure(
                message: "\(unreadable.count) of \(unreadable.count + printed) \(noun) could not be read (see above); "
                    + "the others were listed")
        }
    }

    /// How many rows were taken so far, readable or not.
    var taken: Int { lock.withLock { printed + unreadable.count } }

    /// Prints records already read (a page of search results) as one
    /// chunk, then ends the list.
    func print(_ records: [Record], empty: String?, noun: String) throws {
        try take(RecordList(records: records))
        try finish(empty: empty, noun: noun)
    }

    /// Writes JSON text as it is: it holds no newline or control character
    /// (``Terminal/jsonEscaped(_:)`` escaped them).
    private func write(_ text: String) throws {
        let code = StandardStream.write(text, to: STDOUT_FILENO)
        if code != 0 { throw OutputError(code: code) }
    }

    /// The chunk's elements, each after `[` (the first of the list) or `,`.
    private func jsonElements(_ records: [Record]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var text = ""
        for (index, record) in records.enumerated() {
            text += printed == 0 && index == 0 ? "[" : ","
            text += Terminal.jsonEscaped(String(decoding: try encoder.encode(record), as: UTF8.self))
        }
        return text
    }

    private func tableLines(_ records: [Record]) -> String {
        let rows = records.map(cells)
        var lines: [String] = []
        if layout == nil {
            let contentWidths = columns.indices.map { column in
                rows.map { Terminal.width(of: Terminal.clean($0[column])) }.max() ?? 0
            }
            let fitted = TableLayout(columns, contentWidths: contentWidths, maximumWidth: maximumWidth)
            layout = fitted
            lines.append(fitted.header())
        }
        guard let layout else { return "" }
        lines += rows.map(layout.line)
        return lines.joined(separator: "\n")
    }
}
