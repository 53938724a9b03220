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

@Suite("Folding: the letters Unicode does not decompose")
struct FoldLettersTests {
    /// The Latin letters with no ASCII letter a person would type for
    /// them, left as Unicode's folding leaves them (docs/CLI.md lists them).
    static let unfolded: Set<Unicode.Scalar> = Set(
        "ƍƛƻƾƧƨƄƅƼƽǀǁǂǃƩƪƸƹȜȝɁɂ".unicodeScalars)

    @Test(
        "Each letter of the table folds to the letters typed for it, in either case",
        arguments: SearchFolding.baseLetters)
    func tableLetters(letters: String, folded: String) {
        for letter in letters.unicodeScalars {
            #expect(SearchFolding.fold(String(letter)) == folded, "\(letter)")
            #expect(SearchFolding.fold("x\(letter)y") == "x\(folded)y", "\(letter)")
        }
    }

    @Test("Every letter from U+00C0 to U+024F folds to ASCII letters, but the few with none")
    func latinBlocksFoldToASCII() {
        for value in 0xC0...0x24F {
            guard let scalar = Unicode.Scalar(value), scalar.properties.isAlphabetic else { continue }
            let folded = SearchFolding.fold(String(scalar))
            let isASCIILetters =
                !folded.isEmpty && folded.unicodeScalars.allSatisfy { $0.isASCII && $0.properties.isAlphabetic }
            #expect(
                isASCIILetters != Self.unfolded.contains(scalar), "U+\(String(value, radix: 16)) \(scalar) → \(folded)")
        }
    }

    @Test("A letter of the table with an accent folds as the letter without it")
    func decomposedFirst() {
        #expect(SearchFolding.fold("Ǿ ǿ Ǽ ǽ Ǣ ǣ Ǯ ǯ") == "o o ae ae ae ae z z")
    }

    @Test("Names fold as a person types them without the letters their keyboard lacks")
    func names() {
        let names = [
            "Skłodowska-Curie": "sklodowska-curie", "Søren": "soren", "Đorđe": "dorde", "Þórðarson": "thordarson",
            "Gauß": "gauss", "Işıkoğlu": "isikoglu", "Cœur": "coeur", "Ærø": "aero", "Ħal Għargħur": "hal gharghur",
            "Nguyễn Thị Định": "nguyen thi dinh", "Ĳsselmeer": "ijsselmeer", "Ɗanjuma": "danjuma",
        ]
        for (name, folded) in names { #expect(SearchFolding.fold(name) == folded, "\(name)") }
    }

    @Test("Folding turns letters into letters only: a text keeps its words")
    func wordsKept() {
        for value in Array(0xC0...0x24F) + Array(0x1E00...0x1EFF) {
            guard let scalar = Unicode.Scalar(value), scalar.properties.isAlphabetic else { continue }
            let folded = SearchFolding.fold("a\(scalar)b c")
            #expect(folded.split(separator: " ").count == 2, "\(scalar) → \(folded)")
            #expect(folded.unicodeScalars.dropLast(2).allSatisfy { $0.properties.isAlphabetic }, "\(scalar)")
        }
    }

    @Test("Text without a letter of the table is left to Unicode's folding, unchanged by the table")
    func otherTextUntouched() {
        for text in ["Åkesson", "Ζωή", "李", "😀", "Ｓｅáｎ", ""] {
            #expect(SearchFolding.replacingLetters(text) == text)
        }
    }

    @Test("records_fold in SQL folds the table's letters as Swift does")
    func sqlFoldsLetters() throws {
        let db = try Database.inMemory(configuration: AppDatabase.configuration(debugLog: nil))
        #expect(try db.fetchOne(String.self, "SELECT records_fold('Łukasz Ørsted')") == "lukasz orsted")
        #expect(try db.fetchOne(String.self, "SELECT records_name_key('  ÞÓRA   Ølsen ')") == "thora olsen")
    }
}
