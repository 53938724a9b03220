import Foundation
import TestSupport
import Testing

@testable import SQLiteStoreAppSupport

@Suite("Default data directory")
struct DataDirectoryTests {
    #if !canImport(Darwin)
        @Test("XDG_DATA_HOME, when absolute, is the base directory")
        func xdgDataHome() throws {
            let url = try DataDirectory.url(
                forApplication: "records", environment: ["XDG_DATA_HOME": "/data/xdg", "HOME": "/home/ann"])
            #expect(url.path == "/data/xdg/records")
        }

        @Test("Without XDG_DATA_HOME the directory is ~/.local/share/<name>")
        func homeDefault() throws {
            let url = try DataDirectory.url(forApplication: "records", environment: ["HOME": "/home/ann"])
            #expect(url.path == "/home/ann/.local/share/records")
        }

        @Test("A relative XDG_DATA_HOME is ignored, as the XDG specification says")
        func relativeXDGIgnored() throws {
            let url = try DataDirectory.url(
                forApplication: "records", environment: ["XDG_DATA_HOME": "data", "HOME": "/home/ann"])
            #expect(url.path == "/home/ann/.local/share/records")
        }
    #endif

    @Test("create makes the directory and its parents, and is idempotent")
    func createsDirectory() throws {
        let dir = try TemporaryDirectory()
        let base = dir.path("deep/xdg")
        let environment = ["XDG_DATA_HOME": base, "HOME": dir.path("home")]
        let first = try DataDirectory.create(forApplication: "records", environment: environment)
        let second = try DataDirectory.create(forApplication: "records", environment: environment)
        #expect(first == second)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: first.path, isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
        #if !canImport(Darwin)
            #expect(first.path == base + "/records")
        #endif
    }

    @Test("A file where the directory should be is a clear error")
    func fileInTheWay() throws {
        let dir = try TemporaryDirectory()
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir.path("records")))
        #if !canImport(Darwin)
            #expect {
                try DataDirectory.create(forApplication: "records", environment: ["XDG_DATA_HOME": dir.url.path])
            } throws: { error in
                let error = error as? DatabaseFileError
                return error?.kind == .dataDirectoryUnavailable && error?.message.contains(dir.path("records")) == true
            }
        #endif
    }

    @Test("Names that are not one path component are refused", arguments: ["", ".", "..", "a/b", "/abs"])
    func invalidNames(name: String) throws {
        #expect {
            try DataDirectory.url(forApplication: name, environment: ["HOME": "/home/ann"])
        } throws: { error in
            (error as? DatabaseFileError)?.kind == .invalidName
        }
    }
}
