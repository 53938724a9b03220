import Foundation
import SQLiteStore

/// A directory removed when the value is released.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("sqlitestore-appsupport-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit {
        // Restore write permission in case a test removed it.
        try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        try? FileManager.default.removeItem(at: url)
    }
}

/// Whether the tests run as root, for whom file permissions do not apply.
let isRoot = getuid() == 0

#if os(Linux)
    let isLinux = true
#else
    let isLinux = false
#endif

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
