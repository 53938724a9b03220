import Foundation
import SQLiteStore

/// A person of the People app: a row of `peopleInfo`.
public struct Person: Sendable, Equatable, Hashable, Identifiable, Codable {
    /// The row's ID (`peopleInfoID`), assigned by the database.
    public internal(set) var id: Int64
    /// The first name.
    public var firstName: String { willSet { keepVersion() } }
    /// The last name.
    public var lastName: String { willSet { keepVersion() } }
    /// The age, nil when the row has none (the original tutorial's table allows NULL).
    public var age: Int? { willSet { keepVersion() } }
    /// The version of the stored row this person was read from (see
    /// ``RecordVersion``); for a person made in memory, that of the row its
    /// fields make. Editing a field in memory leaves it as it was: it is
    /// what a conditional write (``PeopleStore/update(id:with:ifVersion:)``)
    /// expects to find.
    public internal(set) var version: RecordVersion {
        get { storedVersion ?? Self.version(id: id, firstName: firstName, lastName: lastName, age: age) }
        set { storedVersion = newValue }
    }
    /// The version when it is not simply that of the fields: read from a
    /// row (where a NULL name reads as empty), or kept when a field was
    /// edited. Nil for a person made in memory or just inserted, whose
    /// version is worked out when asked for: most never are (a bulk insert).
    private var storedVersion: RecordVersion?

    /// Creates a person.
    public init(id: Int64, firstName: String, lastName: String, age: Int?) {
        self.id = id
        self.firstName = firstName
        self.lastName = lastName
        self.age = age
    }

    init(id: Int64, firstName: String, lastName: String, age: Int?, version: RecordVersion) {
        self.init(id: id, firstName: firstName, lastName: lastName, age: age)
        storedVersion = version
    }

    /// Before a field changes: keeps the version the fields made until now.
    private mutating func keepVersion() {
        if storedVersion == nil { storedVersion = version }
    }

    /// "First Last".
    public var fullName: String {
        [firstName, lastName].filter { !$0.isEmpty }.joined(separator: " ")
    }

    private enum CodingKeys: String, CodingKey {
        case id, firstName, lastName, age
    }

    /// Decodes the four fields; the version is that of the row they make.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(Int64.self, forKey: .id),
            firstName: try container.decode(String.self, forKey: .firstName),
            lastName: try container.decode(String.self, forKey: .lastName),
            age: try container.decodeIfPresent(Int.self, forKey: .age))
    }

    /// Encodes every key; a missing age is `null`, not left out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(firstName, forKey: .firstName)
        try container.encode(lastName, forKey: .lastName)
        try container.encode(age, forKey: .age)
    }
}

extension Person {
    /// Equal when the fields are; the version is left out: it tells which
    /// stored row a value was read from, and a value edited in memory keeps
    /// it, so comparing it would tell two equal values apart.
    public static func == (lhs: Person, rhs: Person) -> Bool {
        lhs.id == rhs.id && lhs.firstName == rhs.firstName && lhs.lastName == rhs.lastName && lhs.age == rhs.age
    }

    /// Hashes the fields, as ``==`` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(firstName)
        hasher.combine(lastName)
        hasher.combine(age)
    }
}

extension Person {
    /// The columns of `peopleInfo`, as the original tutorial named them.
    enum Columns: String, TableColumn {
        case id = "peopleInfoID"
        case firstName = "firstname"
        case lastName = "lastname"
        case age
    }
}

extension Person: FetchableRecord, PersistableRecord {
    /// The original tutorial's table.
    public static let tableName = "peopleInfo"
    /// Its key column.
    public static let primaryKey = Columns.id.rawValue

    /// A person from a row of `peopleInfo`: NULL names read as empty, a
    /// NULL age as nil.
    ///
    /// - Throws: ``UnreadableRowError`` when a stored value is not what its
    ///   field holds (text in the age, a blob in a name), naming each.
    public init(row: Row) throws { try self.init(row: row, strict: true) }

    /// Writes the four columns.
    public func encode(to columns: inout RecordColumns) {
        columns[Columns.id] = id
        columns[Columns.firstName] = firstName
        columns[Columns.lastName] = lastName
        columns[Columns.age] = age
    }

    /// Takes the ID SQLite gave the new row, and the version of the row
    /// with it.
    public mutating func didInsert(rowID: Int64) {
        id = rowID
        // The row holds the fields as they are now: its version is theirs.
        storedVersion = nil
    }
}

extension Person: AppRecord {
    static let app = AppDatabase.App.people
    static let kind = "person"
    var recordVersion: RecordVersion? { version }
    /// What the version covers: every column.
    static let versionColumns = Columns.allCases.map(\.rawValue)
    static let selection: SQL = "\(columns: Columns.allCases)"

    init(row: Row, strict: Bool) throws {
        var reader = RowReader(row, table: Self.tableName)
        let id = try reader.key(Columns.id)
        let firstName = try reader.text(Columns.firstName, field: "first name")
        let lastName = try reader.text(Columns.lastName, field: "last name")
        let age = try reader.integer(Columns.age, field: "age")
        if strict { try reader.check(kind: Self.kind, id: id) }
        // From the stored values: a NULL name is another version than an
        // empty one. Values of their fields' own types are hashed as read;
        // a row with any other is hashed from the row itself.
        let version =
            reader.readsAsStored
            ? Self.version(id: id, firstName: firstName, lastName: lastName, age: age)
            : try RecordVersion.of(kind: Self.kind, row: row, columns: Self.versionColumns)
        // The original tutorial's table allows NULL names; they read as empty.
        self.init(id: id, firstName: firstName ?? "", lastName: lastName ?? "", age: age, version: version)
    }

    /// The version of the row these values make, in the order of
    /// ``versionColumns``; a nil name is NULL.
    static func version(id: Int64, firstName: String?, lastName: String?, age: Int?) -> RecordVersion {
        var input = versionSeed
        input.append(integer: id)
        input.append(text: firstName)
        input.append(text: lastName)
        input.append(integer: age.map(Int64.init))
        return input.version()
    }

    /// The hash of the kind, which every version starts with.
    private static let versionSeed = VersionInput(kind: kind)
}

/// The fields of a person's form: the names its problems carry, and the
/// labels forms show and messages start with ("First name is required.").
public enum PersonField: String, FormField, CaseIterable {
    /// ``Person/firstName``.
    case firstName = "first name"
    /// ``Person/lastName``.
    case lastName = "last name"
    /// ``Person/age``.
    case age

    /// "First name", "Last name", "Age".
    public var label: String {
        switch self {
        case .firstName: "First name"
        case .lastName: "Last name"
        case .age: "Age"
        }
    }
}

/// The rules for a person's fields.
public enum PersonRules {
    /// The longest first or last name, in characters.
    public static let maxNameLength = 100
    /// The ages a person can have.
    public static let ages = 0...150

    /// Whether an age typed as text says the age is unknown: `none`,
    /// ignoring case and surrounding spaces.
    public static func isNoAge(_ text: String) -> Bool {
        text.trimmingCharacters(in: .whitespaces).lowercased() == "none"
    }

    /// Parses an age typed as text ("42"), for forms and command lines.
    ///
    /// - Throws: ``ValidationError`` when the text is not a whole number in
    ///   ``ages``.
    public static func age(fromText text: String) throws -> Int {
        var validator = Validator()
        let age = validator.age(text)
        try validator.check()
        return age
    }
}

extension Validator {
    /// Parses and checks an age typed as text; 0 when it has a problem.
    mutating func age(_ text: String) -> Int {
        let ages = PersonRules.ages
        guard let age = Int(text.trimmingCharacters(in: .whitespaces)), ages.contains(age) else {
            fail(PersonField.age, Self.rangeProblem(ages))
            return 0
        }
        return age
    }
}

/// The fields of a new person, as typed.
public struct PersonDraft: Sendable, Equatable {
    /// The first name; surrounding spaces are trimmed.
    public var firstName: String
    /// The last name; surrounding spaces are trimmed.
    public var lastName: String
    /// The age, from 0 to 150; nil when unknown.
    public var age: Int?

    /// Creates a draft.
    public init(firstName: String, lastName: String, age: Int?) {
        self.firstName = firstName
        self.lastName = lastName
        self.age = age
    }

    /// The draft with names trimmed, or the problems that keep it from
    /// being saved: empty or over-long names, control characters, an age
    /// outside 0-150.
    public func validated() throws -> PersonDraft {
        var validator = Validator()
        let first = validator.text(firstName, field: PersonField.firstName, maxLength: PersonRules.maxNameLength)
        let last = validator.text(lastName, field: PersonField.lastName, maxLength: PersonRules.maxNameLength)
        if let age { validator.integer(age, field: PersonField.age, range: PersonRules.ages) }
        try validator.check()
        return PersonDraft(firstName: first, lastName: last, age: age)
    }

    /// A validated draft from a form's text fields (or a command line),
    /// with the problems of every field reported together. An age that is
    /// nil, blank or `none` is unknown.
    public static func parse(firstName: String, lastName: String, age: String?) throws -> PersonDraft {
        var validator = Validator()
        let first = validator.text(firstName, field: PersonField.firstName, maxLength: PersonRules.maxNameLength)
        let last = validator.text(lastName, field: PersonField.lastName, maxLength: PersonRules.maxNameLength)
        let typed = age?.trimmingCharacters(in: .whitespaces) ?? ""
        let age = Validator.isBlank(typed) || PersonRules.isNoAge(typed) ? nil : validator.age(typed)
        try validator.check()
        return PersonDraft(firstName: first, lastName: last, age: age)
    }
}

/// Changes to a person's fields; nil leaves a field as it is.
public struct PersonChanges: Sendable, Equatable {
    /// A new first name.
    public var firstName: String?
    /// A new last name.
    public var lastName: String?
    /// A new age.
    public var age: Int?
    /// Make the age unknown (NULL); ``age`` must then be nil.
    public var clearsAge: Bool

    /// Creates changes.
    public init(firstName: String? = nil, lastName: String? = nil, age: Int? = nil, clearsAge: Bool = false) {
        self.firstName = firstName
        self.lastName = lastName
        self.age = age
        self.clearsAge = clearsAge
    }

    /// Whether nothing would change.
    public var isEmpty: Bool { firstName == nil && lastName == nil && age == nil && !clearsAge }

    /// The changes with names trimmed, or the problems found (the same
    /// rules as ``PersonDraft/validated()``; an empty change set is one).
    public func validated() throws -> PersonChanges {
        if isEmpty {
            throw ValidationError(field: "changes", message: "Nothing to change: give a first name, last name or age.")
        }
        var validator = Validator()
        let first = firstName.map {
            validator.text($0, field: PersonField.firstName, maxLength: PersonRules.maxNameLength)
        }
        let last = lastName.map {
            validator.text($0, field: PersonField.lastName, maxLength: PersonRules.maxNameLength)
        }
        if let age { validator.integer(age, field: PersonField.age, range: PersonRules.ages) }
        if age != nil && clearsAge { validator.fail(PersonField.age, "must be given or cleared, not both") }
        try validator.check()
        return PersonChanges(firstName: first, lastName: last, age: age, clearsAge: clearsAge)
    }

    /// Validated changes from text fields; nil leaves a field as it is, and
    /// an age of `none` makes it unknown. The problems of every field are
    /// reported together.
    public static func parse(firstName: String?, lastName: String?, age: String?) throws -> PersonChanges {
        var validator = Validator()
        let first = firstName.map {
            validator.text($0, field: PersonField.firstName, maxLength: PersonRules.maxNameLength)
        }
        let last = lastName.map {
            validator.text($0, field: PersonField.lastName, maxLength: PersonRules.maxNameLength)
        }
        let clearsAge = age.map(PersonRules.isNoAge) ?? false
        let newAge = clearsAge ? nil : age.map { validator.age($0) }
        try validator.check()
        return try PersonChanges(firstName: first, lastName: last, age: newAge, clearsAge: clearsAge).validated()
    }
}

/// How the list of people is ordered.
public enum PersonSort: String, Sendable, CaseIterable, Codable {
    /// By last name, then first name (ignoring case and accents).
    case name
    /// Youngest first; unknown ages last.
    case age
    /// The last added first.
    case newest
}
