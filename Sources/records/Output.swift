import Foundation

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

    /// Prints a value as JSON: pretty, keys sorted, slashes unescaped, and
    /// control characters and bidirectional overrides as `\uXXXX` escapes
    /// (JSONEncoder leaves DEL, C1 controls and overrides raw).
    static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
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
        return text.withUTF8 { bytes in
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
struct Table {
    enum Alignment { case left, right }

    struct Column {
        let title: String
        var alignment: Alignment = .left
    }

    let columns: [Column]
    var rows: [[String]] = []

    init(_ columns: [Column]) {
        self.columns = columns
    }

    mutating func append(_ row: [String]) {
        precondition(row.count == columns.count, "a table row needs one cell per column")
        rows.append(row.map(Terminal.clean))
    }

    func render() -> String {
        let all = [columns.map(\.title)] + rows
        let widths = columns.indices.map { column in all.map { Terminal.width(of: $0[column]) }.max() ?? 0 }
        return all.map { cells in
            var line = ""
            for (index, cell) in cells.enumerated() {
                let padding = String(repeating: " ", count: widths[index] - Terminal.width(of: cell))
                if index > 0 { line += "  " }
                line += columns[index].alignment == .right ? padding + cell : cell + padding
            }
            return line.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }.joined(separator: "\n")
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
