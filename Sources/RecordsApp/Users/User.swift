import Foundation
import SQLiteStore

/// A registered user of the Users app: a row of `User_Master`,
/// without its password hash, which never leaves ``UsersStore``.
public struct User: Sendable, Equatable, Hashable, Identifiable, Codable {
    /// The row's ID (`UID`), assigned by the database.
    public internal(set) var id: Int64
    /// The first name (`USER_FNAME`).
    public var firstName: String
    /// The last name (`USER_LNAME`).
    public var lastName: String
    /// The email address, as typed (`USER_EMAIL`); unique ignoring case.
    public var email: String
    /// The mobile number: digits, perhaps after a `+` (`USER_MOBILE`).
    public var mobile: String
    /// The state (`USER_STATE`).
    public var state: String
    /// The city (`USER_CITY`).
    public var city: String
    /// The postal code: digits (`USER_PINCODE`).
    public var pincode: String
    /// The postal address (`USER_ADDRESS`).
    public var address: String
    /// The gender (`USER_GENDER`).
    public var gender: Gender
    /// The date of birth as `YYYY-MM-DD` (`USER_DOB`). A row imported from
    /// the original tutorial's own database keeps the text the tutorial stored.
    public var dateOfBirth: String
    /// The profile picture's file name (`USER_IMAGENAME`).
    public var imageName: String
    /// The version of the stored row this user was read from (see
    /// ``RecordVersion``): every profile field and the email, never the
    /// password hash, so changing the password keeps it. For a user made
    /// in memory, that of the row its fields make. Editing a field in
    /// memory leaves it as it was: it is what a conditional write
    /// (``UsersStore/updateProfile(id:with:ifVersion:)``) expects to find.
    public internal(set) var version: RecordVersion

    /// Creates a user.
    public init(
        id: Int64, firstName: String, lastName: String, email: String, mobile: String, state: String, city: String,
        pincode: String, address: String, gender: Gender, dateOfBirth: String, imageName: String
    ) {
        self.init(
            id: id, firstName: firstName, lastName: lastName, email: email, mobile: mobile, state: state, city: city,
            pincode: pincode, address: address, gender: gender, dateOfBirth: dateOfBirth, imageName: imageName,
            version: Self.version(
                id: id, imageName: imageName, firstName: firstName, lastName: lastName, email: email, mobile: mobile,
                state: state, city: city, pincode: pincode, address: address, genderCode: gender.rawValue,
                dateOfBirth: dateOfBirth))
    }

    init(
        id: Int64, firstName: String, lastName: String, email: String, mobile: String, state: String, city: String,
        pincode: String, address: String, gender: Gender, dateOfBirth: String, imageName: String,
        version: RecordVersion
    ) {
        self.version = version
        self.id = id
        self.firstName = firstName
        self.lastName = lastName
        self.email = email
        self.mobile = mobile
        self.state = state
        self.city = city
        self.pincode = pincode
        self.address = address
        self.gender = gender
        self.dateOfBirth = dateOfBirth
        self.imageName = imageName
    }

    /// "First Last".
    public var fullName: String {
        [firstName, lastName].filter { !$0.isEmpty }.joined(separator: " ")
    }

    private enum CodingKeys: String, CodingKey {
        case id, firstName, lastName, email, mobile, state, city, pincode, address, gender, dateOfBirth, imageName
    }

    /// Decodes the profile fields; the version is that of the row they make.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func text(_ key: CodingKeys) throws -> String { try container.decode(String.self, forKey: key) }
        self.init(
            id: try container.decode(Int64.self, forKey: .id), firstName: try text(.firstName),
            lastName: try text(.lastName), email: try text(.email), mobile: try text(.mobile), state: try text(.state),
            city: try text(.city), pincode: try text(.pincode), address: try text(.address),
            gender: try container.decode(Gender.self, forKey: .gender), dateOfBirth: try text(.dateOfBirth),
            imageName: try text(.imageName))
    }

    /// Encodes the profile fields (not the version: the JSON stays as it was).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(firstName, forKey: .firstName)
        try container.encode(lastName, forKey: .lastName)
        try container.encode(email, forKey: .email)
        try container.encode(mobile, forKey: .mobile)
        try container.encode(state, forKey: .state)
        try container.encode(city, forKey: .city)
        try container.encode(pincode, forKey: .pincode)
        try container.encode(address, forKey: .address)
        try container.encode(gender, forKey: .gender)
        try container.encode(dateOfBirth, forKey: .dateOfBirth)
        try container.encode(imageName, forKey: .imageName)
    }
}

/// The genders a user can give: a fixed set, stored as the original tutorial's one-digit
/// `USER_GENDER` code.
///
/// Codes 0-2 are those of ISO/IEC 5218 (0 not known, 1 male, 2 female), the
/// published convention for a one-digit code, so an original tutorial's database's values
/// keep their meaning when it is imported; 3 (other) is this app's.
public enum Gender: Int, Sendable, CaseIterable, Codable, CustomStringConvertible {
    /// Not given, or the user prefers not to say.
    case unspecified = 0
    /// Male.
    case male = 1
    /// Female.
    case female = 2
    /// Another gender.
    case other = 3

    /// The name typed and shown: "female".
    public var name: String {
        switch self {
        case .unspecified: "unspecified"
        case .male: "male"
        case .female: "female"
        case .other: "other"
        }
    }

    /// The gender named `text`, ignoring case and surrounding spaces.
    public init?(name text: String) {
        let name = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard let match = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }

    /// The names, in the order forms offer them.
    public static var names: [String] { allCases.map(\.name) }

    public var description: String { name }

    /// Encoded as its name, not its code.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let gender = Gender(name: name) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\"\(name)\" is not one of \(Self.names.joined(separator: ", "))")
        }
        self = gender
    }

    /// Encodes the name.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}

/// A day of the Gregorian calendar, without time or time zone: what a date
/// of birth is.
public struct CalendarDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The year, 1 to 9999.
    public let year: Int
    /// The month, 1 to 12.
    public let month: Int
    /// The day of the month, 1 to 28-31.
    public let day: Int

    /// The date, or nil when there is no such day (`2023-02-29`).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month),
            (1...Self.daysIn(month: month, year: year)).contains(day)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses exactly `YYYY-MM-DD` (ISO 8601's calendar date), or nil when
    /// the text has another form or names no real day.
    public init?(iso text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy { ("0"..."9").contains($0) } }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// The Gregorian date of `now` in `timeZone` (today, where the user is,
    /// by default).
    public static func today(timeZone: TimeZone = .current, now: Date = Date()) -> CalendarDate {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: now)
        // The components of a real instant always name a real day.
        return CalendarDate(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1)
            ?? CalendarDate(uncheckedYear: 1970, month: 1, day: 1)
    }

    private init(uncheckedYear year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The same day `years` earlier; 28 February for 29 February in a
    /// common year.
    public func subtracting(years: Int) -> CalendarDate {
        let target = max(1, year - years)
        return CalendarDate(year: target, month: month, day: min(day, Self.daysIn(month: month, year: target)))
            ?? CalendarDate(uncheckedYear: target, month: month, day: 1)
    }

    /// `YYYY-MM-DD`.
    public var description: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public static func < (lhs: CalendarDate, rhs: CalendarDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

extension User {
    /// Equal when the fields are; the version is left out: it tells which
    /// stored row a value was read from, and a value edited in memory keeps
    /// it, so comparing it would tell two equal values apart.
    public static func == (lhs: User, rhs: User) -> Bool {
        lhs.profileFields == rhs.profileFields
    }

    /// Hashes the fields, as ``==`` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(profileFields)
    }

    /// Every field but the version.
    private var profileFields: [String] {
        [
            String(id), firstName, lastName, email, mobile, state, city, pincode, address, String(gender.rawValue),
            dateOfBirth, imageName,
        ]
    }
}

extension User {
    /// The columns of `User_Master`, as the original tutorial named them, in
    /// the table's order (see ``UsersSchema``).
    enum Columns: String, TableColumn {
        case id = "UID"
        case imageName = "USER_IMAGENAME"
        case firstName = "USER_FNAME"
        case lastName = "USER_LNAME"
        case email = "USER_EMAIL"
        /// The password's hash; never part of a ``User``.
        case passwordHash = "USER_PASS"
        case mobile = "USER_MOBILE"
        case state = "USER_STATE"
        case city = "USER_CITY"
        case pincode = "USER_PINCODE"
        case address = "USER_ADDRESS"
        case gender = "USER_GENDER"
        case dateOfBirth = "USER_DOB"
    }
}

extension User: FetchableRecord, PersistableRecord {
    /// The original tutorial's table.
    public static let tableName = "User_Master"
    /// Its key column.
    public static let primaryKey = Columns.id.rawValue

    /// A user from a row of `User_Master` (its password hash is never
    /// read): NULL text reads as empty, a NULL gender as unspecified.
    ///
    /// - Throws: ``UnreadableRowError`` when a stored value is not what its
    ///   field holds (a blob in a name, a gender code outside ``Gender``),
    ///   naming each.
    public init(row: Row) throws { try self.init(row: row, strict: true) }

    /// Writes every column but the password hash, which a user does not
    /// hold.
    public func encode(to columns: inout RecordColumns) {
        columns[Columns.id] = id
        columns[Columns.imageName] = imageName
        columns[Columns.firstName] = firstName
        columns[Columns.lastName] = lastName
        columns[Columns.email] = email
        columns[Columns.mobile] = mobile
        columns[Columns.state] = state
        columns[Columns.city] = city
        columns[Columns.pincode] = pincode
        columns[Columns.address] = address
        columns[Columns.gender] = gender.rawValue
        columns[Columns.dateOfBirth] = dateOfBirth
    }

    /// Takes the ID SQLite gave the new row, and the version of the row
    /// with it.
    public mutating func didInsert(rowID: Int64) {
        id = rowID
        version = Self.version(
            id: id, imageName: imageName, firstName: firstName, lastName: lastName, email: email, mobile: mobile,
            state: state, city: city, pincode: pincode, address: address, genderCode: gender.rawValue,
            dateOfBirth: dateOfBirth)
    }
}

extension User: AppRecord {
    static let app = AppDatabase.App.users
    static let kind = "user"
    var recordVersion: RecordVersion? { version }
    /// What the version covers: every column but the password hash, in
    /// the table's order.
    static let versionColumns = Columns.allCases.filter { $0 != .passwordHash }.map(\.rawValue)
    static let selection: SQL = "\(columns: Columns.allCases.filter { $0 != .passwordHash })"

    init(row: Row, strict: Bool) throws {
        var reader = RowReader(row, table: Self.tableName)
        let id = try reader.key(Columns.id)
        func text(_ column: Columns, _ field: UserField) throws -> String? {
            try reader.text(column, field: field.rawValue)
        }
        let first = try text(.firstName, .firstName)
        let last = try text(.lastName, .lastName)
        let email = try text(.email, .email)
        let mobile = try text(.mobile, .mobile)
        let state = try text(.state, .state)
        let city = try text(.city, .city)
        let pincode = try text(.pincode, .pincode)
        let address = try text(.address, .address)
        var gender = Gender.unspecified
        let genderCode = try reader.integer(Columns.gender, field: UserField.gender.rawValue)
        if let code = genderCode {
            if let known = Gender(rawValue: code) {
                gender = known
            } else {
                let codes = Gender.allCases.map { String($0.rawValue) }.joined(separator: ", ")
                reader.fail(
                    try row[Columns.gender], column: Columns.gender, field: UserField.gender.rawValue,
                    expected: "one of \(codes)")
            }
        }
        // The original tutorial's DATE column may hold a number a tool stored; its text.
        let dateOfBirth = try reader.textOrNumber(Columns.dateOfBirth, field: UserField.dateOfBirth.rawValue)
        let imageName = try text(.imageName, .imageName)
        if strict { try reader.check(kind: Self.kind, id: id) }
        // From the stored values: NULL is another version than empty text.
        // Values of their fields' own types are hashed as read; a row with
        // any other is hashed from the row itself.
        let version =
            reader.readsAsStored
            ? Self.version(
                id: id, imageName: imageName, firstName: first, lastName: last, email: email, mobile: mobile,
                state: state, city: city, pincode: pincode, address: address, genderCode: genderCode,
                dateOfBirth: dateOfBirth)
            : try RecordVersion.of(kind: Self.kind, row: row, columns: Self.versionColumns)
        // NOT NULL in the table; NULL from another tool reads as empty.
        self.init(
            id: id, firstName: first ?? "", lastName: last ?? "", email: email ?? "", mobile: mobile ?? "",
            state: state ?? "", city: city ?? "", pincode: pincode ?? "", address: address ?? "", gender: gender,
            dateOfBirth: dateOfBirth ?? "", imageName: imageName ?? "", version: version)
    }

    /// The version of the row these values make, in the order of
    /// ``versionColumns`` (the table's, without the password hash); nil is
    /// NULL.
    static func version(
        id: Int64, imageName: String?, firstName: String?, lastName: String?, email: String?, mobile: String?,
        state: String?, city: String?, pincode: String?, address: String?, genderCode: Int?, dateOfBirth: String?
    ) -> RecordVersion {
        var input = versionSeed
        input.append(integer: id)
        input.append(text: imageName)
        input.append(text: firstName)
        input.append(text: lastName)
        input.append(text: email)
        input.append(text: mobile)
        input.append(text: state)
        input.append(text: city)
        input.append(text: pincode)
        input.append(text: address)
        input.append(integer: genderCode.map(Int64.init))
        input.append(text: dateOfBirth)
        return input.version()
    }

    /// The hash of the kind, which every version starts with.
    private static let versionSeed = VersionInput(kind: kind)
}
