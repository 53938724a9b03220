import Foundation
import TestSupport
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
private func runProgram(_ path: String, _ arguments: [String], in directory: URL? = nil) async throws -> RecordsRun {
    let run = try await ChildProcess.run(
        URL(fileURLWithPath: path), arguments,
        environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "MANWIDTH": "80", "HOME": "/nonexistent"],
        directory: directory)
    return RecordsRun(status: run.status, stdout: run.output, stderr: run.errors)
}

/// Writes `records completion SHELL` to a file in `sandbox`.
private func completionScript(_ shell: String, in sandbox: Sandbox) async throws -> String {
    let run = try await sandbox.runRaw(["completion", shell])
    try #require(run.status == 0, "\(run)")
    let path = sandbox.path("records.\(shell)")
    try Data(run.stdout.utf8).write(to: URL(fileURLWithPath: path))
    return path
}

@Suite("records: shell completion")
struct CompletionCLITests {
    /// What bash's completion proposes for `words` (the last one being
    /// completed), with the script sourced and `COMP_WORDS` set.
    private func bashCompletions(_ words: [String], sandbox: Sandbox) async throws -> [String] {
        let script = try await completionScript("bash", in: sandbox)
        let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let program = """
            source '\(script)'
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMPREPLY=()
            _records
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let run = try await runProgram(try #require(bash), ["-c", program], in: sandbox.root)
        try #require(run.status == 0 && run.stderr.isEmpty, "\(run)")
        return run.lines
    }

    @Test("The bash script is valid bash", .enabled(if: bash != nil, "bash is not installed"))
    func bashSyntax() async throws {
        let sandbox = try Sandbox()
        let run = try await runProgram(try #require(bash), ["-n", try await completionScript("bash", in: sandbox)])
        #expect(run.status == 0, "\(run)")
    }

    @Test(
        "bash completes the apps, and each app's commands, from the command tables",
        .enabled(if: bash != nil, "bash is not installed"))
    @MainActor
    func bashCompletesCommands() async throws {
        let sandbox = try Sandbox()
        let apps = try await bashCompletions(["records", ""], sandbox: sandbox)
        #expect(apps == commandFamilies.map(\.name) + topLevelCommands.map(\.name) + ["help"])
        for family in commandFamilies {
            #expect(try await bashCompletions(["records", family.name, ""], sandbox: sandbox) == family.commandWords)
        }
        let group = try await bashCompletions(["records", "coffee", "picture", ""], sandbox: sandbox)
        #expect(group == ["set", "get", "remove"])
        #expect(try await bashCompletions(["records", "--json", "people", "se"], sandbox: sandbox) == ["search"])
    }

    @Test(
        "bash completes options, choice values and file names",
        .enabled(if: bash != nil, "bash is not installed"))
    func bashCompletesOptionsAndValues() async throws {
        let sandbox = try Sandbox()
        #expect(
            try await bashCompletions(["records", "people", "list", "--sort", ""], sandbox: sandbox)
                == ["name", "age", "newest"])
        #expect(
            try await bashCompletions(["records", "users", "register", "--gender", "f"], sandbox: sandbox) == ["female"]
        )
        #expect(
            try await bashCompletions(["records", "coffee", "picture", "get", "1", "--f"], sandbox: sandbox)
                == ["--force"])
        #expect(try await bashCompletions(["records", "completion", ""], sandbox: sandbox) == ["bash", "zsh", "fish"])
        try Data().write(to: URL(fileURLWithPath: sandbox.path("espresso.png")))
        #expect(
            try await bashCompletions(["records", "coffee", "picture", "set", "1", "espr"], sandbox: sandbox)
                == ["espresso.png"])
        // A free-text value proposes nothing, not file names.
        #expect(try await bashCompletions(["records", "people", "add", "--first", "espr"], sandbox: sandbox).isEmpty)
    }

    @Test("The zsh script is valid zsh", .enabled(if: zsh != nil, "zsh is not installed"))
    func zshSyntax() async throws {
        let sandbox = try Sandbox()
        let run = try await runProgram(try #require(zsh), ["-n", try await completionScript("zsh", in: sandbox)])
        #expect(run.status == 0, "\(run)")
    }

    @Test("The fish script is valid fish", .enabled(if: fish != nil, "fish is not installed"))
    func fishSyntax() async throws {
        let sandbox = try Sandbox()
        let run = try await runProgram(
            try #require(fish), ["--no-execute", try await completionScript("fish", in: sandbox)])
        #expect(run.status == 0, "\(run)")
    }

    @Test("The fish script offers every command of every app")
    @MainActor
    func fishListsCommands() async throws {
        let script = try await Sandbox().runRaw(["completion", "fish"]).stdout
        for family in commandFamilies {
            for word in family.commandWords {
                #expect(
                    script.contains("__fish_seen_subcommand_from \(family.name);") && script.contains("-a '\(word)'"))
            }
        }
    }

    @Test("An unknown shell is a usage error")
    func unknownShell() async throws {
        let run = try await Sandbox().runRaw(["completion", "tcsh"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("unknown shell 'tcsh'"))
    }
}

@Suite("records: the manual page")
struct ManualPageCLITests {
    @Test("records man prints a man page with NAME, SYNOPSIS and every command")
    @MainActor
    func structure() async throws {
        let run = try await Sandbox().runRaw(["man"])
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
    func groffAcceptsIt() async throws {
        let sandbox = try Sandbox()
        let page = sandbox.path("records.1")
        try Data(try await sandbox.runRaw(["man"]).stdout.utf8).write(to: URL(fileURLWithPath: page))
        let run = try await runProgram(try #require(groff), ["-man", "-Tutf8", "-ww", "-z", page])
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run)")
    }

    @Test("man -l shows the page with every app's commands", .enabled(if: man != nil, "man is not installed"))
    @MainActor
    func manShowsIt() async throws {
        let sandbox = try Sandbox()
        let page = sandbox.path("records.1")
        try Data(try await sandbox.runRaw(["man"]).stdout.utf8).write(to: URL(fileURLWithPath: page))
        let run = try await runProgram(try #require(man), ["-l", page])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("records people list"))
        #expect(run.stdout.contains("Caffè Latte"))
    }
}
