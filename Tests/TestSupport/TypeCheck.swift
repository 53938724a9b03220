import Foundation

/// The errors the compiler reports for a Swift source file type-checked
/// against the package's built modules: what a user of the library would
/// see, for checks that some code must not compile.
public struct TypeCheckResult: Sendable, CustomStringConvertible {
    /// The error messages, by the 1-based line of the source they are on.
    public let errorsByLine: [Int: [String]]
    /// Everything the compiler printed.
    public let output: String

    /// What the compiler printed.
    public var description: String { output }
}

/// Why a source could not be type-checked at all.
public enum TypeCheckError: Error, CustomStringConvertible {
    /// No `Modules` directory with SQLiteStore's module above these places.
    case modulesNotFound([String])
    /// No `swiftc` to run.
    case compilerNotFound
    /// The compiler failed without reporting an error in the source; its
    /// output.
    case compilerFailed(String)

    /// What went wrong, for the test's failure.
    public var description: String {
        switch self {
        case .modulesNotFound(let places):
            "the built modules (Modules/SQLiteStore.swiftmodule) were not found above \(places.joined(separator: ", "))"
        case .compilerNotFound: "swiftc was not found on PATH (set SWIFTC to its path)"
        case .compilerFailed(let output): "swiftc did not type-check the source:\n\(output)"
        }
    }
}

/// Type-checks `source` in Swift 6 mode with `swiftc -typecheck`, the
/// package's built modules importable (SQLiteStore, SQLiteStoreAppSupport,
/// ...), and returns its errors by line. Throws when the compiler cannot
/// run or stops for another reason than errors in `source`.
public func typeCheck(_ source: String) async throws -> TypeCheckResult {
    let modules = try builtModulesDirectory()
    let compiler = try swiftCompiler()
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("typecheck-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let file = scratch.appendingPathComponent("snippet.swift")
    try Data(source.utf8).write(to: file)
    let arguments = [
        "-typecheck", "-swift-version", "6", "-diagnostic-style", "llvm", file.path,
        "-I", modules.path, "-I", packageRoot.appendingPathComponent("Sources/CSQLite").path,
        "-module-cache-path", scratch.appendingPathComponent("ModuleCache").path,
    ]
    let run = try await ChildProcess.run(compiler, arguments, mergingStandardError: true)
    var errors: [Int: [String]] = [:]
    let marker = file.lastPathComponent + ":"
    for line in run.output.split(separator: "\n") {
        // snippet.swift:LINE:COLUMN: error: MESSAGE
        guard let start = line.range(of: marker) else { continue }
        let fields = line[start.upperBound...].split(separator: ":", maxSplits: 3)
        guard fields.count == 4, let number = Int(fields[0]), fields[2] == " error" else { continue }
        errors[number, default: []].append(fields[3].trimmingCharacters(in: .whitespaces))
    }
    if run.status != 0 && errors.isEmpty { throw TypeCheckError.compilerFailed(run.output) }
    return TypeCheckResult(errorsByLine: errors, output: run.output)
}

/// The package's root directory, found from this file's path.
private let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The `Modules` directory of the build this test binary belongs to.
private func builtModulesDirectory() throws -> URL {
    var starts: [URL] = []
    if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        starts.append(URL(fileURLWithPath: exe).deletingLastPathComponent())
    }
    starts.append(Bundle.main.bundleURL)
    if let executable = Bundle.main.executableURL { starts.append(executable.deletingLastPathComponent()) }
    for start in starts {
        var current = start
        for _ in 0..<4 {
            let modules = current.appendingPathComponent("Modules")
            if FileManager.default.fileExists(atPath: modules.appendingPathComponent("SQLiteStore.swiftmodule").path) {
                return modules
            }
            current = current.deletingLastPathComponent()
        }
    }
    throw TypeCheckError.modulesNotFound(starts.map(\.path))
}

/// `swiftc`: `SWIFTC` from the environment, else the first on `PATH`.
private func swiftCompiler() throws -> URL {
    let environment = ProcessInfo.processInfo.environment
    if let path = environment["SWIFTC"] { return URL(fileURLWithPath: path) }
    for directory in (environment["PATH"] ?? "").split(separator: ":") {
        let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("swiftc")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    throw TypeCheckError.compilerNotFound
}

/// Type-checks `snippet`, in which every line that must not compile ends
/// with `// refused`, and returns what went otherwise: each refused line
/// that compiled, each refused line whose error does not satisfy
/// `expectedError`, and each other line that did not compile. Empty when
/// the snippet compiles exactly as marked.
public func typeCheckMismatches(
    _ snippet: String, expectedError: (String) -> Bool = { _ in true }
) async throws -> [String] {
    let result = try await typeCheck(snippet)
    var mismatches: [String] = []
    for (index, line) in snippet.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let errors = result.errorsByLine[index + 1] ?? []
        let code = line.trimmingCharacters(in: .whitespaces)
        if line.hasSuffix("// refused") {
            if errors.isEmpty { mismatches.append("compiled: \(code)") }
            for error in errors where !expectedError(error) { mismatches.append("unexpected error: \(code): \(error)") }
        } else if !errors.isEmpty {
            mismatches.append("did not compile: \(code): \(errors.joined(separator: "; "))")
        }
    }
    return mismatches
}
