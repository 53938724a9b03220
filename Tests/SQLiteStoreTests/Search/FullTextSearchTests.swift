import Foundation
import Testing

@testable import SQLiteStore

@Suite("Full-text search results")
struct FullTextSearchTests {
    @Test("More occurrences of a word rank first")
    func rankingByFrequency() throws {
        let db = try makeSearchablePeople([
            ("Ann", "Smith", "gardens"),
            ("Bob", "Jones", "gardens gardens gardens"),
            ("Cy", "Brown", "gardens and gardens"),
        ])
        let pattern = try #require(SearchPattern(typed: "gardens", prefix: .none))
        let matches = try db.search(SearchPerson.self, in: peopleSearch, matching: pattern)
        #expect(matches.map(\.record.id) == [2, 3, 1])
        #expect(matches.map(\.rank) == matches.map(\.rank).sorted())
        #expect(matches.allSatisfy { $0.rank < 0 })
    }

    @Test("Column weights change the order")
    func columnWeights() throws {
        let db = try makeSearchablePeople([
            ("Ann", "Grace", nil),  // the word in the last name
            ("Grace", "Smith", nil),  // the word in the first name
        ])
        let pattern = try #require(SearchPattern(typed: "grace", prefix: .none))
        let byLastName = try db.search(
            SearchPerson.self, in: peopleSearch, matching: pattern, weights: ["lastname": 10])
        #expect(byLastName.map(\.record.id) == [1, 2])
        let byFirstName = try db.search(
            SearchPerson.self, in: peopleSearch, matching: pattern, weights: ["firstname": 10])
        #expect(byFirstName.map(\.record.id) == [2, 1])
    }

    @Test("Limit and offset page through the ranked matches")
    func paging() throws {
        let db = try makeSearchablePeople((1...7).map { ("P\($0)", "Gardener", String(repeating: "rose ", count: $0)) })
        let pattern = try #require(SearchPattern(typed: "rose"))
        let all = try db.search(SearchPerson.self, in: peopleSearch, matching: pattern).map(\.record.id)
        #expect(all == [7, 6, 5, 4, 3, 2, 1])
        let page = try db.search(SearchPerson.self, in: peopleSearch, matching: pattern, limit: 3, offset: 2)
        #expect(page.map(\.record.id) == [5, 4, 3])
        let rest = try db.search(SearchPerson.self, in: peopleSearch, matching: pattern, offset: 5)
        #expect(rest.map(\.record.id) == [2, 1])
        #expect(try db.search(SearchPerson.self, in: peopleSearch, matching: pattern, limit: 0).isEmpty)
    }

    @Test("An excerpt marks the matching words as segments")
    func excerptSegments() throws {
        let db = try makeSearchablePeople([("Ann", "Smith", "grows roses and tulips in a small garden by the sea")])
        let pattern = try #require(SearchPattern(typed: "tulips gard"))
        let match = try #require(
            try db.search(
                SearchPerson.self, in: peopleSearch, matching: pattern,
                snippet: .excerpt(column: "notes", words: 5, ellipsis: "...")
            ).first)
        let snippet = try #require(match.snippet)
        #expect(snippet.segments.filter(\.isMatch).map(\.text) == ["tulips", "garden"])
        #expect(snippet.marked(before: "[", after: "]") == "...[tulips] in a small [garden]...")
        #expect(snippet.text == "...tulips in a small garden...")
    }

    @Test("Without a column the excerpt comes from the column that matches")
    func excerptFromBestColumn() throws {
        let db = try makeSearchablePeople()
        let pattern = try #require(SearchPattern(typed: "compil"))
        let match = try #require(
            try db.search(SearchPerson.self, in: peopleSearch, matching: pattern, snippet: .excerpt()).first)
        #expect(match.snippet?.marked(before: "<", after: ">") == "wrote the first <compiler>")
    }

    @Test("Highlight marks matches in a column's whole text, diacritics as stored")
    func highlight() throws {
        let db = try makeSearchablePeople()
        let pattern = try #require(SearchPattern(typed: "asa akess"))
        let match = try #require(
            try db.search(
                SearchPerson.self, in: peopleSearch, matching: pattern, snippet: .highlight(column: "lastname")
            )
            .first)
        #expect(match.snippet?.segments == [Snippet.Segment(text: "Åkesson", isMatch: true)])
    }

    @Test("A snippet's text is never escaped: the caller's renderer escapes it")
    func snippetLeavesEscapingToCaller() throws {
        let db = try makeSearchablePeople([("Ann", "Smith", "<b>bold</b> & \"tags\"")])
        let pattern = try #require(SearchPattern(typed: "bold"))
        let match = try #require(
            try db.search(SearchPerson.self, in: peopleSearch, matching: pattern, snippet: .highlight(column: "notes"))
                .first)
        let snippet = try #require(match.snippet)
        #expect(snippet.text == "<b>bold</b> & \"tags\"")
        func escape(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        let html = snippet.rendered(text: escape, match: { "<mark>" + escape($0) + "</mark>" })
        #expect(html == "&lt;b&gt;<mark>bold</mark>&lt;/b&gt; &amp; &quot;tags&quot;")
    }

    @Test("A NULL column gives no snippet")
    func nullColumnSnippet() throws {
        let db = try makeSearchablePeople()
        let pattern = try #require(SearchPattern(typed: "elise"))
        let match = try #require(
            try db.search(SearchPerson.self, in: peopleSearch, matching: pattern, snippet: .highlight(column: "notes"))
                .first)
        #expect(match.record.id == 4)
        #expect(match.snippet == nil)
    }

    @Test("Records decode by name even when the table has columns named like the rank")
    func rankColumnNameClash() throws {
        struct Ranked: FetchableRecord {
            var body: String
            var rank: String
            var sqlitestoreRank: String
            init(row: Row) throws {
                (body, rank, sqlitestoreRank) = (try row["body"], try row["rank"], try row["sqlitestore_rank"])
            }
        }
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (body TEXT, rank TEXT, sqlitestore_rank TEXT)")
        try db.execute("INSERT INTO t VALUES ('first second third fourth', 'a', 'aaa'), ('first first', 'b', 'zzz')")
        let index = FullTextIndex("t_search", on: "t", columns: ["body"])
        try db.create(index)
        let pattern = try #require(SearchPattern(typed: "first"))
        let matches = try db.search(Ranked.self, in: index, matching: pattern)
        #expect(matches.map(\.record.body) == ["first first", "first second third fourth"])
        #expect(matches.map(\.record.rank) == ["b", "a"])
        #expect(matches.map(\.record.sqlitestoreRank) == ["zzz", "aaa"])
    }

    @Test("Codable records work too")
    func codableRecords() throws {
        struct Person: Decodable, FetchableRecord {
            var id: Int64
            var lastname: String
        }
        let db = try makeSearchablePeople()
        let pattern = try #require(SearchPattern(typed: "lovel"))
        let matches = try db.search(Person.self, in: peopleSearch, matching: pattern)
        #expect(matches.map(\.record.lastname) == ["Lovelace"])
    }

    @Test("The pattern binds into hand-written SQL")
    func handWrittenSQL() throws {
        let db = try makeSearchablePeople()
        let pattern = try #require(SearchPattern(typed: "hop"))
        let ids = try db.fetchAll(
            Int64.self, "SELECT rowid FROM people_search WHERE people_search MATCH \(pattern.fts5Query)")
        #expect(ids == [1])
    }

    @Test(
        "Bad search arguments are refused with a clear error",
        arguments: [
            (["age": 2.0], nil, nil, 0, "no column \"age\""),
            (["notes": Double.nan], nil, nil, 0, "finite"),
            ([:], SnippetRequest.highlight(column: "age"), nil, 0, "no column \"age\""),
            ([:], SnippetRequest.excerpt(column: "age"), nil, 0, "no column \"age\""),
            ([:], SnippetRequest.excerpt(words: 0), nil, 0, "1 to 64 words"),
            ([:], SnippetRequest.excerpt(words: 65), nil, 0, "1 to 64 words"),
            ([:], nil, -1, 0, "limit must not be negative"),
            ([:], nil, nil, -1, "offset must not be negative"),
        ] as [([String: Double], SnippetRequest?, Int?, Int, String)])
    func badArguments(
        _ weights: [String: Double], _ snippet: SnippetRequest?, _ limit: Int?, _ offset: Int, _ expected: String
    ) throws {
        let db = try makeSearchablePeople()
        let pattern = try #require(SearchPattern(typed: "grace"))
        let error = try #require(throws: FullTextSearchError.self) {
            try db.search(
                SearchPerson.self, in: peopleSearch, matching: pattern, weights: weights, snippet: snippet,
                limit: limit, offset: offset)
        }
        #expect(error.kind == .invalidArgument)
        #expect(error.message.contains(expected), "\(error.message)")
    }
}
