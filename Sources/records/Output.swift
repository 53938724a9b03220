import Foundation
import RecordsApp

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a command's text goes: standard output for results, standard
/// error for errors and logs.
///
/// Everything is written with `write(2)`, not `print` or `FileHandle`: a
/// failed write is seen at once (stdio's buffer would only fail at exit,
/// unnoticed) and never traps (`FileHandle.write` does on a closed or full
/// descriptor). Every line is passed through ``Terminal/clean(_:)``, so no
/// text, from the database or anywhere else, can send control sequences to
/// the terminal.
enum Console {
    /// Writes `text` and a newline to standard output.
    ///
    /// - Throws: ``OutputError`` when it cannot be written (a full disk, a
    ///   closed pipe, a closed descriptor).
    static func out(_ text: String) throws {
        let code = StandardStream.write(Terminal.cleanLines(text) + "\n", to: STDOUT_FILENO)
        if code != 0 { throw OutputError(code: code) }
    }

    /// Writes `text` and a newline to standard error. A failure is ignored:
    /// there is nowhere left to report it, and the exit status still tells.
    static func error(_ text: String) {
        _ = StandardStream.write(Terminal.cleanLines(text) + "\n", to: STDERR_FILENO)
    }

    /// Writes `text` to standard error without a newline, as a prompt.
    static func prompt(_ text: String) {
        _ = StandardStream.write(Terminal.clean(text), to: STDERR_FILENO)
    }

    /// Prints a value as JSON: compact (one line: `{"id":1,...}`, `[]` for
    /// an empty list), keys sorted, slashes unescaped, and control
    /// characters and bidirectional overrides as `\uXXXX` escapes
    /// (JSONEncoder leaves DEL, C1 controls and overrides raw).
    static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try out(Terminal.jsonEscaped(String(decoding: try encoder.encode(value), as: UTF8.self)))
    }
}

/// Standard output could not be written.
struct OutputError: Error, CustomStringConvertible {
    /// The `errno` of the failed write.
    let code: Int32
    /// What the command had already changed in the database ("coffee 12
    /// was added"), for the message; nil for a command that changed nothing.
    var change: String?
    /// What of the output was lost ("its ID").
    var lost = "its output"

    /// The reader of a pipe went away: `records people list | head -1`.
    var isBrokenPipe: Bool { code == EPIPE }

    var description: String {
        let reason = String(cString: strerror(code))
        guard let change else { return "cannot write to standard output: \(reason)" }
        return "\(change), but \(lost) could not be written to standard output: \(reason)"
    }
}

/// The process's standard descriptors, made safe to write to.
enum StandardStream {
    /// Gets the standard descriptors ready, before anything else runs:
    ///
    /// - `SIGPIPE` is ignored, so that a write to a closed pipe fails with
    ///   `EPIPE`, which the command handles (see ``OutputError``), instead
    ///   of killing the process before it can tell what it had done;
    /// - a closed descriptor 0, 1 or 2 (`2>&-`) is reopened on `/dev/null`,
    ///   read-only, so that no file the command opens takes its number:
    ///   a message for standard error must never land in a picture or
    ///   database file. Writes to it keep failing, as they did when closed.
    static func prepare() {
        signal(SIGPIPE, SIG_IGN)
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(descriptor, F_GETFD) == -1 {
            guard errno == EBADF else { continue }
            // open() takes the lowest free number: this one, since the lower
            // ones were checked first.
            let opened = open("/dev/null", O_RDONLY)
            if opened >= 0 && opened != descriptor {
                _ = dup2(opened, descriptor)
                _ = close(opened)
            }
        }
    }

    /// Writes all of `text` to `descriptor`, retrying after a signal, a
    /// partial write or a full non-blocking pipe.
    ///
    /// - Returns: 0, or the `errno` of the write that failed.
    static func write(_ text: String, to descriptor: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { write(UnsafeRawBufferPointer($0), to: descriptor) }
    }

    /// Writes all of `bytes` to `descriptor`, as ``write(_:to:)`` writes
    /// text.
    ///
    /// - Returns: 0, or the `errno` of the write that failed.
    static func write(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32 {
        guard let base = bytes.baseAddress else { return 0 }
        var offset = 0
        while offset < bytes.count {
            let count = posixWrite(descriptor, base + offset, bytes.count - offset)
            if count > 0 {
                offset += count
                continue
            }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                var waiting = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&waiting, 1, -1)
                continue
            }
            return count < 0 ? errno : EIO
        }
        return 0
    }

    /// Whether standard output is a pipe whose reader has gone: a write
    /// would fail with `EPIPE`. For output written by others (a picture
    /// copied to `-`), whose errors do not carry `errno`.
    static var outputIsBrokenPipe: Bool {
        var status = pollfd(fd: STDOUT_FILENO, events: Int16(POLLOUT), revents: 0)
        guard poll(&status, 1, 0) == 1 else { return false }
        return status.revents & Int16(POLLERR) != 0
    }
}

// The C function under a name that `StandardStream.write` cannot shadow.
private func posixWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

/// A text table with aligned columns.
///
/// ```text
/// ID  FIRST NAME  LAST NAME  AGE
///  1  Ada         Lovelace    36
/// ```
///
/// When ``maximumWidth`` is set (a terminal, see ``Presentation``), long
/// cells are cut to fit with `…`: the widest column shrinks first, and
/// right-aligned columns (IDs, ages, numbers) never do. Without it (a
/// pipe, `--wide`) every cell is printed whole.
struct Table {
    enum Alignment { case left, right }

    struct Column {
        let title: String
        var alignment: Alignment = .left

        /// Whether cells may be cut to fit the width: numbers never are.
        var canShrink: Bool { alignment == .left }
    }

    let columns: [Column]
    var rows: [[String]] = []
    /// The widest line, in terminal columns; nil for no limit.
    var maximumWidth: Int?

    /// A table as wide as the output allows (``Presentation/tableWidth``).
    @MainActor
    init(_ columns: [Column]) {
        self.init(columns, maximumWidth: Presentation.tableWidth)
    }

    init(_ columns: [Column], maximumWidth: Int?) {
        self.columns = columns
        self.maximumWidth = maximumWidth
    }

    mutating func append(_ row: [String]) {
        precondition(row.count == columns.count, "a table row needs one cell per column")
        rows.append(row.map(Terminal.clean))
    }

    /// The layout the rows so far need: for rendering later rows one at a
    /// time with the same widths (a list read in chunks).
    func layout() -> TableLayout {
        let widths = columns.indices.map { column in rows.map { Terminal.width(of: $0[column]) }.max() ?? 0 }
        return TableLayout(columns, contentWidths: widths, maximumWidth: maximumWidth)
    }

    /// The header and every row.
    func render() -> String {
        let layout = layout()
        return ([layout.header()] + rows.map(layout.line)).joined(separator: "\n")
    }
}

/// The column widths of a ``Table``, fixed in advance, so that rows can be
/// printed as they are read: a list streamed in chunks prints its header
/// and first chunk, then each later chunk, all aligned alike.
///
/// With a maximum width, a cell longer than its column is cut with `…`;
/// without one a longer cell is printed whole (and pushes its line's later
/// cells right), since pipes get full values.
struct TableLayout {
    let columns: [Table.Column]
    /// Each column's width, in terminal columns.
    let widths: [Int]
    /// Whether cells are cut to ``widths``.
    let truncates: Bool

    /// Fits columns whose cells are up to `contentWidths` wide (titles
    /// are counted too) into `maximumWidth`, if any.
    init(_ columns: [Table.Column], contentWidths: [Int], maximumWidth: Int?) {
        precondition(contentWidths.count == columns.count, "a table layout needs one width per column")
        self.columns = columns
        var widths = zip(columns, contentWidths).map { max(Terminal.width(of: $0.title), $1) }
        truncates = maximumWidth != nil
        if let maximumWidth {
            let separators = 2 * max(0, columns.count - 1)
            // The narrowest a shrinking column gets: room for a letter or two and "…".
            let narrowest = 4
            while widths.reduce(separators, +) > maximumWidth {
                let candidates = widths.indices.filter { columns[$0].canShrink && widths[$0] > narrowest }
                guard let widest = candidates.max(by: { widths[$0] < widths[$1] }) else { break }
                widths[widest] -= 1
            }
        }
        self.widths = widths
    }

    /// The titles, as a line.
    func header() -> String { line(columns.map(\.title)) }

    /// One row as a line: cells cleaned of control characters, padded,
    /// and cut to their column when the layout truncates.
    func line(_ row: [String]) -> String {
        precondition(row.count == columns.count, "a table row needs one cell per column")
        var line = ""
        for (index, raw) in row.enumerated() {
            var cell = Terminal.clean(raw)
            if truncates { cell = Terminal.truncate(cell, toWidth: widths[index]) }
            let padding = String(repeating: " ", count: max(0, widths[index] - Terminal.width(of: cell)))
            if index > 0 { line += "  " }
            line += columns[index].alignment == .right ? padding + cell : cell + padding
        }
        while line.last == " " { line.removeLast() }
        return line
    }

    /// Several rows, one line each.
    func render(_ rows: [[String]]) -> String { rows.map(line).joined(separator: "\n") }
}

/// How wide the output may be, decided once per run from the environment,
/// the terminal and the global options.
///
/// - Tables: `--wide` (or `--json`) means no limit; otherwise `COLUMNS`
///   when it is set to a positive whole number (even for a pipe: setting it
///   asks for that width), else the width of the terminal standard output
///   is (`TIOCGWINSZ`); standard output that is no terminal gets no limit,
///   so pipes and files get full values.
/// - Help: the same width, or 80 when none is known (a pipe), and at most
///   100, since longer lines are hard to read.
@MainActor
enum Presentation {
    /// The widest table line; nil for no limit.
    static var tableWidth: Int?
    /// The width help text is wrapped to.
    static var helpWidth = defaultHelpWidth

    static let defaultHelpWidth = 80
    static let maximumHelpWidth = 100

    /// Sets the widths for this run.
    static func configure(wide: Bool, environment: [String: String]) {
        let width = Terminal.outputWidth(environment: environment)
        tableWidth = wide ? nil : width
        helpWidth = min(width ?? defaultHelpWidth, maximumHelpWidth)
    }
}

/// Label-value lines, labels aligned:
///
/// ```text
/// ID:          1
/// First name:  Ada
/// ```
func fieldList(_ fields: [(String, String)]) -> String {
    let width = fields.map { $0.0.count + 1 }.max() ?? 0
    return fields.map { label, value in
        (label + ":").padding(toLength: width, withPad: " ", startingAt: 0) + "  " + Terminal.clean(value)
    }.joined(separator: "\n")
}

/// Text made safe and measurable for a terminal.
enum Terminal {
    /// `text` with control characters and bidirectional overrides written as
    /// visible escapes (`\n`, `\u{1B}`), so stored data can neither break
    /// a table's lines nor send commands to the terminal.
    static func clean(_ text: String) -> String {
        // Printable ASCII needs nothing (checked first, byte by byte: the
        // server cleans a log line for every request).
        if text.utf8.allSatisfy({ (0x20..<0x7F).contains($0) }) { return text }
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default: result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return result
    }

    /// `text` cleaned line by line: its line breaks are kept (help, tables,
    /// lists), anything else that is a control character is escaped.
    static func cleanLines(_ text: String) -> String {
        if text.utf8.allSatisfy({ (0x20..<0x7F).contains($0) || $0 == UInt8(ascii: "\n") }) { return text }
        guard text.unicodeScalars.contains(where: { $0 != "\n" && needsEscape($0) }) else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { clean(String($0)) }
            .joined(separator: "\n")
    }

    /// JSON text with each control character (but its line breaks) and
    /// bidirectional override written as a `\uXXXX` escape. Raw ones can
    /// only be inside strings, where the escape means the same character.
    static func jsonEscaped(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: { $0 != "\n" && needsEscape($0) }) else { return json }
        var result = ""
        for scalar in json.unicodeScalars {
            if scalar == "\n" || !needsEscape(scalar) {
                result.unicodeScalars.append(scalar)
            } else {
                // Every such character is in the Basic Multilingual Plane.
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || (0x202A...0x202E).contains(scalar.value)
            || (0x2066...0x2069).contains(scalar.value)
    }

    /// `text` cut to at most `width` terminal columns, ending in `…` when
    /// anything was cut.
    static func truncate(_ text: String, toWidth limit: Int) -> String {
        guard width(of: text) > limit else { return text }
        guard limit > 0 else { return "" }
        var result = ""
        var used = 0
        for character in text {
            let characterWidth = width(of: String(character))
            if used + characterWidth > limit - 1 { break }
            result.append(character)
            used += characterWidth
        }
        return result + "…"
    }

    /// The width of the output: `COLUMNS` when set to a positive whole
    /// number, else the terminal's (`TIOCGWINSZ`) when standard output is
    /// one, else nil.
    static func outputWidth(environment: [String: String]) -> Int? {
        if let text = environment["COLUMNS"], let columns = Int(text.trimmingCharacters(in: .whitespaces)),
            columns > 0
        {
            return columns
        }
        return terminalWidth(of: STDOUT_FILENO)
    }

    /// The width of the terminal `descriptor` is, if it is one.
    static func terminalWidth(of descriptor: Int32) -> Int? {
        guard isatty(descriptor) == 1 else { return nil }
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// How many terminal columns `text` takes: two for East Asian wide and
    /// emoji characters, one for others.
    static func width(of text: String) -> Int {
        text.reduce(0) { total, character in
            guard let first = character.unicodeScalars.first else { return total }
            return total + (isWide(first) ? 2 : 1)
        }
    }

    private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if scalar.properties.isEmojiPresentation { return true }
        return (0x1100...0x115F).contains(value) || (0x2E80...0xA4CF).contains(value)
            || (0xAC00...0xD7A3).contains(value) || (0xF900...0xFAFF).contains(value)
            || (0xFE30...0xFE4F).contains(value) || (0xFF00...0xFF60).contains(value)
            || (0xFFE0...0xFFE6).contains(value) || (0x20000...0x3FFFD).contains(value)
    }
}

/// What every app's `edit` says: `Updated “Ada Lovelace” (ID 1).`, or
/// `Nothing changed: “Ada Lovelace” (ID 1) already has those values.`
/// when the values given were those it had.
func updateMessage(_ record: RecordMention, changed: Bool) -> String {
    changed ? RecordOutcome.updated.message(record) : RecordOutcome.unchanged(record)
}

/// A record as `show --json` prints it: its fields and its `version`, the
/// value a script gives `edit --if-version`.
struct Versioned<Record: Encodable>: Encodable {
    let record: Record
    let version: RecordVersion?

    private enum Key: String, CodingKey { case version }

    func encode(to encoder: any Encoder) throws {
        // The record's own keys first, then the version beside them in the
        // same object.
        try record.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encodeIfPresent(version, forKey: .version)
    }
}
