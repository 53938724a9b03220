import Foundation
import Testing

@testable import SQLiteStore

@Suite("Search patterns")
struct SearchPatternTests {
    @Test("The last word matches as a prefix: \"gra\" finds Grace and Gracey")
    func lastWordIsPrefix() throws {
        let db = try makeSearchablePeople()
        #expect(Set(try db.searchIDs("gra") ?? []) == [1, 4])
    }

    @Test("Without prefix matching a partial word finds nothing")
    func wholeWordsOnly() throws {
        let db = try makeSearchablePeople()
        #expect(try db.searchIDs("gra", prefix: .none) == [])
        #expect(try db.searchIDs("grace", prefix: .none) == [1])
    }

    @Test("Only the last word is a prefix by default; every word when asked")
    func everyWordPrefix() throws {
        let db = try makeSearchablePeople()
        #expect(try db.searchIDs("grace hop") == [1])
        #expect(try db.searchIDs("gr hop") == [])
        #expect(try db.searchIDs("gr hop", prefix: .everyWord) == [1])
    }

    @Test("Diacritics are ignored both ways: akesson finds Åkesson, élise and elise find Élise")
    func diacriticInsensitive() throws {
        let db = try makeSearchablePeople()
        #expect(try db.searchIDs("akesson") == [2])
        #expect(try db.searchIDs("elise") == [4])
        #expect(try db.searchIDs("ÉLISE") == [4])
    }

    @Test("Case is ignored")
    func caseInsensitive() throws {
        let db = try makeSearchablePeople()
        #expect(try db.searchIDs("GRACE HOPPER") == [1])
        #expect(try db.searchIDs("lOvElAcE") == [3])
    }

    @Test("Every word must match, in any column and any order")
    func allWordsMatch() throws {
        let db = try makeSearchablePeople()
        #expect(try db.searchIDs("hopper grace") == [1])
        #expect(try db.searchIDs("ada compiler") == [])
        #expect(try db.searchIDs("grace compiler") == [1])
    }

    @Test("A word nobody has finds nothing")
    func noMatch() throws {
        let db = try makeSearchablePeople()
        #expect(try db.searchIDs("zebra") == [])
    }

    @Test("Empty, white-space-only and punctuation-only text gives no pattern")
    func emptyInputHasNoPattern() {
        for text in ["", " ", "\t\n  ", "!!!", "\"", "* - : ( )", "😀 🎉", "\u{0}"] {
            #expect(SearchPattern(typed: text) == nil, "\(text.debugDescription)")
        }
    }

    @Test("Each typed word is quoted, double quotes doubled, the last one a prefix")
    func quoting() throws {
        let pattern = try #require(SearchPattern(typed: "say \"hi\" now"))
        #expect(pattern.fts5Query == #""say" """hi""" "now"*"#)
        #expect(!pattern.isAdvanced)
    }

    @Test("A quote followed by a combining mark is doubled too: the word cannot end its string early")
    func quoteWithCombiningMark() throws {
        // `"` U+0301 is one Character that is not `"`: doubling quotes by
        // Character left it single, and FTS5 read the rest as syntax.
        // (Kept out of the macros: written inside #expect or #require,
        // these literals make the expansion fail to compile.)
        let typed = "hopper\"\u{301} OR ada"
        let expected = "\"hopper\"\"\u{301}\" \"OR\" \"ada\"*"
        let pattern = try #require(SearchPattern(typed: typed))
        #expect(pattern.fts5Query == expected)
        let db = try makeSearchablePeople()
        #expect(try db.searchIDs(typed) == [])
        let oneWord = "hopper\"\u{301}"
        #expect(try db.searchIDs(oneWord) == [1])
    }

    @Test("FTS5 operators typed as words are searched as words")
    func operatorsAreWords() throws {
        let db = try makeSearchablePeople()
        // "kept AND" fails as raw FTS5 syntax; typed, it finds the notes holding both words.
        #expect(Set(try db.searchIDs("kept AND") ?? []) == [5])
        #expect(Set(try db.searchIDs("kept") ?? []) == [2, 5])
        #expect(try db.searchIDs("OR") == [])
    }

    @Test("Hostile input never raises an FTS5 error", arguments: hostileInputs)
    func hostileInput(_ text: String) throws {
        let db = try makeSearchablePeople()
        for prefix in [SearchPattern.PrefixMatching.none, .lastWord, .everyWord] {
            guard let pattern = SearchPattern(typed: text, prefix: prefix) else { continue }
            try db.validate(pattern, in: peopleSearch)
            _ = try db.search(SearchPerson.self, in: peopleSearch, matching: pattern, snippet: .excerpt())
            _ = try db.searchCount(in: peopleSearch, matching: pattern)
        }
    }

    @Test("Punctuation inside a word splits it as the tokenizer does: o'bri finds O'Brien")
    func punctuationInsideWord() throws {
        let db = try makeSearchablePeople()
        #expect(try db.searchIDs("o'bri") == [5])
        #expect(try db.searchIDs("(hopper)") == [1])
        #expect(try db.searchIDs("\"hopper\"") == [1])
    }

    @Test("A 10,000-character input is searched without error")
    func longInput() throws {
        let db = try makeSearchablePeople()
        let oneWord = String(repeating: "a", count: 10_000)
        #expect(try db.searchIDs(oneWord) == [])
        let manyWords = String(repeating: "gr ", count: 3_333) + "h"
        #expect(manyWords.count == 10_000)
        #expect(try db.searchIDs(manyWords, prefix: .everyWord) == [1])
    }

    @Test("Emoji next to a word leave the word searchable")
    func emojiBesideWord() throws {
        let db = try makeSearchablePeople()
        #expect(try db.searchIDs("🎉hopper🎉") == [1])
    }

    @Test("An advanced pattern uses FTS5's syntax")
    func advancedSyntax() throws {
        let db = try makeSearchablePeople()
        let pattern = SearchPattern(fts5Query: "grace OR ada")
        #expect(pattern.isAdvanced)
        let ids = try db.search(SearchPerson.self, in: peopleSearch, matching: pattern).map(\.record.id)
        #expect(Set(ids) == [1, 3])
        let byColumn = SearchPattern(fts5Query: "lastname: gracey")
        #expect(try db.search(SearchPerson.self, in: peopleSearch, matching: byColumn).map(\.record.id) == [4])
    }

    @Test(
        "An advanced pattern with a syntax error throws a clear error",
        arguments: ["kept AND", "NEAR(", "\"open", "(a OR"])
    func advancedSyntaxError(_ query: String) throws {
        let db = try makeSearchablePeople()
        let pattern = SearchPattern(fts5Query: query)
        let error = try #require(throws: FullTextSearchError.self) {
            try db.search(SearchPerson.self, in: peopleSearch, matching: pattern)
        }
        #expect(error.kind == .invalidPattern)
        #expect(error.message.contains("syntax error") || error.message.contains("unterminated"))
        #expect(error.message.contains("people_search"))
        #expect(throws: FullTextSearchError.self) { try db.validate(pattern, in: peopleSearch) }
        #expect(throws: FullTextSearchError.self) { try db.searchCount(in: peopleSearch, matching: pattern) }
    }

    @Test("An advanced pattern naming a column the index lacks throws a clear error")
    func advancedUnknownColumn() throws {
        let db = try makeSearchablePeople()
        let error = try #require(throws: FullTextSearchError.self) {
            try db.validate(SearchPattern(fts5Query: "age: 3"), in: peopleSearch)
        }
        #expect(error.kind == .invalidPattern)
        #expect(error.message.contains("no such column"))
    }

    @Test("A database error that is not about the pattern stays an SQLiteError")
    func missingIndexIsNotAPatternError() throws {
        let db = try makePeopleDatabase()
        #expect(throws: SQLiteError.self) {
            try db.search(SearchPerson.self, in: peopleSearch, matching: SearchPattern(fts5Query: "grace"))
        }
    }
}

let hostileInputs: [String] = [
    "\"", "\"\"", "\"grace", "grace\"", "'", "''", "*", "gra*", "**", "NEAR(", "NEAR(grace hopper)", "AND", "OR",
    "NOT", "grace AND", "AND grace", "-", "-grace", "grace -hopper", ":", "firstname:", "firstname:grace",
    "notes : x", "(", ")", "(grace", "grace)", "()", "^grace", "+", "{firstname lastname}: grace", "grace*hopper",
    "😀", "grace 😀", "👩‍👩‍👧‍👦 ada", "\u{0}grace", "gra\u{0}ce", "\u{1}\u{2}", "\\", "%_", "\u{FEFF}",
    "\u{F8F0}grace\u{F8F1}", String(repeating: "\"", count: 10_000), String(repeating: "(", count: 10_000),
    String(repeating: "NEAR(", count: 2_000), String(repeating: "a ", count: 5_000),
    // A quote and a combining mark make one Character: found by the fuzzer
    // when the quotes were doubled character by character.
    "br\"\u{7ED}", "grace\"\u{301} OR ada", "\"\u{301}grace",
    "\u{8}+b\u{0}kbr\"\u{FFFD}E\u{FFFD}kbr\"\u{FFFD}Ebr\"\u{7ED}",
]
