import Foundation
import SQLiteStore

/// A directory removed when the value is released.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("sqlitestore-tests-\(UUID().uuidString)", isDirectory: true)
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

func makeMemoryDatabase() throws -> Database {
    try Database.inMemory()
}
