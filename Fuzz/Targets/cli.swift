// Fuzz target: the `records` command line, up to the point where a command
// would open the database: global options, the app and command lookup (with
// groups such as `coffee picture set`), option and positional parsing, the
// help texts, and the validation of every value a command reads.
//
// scripts/fuzz.sh compiles Sources/records (without main.swift) into this
// target, so it tests the shipped parser itself. Commands are not run: a
// fuzzed command line could name any file to read or write.
//
// Input: the arguments, separated by NUL bytes (which no real argument
// contains), as in /proc/PID/cmdline:  people\0add\0--first\0Ada\0...
//
// Invariants: nothing traps; every failure is a usage or validation error
// with a message; what the parser accepts satisfies the command's
// definition (required options present, no unknown option, flags without
// values, the right number of positionals); global options never reach
// the command; help renders for everything that resolves.

import Foundation
import RecordsApp

/// A fixed day, so that dates of birth are judged the same on every run.
private let today = CalendarDate(year: 2026, month: 3, day: 15)!

private func checkUsageError(_ error: UsageError, _ words: [String]) {
    require(!error.message.isEmpty, "a usage error without a message for \(words)")
    // A usage error quotes the word it is about: a newline or an escape
    // sequence in it must not reach the terminal.
    let isControl = { (scalar: Unicode.Scalar) in scalar.properties.generalCategory == .control }
    require(
        !error.message.unicodeScalars.contains(where: isControl),
        "a usage error message with control characters: \(error.message.debugDescription)")
    for word in error.helpPath {
        require(words.contains(word), "help path \(error.helpPath) names a word not given: \(words)")
    }
}

/// Runs `body`; its errors must be the ones the command line reports.
private func expectHandled(_ words: [String], _ body: () throws -> Void) {
    do {
        try body()
    } catch is GlobalOptions.VersionRequest {
        // `--version` among a command's options prints the version.
    } catch let error as UsageError {
        checkUsageError(error, words)
    } catch let error as ValidationError {
        require(!error.description.isEmpty, "a validation error without a message")
    } catch {
        require(false, "\(words): an error the command line does not report as usage: \(type(of: error)): \(error)")
    }
}

/// What each command checks before it opens the database.
private func validate(_ arguments: ParsedArguments, family: String, command: Command, path: [String]) throws {
    let value = { (name: String) in arguments.value(name) }
    let required = { (name: String) in arguments.value(name) ?? "" }
    if command.positionals.first?.name == "ID" {
        _ = try ParsedArguments.recordID(arguments.positionals[0], path: path)
    }
    if let sort = value("sort") {
        switch family {
        case "people": _ = try ParsedArguments.choice(sort, option: "sort", as: PersonSort.self, path: path)
        case "coffee": _ = try ParsedArguments.choice(sort, option: "sort", as: CoffeeSort.self, path: path)
        case "contacts": _ = try ParsedArguments.choice(sort, option: "sort", as: ContactSort.self, path: path)
        case "users": _ = try ParsedArguments.choice(sort, option: "sort", as: UserSort.self, path: path)
        default: require(false, "a --sort option in an unknown app \(family)")
        }
    }
    switch (family, command.name) {
    case ("people", "add"):
        _ = try PersonDraft.parse(firstName: required("first"), lastName: required("last"), age: required("age"))
    case ("people", "edit"):
        _ = try PersonChanges.parse(firstName: value("first"), lastName: value("last"), age: value("age"))
    case ("coffee", "add"):
        _ = try CoffeeDraft.parse(name: required("name"), price: required("price"))
    case ("coffee", "edit"):
        _ = try CoffeeChanges.parse(name: value("name"), price: value("price"))
    case ("contacts", "add"):
        _ = try ContactDraft(name: required("name"), address: required("address"), contact: required("contact"))
            .validated()
    case ("contacts", "edit"):
        _ = try ContactChanges(name: value("name"), address: value("address"), contact: value("contact")).validated()
    case ("users", "register"):
        let form = RegistrationForm(
            firstName: required("first"), lastName: required("last"), email: required("email"),
            password: "correct horse", passwordConfirmation: "correct horse", mobile: required("mobile"),
            state: required("state"), city: required("city"), pincode: required("pincode"),
            address: required("address"), gender: required("gender"), dateOfBirth: required("dob"),
            imageName: required("image"))
        _ = try form.validatedProfile(today: today)
        _ = try form.validated(today: today)
    case ("users", "edit"):
        let changes = ProfileChanges(
            firstName: value("first"), lastName: value("last"), email: value("email"), mobile: value("mobile"),
            state: value("state"), city: value("city"), pincode: value("pincode"), address: value("address"),
            gender: value("gender"), dateOfBirth: value("dob"), imageName: value("image"))
        if !changes.isEmpty { _ = try changes.validated(today: today) }
    default:
        break
    }
}

/// What the parser accepted must fit the command's definition.
private func checkParsed(_ arguments: ParsedArguments, _ command: Command, _ words: [String]) {
    require(
        arguments.positionals.count == command.positionals.count,
        "\(words): \(arguments.positionals.count) positionals for \(command.synopsis)")
    for option in command.options {
        if option.valueName == nil {
            require(arguments.value(option.name) == nil, "\(words): flag --\(option.name) got a value")
        } else {
            require(!arguments.flag(option.name), "\(words): option --\(option.name) taken as a flag")
            if option.isRequired {
                require(arguments.value(option.name) != nil, "\(words): required --\(option.name) missing")
            }
        }
    }
    for word in words where word.hasPrefix("--") && !word.hasPrefix("---") && word != "--" {
        let name = String(word.dropFirst(2).prefix { $0 != "=" })
        if arguments.value(name) != nil || arguments.flag(name) {
            require(command.option(named: name) != nil, "\(words): accepted an unknown option --\(name)")
        }
    }
}

/// `records WORDS...`, as far as parsing goes.
@MainActor
private func parse(_ words: [String]) {
    var globals = GlobalOptions()
    var rest: [String]
    do {
        rest = try globals.consumeLeading(words)
    } catch is GlobalOptions.VersionRequest {
        _ = Help.version
        return
    } catch let error as UsageError {
        checkUsageError(error, words)
        return
    } catch {
        require(false, "GlobalOptions threw \(type(of: error))")
        return
    }
    if let first = rest.first {
        for global in ["--debug", "--version", "--database", "--json", "--wide", "--adopt"] {
            require(first != global, "\(words): global option \(global) left for the app's name")
        }
        require(!first.hasPrefix("--database="), "\(words): --database= left for the app's name")
    }

    if rest.first == "help" || rest.first == "-h" || rest.first == "--help" {
        rest.removeFirst()
        if rest.isEmpty {
            _ = Help.main
            return
        }
    }
    guard let familyName = rest.first else { return }
    guard let family = commandFamilies.first(where: { $0.name == familyName }) else { return }
    do {
        rest = [familyName] + (try globals.consumeLeading(Array(rest.dropFirst())))
    } catch is GlobalOptions.VersionRequest {
        return
    } catch let error as UsageError {
        checkUsageError(error, words)
        return
    } catch {
        require(false, "GlobalOptions threw \(type(of: error))")
        return
    }
    guard rest.count > 1 else {
        _ = Help.family(family)
        return
    }
    expectHandled(words) {
        switch try family.lookup(Array(rest.dropFirst())) {
        case .group(let group, _):
            require(!family.commands(inGroup: group).isEmpty, "\(words): group \(group) has no commands")
            _ = Help.family(family, group: group)
        case .command(let command, let wordCount):
            let path = [family.name] + rest.dropFirst().prefix(wordCount)
            require(path.dropFirst().joined(separator: " ") == command.name, "\(words): \(path) is not \(command.name)")
            _ = Help.command(command, in: family)
            let arguments = try ParsedArguments(
                Array(rest.dropFirst(path.count)), for: command, path: path, globals: &globals)
            if arguments.wantsHelp { return }
            checkParsed(arguments, command, words)
            try validate(arguments, family: family.name, command: command, path: path)
        }
    }
}

/// What tables and messages do with the words: control characters made
/// visible, widths counted, cells cut to a narrow terminal.
private func render(_ words: [String]) {
    var table = Table([.init(title: "WORD"), .init(title: "WIDTH", alignment: .right)], maximumWidth: 24)
    for word in words {
        let clean = Terminal.clean(word)
        require(
            !clean.unicodeScalars.contains { $0.properties.generalCategory == .control },
            "a control character survived Terminal.clean: \(clean.debugDescription)")
        let width = Terminal.width(of: clean)
        require(width >= 0 && width <= 2 * clean.count, "width \(width) for \(clean.debugDescription)")
        table.append([word, String(width)])
        _ = editDistance(word, "people")
    }
    _ = table.render()
    _ = fieldList(words.map { ($0, $0) })
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let words =
        size == 0
        ? []
        : bytes.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
    MainActor.assumeIsolated {
        parse(words)
        render(words)
    }
    return 0
}
