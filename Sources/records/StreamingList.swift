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

/// Prints a list as it is read. Fed chunk by chunk from the store's reader
/// thread (one chunk at a time), then finished on the command's own.
///
/// `@unchecked Sendable`: its state is only touched under `lock`.
final class StreamingList<Record: Encodable & Sendable>: @unchecked Sendable {
    private let columns: [Table.Column]
    private let cells: (Record) -> [String]
    private let json: Bool
    private let lock = NSLock()
    private var widths: [Int]?
    private var printed = 0
    private var unreadable: [UnreadableRowError] = []
    private var pendingJSON: String?

    /// - Parameters:
    ///   - columns: The text table's columns.
    ///   - json: Print a JSON array instead.
    ///   - cells: A record's cells, one per column.
    init(_ columns: [Table.Column], json: Bool, cells: @escaping (Record) -> [String]) {
        self.columns = columns
        self.json = json
        self.cells = cells
    }

    /// Prints a chunk's records and keeps its unreadable rows for the end.
    func take(_ chunk: RecordList<Record>) throws {
        try lock.withLock {
            unreadable += chunk.unreadable
            guard !chunk.records.isEmpty else { return }
            let text = json ? try jsonLines(chunk.records) : tableLines(chunk.records)
            printed += chunk.records.count
            if let text { try Console.out(text) }
        }
    }

    /// Ends the list: the last element and `]`, or `[]`, for JSON, `empty` for text when nothing
    /// was listed; then warns of each unreadable row.
    ///
    /// - Throws: ``CommandFailure`` when rows could not be read (the others
    ///   were listed).
    func finish(empty: String?, noun: String) throws {
        try lock.withLock {
            if json {
                try Console.out(pendingJSON.map { $0 + "\n]" } ?? "[]")
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

    /// The JSON of every record but the last, which stays pending: its
    /// comma (or the closing bracket) comes with what follows.
    private func jsonLines(_ records: [Record]) throws -> String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var lines: [String] = []
        if printed == 0 { lines.append("[") }
        for record in records {
            if let pendingJSON { lines.append(pendingJSON + ",") }
            let element = Terminal.jsonEscaped(String(decoding: try encoder.encode(record), as: UTF8.self))
            pendingJSON = element.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }
                .joined(separator: "\n")
        }
        return lines.isEmpty ? nil : lines.joined(separator: "\n")
    }

    private func tableLines(_ records: [Record]) -> String {
        let rows = records.map { cells($0).map(Terminal.clean) }
        var lines: [[String]] = rows
        if widths == nil {
            let all = [columns.map(\.title)] + rows
            widths = columns.indices.map { column in all.map { Terminal.width(of: $0[column]) }.max() ?? 0 }
            lines.insert(columns.map(\.title), at: 0)
        }
        let widths = self.widths ?? []
        return lines.map { cells in
            var line = ""
            for (index, cell) in cells.enumerated() {
                let padding = String(repeating: " ", count: max(0, widths[index] - Terminal.width(of: cell)))
                if index > 0 { line += "  " }
                line += columns[index].alignment == .right ? padding + cell : cell + padding
            }
            return line.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }.joined(separator: "\n")
    }
}
