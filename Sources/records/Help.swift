import Foundation
import RecordsApp
import SQLiteStore

/// The version `records --version` prints.
let recordsVersion = "0.1.0"

enum Help {
    static var version: String {
        "records \(recordsVersion) (SQLite \(Database.sqliteVersion))"
    }

    static var main: String {
        var rows = commandFamilies.flatMap { family in
            family.commands.map { ("\(family.name) \($0.name)", $0.summary) }
        }
        rows += topLevelCommands.map { ($0.name, $0.summary) }
        return """
            records - the record-keeping apps of the original tutorials, in the terminal

            Usage: records [--database PATH] <app> <command> [arguments] [options]

            Commands:
            \(columns(rows))

            Global options:
            \(columns(globalOptions))

            The database is created from the shipped sample on first use and upgraded
            when a new version needs it. By default it is \(defaultLocationDescription).

            Run 'records <app> --help' or 'records <app> <command> --help' for details.
            """
    }

    /// The help of a family, or of a group of its commands (`coffee picture`).
    static func family(_ family: CommandFamily, group: String? = nil) -> String {
        let listed = group.map { family.commands(inGroup: $0) } ?? family.commands
        let commands = listed.map { command in
            "  " + command.synopsis + "\n      " + command.summary
        }.joined(separator: "\n")
        let name = [family.name, group].compactMap { $0 }.joined(separator: " ")
        return """
            records \(name) - \(group.map { family.groupSummaries[$0] ?? "commands" } ?? family.summary)

            Usage: records [--database PATH] \(name) <command> [arguments] [options]

            Commands:
            \(commands)

            Run 'records \(name) <command> --help' for a command's options and examples.
            """
    }

    static func command(_ command: Command, in family: CommandFamily) -> String {
        Self.command(command, after: [family.name])
    }

    /// The help of a command, given the words before it (its app, or none
    /// for a top-level command such as `records backup`).
    static func command(_ command: Command, after words: [String]) -> String {
        let prefix = words.map { $0 + " " }.joined()
        var text = """
            records \(prefix)\(command.name) - \(command.summary)

            Usage: records [--database PATH] \(prefix)\(command.synopsis)
            """
        if !command.positionals.isEmpty {
            text += "\n\nArguments:\n" + columns(command.positionals.map { ($0.name, $0.help) })
        }
        if !command.options.isEmpty {
            let options = command.options.map { option in
                ("--" + option.name + (option.valueName.map { " " + $0 } ?? ""), option.help)
            }
            text += "\n\nOptions:\n" + columns(options)
        }
        if let discussion = command.discussion {
            text += "\n\n" + discussion
        }
        if !command.examples.isEmpty {
            text += "\n\nExamples:\n" + command.examples.map { "  " + $0 }.joined(separator: "\n")
        }
        return text
    }

    private static let globalOptions = [
        ("--database PATH", "Use this database file (or set RECORDS_DATABASE)"),
        ("--adopt", "Open another application's SQLite file anyway, adding the apps' tables to it"),
        ("--debug", "Log every SQL statement and error to standard error"),
        ("-h, --help", "Show help"),
        ("--version", "Show the version"),
    ]

    private static var defaultLocationDescription: String {
        #if canImport(Darwin)
            "~/Library/Application Support/records/records.sqlite"
        #else
            "$XDG_DATA_HOME/records/records.sqlite\n(~/.local/share/records/records.sqlite when XDG_DATA_HOME is not set)"
        #endif
    }

    /// Two aligned columns, indented.
    private static func columns(_ rows: [(String, String)]) -> String {
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { "  " + $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }
            .joined(separator: "\n")
    }
}
