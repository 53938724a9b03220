import Foundation
import RecordsApp
import SQLiteStore

/// The version `records --version` prints.
let recordsVersion = "0.1.0"

/// The help texts, built from the command tables (``commandFamilies``,
/// ``topLevelCommands``, ``GlobalOptions/definitions``) and wrapped to
/// ``Presentation/helpWidth``: descriptions continue under themselves,
/// paragraphs are reflowed, and long examples are continued with `\` so
/// that they can still be pasted into a shell.
@MainActor
enum Help {
    static var version: String {
        "records \(recordsVersion) (SQLite \(Database.sqliteVersion))"
    }

    static var main: String {
        let width = Presentation.helpWidth
        var rows = commandFamilies.flatMap { family in
            family.commands.map { ("\(family.name) \($0.name)", $0.summary) }
        }
        rows += topLevelCommands.map { ($0.name, $0.summary) }
        return [
            reflow("records - the record-keeping apps of the original tutorials, in the terminal", width: width),
            "",
            usage("records [global options] <app> <command> [arguments] [options]", width: width),
            "",
            "Commands:",
            columns(rows, width: width),
            "",
            reflow("Global options (anywhere before --, also after the app or the command):", width: width),
            columns(globalOptionRows, width: width),
            "",
            reflow(
                "The database is created from the shipped sample on first use and upgraded "
                    + "when a new version needs it. By default it is \(defaultLocationDescription).",
                width: width),
            "",
            reflow(
                "Run 'records <app> --help' or 'records <app> <command> --help' for details; "
                    + "'records completion bash|zsh|fish' for shell completion, 'records man' for the manual page.",
                width: width),
        ].joined(separator: "\n")
    }

    /// The help of a family, or of a group of its commands (`coffee picture`).
    static func family(_ family: CommandFamily, group: String? = nil) -> String {
        let width = Presentation.helpWidth
        let listed = group.map { family.commands(inGroup: $0) } ?? family.commands
        let commands = listed.map { command in
            (wrap(words: command.synopsisUnits, width: width, first: "  ", rest: "    ")
                + wrap(command.summary, width: width, first: "      ", rest: "      ")).joined(separator: "\n")
        }.joined(separator: "\n")
        let name = [family.name, group].compactMap { $0 }.joined(separator: " ")
        let summary = group.map { family.groupSummaries[$0] ?? "commands" } ?? family.summary
        return [
            wrap("records \(name) - \(summary)", width: width, first: "", rest: "    ").joined(separator: "\n"),
            "",
            usage("records [global options] \(name) <command> [arguments] [options]", width: width),
            "",
            "Commands:",
            commands,
            "",
            reflow("Run 'records \(name) <command> --help' for a command's options and examples.", width: width),
        ].joined(separator: "\n")
    }

    static func command(_ command: Command, in family: CommandFamily) -> String {
        Self.command(command, after: [family.name])
    }

    /// The help of a command, given the words before it (its app, or none
    /// for a top-level command such as `records backup`).
    static func command(_ command: Command, after words: [String]) -> String {
        let width = Presentation.helpWidth
        let prefix = words.map { $0 + " " }.joined()
        var text =
            wrap("records \(prefix)\(command.name) - \(command.summary)", width: width, first: "", rest: "    ")
            .joined(separator: "\n") + "\n\n"
            + wrap(
                words: ["records", "[global options]"] + words + command.synopsisUnits, width: width,
                first: "Usage: ", rest: "         "
            ).joined(separator: "\n")
        if !command.positionals.isEmpty {
            text += "\n\nArguments:\n" + columns(command.positionals.map { ($0.name, $0.help) }, width: width)
        }
        if !command.options.isEmpty {
            let options = command.options.map { option in
                ("--" + option.name + (option.valueName.map { " " + $0 } ?? ""), option.help)
            }
            text += "\n\nOptions:\n" + columns(options, width: width)
        }
        if let discussion = command.discussion {
            text += "\n\n" + reflow(discussion, width: width)
        }
        if !command.examples.isEmpty {
            text += "\n\nExamples:\n" + command.examples.map { shellLines($0, width: width) }.joined(separator: "\n")
        }
        return text
    }

    /// The global options as help rows: `--database PATH`, ..., `-h, --help`.
    static var globalOptionRows: [(String, String)] {
        var rows = GlobalOptions.definitions.map { ("--" + $0.name + ($0.valueName.map { " " + $0 } ?? ""), $0.help) }
        rows.insert(("-h, --help", "Show help"), at: rows.count - 1)
        return rows
    }

    private static var defaultLocationDescription: String {
        #if canImport(Darwin)
            "~/Library/Application Support/records/records.sqlite"
        #else
            "$XDG_DATA_HOME/records/records.sqlite (~/.local/share/records/records.sqlite when XDG_DATA_HOME is not set)"
        #endif
    }

    // MARK: - Wrapping

    /// "Usage: ..." wrapped, continued under the command.
    private static func usage(_ line: String, width: Int) -> String {
        wrap(line, width: width, first: "Usage: ", rest: "         ").joined(separator: "\n")
    }

    /// Two aligned columns, indented; a description too long for its line
    /// continues under itself, or, when the first column leaves it too
    /// little room, starts on the next line.
    static func columns(_ rows: [(String, String)], width: Int) -> String {
        let nameWidth = rows.map { Terminal.width(of: $0.0) }.max() ?? 0
        let indent = 2 + nameWidth + 2
        return rows.map { name, description in
            let padded = "  " + name + String(repeating: " ", count: nameWidth - Terminal.width(of: name)) + "  "
            if width - indent >= 24 {
                return wrap(description, width: width, first: padded, rest: String(repeating: " ", count: indent))
                    .joined(separator: "\n")
            }
            return (["  " + name] + wrap(description, width: width, first: "      ", rest: "      "))
                .joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// Paragraphs (separated by blank lines) refilled to `width`; lines
    /// that start with a space (commands, lists) are kept as they are.
    static func reflow(_ text: String, width: Int) -> String {
        var output: [String] = []
        var paragraph: [String] = []
        func flush() {
            guard !paragraph.isEmpty else { return }
            output += wrap(paragraph.joined(separator: " "), width: width, first: "", rest: "")
            paragraph = []
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.isEmpty {
                flush()
                output.append("")
            } else if line.hasPrefix(" ") {
                flush()
                output.append(line)
            } else {
                paragraph.append(line.trimmingCharacters(in: .whitespaces))
            }
        }
        flush()
        return output.joined(separator: "\n")
    }

    /// `text`'s words filled into lines of at most `width` columns, the
    /// first starting with `first`, the others with `rest`. A word longer
    /// than a line has one of its own.
    static func wrap(_ text: String, width: Int, first: String, rest: String) -> [String] {
        wrap(words: text.split(separator: " ").map(String.init), width: width, first: first, rest: rest)
    }

    /// `words` filled into lines, as ``wrap(_:width:first:rest:)``; a word
    /// may hold spaces (`[--sort name|age]`) and is never split.
    static func wrap(words: [String], width: Int, first: String, rest: String) -> [String] {
        var lines: [String] = []
        var line = first
        var lineHasWord = false
        for word in words {
            if lineHasWord && Terminal.width(of: line) + 1 + Terminal.width(of: word) > width {
                lines.append(line)
                line = rest
                lineHasWord = false
            }
            line += (lineHasWord ? " " : "") + word
            lineHasWord = true
        }
        lines.append(line)
        return lines
    }

    /// A shell command, indented by two, split at spaces outside quotes
    /// into lines ending in ` \` when it is too long for `width`: pasted
    /// into a shell, it runs as written.
    static func shellLines(_ command: String, width: Int) -> String {
        // The words, with their quoted parts kept whole.
        var words: [String] = []
        var word = ""
        var quote: Character?
        for character in command {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == " " {
                if !word.isEmpty { words.append(word) }
                word = ""
                continue
            }
            word.append(character)
        }
        if !word.isEmpty { words.append(word) }
        var lines: [String] = []
        var line = "  "
        var lineHasWord = false
        for word in words {
            // Room for " \" at the end of a line that is continued.
            if lineHasWord && Terminal.width(of: line) + 1 + Terminal.width(of: word) + 2 > width {
                lines.append(line + " \\")
                line = "      "
                lineHasWord = false
            }
            line += (lineHasWord ? " " : "") + word
            lineHasWord = true
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}
