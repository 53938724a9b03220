import Foundation
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
    func run(_ arguments: String...) throws -> RecordsRun {
        try runRaw(["--database", database] + arguments)
    }

    /// Runs `records --database <sandbox db>` with these arguments.
    @discardableResult
    func run(_ arguments: [String]) throws -> RecordsRun {
        try runRaw(["--database", database] + arguments)
    }

    /// Runs `records --database <sandbox db>` with these arguments and
    /// `input` as standard input.
    @discardableResult
    func run(input: String, _ arguments: [String]) throws -> RecordsRun {
        try runRaw(["--database", database] + arguments, input: Data(input.utf8))
    }

    /// Runs `records --database <sandbox db> arguments...` with `input` as
    /// its standard input.
    @discardableResult
    func run(input: String, _ arguments: String...) throws -> RecordsRun {
        try runRaw(["--database", database] + arguments, input: Data(input.utf8))
    }

    /// Runs `records` with exactly these arguments, and a clean environment
    /// whose data directory is inside the sandbox. Standard input is `input`,
    /// or empty.
    ///
    /// - Parameter whileRunning: Called once the process has started, on
    ///   this thread; the run waits for the process after it returns.
    func runRaw(
        _ arguments: [String], environment extra: [String: String] = [:], binary: URL? = nil, input: Data? = nil,
        whileRunning: (Process) -> Void = { _ in }
    ) throws -> RecordsRun {
        let process = Process()
        process.executableURL = try binary ?? recordsBinary()
        process.arguments = arguments
        var environment = [
            "HOME": path("home"), "XDG_DATA_HOME": path("xdg"), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
        ]
        environment.merge(extra) { $1 }
        process.environment = environment
        // Files, not pipes: a full pipe cannot block the child.
        let outURL = root.appendingPathComponent("stdout-\(UUID().uuidString)")
        let errURL = root.appendingPathComponent("stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        var inputHandle: FileHandle?
        if let input {
            let inURL = root.appendingPathComponent("stdin-\(UUID().uuidString)")
            try input.write(to: inURL)
            inputHandle = try FileHandle(forReadingFrom: inURL)
            process.standardInput = inputHandle
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        defer { try? inputHandle?.close() }
        try process.run()
        whileRunning(process)
        process.waitUntilExit()
        try out.close()
        try err.close()
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        return RecordsRun(
            status: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }
}
