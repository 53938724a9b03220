import Foundation

@testable import SQLiteStore

func makeMemoryDatabase() throws -> Database {
    try Database.inMemory()
}

/// The name of a temporary file as the library makes them for `name`.
func stagingName(for name: String) -> String {
    TemporaryNames.make(for: name)
}
