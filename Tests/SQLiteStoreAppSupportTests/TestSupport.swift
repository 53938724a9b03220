import Foundation

@testable import SQLiteStore

/// An error thrown by a test's closure on purpose.
struct TestFailure: Error, Equatable {}

/// The SQLiteError thrown by `body`, if any.
func sqliteError(_ body: () throws -> Void) -> SQLiteError? {
    do {
        try body()
    } catch let error as SQLiteError {
        return error
    } catch {
        return nil
    }
    return nil
}

/// Collects the lines of a debug log, from any thread.
final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    var all: [String] { lock.withLock { lines } }
    var sink: @Sendable (String) -> Void { { line in self.lock.withLock { self.lines.append(line) } } }
}

/// The name of a temporary file as the library makes them for `name`.
func stagingName(for name: String) -> String {
    TemporaryNames.make(for: name)
}
