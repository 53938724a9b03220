import Foundation
import Testing

@testable import records

/// The first of these paths that is an executable file.
private func installed(_ paths: String...) -> String? {
    paths.first { FileManager.default.isExecutableFile(atPath: $0) }
}

private let bash = installed("/usr/bin/bash", "/bin/bash")
private let zsh = installed("/usr/bin/zsh", "/bin/zsh")
private let fish = installed("/usr/bin/fish", "/bin/fish")
private let groff = installed("/usr/bin/groff")
private let man = installed("/usr/bin/man")

/// Runs a program and returns its status, standard output and standard
/// error.
private func runProgram(_ path: String, _ arguments: [String], in directory: URL? = nil) throws -> RecordsRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "MANWIDTH": "80", "HOME": "/nonexistent"]
    if let directory { process.currentDirectoryURL = directory }
    let sandbox = try Sandbox()
    let out = sandbox.root.appendingPathComponent("out")
    let err = sandbox.root.appendingPathComponent("err")
    _ = FileManager.default.createFile(atPath: out.path, contents: nil)
    _ = FileManager.default.createFile(atPath: err.path, contents: nil)
    let outHandle = try FileHandle(forWritingTo: out)
    let errHandle = try FileHandle(forWritingTo: err)
    process.standardOutput = outHandle
    process.standardError = errHandle
    process.standardInput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    try outHandle.close()
    try errHandle.close()
    return RecordsRun(
        status: process.terminationStatus, stdout: String(decoding: try Data(contentsOf: out), as: UTF8.self),
        stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self))
}

/// Writes `records completion SHELL` to a file in `sandbox`.
private func completionScript(_ shell: String, in sandbox: Sandbox) throws -> String {
    let run = try sandbox.runRaw(["completion", shell])
    try #require(run.status == 0, "\(run)")
    let path = sandbox.path("records.\(shell)")
    try Data(run.stdout.utf8).write(to: URL(fileURLWithPath: path))
    return path
}

@Suite("records: shell completion")
struct CompletionCLITests {
    /// What bash's completion proposes for `words` (the last one being
    /// completed), with the script sourced and `COMP_WORDS` set.
    private func bashCompletions(_ words: [String], sandbox: Sandbox) throws -> [String] {
        let script = try completionScript("bash", in: sandbox)
        let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let program = """
            source '\(script)'
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMPREPLY=()
            _records
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let run = try runProgram(try #require(bash), ["-c", program], in: sandbox.root)
        try #require(run.status == 0 && run.stderr.isEmpty, "\(run)")
        return run.lines
    }

    @Test("The bash script is valid bash", .enabled(if: bash != nil, "bash is not installed"))
    func bashSyntax() throws {
        let sandbox = try Sandbox()
        let run = try runProgram(try #require(bash), ["-n", try completionScript("bash", in: sandbox)])
        #expect(run.status == 0, "\(run)")
    }

    @Test(
        "bash completes the apps, and each app's commands, from the command tables",
        .enabled(if: bash != nil, "bash is not installed"))
    @MainActor
    func bashCompletesCommands() throws {
        let sandbox = try Sandbox()
        let apps = try bashCompletions(["records", ""], sandbox: sandbox)
        #expect(apps == commandFamilies.map(\.name) + topLevelCommands.map(\.name) + ["help"])
        for family in commandFamilies {
            #expect(try bashCompletions(["records", family.name, ""], sandbox: sandbox) == family.commandWords)
        }
        let group = try bashCompletions(["records", "coffee", "picture", ""], sandbox: sandbox)
        #expect(group == ["set", "get", "remove"])
        #expect(try bashCompletions(["records", "--json", "people", "se"], sandbox: sandbox) == ["search"])
    }

    @Test(
        "bash completes options, choice values and file names",
        .enabled(if: bash != nil, "bash is not installed"))
    func bashCompletesOptionsAndValues() throws {
        let sandbox = try Sandbox()
        #expect(
            try bashCompletions(["records", "people", "list", "--sort", ""], sandbox: sandbox)
                == ["name", "age", "newest"])
        #expect(try bashCompletions(["records", "users", "register", "--gender", "f"], sandbox: sandbox) == ["female"])
        #expect(
            try bashCompletions(["records", "coffee", "picture", "get", "1", "--f"], sandbox: sandbox)
                == ["--force"])
        #expect(try bashCompletions(["records", "completion", ""], sandbox: sandbox) == ["bash", "zsh", "fish"])
        try Data().write(to: URL(fileURLWithPath: sandbox.path("espresso.png")))
        #expect(
            try bashCompletions(["records", "coffee", "picture", "set", "1", "espr"], sandbox: sandbox)
                == ["espresso.png"])
        // A free-text value proposes nothing, not file names.
        #expect(try bashCompletions(["records", "people", "add", "--first", "espr"], sandbox: sandbox).isEmpty)
    }

    @Test("The zsh script is valid zsh", .enabled(if: zsh != nil, "zsh is not installed"))
    func zshSyntax() throws {
        let sandbox = try Sandbox()
        let run = try runProgram(try #require(zsh), ["-n", try completionScript("zsh", in: sandbox)])
        #expect(run.status == 0, "\(run)")
    }

    @Test("The fish script is valid fish", .enabled(if: fish != nil, "fish is not installed"))
    func fishSyntax() throws {
        let sandbox = try Sandbox()
        let run = try runProgram(try #require(fish), ["--no-execute", try completionScript("fish", in: sandbox)])
        #expect(run.status == 0, "\(run)")
    }

    @Test("The fish script offers every command of every app")
    @MainActor
    func fishListsCommands() throws {
        let script = try Sandbox().runRaw(["completion", "fish"]).stdout
        for family in commandFamilies {
            for word in family.commandWords {
                #expect(
                    script.contains("__fish_seen_subcommand_from \(family.name);") && script.contains("-a '\(word)'"))
            }
        }
    }

    @Test("An unknown shell is a usage error")
    func unknownShell() throws {
        let run = try Sandbox().runRaw(["completion", "tcsh"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("unknown shell 'tcsh'"))
    }
}

@Suite("records: the manual page")
struct ManualPageCLITests {
    @Test("records man prints a man page with NAME, SYNOPSIS and every command")
    @MainActor
    func structure() throws {
        let run = try Sandbox().runRaw(["man"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasPrefix(".TH RECORDS 1 "))
        for section in [".SH NAME", ".SH SYNOPSIS", ".SH GLOBAL OPTIONS", ".SH COMMANDS", ".SH EXIT STATUS"] {
            #expect(run.stdout.contains("\n\(section)\n"), "\(section)")
        }
        for family in commandFamilies {
            for command in family.commands {
                #expect(run.stdout.contains("\\fBrecords \(family.name) \(command.name)\\fR"), "\(command.name)")
            }
        }
        for command in topLevelCommands { #expect(run.stdout.contains("\\fBrecords \(command.name)\\fR")) }
        // No line may start with a roff control character by accident.
        for line in run.stdout.split(separator: "\n") where line.hasPrefix(".") || line.hasPrefix("'") {
            #expect(line.first == "." && line.dropFirst().prefix { $0.isLetter }.count >= 1, "\(line)")
        }
    }

    @Test("groff formats the page without a warning", .enabled(if: groff != nil, "groff is not installed"))
    func groffAcceptsIt() throws {
        let sandbox = try Sandbox()
        let page = sandbox.path("records.1")
        try Data(try sandbox.runRaw(["man"]).stdout.utf8).write(to: URL(fileURLWithPath: page))
        let run = try runProgram(try #require(groff), ["-man", "-Tutf8", "-ww", "-z", page])
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run)")
    }

    @Test("man -l shows the page with every app's commands", .enabled(if: man != nil, "man is not installed"))
    @MainActor
    func manShowsIt() throws {
        let sandbox = try Sandbox()
        let page = sandbox.path("records.1")
        try Data(try sandbox.runRaw(["man"]).stdout.utf8).write(to: URL(fileURLWithPath: page))
        let run = try runProgram(try #require(man), ["-l", page])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("records people list"))
        #expect(run.stdout.contains("Caffè Latte"))
    }
}
