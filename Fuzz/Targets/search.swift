// Fuzz target: full-text search patterns (Sources/SQLiteStore/Search).
//
// Input: the first byte picks the prefix matching (none, last word, every
// word); the rest is text as a person would type it, which is also stored
// in the indexed table.
//
// Invariants: building a typed pattern never traps; a typed pattern, when
// there is one, always runs without any error (no FTS5 syntax error can
// come from typed text) and finds the row that holds the same text (always,
// for ASCII text); its highlight gives the stored text back unchanged
// (unless the text holds a NUL or a marker character); the same text as an
// advanced FTS5 pattern either runs or throws a FullTextSearchError or
// SQLiteError, never traps.

import Foundation
import SQLiteStore

private struct Note: FetchableRecord {
    var id: Int64
    init(row: Row) throws { id = try row["id"] }
}

private let index = FullTextIndex("notes_search", on: "notes", columns: ["body"], rowID: "id")

/// One connection for the whole run; libFuzzer calls the target from one
/// thread only.
nonisolated(unsafe) private let database: Database = {
    let db = try! Database.inMemory()
    try! db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    try! db.create(index)
    return db
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let modes: [SearchPattern.PrefixMatching] = [.none, .lastWord, .everyWord]
    let mode = modes[Int(data[0]) % modes.count]
    let text = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
    let db = database
    do {
        try db.execute("DELETE FROM notes")
        try db.execute("INSERT INTO notes (id, body) VALUES (1, \(text))")
    } catch {
        require(false, "could not store the text: \(error)")
    }
    if let pattern = SearchPattern(typed: text, prefix: mode) {
        require(!pattern.isAdvanced, "a typed pattern is advanced")
        do {
            let matches = try db.search(
                Note.self, in: index, matching: pattern, snippet: .highlight(column: "body"))
            // ASCII text splits the same way here and in the tokenizer;
            // beyond it, a character this Unicode calls a letter may be a
            // separator to SQLite's older tables, leaving nothing to find.
            let ids = matches.map(\.record.id)
            require(ids == [1] || (ids.isEmpty && !text.allSatisfy(\.isASCII)), "\(pattern) finds \(ids)")
            // FTS5 builds highlights as C strings: text after a NUL comes
            // out misplaced (documented on Snippet).
            // Scalars, not characters: a mark may join a marker into one.
            let special: Set<Unicode.Scalar> = ["\u{F8F0}", "\u{F8F1}", "\u{0}"]
            if !text.unicodeScalars.contains(where: special.contains) {
                require(matches.first?.snippet?.text == text, "the highlight changed the text")
            }
            _ = try db.search(Note.self, in: index, matching: pattern, snippet: .excerpt(words: 3))
        } catch {
            require(false, "a typed pattern failed: \(pattern): \(error)")
        }
    }
    do {
        _ = try db.search(Note.self, in: index, matching: SearchPattern(fts5Query: text))
    } catch is FullTextSearchError {
    } catch is SQLiteError {
    } catch {
        require(false, "unexpected error type \(type(of: error)): \(error)")
    }
    return 0
}
