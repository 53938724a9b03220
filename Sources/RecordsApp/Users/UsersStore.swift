import PasswordHashing
import SQLiteStore

/// Registers users, checks their passwords, and reads and edits their
/// profiles. Every value is a bound argument; every write is validated
/// first and runs in a transaction; passwords are hashed (see
/// ``PasswordHashingService``) and never stored, logged or returned.
///
/// ```swift
/// let store = UsersStore(database: database)
/// let ada = try store.register(form)                         // ValidationError: every bad field
/// let same = try store.authenticate(email: "ADA@example.com", password: typed)
/// try store.updateProfile(id: ada.id, with: ProfileChanges(city: "London"))
/// try store.changePassword(id: ada.id, current: typed, new: newOne, confirmation: newOne)
/// ```
///
/// Hashing is slow on purpose (about 0.4 s at the default cost), and runs
/// outside the database lock; call the methods that hash (``register(_:)``,
/// ``authenticate(email:password:)``, ``changePassword(id:current:new:confirmation:)``)
/// off the main actor in an app, as the view models do.
public struct UsersStore: Sendable {
    private let database: AppDatabase
    private let hasher: any PasswordHashingService
    private let today: @Sendable () -> CalendarDate

    /// Creates a store on the app's database.
    ///
    /// - Parameters:
    ///   - hasher: Hashes and verifies passwords; the default is scrypt at
    ///     OWASP's minimum cost. Tests pass cheaper parameters.
    ///   - today: The day dates of birth must be before; the local date by
    ///     default.
    public init(
        database: AppDatabase, hasher: any PasswordHashingService = PasswordHasher(),
        today: @escaping @Sendable () -> CalendarDate = { CalendarDate.today() }
    ) {
        self.database = database
        self.hasher = hasher
        self.today = today
    }

    /// The day dates of birth are checked against.
    public var currentDate: CalendarDate { today() }

    private static let columns: SQL = """
        UID, USER_IMAGENAME, USER_FNAME, USER_LNAME, USER_EMAIL, USER_MOBILE, USER_STATE, USER_CITY,
        USER_PINCODE, USER_ADDRESS, USER_GENDER, USER_DOB
        """

    // MARK: - Reading

    /// Every user, in the given order.
    ///
    /// - Throws: ``UnreadableRowError`` naming the first row with a stored
    ///   value that is not what its field holds (see ``list(sortedBy:)``,
    ///   which reads the others all the same).
    public func all(sortedBy sort: UserSort = .name) throws -> [User] {
        try list(sortedBy: sort).get()
    }

    /// Every user who can be read, in the given order, and the rows that
    /// cannot (a blob in a name, a gender code outside ``Gender``), each
    /// named with its ID and columns.
    public func list(sortedBy sort: UserSort = .name) throws -> RecordList<User> {
        try database.read(for: .users) { db in
            try readList(db, "SELECT \(Self.columns) FROM User_Master ORDER BY \(Self.orderBy(sort))") {
                try Self.user(from: $0)
            }
        }
    }

    /// The user with that ID, or nil.
    ///
    /// - Throws: ``UnreadableRowError`` when a stored value of the row is
    ///   not what its field holds.
    public func user(id: Int64) throws -> User? {
        try database.read(for: .users) { db in try Self.user(db, id: id) }
    }

    /// The user with that email address, ignoring case, or nil.
    ///
    /// - Throws: ``UnreadableRowError`` when a stored value of the row is
    ///   not what its field holds.
    public func user(email: String) throws -> User? {
        try database.read(for: .users) { db in
            let address = email.trimmingCharacters(in: .whitespacesAndNewlines)
            return try db.fetchOne("SELECT \(Self.columns) FROM User_Master WHERE USER_EMAIL = \(address)").map {
                try Self.user(from: $0)
            }
        }
    }

    /// How many users there are.
    public func count() throws -> Int {
        try database.read(for: .users) { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM User_Master") ?? 0 }
    }

    // MARK: - Registering and logging in

    /// Registers a user: validates every field, hashes the password, saves.
    ///
    /// - Throws: ``ValidationError`` with one message per field at fault,
    ///   including "email is already registered" (nothing is written); a
    ///   database or hashing error.
    @discardableResult
    public func register(_ form: RegistrationForm) throws -> User {
        let (profile, password) = try form.validatedWithPassword(today: today())
        // Checked before the slow hash, and again by the unique index. Only
        // whether the address is taken: the owner's row need not be readable.
        let taken = try database.read(for: .users) { db in
            try db.fetchOne(Int.self, "SELECT 1 FROM User_Master WHERE USER_EMAIL = ?", arguments: [profile.email])
        }
        if taken != nil { throw Self.emailTaken }
        let hash = try hasher.hash(password)
        return try Self.mappingDuplicateEmail {
            try database.write(for: .users) { db in
                try db.execute(
                    """
                    INSERT INTO User_Master (
                        USER_IMAGENAME, USER_FNAME, USER_LNAME, USER_EMAIL, USER_PASS, USER_MOBILE, USER_STATE,
                        USER_CITY, USER_PINCODE, USER_ADDRESS, USER_GENDER, USER_DOB)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    arguments: [
                        profile.imageName, profile.firstName, profile.lastName, profile.email, hash, profile.mobile,
                        profile.state, profile.city, profile.pincode, profile.address, profile.gender.rawValue,
                        profile.dateOfBirth.description,
                    ])
                return User(id: db.lastInsertedRowID, profile: profile)
            }
        }
    }

    /// The user whose email (ignoring case) and password these are.
    ///
    /// An unknown email and a wrong password fail alike, with
    /// ``AuthenticationError/invalidCredentials``, and cost alike: for an
    /// unknown email the hasher runs a dummy verification of the same cost,
    /// so the time taken does not tell which emails are registered. A hash
    /// made at an older cost is replaced after a successful login (best
    /// effort: a failure to save it does not fail the login).
    ///
    /// - Throws: ``AuthenticationError/invalidCredentials``; a database error;
    ///   a ``PasswordHashingError`` when the stored hash is damaged.
    public func authenticate(email: String, password: String) throws -> User {
        let address = email.trimmingCharacters(in: .whitespacesAndNewlines)
        let account = try database.read(for: .users) { db in
            try db.fetchOne("SELECT \(Self.columns), USER_PASS FROM User_Master WHERE USER_EMAIL = \(address)").map {
                row in (user: try Self.user(from: row), hash: try row["USER_PASS"] as String)
            }
        }
        guard let account else {
            hasher.performDummyVerification(password)
            throw AuthenticationError.invalidCredentials
        }
        guard try hasher.verify(password, against: account.hash) else {
            throw AuthenticationError.invalidCredentials
        }
        if (try? hasher.needsRehash(account.hash)) == true, let newHash = try? hasher.hash(password) {
            _ = try? database.write(for: .users) { db in
                // Only if no one changed the password meanwhile.
                try db.execute(
                    "UPDATE User_Master SET USER_PASS = ? WHERE UID = ? AND USER_PASS = ?",
                    arguments: [newHash, account.user.id, account.hash])
            }
        }
        return account.user
    }

    /// Changes a password, given the current one.
    ///
    /// - Throws: ``ValidationError`` when the new password or its
    ///   confirmation breaks the rules (checked first);
    ///   ``RecordNotFoundError``; ``AuthenticationError/wrongCurrentPassword``.
    ///   Nothing is written on any error.
    public func changePassword(id: Int64, current: String, new: String, confirmation: String) throws {
        try validateNewPassword(new, confirmation: confirmation)
        guard let stored = try database.read(for: .users, { db in try Self.passwordHash(db, id: id) }) else {
            throw RecordNotFoundError(kind: "user", id: id)
        }
        guard try hasher.verify(current, against: stored) else { throw AuthenticationError.wrongCurrentPassword }
        let hash = try hasher.hash(new)
        try database.write(for: .users) { db in
            try db.execute(
                "UPDATE User_Master SET USER_PASS = ? WHERE UID = ? AND USER_PASS = ?",
                arguments: [hash, id, stored])
            if db.changesCount == 0 {
                // Deleted, or its password changed, since it was checked.
                guard try Self.passwordHash(db, id: id) != nil else { throw RecordNotFoundError(kind: "user", id: id) }
                throw AuthenticationError.wrongCurrentPassword
            }
        }
    }

    // MARK: - Editing

    /// Changes the given profile fields (not the password) and returns the
    /// result.
    ///
    /// Only the given columns are written, so this is also how a row with
    /// an unreadable value is mended: give that field a new value.
    ///
    /// - Throws: ``ValidationError`` (every field at fault, or an email
    ///   another user has), ``RecordNotFoundError``, ``UnreadableRowError``
    ///   when a field not given still holds an unreadable value, or a
    ///   database error. Nothing is written on any error.
    @discardableResult
    public func updateProfile(id: Int64, with changes: ProfileChanges) throws -> User {
        let valid = try changes.validated(today: today())
        return try Self.mappingDuplicateEmail {
            try database.write(for: .users) { db in
                if let email = valid.email {
                    let owner = try db.fetchOne(
                        Int64.self, "SELECT UID FROM User_Master WHERE USER_EMAIL = ? AND UID <> ?",
                        arguments: [email, id])
                    if owner != nil { throw Self.emailTaken }
                }
                try db.execute(
                    """
                    UPDATE User_Master SET
                        USER_FNAME = coalesce(:first, USER_FNAME), USER_LNAME = coalesce(:last, USER_LNAME),
                        USER_EMAIL = coalesce(:email, USER_EMAIL), USER_MOBILE = coalesce(:mobile, USER_MOBILE),
                        USER_STATE = coalesce(:state, USER_STATE), USER_CITY = coalesce(:city, USER_CITY),
                        USER_PINCODE = coalesce(:pincode, USER_PINCODE),
                        USER_ADDRESS = coalesce(:address, USER_ADDRESS),
                        USER_GENDER = coalesce(:gender, USER_GENDER), USER_DOB = coalesce(:dob, USER_DOB),
                        USER_IMAGENAME = coalesce(:image, USER_IMAGENAME)
                    WHERE UID = :id
                    """,
                    arguments: [
                        "first": valid.firstName, "last": valid.lastName, "email": valid.email,
                        "mobile": valid.mobile, "state": valid.state, "city": valid.city, "pincode": valid.pincode,
                        "address": valid.address, "gender": valid.gender?.rawValue,
                        "dob": valid.dateOfBirth?.description, "image": valid.imageName, "id": id,
                    ])
                guard db.changesCount > 0, let user = try Self.user(db, id: id) else {
                    throw RecordNotFoundError(kind: "user", id: id)
                }
                return user
            }
        }
    }

    /// Deletes a user and returns who it was.
    ///
    /// A row with unreadable values is deleted all the same; those fields
    /// are empty in the returned user.
    ///
    /// - Throws: ``RecordNotFoundError`` or a database error.
    @discardableResult
    public func delete(id: Int64) throws -> User {
        try database.write(for: .users) { db in
            guard let row = try db.fetchOne("SELECT \(Self.columns) FROM User_Master WHERE UID = \(id)")
            else { throw RecordNotFoundError(kind: "user", id: id) }
            let user = try Self.user(from: row, strict: false)
            try db.execute("DELETE FROM User_Master WHERE UID = ?", arguments: [id])
            return user
        }
    }

    // MARK: - Rows

    private static let emailTaken = ValidationError(
        field: UserField.email.rawValue, message: "email is already registered")

    /// Runs `body`, reporting the unique index's refusal as the same
    /// validation error as the check before it (another process may have
    /// taken the address in between).
    private static func mappingDuplicateEmail<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError where error.extendedCode == .constraintUnique {
            throw emailTaken
        }
    }

    private static func orderBy(_ sort: UserSort) -> SQL {
        let byName: SQL = "records_fold(USER_LNAME), records_fold(USER_FNAME), UID"
        switch sort {
        case .name: return byName
        case .newest: return "UID DESC"
        }
    }

    private static func passwordHash(_ db: Database, id: Int64) throws -> String? {
        try db.fetchOne(String.self, "SELECT USER_PASS FROM User_Master WHERE UID = ?", arguments: [id])
    }

    private static func user(_ db: Database, id: Int64) throws -> User? {
        try db.fetchOne("SELECT \(columns) FROM User_Master WHERE UID = \(id)").map {
            try user(from: $0)
        }
    }

    /// A user from a row; with `strict`, a value that is not what its field
    /// holds is an ``UnreadableRowError``, else it reads as empty.
    private static func user(from row: Row, strict: Bool = true) throws -> User {
        let id: Int64 = try row["UID"]
        var reader = RowReader(row, table: "User_Master")
        func text(_ column: String, _ field: UserField) throws -> String {
            // NOT NULL in the table; NULL from another tool reads as empty.
            try reader.text(column, field: field.rawValue) ?? ""
        }
        let first = try text("USER_FNAME", .firstName)
        let last = try text("USER_LNAME", .lastName)
        let email = try text("USER_EMAIL", .email)
        let mobile = try text("USER_MOBILE", .mobile)
        let state = try text("USER_STATE", .state)
        let city = try text("USER_CITY", .city)
        let pincode = try text("USER_PINCODE", .pincode)
        let address = try text("USER_ADDRESS", .address)
        var gender = Gender.unspecified
        let genderValue: SQLiteValue = try row["USER_GENDER"]
        if let code = try reader.integer("USER_GENDER", field: UserField.gender.rawValue) {
            if let known = Gender(rawValue: code) {
                gender = known
            } else {
                let codes = Gender.allCases.map { String($0.rawValue) }.joined(separator: ", ")
                reader.fail(
                    genderValue, column: "USER_GENDER", field: UserField.gender.rawValue, expected: "one of \(codes)")
            }
        }
        // The original tutorial's DATE column may hold a number a tool stored; its text.
        let dateOfBirth = try reader.textOrNumber("USER_DOB", field: UserField.dateOfBirth.rawValue) ?? ""
        let imageName = try text("USER_IMAGENAME", .imageName)
        if strict { try reader.check(kind: "user", id: id) }
        return User(
            id: id, firstName: first, lastName: last, email: email, mobile: mobile, state: state, city: city,
            pincode: pincode, address: address, gender: gender, dateOfBirth: dateOfBirth, imageName: imageName)
    }
}

extension User {
    init(id: Int64, profile: UserProfile) {
        self.init(
            id: id, firstName: profile.firstName, lastName: profile.lastName, email: profile.email,
            mobile: profile.mobile, state: profile.state, city: profile.city, pincode: profile.pincode,
            address: profile.address, gender: profile.gender, dateOfBirth: profile.dateOfBirth.description,
            imageName: profile.imageName)
    }

    mutating func apply(_ changes: ValidProfileChanges) {
        firstName = changes.firstName ?? firstName
        lastName = changes.lastName ?? lastName
        email = changes.email ?? email
        mobile = changes.mobile ?? mobile
        state = changes.state ?? state
        city = changes.city ?? city
        pincode = changes.pincode ?? pincode
        address = changes.address ?? address
        gender = changes.gender ?? gender
        dateOfBirth = changes.dateOfBirth?.description ?? dateOfBirth
        imageName = changes.imageName ?? imageName
    }
}

/// How the list of users is ordered.
public enum UserSort: String, Sendable, CaseIterable, Codable {
    /// By last name, then first name (ignoring case and accents).
    case name
    /// The last registered first.
    case newest
}

/// A password check failed.
public enum AuthenticationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The email is unknown or the password wrong; which one is not said.
    case invalidCredentials
    /// The current password given to change it is wrong.
    case wrongCurrentPassword

    public var description: String {
        switch self {
        case .invalidCredentials: "invalid email or password"
        case .wrongCurrentPassword: "the current password is wrong"
        }
    }
}
