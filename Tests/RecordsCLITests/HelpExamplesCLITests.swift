import Foundation
import TestSupport
import Testing

@testable import records

/// Every example of every command, with the words that name the command
/// (`people add`, `backup`), read from the same tables as `--help`.
@MainActor
private func allExamples() -> [(path: [String], example: String)] {
    let familyExamples = commandFamilies.flatMap { family in
        family.commands.flatMap { command in
            command.examples.map { ([family.name] + command.name.split(separator: " ").map(String.init), $0) }
        }
    }
    return familyExamples + topLevelCommands.flatMap { command in command.examples.map { ([command.name], $0) } }
}

/// The passwords the examples' `$PW`, `$OLD` and `$NEW` stand for.
private let examplePassword = "correct horse 1"
private let newPassword = "battery staple 2"

/// A shell's output and status, the shell run on a pseudo-terminal by
/// `script` so that password prompts work, each prompt answered as a
/// person would once it shows.
private func runOnTerminal(_ command: String, in directory: URL, environment: [String: String]) async throws -> (
    status: Int32, output: String
) {
    let process = Process()
    // A safety net only: a run that hangs ends, and fails, after 5 minutes.
    process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
    process.arguments = ["300", "/usr/bin/script", "-qec", command, "/dev/null"]
    process.currentDirectoryURL = directory
    process.environment = environment
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = output
    let child = try ChildProcess(starting: process)
    let (reading, writing) = (output.fileHandleForReading, input.fileHandleForWriting)
    // The conversation blocks on reads: a thread of its own holds it.
    let text = await onOwnThread {
        var text = ""
        var answered = 0
        var confirmed = 0
        let prompt = #/(Current password|New password confirmation|New password|Password confirmation|Password): /#
        while true {
            let data = reading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
            let prompts = text.matches(of: prompt).map { String($0.output.1) }
            while answered < prompts.count {
                let answer = prompts[answered].hasPrefix("New") ? newPassword : examplePassword
                writing.write(Data((answer + "\n").utf8))
                answered += 1
            }
            // A delete's question, answered yes as a person would.
            while confirmed < text.matches(of: #/\? \[y/N\] /#).count {
                writing.write(Data("y\n".utf8))
                confirmed += 1
            }
        }
        return text
    }
    let status = await child.exited()
    try? writing.close()
    return (status, text.replacingOccurrences(of: "\r", with: ""))
}

@Suite("records: the help's examples run")
struct HelpExamplesCLITests {
    @Test("Every command has examples, and its --help shows each of them whole")
    @MainActor
    func helpShowsEveryExample() async throws {
        let sandbox = try Sandbox()
        for (path, example) in allExamples() {
            let help = try await sandbox.runRaw(path + ["--help"], environment: ["COLUMNS": "100"])
            // Long examples are continued on the next line after " \".
            let joined = help.stdout.replacingOccurrences(of: #" \\\n +"#, with: " ", options: .regularExpression)
            #expect(joined.contains("  " + example), "\(path): \(example)")
        }
        for family in commandFamilies {
            for command in family.commands { #expect(!command.examples.isEmpty, "\(family.name) \(command.name)") }
        }
    }

    @Test("Every example in every --help runs, with status 0, on a fresh database")
    @MainActor
    func examplesRun() async throws {
        let records = try recordsBinary()
        // `records serve` runs until stopped: ServeCLITests runs its
        // examples with a signal to end them. `records restore` needs a
        // replica (a directory Litestream filled, an S3 bucket):
        // ReplicationCLITests makes one and restores from it.
        // `records sync` needs a server: SyncCLITests runs it against one.
        for (path, example) in allExamples() where path != ["serve"] && path != ["restore"] && path != ["sync"] {
            let sandbox = try Sandbox()
            // What the examples take for granted: pictures to store, a
            // folder for backups, and a user whose password is $PW.
            try writePicture(sandbox.path("espresso.png"), count: 2000)
            try Data([0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 7, count: 500))
                .write(to: URL(fileURLWithPath: sandbox.path("latte.jpg")))
            try FileManager.default.createDirectory(
                atPath: sandbox.path("home/backups"), withIntermediateDirectories: true)
            let bin = sandbox.path("bin")
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: bin + "/records", withDestinationPath: records.path)
            if (path.first == "users" && path.last != "register") || path.first == "token" || path.first == "remote" {
                let registered = try await sandbox.run(
                    input: "\(examplePassword)\n\(examplePassword)\n", userRegistration + ["--password-stdin"])
                try #require(registered.status == 0, "\(registered)")
            }
            // Tokens 1 and 2 for the examples that list and revoke them.
            if path.first == "token" && path.last != "create" {
                for name in ["one", "two"] {
                    let made = try await sandbox.run(
                        input: "\(examplePassword)\n",
                        ["token", "create", "--email", "ada@example.com", "--name", name, "--password-stdin"])
                    try #require(made.status == 0, "\(made)")
                }
            }
            // The token file the remote examples read, and a remote to show.
            if path.first == "remote" {
                try Data("rst_example\n".utf8).write(to: URL(fileURLWithPath: sandbox.path("home/sync.token")))
                let set = try await sandbox.run(input: "rst_example\n", ["remote", "set", "http://host:8080"])
                try #require(set.status == 0, "\(set)")
            }
            let environment = [
                "HOME": sandbox.path("home"), "XDG_DATA_HOME": sandbox.path("xdg"),
                "RECORDS_DATABASE": sandbox.database,
                "PATH": bin + ":/usr/bin:/bin", "LANG": "C.UTF-8", "SHELL": "/bin/sh", "TERM": "dumb",
                "PW": examplePassword, "OLD": examplePassword, "NEW": newPassword,
                // A pager would wait for a key on the terminal (records man | man -l -).
                "PAGER": "cat", "MANPAGER": "cat",
            ]
            let run = try await runOnTerminal(example, in: sandbox.root, environment: environment)
            #expect(run.status == 0, "\(example)\n\(run.output)")
        }
    }
}
