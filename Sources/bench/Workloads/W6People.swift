import RecordsApp
import SQLiteStore

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

extension Workloads {
    /// W6, first variant: the original tutorials' `peopleInfo` table. Insert people with
    /// distinct names in one transaction, then fetch them all back, as the
    /// People app's own record (`RecordsApp.Person`: hand-written
    /// `init(row:)` that checks every value, and `encode(to:)`). The app's
    /// people carry their IDs, 1 to n, which is what the raw side's NULL
    /// keys get in the empty table.
    static var w6People: Workload {
        people(id: "W6a", title: "people: insert + fetch all, the app's Person", target: 1.35) { db, run, people in
            let records = people.enumerated().map { index, person in
                RecordsApp.Person(
                    id: Int64(index + 1), firstName: person.fields.firstname, lastName: person.fields.lastname,
                    age: person.fields.age)
            }
            let fetched = try run.measure {
                try db.transaction { db in
                    for var person in records { try person.insert(db) }
                    return try RecordsApp.Person.fetchAll(db)
                }
            }
            return fetched.map {
                PersonFields(id: $0.id, firstname: $0.firstName, lastname: $0.lastName, age: $0.age ?? -1)
            }
        }
    }

    /// W6, second variant: the same with a `Codable` record.
    static var w6PeopleCodable: Workload {
        people(id: "W6b", title: "people: insert + fetch all, Codable", target: 1.4) { db, run, people in
            let records = people.map { PersonCodable($0.fields) }
            let fetched = try run.measure {
                try db.transaction { db in
                    for var record in records { try record.insert(db) }
                    return try PersonCodable.fetchAll(db)
                }
            }
            return fetched.map(\.fields)
        }
    }

    private static func people(
        id: String, title: String, target: Double, store: @escaping (Database, Run, [Person]) throws -> [PersonFields]
    ) -> Workload {
        Workload(
            id: id, title: title, target: .ratio(target),
            raw: { run in
                let people = makePeople(run.rows)
                let connection = try RawConnection(path: run.path)
                try connection.execute(peopleSchema)
                let insert = try connection.prepare(peopleInsert)
                defer { sqlite3_finalize(insert) }
                let select = try connection.prepare(peopleSelect)
                defer { sqlite3_finalize(select) }
                let fetched = try run.measure {
                    try connection.execute("BEGIN")
                    for person in people {
                        try rawInsert(person.fields, insert, connection)
                    }
                    try connection.execute("COMMIT")
                    return try rawFetchPeople(select, connection)
                }
                return outcome(fetched)
            },
            store: { run in
                let people = makePeople(run.rows)
                let db = try openStore(run.path)
                try db.execute(sql: peopleSchema)
                return outcome(try store(db, run, people))
            })
    }
}

// MARK: - People

/// The original tutorials' table.
let peopleSchema = """
    CREATE TABLE peopleInfo (
        peopleInfoID INTEGER PRIMARY KEY AUTOINCREMENT, firstname TEXT, lastname TEXT, age INTEGER)
    """
let peopleInsert = "INSERT INTO peopleInfo (peopleInfoID, firstname, lastname, age) VALUES (?, ?, ?, ?)"
let peopleSelect = "SELECT * FROM peopleInfo"

/// A person's values, as both sides hand them back.
struct PersonFields {
    var id: Int64?
    var firstname: String
    var lastname: String
    var age: Int
}

/// `count` people with distinct names and no id yet.
func makePeople(_ count: Int) -> [Person] {
    (0..<count).map { Person(PersonFields(id: nil, firstname: "First\($0)", lastname: "Last\($0)", age: $0 % 100)) }
}

func outcome(_ people: [PersonFields]) -> Outcome {
    Outcome(
        count: people.count,
        sum: people.reduce(0) {
            $0 &+ Int($1.id ?? -1) &+ $1.age &+ $1.firstname.utf8.count &+ $1.lastname.utf8.count
        })
}

/// Inserts a person on the C API: text bound without a copy, valid until
/// the statement has run.
func rawInsert(_ person: PersonFields, _ statement: OpaquePointer, _ connection: RawConnection) throws {
    if let id = person.id {
        try connection.check(sqlite3_bind_int64(statement, 1, id), "bind")
    } else {
        try connection.check(sqlite3_bind_null(statement, 1), "bind")
    }
    try connection.check(sqlite3_bind_int64(statement, 4, Int64(person.age)), "bind")
    try person.firstname.withCString { firstname in
        try person.lastname.withCString { lastname in
            try connection.check(sqlite3_bind_text(statement, 2, firstname, -1, nil), "bind")
            try connection.check(sqlite3_bind_text(statement, 3, lastname, -1, nil), "bind")
            try connection.check(sqlite3_step(statement), "insert", expected: SQLITE_DONE)
            try connection.check(sqlite3_reset(statement), "reset")
        }
    }
}

/// Reads all people on the C API, by column index.
func rawFetchPeople(_ statement: OpaquePointer, _ connection: RawConnection) throws
    -> [PersonFields]
{
    var people: [PersonFields] = []
    try connection.forEachRow(statement) {
        people.append(rawPerson(statement))
    }
    return people
}

/// The current row of `SELECT * FROM peopleInfo`.
@inline(__always) func rawPerson(_ statement: OpaquePointer) -> PersonFields {
    PersonFields(
        id: sqlite3_column_int64(statement, 0), firstname: rawText(statement, 1), lastname: rawText(statement, 2),
        age: Int(sqlite3_column_int64(statement, 3)))
}

/// A text column as a String (NULL as empty).
@inline(__always) func rawText(_ statement: OpaquePointer, _ column: Int32) -> String {
    guard let text = sqlite3_column_text(statement, column) else { return "" }
    return String(
        decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
}

/// W6's and W7's record, with hand-written row code.
struct Person: FetchableRecord, PersistableRecord {
    static let tableName = "peopleInfo"
    static let primaryKey = "peopleInfoID"
    var fields: PersonFields

    init(_ fields: PersonFields) { self.fields = fields }

    init(row: Row) throws {
        fields = PersonFields(
            id: try row["peopleInfoID"], firstname: try row["firstname"], lastname: try row["lastname"],
            age: try row["age"])
    }

    func encode(to columns: inout RecordColumns) {
        columns["peopleInfoID"] = fields.id
        columns["firstname"] = fields.firstname
        columns["lastname"] = fields.lastname
        columns["age"] = fields.age
    }

    mutating func didInsert(rowID: Int64) { fields.id = rowID }
}

/// W6's `Codable` record.
struct PersonCodable: Codable, FetchableRecord, PersistableRecord {
    static let tableName = "peopleInfo"
    static let primaryKey = "peopleInfoID"
    var peopleInfoID: Int64?
    var firstname: String
    var lastname: String
    var age: Int

    init(_ fields: PersonFields) {
        (peopleInfoID, firstname, lastname, age) = (fields.id, fields.firstname, fields.lastname, fields.age)
    }

    var fields: PersonFields { PersonFields(id: peopleInfoID, firstname: firstname, lastname: lastname, age: age) }

    mutating func didInsert(rowID: Int64) { peopleInfoID = rowID }
}
