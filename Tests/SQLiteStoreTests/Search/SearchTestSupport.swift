import Foundation
import SQLiteStore

/// A person of the search tests' `people` table.
struct SearchPerson: FetchableRecord, Equatable {
    var id: Int64
    var firstname: String?
    var lastname: String?
    var notes: String?

    init(row: Row) throws {
        id = try row["id"]
        firstname = try row["firstname"]
        lastname = try row["lastname"]
        notes = try row["notes"]
    }
}

/// The index the search tests declare over `people`.
let peopleSearch = FullTextIndex(
    "people_search", on: "people", columns: ["firstname", "lastname", "notes"], rowID: "id")

/// A database with the `people` table and the given rows, before any index.
func makePeopleDatabase(_ people: [(String?, String?, String?)] = sampleSearchPeople) throws -> Database {
    let db = try Database.inMemory()
    try db.execute(
        "CREATE TABLE people (id INTEGER PRIMARY KEY, firstname TEXT, lastname TEXT, notes TEXT)")
    for (firstname, lastname, notes) in people {
        try db.execute("INSERT INTO people (firstname, lastname, notes) VALUES (\(firstname), \(lastname), \(notes))")
    }
    return db
}

/// A database with `people`, its rows and the index.
func makeSearchablePeople(_ people: [(String?, String?, String?)] = sampleSearchPeople) throws -> Database {
    let db = try makePeopleDatabase(people)
    try db.create(peopleSearch)
    return db
}

let sampleSearchPeople: [(String?, String?, String?)] = [
    ("Grace", "Hopper", "wrote the first compiler"),  // 1
    ("Åsa", "Åkesson", "likes kept gardens"),  // 2
    ("Ada", "Lovelace", "notes on the analytical engine"),  // 3
    ("Élise", "Gracey", nil),  // 4
    ("Pat", "O'Brien", "kept AND saved"),  // 5
]

extension Database {
    /// The ids of the people a typed text finds, best first.
    func searchIDs(_ text: String, prefix: SearchPattern.PrefixMatching = .lastWord) throws -> [Int64]? {
        guard let pattern = SearchPattern(typed: text, prefix: prefix) else { return nil }
        return try search(SearchPerson.self, in: peopleSearch, matching: pattern).map(\.record.id)
    }
}

/// Any row, kept as it is.
struct KeptRow: FetchableRecord {
    var row: Row
    init(row: Row) { self.row = row }
}
