import Foundation
import SQLiteStore

// A short tour of SQLiteStore on a temporary database: the seeds' people
// table, written with bound arguments and read back with typed values.
do {
    let db = try Database.temporary()
    try db.execute(
        """
        CREATE TABLE peopleInfo (
            peopleInfoID INTEGER PRIMARY KEY AUTOINCREMENT,
            firstname TEXT NOT NULL,
            lastname TEXT NOT NULL,
            age INTEGER)
        """)
    let people: [(String, String, Int?)] = [
        ("Ada", "Lovelace", 36), ("Alan", "Turing", 41), ("Grace", "O'Hopper", nil),
    ]
    try db.transaction { db in
        for (first, last, age) in people {
            try db.execute(
                "INSERT INTO peopleInfo (firstname, lastname, age) VALUES (?, ?, ?)", arguments: [first, last, age])
            print("inserted \(first) \(last) with id \(db.lastInsertedRowID)")
        }
    }
    for row in try db.fetchAll("SELECT * FROM peopleInfo ORDER BY lastname") {
        let name = "\(try row["firstname"] as String) \(try row["lastname"] as String)"
        let age = try row["age"] as Int?
        print(name.padding(toLength: 20, withPad: " ", startingAt: 0), age.map(String.init) ?? "(age unknown)")
    }
} catch {
    FileHandle.standardError.write(Data("sqlitestore-demo: error: \(error)\n".utf8))
    exit(1)
}
