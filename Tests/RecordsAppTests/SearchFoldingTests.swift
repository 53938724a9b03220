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

@Suite("Folding: the ASCII fast path")
struct FoldFastPathTests {
    /// Text drawn by a fixed generator from `alphabet`, `count` strings of
    /// 0 to 23 characters.
    private func generated(_ count: Int, from alphabet: [Character]) -> [String] {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        return (0..<count).map { _ in String((0..<(next() % 24)).map { _ in alphabet[next() % alphabet.count] }) }
    }

    private let ascii: [Character] = (0..<128).map { Character(Unicode.Scalar(UInt8($0))) }

    @Test("Every ASCII character, alone and all together, folds as the general fold folds it")
    func everyASCIICharacter() throws {
        for text in ascii.map({ String($0) }) + [String(ascii), String(ascii.reversed())] {
            let fast = try #require(SearchFolding.foldASCII(text), "ASCII text must take the fast path")
            #expect(fast == SearchFolding.foldUnicode(text), "\(Array(text.utf8))")
        }
    }

    @Test("Generated ASCII text, with NULs, line ends and every case, folds as the general fold folds it")
    func generatedASCII() throws {
        let alphabet = ascii + ["\u{0}", "\r\n", "A", "Z", "a", "z", "@", "[", "`", "{"]
        for text in generated(3000, from: alphabet) {
            let fast = try #require(SearchFolding.foldASCII(text))
            #expect(fast == SearchFolding.foldUnicode(text), "\(Array(text.utf8))")
            #expect(SearchFolding.fold(text) == fast)
        }
    }

    @Test("Text with any non-ASCII character takes the general fold, and folds the same")
    func mixedTextTakesTheGeneralFold() {
        let alphabet: [Character] = ["a", "B", " ", "\u{0}", "É", "ß", "Ｓ", "İ", "ﬁ", "Å", "\u{301}", "😀", "ǅ", "Ω"]
        let texts = generated(2000, from: alphabet) + ["Åkesson", "ÅKESSON", "abcé", "Ｓｅáｎ", "e\u{301}", "ﬁle"]
        for text in texts {
            if text.utf8.contains(where: { $0 >= 0x80 }) {
                #expect(SearchFolding.foldASCII(text) == nil, "\(text)")
            }
            #expect(SearchFolding.fold(text) == SearchFolding.foldUnicode(text), "\(text)")
        }
    }

    @Test("Empty text folds to empty text on both paths")
    func emptyText() {
        #expect(SearchFolding.foldASCII("") == "")
        #expect(SearchFolding.foldUnicode("") == "")
        #expect(SearchFolding.fold("") == "")
    }

    @Test("The fast path keeps an embedded NUL and what follows it")
    func fastPathKeepsNul() {
        #expect(SearchFolding.foldASCII("ADA\u{0}LOVELACE") == "ada\u{0}lovelace")
    }
}
