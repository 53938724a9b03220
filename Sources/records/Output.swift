import Foundation

/// Where a command's text goes: standard output for results, standard
/// error for errors and logs.
enum Console {
    static func out(_ text: String) {
        print(text)
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Prints a value as JSON: pretty, keys sorted, slashes unescaped.
    static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        out(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
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
