import Foundation

/// A directory of its own for one test, removed (with everything in it)
/// when the value is released.
public final class TemporaryDirectory: Sendable {
    /// The directory.
    public let url: URL

    /// Creates an empty directory under the system's temporary directory.
    public init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("sqlitestore-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// The URL of `name` inside the directory.
    public func fileURL(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// The names in the directory, or in its `subdirectory`, sorted.
    public func entries(in subdirectory: String? = nil) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: subdirectory.map(path) ?? url.path).sorted()
    }

    deinit {
        // Restore write permission in case a test removed it.
        try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        try? FileManager.default.removeItem(at: url)
    }
}

/// Whether the tests run as root, for whom file permissions do not apply
/// and who may make device nodes.
public let isRoot = geteuid() == 0

/// Whether the tests run on Linux.
#if os(Linux)
    public let isLinux = true
#else
    public let isLinux = false
#endif
