import Foundation
import TestSupport
import Testing

/// What one run of the `records` binary did.
struct RecordsRun: CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String

    var description: String { "exit \(status)\nstdout:\n\(stdout)\nstderr:\n\(stderr)" }

    /// Standard output parsed as JSON.
    func json() throws -> Any {
        try JSONSerialization.jsonObject(with: Data(stdout.utf8), options: [.fragmentsAllowed])
    }

    /// The non-empty lines of standard output.
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

enum CLITestError: Error, CustomStringConvertible {
    case binaryNotFound([String])
    var description: String {
        switch self {
        case .binaryNotFound(let places): "the records binary was not found in \(places.joined(separator: ", "))"
        }
    }
}

/// The built `records` executable, next to the test bundle.
func recordsBinary() throws -> URL {
    if let path = ProcessInfo.processInfo.environment["RECORDS_BINARY"] { return URL(fileURLWithPath: path) }
    var directories: [URL] = [Bundle.main.bundleURL]
    if let executable = Bundle.main.executableURL { directories.append(executable.deletingLastPathComponent()) }
    for directory in directories {
        var current = directory
        for _ in 0..<4 {
            let candidate = current.appendingPathComponent("records")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory),
                !isDirectory.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate.path)
            {
                return candidate
            }
            current = current.deletingLastPathComponent()
        }
    }
    throw CLITestError.binaryNotFound(directories.map(\.path))
}

/// A private home for one test: data directory, database path, and a way
/// to run `records` there.
final class Sandbox: Sendable {
    let root: URL

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("records-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("home"), withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    func path(_ name: String) -> String { root.appendingPathComponent(name).path }

    /// The database the `--database` runs use.
    var database: String { path("test.sqlite") }

    /// The database used without `--database` or RECORDS_DATABASE.
    var defaultDatabase: String { path("xdg/records/records.sqlite") }

    /// Runs `records --database <sandbox db> arguments...`.
    @discardableResult
    func run(_ arguments: String...) async throws -> RecordsRun {
        try await runRaw(["--database", database] + arguments)
    }

    /// Runs `records --database <sandbox db>` with these arguments.
    @discardableResult
    func run(_ arguments: [String]) async throws -> RecordsRun {
        try await runRaw(["--database", database] + arguments)
    }

    /// Runs `records --database <sandbox db>` with these arguments and
    /// `input` as standard input.
    @discardableResult
    func run(input: String, _ arguments: [String]) async throws -> RecordsRun {
        try await runRaw(["--database", database] + arguments, input: Data(input.utf8))
    }

    /// Runs `records --database <sandbox db> arguments...` with `input` as
    /// its standard input.
    @discardableResult
    func run(input: String, _ arguments: String...) async throws -> RecordsRun {
        try await runRaw(["--database", database] + arguments, input: Data(input.utf8))
    }

    /// Runs `records` with exactly these arguments, and a clean environment
    /// whose data directory is inside the sandbox. Standard input is `input`,
    /// or empty.
    ///
    /// The run suspends while the child runs, holding none of the
    /// cooperative threads that the other tests need.
    ///
    /// - Parameter whileRunning: Called once the process has started, on a
    ///   thread of its own; the run waits for it to return and for the
    ///   process to exit.
    func runRaw(
        _ arguments: [String], environment extra: [String: String] = [:], binary: URL? = nil, input: Data? = nil,
        whileRunning: (@Sendable (ChildProcess) -> Void)? = nil
    ) async throws -> RecordsRun {
        var environment = [
            "HOME": path("home"), "XDG_DATA_HOME": path("xdg"), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
        ]
        environment.merge(extra) { $1 }
        let run = try await ChildProcess.run(
            try binary ?? recordsBinary(), arguments, environment: environment, input: input,
            whileRunning: whileRunning)
        return RecordsRun(status: run.status, stdout: run.output, stderr: run.errors)
    }
}
