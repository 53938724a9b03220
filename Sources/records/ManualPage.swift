import Foundation

/// The manual page `records.1`, in roff (the `man` macros), generated from
/// the command tables: every command with its synopsis, arguments, options,
/// discussion and examples.
@MainActor
enum ManualPage {
    static func render() -> String {
        var page = [
            ".TH RECORDS 1 \"\" \"records \(recordsVersion)\" \"User Commands\"",
            ".SH NAME",
            "records \\- the record-keeping apps of the original tutorials, in the terminal",
            ".SH SYNOPSIS",
            ".B records",
            "[\\fIglobal options\\fR] \\fIapp\\fR \\fIcommand\\fR [\\fIarguments\\fR] [\\fIoptions\\fR]",
            ".br",
            ".B records",
            "[\\fIglobal options\\fR] \\fIcommand\\fR [\\fIarguments\\fR] [\\fIoptions\\fR]",
            ".SH DESCRIPTION",
            text(
                "records is the four apps of the original tutorials in the terminal: "
                    + appFamiliesInOrder.map { "\($0.name) (\($0.summary))" }.joined(separator: "; ")
                    + accountCommandFamilies.map { ", with \($0.name) (\($0.summary))" }.joined()
                    + ". The database is created from the shipped sample on first use and upgraded "
                    + "when a new version needs it."),
            ".PP",
            text(
                "Tables fit the terminal: cells too long for its width (COLUMNS, or the terminal's own) are cut "
                    + "with \u{2026}; --wide and --json print them whole, and so does output to a pipe or file. "
                    + "JSON output is one compact document per command."),
            ".SH GLOBAL OPTIONS",
            text(
                "Accepted before the app, between the app and the command, and among the command's options. "
                    + "The word after an option that takes a value is that value, whatever it looks like."),
        ]
        for global in GlobalOptions.definitions {
            page += [".TP", optionTerm(global.name, global.valueName), text(global.help)]
        }
        page += [".TP", "\\fB\\-h\\fR, \\fB\\-\\-help\\fR", "Show help."]
        page.append(".SH COMMANDS")
        for family in commandFamilies {
            page += [".SS \"\(escape(family.name)): \(escape(family.summary))\""]
            for command in family.commands { page += describe(command, after: [family.name]) }
        }
        page.append(".SS \"Whole database and setup\"")
        for command in topLevelCommands { page += describe(command, after: []) }
        page += [
            ".SH EXIT STATUS",
            ".TP", ".B 0",
            text("Success, including a search with no hits (empty output, [] with --json)."),
            ".TP", ".B 1",
            text(
                "A runtime error: a record that is not there, contacts find with no match (\"Match not found\", "
                    + "as in the original tutorial's app), contacts add with a name that exists and no --allow-duplicate, a refused login, an existing file without --force, "
                    + "an unusable or locked database, stored values that cannot be read, output that cannot be "
                    + "written, a delete that was answered no or named an ID that is not there (nothing deleted)."),
            ".TP", ".B 2",
            text(
                "A usage error or invalid input: an unknown command or option, a bad ID, age, price or date, "
                    + "a file that is not a picture or is over the limit, an argument that is not UTF-8, "
                    + "a delete without --yes when standard input is not a terminal."),
            ".TP", ".B 141",
            text("Standard output was a pipe whose reader had gone (records people list | head -1)."),
            ".SH ENVIRONMENT",
            ".TP", ".B RECORDS_DATABASE", text("The database file, unless --database is given."),
            ".TP", ".B XDG_DATA_HOME", text("Where the default database goes: $XDG_DATA_HOME/records/records.sqlite."),
            ".TP", ".B COLUMNS", text("The width tables and help are fitted to, even for a pipe."),
            ".SH FILES",
            ".TP", ".I ~/.local/share/records/records.sqlite",
            text("The default database when XDG_DATA_HOME is not set."),
        ]
        return page.joined(separator: "\n")
    }

    private static func describe(_ command: Command, after words: [String]) -> [String] {
        let name = (["records"] + words + [command.name]).joined(separator: " ")
        var lines = [
            ".TP", "\\fB\(escape(name))\\fR " + command.synopsisUnits.dropFirst().map(escape).joined(separator: " "),
            text(command.summary + "."),
        ]
        for positional in command.positionals {
            lines += [".RS", ".TP", "\\fI\(escape(positional.name))\\fR", text(positional.help), ".RE"]
        }
        for option in command.options {
            lines += [".RS", ".TP", optionTerm(option.name, option.valueName), text(option.help), ".RE"]
        }
        if let discussion = command.discussion {
            lines += [".IP"] + paragraphs(discussion)
        }
        if !command.examples.isEmpty {
            lines += [".IP", "Examples:", ".RS", ".nf"] + command.examples.map(escape) + [".fi", ".RE"]
        }
        return lines
    }

    /// `\fB--name\fR \fIVALUE\fR`
    private static func optionTerm(_ name: String, _ valueName: String?) -> String {
        "\\fB\\-\\-\(escape(name))\\fR" + (valueName.map { " \\fI\(escape($0))\\fR" } ?? "")
    }

    /// Help's paragraphs: lines that start with a space (commands) kept as
    /// they are, the others filled by the formatter.
    private static func paragraphs(_ discussion: String) -> [String] {
        var lines: [String] = []
        var literal = false
        for line in discussion.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let isLiteral = line.hasPrefix(" ")
            if isLiteral != literal {
                lines.append(isLiteral ? ".nf" : ".fi")
                literal = isLiteral
            }
            lines.append(line.isEmpty ? ".sp" : escape(isLiteral ? line : line.trimmingCharacters(in: .whitespaces)))
        }
        if literal { lines.append(".fi") }
        return lines
    }

    /// Prose, escaped, as one input line.
    private static func text(_ prose: String) -> String { escape(prose) }

    /// `text` safe as roff input: backslashes and hyphens escaped, other
    /// characters than ASCII as `\[uXXXX]`, and a line that would start
    /// with a control character protected.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\e"
            case "-": escaped += "\\-"
            // Not ASCII: by its code point, so that no input encoding is assumed.
            case _ where !scalar.isASCII:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                escaped += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }
}
