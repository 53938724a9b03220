import Foundation
import RecordsApp

/// A group of commands for one app: `records people ...`.
struct CommandFamily {
    /// The app whose commands these are; nil for a family of the whole
    /// database's (`remote`).
    let app: AppDatabase.App?
    /// One line for `records --help`.
    let summary: String
    /// The commands, in the order help lists them.
    let commands: [Command]
    /// One line for the help of each group of commands (`picture`).
    var groupSummaries: [String: String] = [:]
    /// The word that selects a family that is not an app's own records
    /// (`token`, for the Users app's tokens for programs); nil for an app's.
    var familyName: String? = nil

    /// The word that selects the family: the app's name ("people"), or
    /// ``familyName``.
    var name: String { familyName ?? app?.rawValue ?? "" }

    func command(named name: String) -> Command? { commands.first { $0.name == name } }

    /// The first word of each command's name, once each, in order: a group
    /// of commands such as `picture set` and `picture get` is `picture`.
    var commandWords: [String] {
        var seen = Set<String>()
        return commands.map { String($0.name.prefix { $0 != " " }) }.filter { seen.insert($0).inserted }
    }

    /// The commands of a group (`picture` has `picture set`, ...); empty
    /// when `group` is not one.
    func commands(inGroup group: String) -> [Command] {
        commands.filter { $0.name.hasPrefix(group + " ") }
    }

    /// What the words after the family's name select.
    enum Lookup {
        /// A command, named by the first `wordCount` words.
        case command(Command, wordCount: Int)
        /// A group without one of its commands (help when `wantsHelp`).
        case group(String, wantsHelp: Bool)
    }

    /// Finds the command that `words` name: one word, or a group and one
    /// of its commands (`picture set`).
    ///
    /// - Throws: ``UsageError`` for an unknown command.
    func lookup(_ words: [String]) throws -> Lookup {
        let first = words.first ?? ""
        if let command = command(named: first) { return .command(command, wordCount: 1) }
        let group = commands(inGroup: first)
        guard !group.isEmpty else {
            throw unknownCommand(first, in: name, choices: commandWords, helpPath: [name])
        }
        let second = words.count > 1 ? words[1] : ""
        if second.isEmpty || second.hasPrefix("-") {
            return .group(first, wantsHelp: second == "-h" || second == "--help")
        }
        guard let command = command(named: first + " " + second) else {
            let choices = group.map { String($0.name.dropFirst(first.count + 1)) }
            throw unknownCommand(second, in: "\(name) \(first)", choices: choices, helpPath: [name, first])
        }
        return .command(command, wordCount: 2)
    }

    private func unknownCommand(_ word: String, in owner: String, choices: [String], helpPath: [String])
        -> UsageError
    {
        let close = choices.first { editDistance($0, word) <= 2 }.map { "; did you mean '\($0)'?" } ?? ""
        return UsageError(
            message: "unknown command '\(word)' for '\(owner)': choose \(choices.joined(separator: ", "))\(close)",
            helpPath: helpPath)
    }
}

/// One command: its arguments, its help, and what it does.
struct Command {
    /// A positional argument.
    struct Positional {
        let name: String
        let help: String
        /// Takes all remaining words, joined with spaces (`search ada lovelace`).
        var takesRest = false
    }

    /// An option: `--name VALUE`, `--name=VALUE`, or a flag `--name`.
    struct Option {
        let name: String
        /// The placeholder for the value; nil for a flag.
        let valueName: String?
        let help: String
        var isRequired = false

        static func flag(_ name: String, _ help: String) -> Option {
            Option(name: name, valueName: nil, help: help)
        }

        static let json = Option.flag("json", "Print JSON instead of text")
        /// `--if-version V`: write only if the record is still at version V.
        static let ifVersion = Option(
            name: "if-version", valueName: "VERSION",
            help: "Change the record only if it is still at this version (as 'show' prints it); "
                + "if someone changed it since, change nothing and fail")

        var synopsis: String {
            let text = valueName.map { "--\(name) \($0)" } ?? "--\(name)"
            return isRequired ? text : "[\(text)]"
        }
    }

    let name: String
    let summary: String
    var positionals: [Positional] = []
    var options: [Option] = []
    /// More explanation for the command's own help, if any.
    var discussion: String?
    var examples: [String] = []
    let run: @MainActor (Invocation) async throws -> Void

    /// `show ID [--json]`
    var synopsis: String { synopsisUnits.joined(separator: " ") }

    /// The parts of ``synopsis`` that help never splits across lines:
    /// `show`, `ID`, `[--json]`.
    var synopsisUnits: [String] {
        [name] + positionals.map { $0.takesRest ? "\($0.name)..." : $0.name } + options.map(\.synopsis)
    }

    func option(named name: String) -> Option? { options.first { $0.name == name } }
}

/// A mistake in how the command was called: exit status 2.
struct UsageError: Error, CustomStringConvertible {
    /// One line: control characters in the words it quotes (a newline or
    /// an escape sequence typed as an argument) are written as escapes.
    let message: String
    /// The words after `records` whose help would show the right usage.
    let helpPath: [String]

    init(message: String, helpPath: [String]) {
        self.message = Terminal.clean(message)
        self.helpPath = helpPath
    }

    var description: String { message }
}

/// The arguments of one command, checked against its definition.
struct ParsedArguments {
    private(set) var values: [String: String] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []

    /// Whether the arguments asked for help (`-h`, `--help`).
    private(set) var wantsHelp = false

    /// Parses `words` for `command`; `path` is the family and command, for
    /// messages. Global options among them (`--json` where the command has
    /// no such option of its own, `--database PATH`, ...) go to `globals`.
    init(_ words: [String], for command: Command, path: [String], globals: inout GlobalOptions) throws {
        func usage(_ message: String) -> UsageError { UsageError(message: message, helpPath: path) }
        var index = 0
        var onlyPositionals = false
        var loose: [String] = []
        while index < words.count {
            let word = words[index]
            index += 1
            // "-5" is a (bad) value, not an option.
            if onlyPositionals || !word.hasPrefix("-") || word == "-" || Int(word) != nil {
                loose.append(word)
                continue
            }
            if word == "--" {
                onlyPositionals = true
                continue
            }
            if word == "-h" || word == "--help" {
                wantsHelp = true
                continue
            }
            guard word.hasPrefix("--") else {
                throw usage("unknown option '\(word)'\(Self.suggestion(for: word, in: command))")
            }
            var name = String(word.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = command.option(named: name) else {
                let used = try globals.consume(words, at: index - 1)
                if used > 0 {
                    index += used - 1
                    continue
                }
                throw usage("unknown option '--\(name)'\(Self.suggestion(for: name, in: command))")
            }
            if values[name] != nil || flags.contains(name) {
                throw usage("option '--\(name)' is given more than once")
            }
            if option.valueName == nil {
                if inlineValue != nil { throw usage("option '--\(name)' takes no value") }
                flags.insert(name)
                continue
            }
            if let inlineValue {
                values[name] = inlineValue
            } else if index < words.count {
                values[name] = words[index]
                index += 1
            } else {
                throw usage("option '--\(name)' needs a value (\(option.valueName ?? "VALUE"))")
            }
        }
        if wantsHelp { return }
        let missing = command.options.filter { $0.isRequired && values[$0.name] == nil }
        if !missing.isEmpty {
            let names = missing.map { "'--\($0.name) \($0.valueName ?? "")'" }.joined(separator: ", ")
            throw usage("missing required option\(missing.count == 1 ? "" : "s") \(names)")
        }
        for (position, positional) in command.positionals.enumerated() {
            guard position < loose.count else { throw usage("missing \(positional.name)") }
            if positional.takesRest {
                positionals.append(loose[position...].joined(separator: " "))
                loose.removeAll()
                break
            }
            positionals.append(loose[position])
        }
        if loose.count > command.positionals.count {
            let extra = loose[command.positionals.count...].map { "'\($0)'" }.joined(separator: ", ")
            throw usage("unexpected argument\(loose.count - command.positionals.count == 1 ? "" : "s") \(extra)")
        }
    }

    /// The value of an option, if given.
    func value(_ name: String) -> String? { values[name] }

    /// Whether a flag was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// A record ID: a positive whole number.
    static func recordID(_ text: String, path: [String]) throws -> Int64 {
        guard let id = Int64(text), id > 0 else {
            throw UsageError(message: "ID must be a positive whole number, not '\(text)'", helpPath: path)
        }
        return id
    }

    /// One of an enumeration's raw values.
    static func choice<T: RawRepresentable & CaseIterable>(
        _ text: String, option: String, as type: T.Type, path: [String]
    ) throws -> T where T.RawValue == String {
        guard let value = T(rawValue: text) else {
            let choices = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError(message: "invalid value '\(text)' for --\(option): choose \(choices)", helpPath: path)
        }
        return value
    }

    private static func suggestion(for word: String, in command: Command) -> String {
        let name = word.drop { $0 == "-" }
        // A typo, or the start of a longer name ("--password" for "--password-stdin").
        let close = command.options.map(\.name).filter {
            editDistance($0, String(name)) <= 2 || (name.count >= 3 && $0.hasPrefix(name))
        }
        return close.first.map { "; did you mean '--\($0)'?" } ?? ""
    }
}

/// The Levenshtein distance, for "did you mean" suggestions.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    if a.isEmpty { return b.count }
    var previous = Array(0...b.count)
    for (i, left) in a.enumerated() {
        var current = [i + 1]
        for (j, right) in b.enumerated() {
            current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (left == right ? 0 : 1)))
        }
        previous = current
    }
    return previous[b.count]
}
