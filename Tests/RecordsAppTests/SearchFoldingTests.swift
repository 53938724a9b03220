import Foundation
import SQLiteStore
import Testing

@testable import RecordsApp

@Suite("The records_fold SQL function")
struct SearchFoldingTests {
    private func connection() throws -> Database {
        try Database.inMemory(configuration: AppDatabase.configuration(debugLog: nil))
    }

    @Test("Folds text in SQL exactly as in Swift")
    func foldsLikeSwift() throws {
        let db = try connection()
        #expect(try db.fetchOne(String.self, "SELECT records_fold('Ｓｅáｎ Åkesson')") == "sean akesson")
    }

    @Test("Keeps an embedded NUL and what follows it")
    func keepsEmbeddedNul() throws {
        let db = try connection()
        let folded = try db.fetchOne(String.self, "SELECT records_fold(?)", arguments: ["ÉLISE\u{0}ZOË"])
        #expect(folded == "elise\u{0}zoe")
    }

    @Test("NULL gives NULL; numbers fold as their text")
    func nullAndNumbers() throws {
        let db = try connection()
        #expect(try db.fetchOne(String.self, "SELECT typeof(records_fold(NULL))") == "null")
        #expect(try db.fetchOne(String.self, "SELECT records_fold(42)") == "42")
    }

    @Test("Takes exactly one argument")
    func oneArgument() throws {
        let db = try connection()
        let error = try #require(throws: SQLiteError.self) {
            try db.fetchOne(String.self, "SELECT records_fold('a', 'b')")
        }
        #expect(error.message.contains("wrong number of arguments"))
    }
}
