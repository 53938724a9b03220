import Foundation
import PasswordHashing
import SQLiteStore

/// Registers users, checks their passwords, and reads and edits their
/// profiles. Every value is a bound argument; every write is validated
/// first and runs in a transaction; passwords are hashed (see
/// ``PasswordHashingService``) and never stored, logged or returned.
///
/// ```swift
/// let store = UsersStore(database: database)
/// let ada = try await store.register(form)                   // ValidationError: every bad field
/// let same = try await store.authenticate(email: "ADA@example.com", password: typed)
/// try await store.updateProfile(id: ada.id, with: ProfileChanges(city: "London"))
/// try await store.changePassword(id: ada.id, current: typed, new: newOne, confirmation: newOne)
/// ```
///
/// Hashing is slow on purpose (about 0.4 s at the default cost): it runs
/// on a thread of its own, never the caller's actor nor a Swift
/// concurrency thread, and outside any database access (hash, then write;
/// read, then verify).
public struct UsersStore: RecordStore {
    let database: AppDatabase
    let table: RecordTable<User>
    /// How the shared methods reach the table.
    public var access: RecordStoreAccess<User, UserSort> { RecordStoreAccess(table, orderBy: Self.orderBy) }
    private let hasher: any PasswordHashingService
    private let today: @Sendable () -> CalendarDate

    /// Creates a store on the app's database.
    ///
    /// - Parameters:
    ///   - hasher: Hashes and verifies passwords; the default is scrypt at
    ///     OWASP's minimum cost. Tests pass cheaper parameters.
    ///   - today: The day dates of birth must be before; the local date by
    ///     default.
    ///   - pictureSizeLimit: The largest profile picture accepted, in
    ///     bytes; a negative limit accepts none.
    public init(
        database: AppDatabase, hasher: any PasswordHashingService = PasswordHasher(),
        today: @escaping @Sendable () -> CalendarDate = { CalendarDate.today() },
        pictureSizeLimit: Int = CoffeeRules.defaultPictureSizeLimit
    ) {
        self.pictureSizeLimit = max(pictureSizeLimit, 0)
        self.database = database
        self.table = RecordTable(database: database)
        self.hasher = hasher
        self.today = today
    }

    /// The day dates of birth are checked against.
    public var currentDate: CalendarDate { today() }

    /// The largest profile picture accepted, in bytes: a coffee's limit
    /// (64 MiB) unless given.
    public let pictureSizeLimit: Int

    // MARK: - Reading

    /// The user with that ID, or nil.
    ///
    /// - Throws: ``UnreadableRowError`` when a stored value of the row is
    ///   not what its field holds.
    public func user(id: Int64) async throws -> User? {
        try await table.record(id: id)
    }

    /// The user with that email address, ignoring case, or nil.
    ///
    /// - Throws: ``UnreadableRowError`` when a stored value of the row is
    ///   not what its field holds.
    public func user(email: String) async throws -> User? {
        let address = email.trimmingCharacters(in: .whitespacesAndNewlines)
        return try await table.list(
            where: "\(Column.email) = \(address)", orderBy: "\(Column.id)", page: ListPage(limit: 1)
        )
        .get().first
    }

    // MARK: - Registering and logging in

    /// Registers a user: validates every field, hashes the password, saves.
    /// The hash is made before the write, outside any database access,
    /// and before the email is looked up: a taken email costs as much time
    /// as a free one, so timing tells no one which emails are registered.
    ///
    /// - Throws: ``ValidationError`` with one message per field at fault,
    ///   or "email is already registered" (nothing is written); a
    ///   database or hashing error.
    @discardableResult
    public func register(_ form: RegistrationForm) async throws -> User {
        try await register(form, onlyIfNoUsers: false)
    }

    /// Registers a user if `policy` lets anyone register now (the web
    /// app's registration page), as ``register(_:)`` does.
    ///
    /// Under ``RegistrationPolicy/firstUser`` the check that no account
    /// exists is made in the transaction that inserts the new one, so of
    /// two first registrations at once only one succeeds.
    ///
    /// - Throws: ``RegistrationClosedError`` (nothing is validated or
    ///   written), and what ``register(_:)`` throws.
    @discardableResult
    public func register(_ form: RegistrationForm, policy: RegistrationPolicy) async throws -> User {
        switch policy {
        case .open: return try await register(form, onlyIfNoUsers: false)
        case .closed: throw RegistrationClosedError(policy: policy)
        case .firstUser:
            // Refused early, before the slow hash, when it is already too late.
            guard try await acceptsRegistration(under: policy) else { throw RegistrationClosedError(policy: policy) }
            return try await register(form, onlyIfNoUsers: true)
        }
    }

    /// Whether `policy` lets anyone register now: always when open, never
    /// when closed, and while no user exists under
    /// ``RegistrationPolicy/firstUser``.
    public func acceptsRegistration(under policy: RegistrationPolicy) async throws -> Bool {
        switch policy {
        case .open: return true
        case .closed: return false
        case .firstUser:
            return try await database.read(for: .users) { db in
                try db.fetchOne(Int.self, Self.anyUser) == nil
            }
        }
    }

    private func register(_ form: RegistrationForm, onlyIfNoUsers: Bool) async throws -> User {
        let (profile, password) = try form.validatedWithPassword(today: today())
        // Hashed before the email is looked up, taken or not: a taken email
        // then costs what a free one does, and the time of the answer does
        // not tell which emails are registered.
        let hasher = self.hasher
        let hash = try await PasswordWork.run { try hasher.hash(password) }
        let email = profile.email
        let row = NewRow(record: User(id: 0, profile: profile), extraColumns: [(.passwordHash, .text(hash))])
        return try await Self.mappingDuplicateEmail {
            try await database.write(for: .users) { db in
                if onlyIfNoUsers, try db.fetchOne(Int.self, Self.anyUser) != nil {
                    throw RegistrationClosedError(policy: .firstUser)
                }
                // Checked here and again by the unique index. Only whether the
                // address is taken: the owner's row need not be readable.
                if try db.fetchOne(Int.self, "SELECT 1 FROM \(Self.table) WHERE \(Column.email) = \(email)") != nil {
                    throw Self.emailTaken
                }
                var row = row
                try row.insert(db)
                return row.record
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
    /// effort: a failure to save it does not fail the login). The password
    /// is checked after the read, outside any database access.
    ///
    /// - Throws: ``AuthenticationError/invalidCredentials``; a database error;
    ///   a ``PasswordHashingError`` when the stored hash is damaged.
    public func authenticate(email: String, password: String) async throws -> User {
        let address = email.trimmingCharacters(in: .whitespacesAndNewlines)
        let account = try await database.read(for: .users) { db in
            try db.fetchOne(
                """
                SELECT \(User.selection), \(Column.passwordHash) FROM \(Self.table) WHERE \(Column.email) = \(address)
                """
            ).map { row in (user: try User(row: row), hash: try row[Column.passwordHash] as String) }
        }
        let hasher = self.hasher
        guard let account else {
            _ = try? await PasswordWork.run { hasher.performDummyVerification(password) }
            throw AuthenticationError.invalidCredentials
        }
        guard try await PasswordWork.run({ try hasher.verify(password, against: account.hash) }) else {
            throw AuthenticationError.invalidCredentials
        }
        if (try? hasher.needsRehash(account.hash)) == true,
            let newHash = try? await PasswordWork.run({ try hasher.hash(password) })
        {
            let id = account.user.id
            _ = try? await database.write(for: .users) { db in
                // Only if no one changed the password meanwhile.
                try db.execute(
                    """
                    UPDATE \(Self.table) SET \(Column.passwordHash) = \(newHash)
                    WHERE \(Column.id) = \(id) AND \(Column.passwordHash) = \(account.hash)
                    """)
            }
        }
        return account.user
    }

    /// Checks a user's password, as a logged-in session would before a
    /// change: the read first, then the check outside any database access.
    ///
    /// - Returns: The password hash that was checked, for a write that
    ///   must see it unchanged.
    /// - Throws: ``RecordNotFoundError``; `wrongPassword` when it does not
    ///   match.
    private func checkPassword(id: Int64, _ password: String, wrongPassword: AuthenticationError) async throws
        -> String
    {
        guard let stored = try await database.read(for: .users, { db in try Self.passwordHash(db, id: id) }) else {
            throw RecordNotFoundError(kind: "user", id: id)
        }
        let hasher = self.hasher
        guard try await PasswordWork.run({ try hasher.verify(password, against: stored) }) else { throw wrongPassword }
        return stored
    }

    /// Changes a password, given the current one.
    ///
    /// Every session of the user ends with it (see ``SessionStore``), and
    /// every token for programs is revoked (see ``APITokenStore``), in the
    /// same transaction: whoever had signed in with the old password is
    /// signed out, and a token they made opens nothing.
    ///
    /// - Throws: ``ValidationError`` when the new password or its
    ///   confirmation breaks the rules (checked first);
    ///   ``RecordNotFoundError``; ``AuthenticationError/wrongCurrentPassword``.
    ///   Nothing is written on any error.
    public func changePassword(id: Int64, current: String, new: String, confirmation: String) async throws {
        try await changePassword(id: id, current: current, new: new, confirmation: confirmation, keepingSession: nil)
    }

    /// Changes a password, given the current one, and ends every other
    /// session of the user in the same transaction: the web app keeps the
    /// session that made the change (`kept`) and signs out every other
    /// browser, since someone who knew the old password may be behind one.
    /// Every token for programs is revoked all the same: one made with the
    /// old password must be made again.
    ///
    /// - Parameter kept: The session to keep, or nil to end all.
    /// - Throws: What ``changePassword(id:current:new:confirmation:)`` throws;
    ///   nothing is written or revoked on any error.
    public func changePassword(
        id: Int64, current: String, new: String, confirmation: String, keepingSession kept: Int64?
    ) async throws {
        try validateNewPassword(new, confirmation: confirmation)
        let stored = try await checkPassword(id: id, current, wrongPassword: .wrongCurrentPassword)
        let hasher = self.hasher
        let hash = try await PasswordWork.run { try hasher.hash(new) }
        let revokedAt = APITokenStore.timestamp(Date())
        try await database.write(for: .users) { db in
            try db.execute(
                """
                UPDATE \(Self.table) SET \(Column.passwordHash) = \(hash)
                WHERE \(Column.id) = \(id) AND \(Column.passwordHash) = \(stored)
                """)
            if db.changesCount == 0 {
                // Deleted, or its password changed, since it was checked.
                guard try Self.passwordHash(db, id: id) != nil else { throw RecordNotFoundError(kind: "user", id: id) }
                throw AuthenticationError.wrongCurrentPassword
            }
            try SessionSchema.deleteSessions(db, userID: id, except: kept)
            // A program's token made by someone who knew the old password stops too.
            try APITokenSchema.revokeTokens(db, userID: id, at: revokedAt)
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
    ///
    /// - Parameter ifVersion: Write only if the user is still at this
    ///   version (``User/version`` as it was read), checked in the
    ///   transaction that writes (``VersionConflictError`` otherwise); nil
    ///   writes whatever it holds.
    @discardableResult
    public func updateProfile(id: Int64, with changes: ProfileChanges, ifVersion: RecordVersion? = nil)
        async throws -> User
    {
        try await update(
            id: id, with: try changes.validated(today: today()), passwordHash: nil, anyField: true,
            ifVersion: ifVersion)
    }

    /// Changes the given profile fields as a signed-in session would (the
    /// web app's profile form): the fields that identify the account
    /// (``UserField/identifying``: the email and the mobile number) change
    /// only with the user's password, so that a session alone, such as a
    /// stolen cookie, cannot move the account to someone else's address.
    /// The other fields change without it.
    ///
    /// - Parameter password: The user's password, or nil. When given, it
    ///   is checked whatever changes (after the fields are validated,
    ///   outside any database access).
    /// - Throws: ``ValidationError`` (checked first);
    ///   ``AuthenticationError/passwordRequired`` when no password is given
    ///   and an identifying field would change (compared with what is
    ///   stored, in the transaction that writes);
    ///   ``AuthenticationError/wrongPassword``; what
    ///   ``updateProfile(id:with:ifVersion:)`` throws (with `ifVersion`,
    ///   ``VersionConflictError``). Nothing is written on any error.
    @discardableResult
    public func updateProfile(
        id: Int64, with changes: ProfileChanges, password: String?, ifVersion: RecordVersion? = nil
    ) async throws -> User {
        let valid = try changes.validated(today: today())
        guard let password else {
            return try await update(id: id, with: valid, passwordHash: nil, anyField: false, ifVersion: ifVersion)
        }
        let stored = try await checkPassword(id: id, password, wrongPassword: .wrongPassword)
        return try await update(id: id, with: valid, passwordHash: stored, anyField: true, ifVersion: ifVersion)
    }

    /// Writes validated changes in one transaction.
    ///
    /// - Parameters:
    ///   - passwordHash: The hash a password was checked against: the
    ///     write is refused if it changed meanwhile.
    ///   - anyField: Whether the identifying fields may change; if not,
    ///     the write is refused when they would.
    ///   - ifVersion: The version the user must still be at.
    private func update(
        id: Int64, with valid: ValidProfileChanges, passwordHash: String?, anyField: Bool,
        ifVersion: RecordVersion?
    ) async throws -> User {
        try await Self.mappingDuplicateEmail {
            try await table.update(
                id: id,
                setting: [
                    (.firstName, valid.firstName), (.lastName, valid.lastName), (.email, valid.email),
                    (.mobile, valid.mobile), (.state, valid.state), (.city, valid.city), (.pincode, valid.pincode),
                    (.address, valid.address), (.gender, valid.gender?.rawValue),
                    (.dateOfBirth, valid.dateOfBirth), (.imageName, valid.imageName),
                ],
                ifVersion: ifVersion,
                check: { db in
                    if let passwordHash, try Self.passwordHash(db, id: id) != passwordHash {
                        // Changed since it was checked: the password given is no longer the user's.
                        throw AuthenticationError.wrongPassword
                    }
                    if !anyField, try Self.changesIdentity(db, id: id, valid) {
                        throw AuthenticationError.passwordRequired
                    }
                    guard let email = valid.email else { return }
                    let owner = try db.fetchOne(
                        Int64.self,
                        "SELECT \(Column.id) FROM \(Self.table) WHERE \(Column.email) = \(email) AND \(Column.id) <> \(id)"
                    )
                    if owner != nil { throw Self.emailTaken }
                })
        }
    }

    /// Whether `valid` gives a field of ``UserField/identifying`` a value
    /// other than the stored one (compared exactly: even a change of case
    /// in the email counts).
    private static func changesIdentity(_ db: Database, id: Int64, _ valid: ValidProfileChanges) throws -> Bool {
        let email = valid.email
        let mobile = valid.mobile
        guard email != nil || mobile != nil else { return false }
        // Nil when the user is not there: the update reports that.
        let unchanged = try db.fetchOne(
            Int.self,
            """
            SELECT (\(email) IS NULL OR \(Column.email) = \(email) COLLATE BINARY)
                AND (\(mobile) IS NULL OR \(Column.mobile) = \(mobile))
            FROM \(Self.table) WHERE \(Column.id) = \(id)
            """)
        return unchanged == 0
    }

    /// Changes the given profile fields of a user whose password this is,
    /// as a logged-in session would (see ``updateProfile(id:with:ifVersion:)``).
    ///
    /// - Throws: ``AuthenticationError/wrongPassword`` (nothing is
    ///   written), and what ``updateProfile(id:with:ifVersion:)`` throws.
    @discardableResult
    public func updateProfile(id: Int64, password: String, with changes: ProfileChanges) async throws -> User {
        _ = try changes.validated(today: today())
        _ = try await checkPassword(id: id, password, wrongPassword: .wrongPassword)
        return try await updateProfile(id: id, with: changes)
    }

    /// Deletes a user whose password this is, as a logged-in session
    /// would, and returns who it was.
    ///
    /// - Throws: ``AuthenticationError/wrongPassword`` (nothing is
    ///   deleted), ``RecordNotFoundError``, or a database error.
    @discardableResult
    public func delete(id: Int64, password: String) async throws -> User {
        _ = try await checkPassword(id: id, password, wrongPassword: .wrongPassword)
        return try await delete(id: id)
    }

    // MARK: - Rows

    /// The error of an address another account has.
    public static let emailTaken = ValidationError(UserField.email, problem: "is already registered")

    /// Runs `body`, reporting the unique index's refusal as the same
    /// validation error as the check before it (another process may have
    /// taken the address in between).
    private static func mappingDuplicateEmail<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as SQLiteError where error.extendedCode == .constraintUnique {
            throw emailTaken
        }
    }

    private typealias Column = User.Columns
    /// The table, for SQL.
    private static let table: SQL = "\(identifier: User.tableName)"
    /// Whether there is any user.
    private static let anyUser: SQL = "SELECT 1 FROM \(table) LIMIT 1"

    @Sendable private static func orderBy(_ sort: UserSort, _ direction: SortDirection) -> SQL {
        switch sort {
        case .name:
            SortOrder([
                "records_fold(\(Column.lastName))", "records_fold(\(Column.firstName))", "\(Column.id)",
            ]).sql(direction)
        case .newest: SortOrder(["\(Column.id)"]).sql(direction)
        }
    }

    private static func passwordHash(_ db: Database, id: Int64) throws -> String? {
        try db.fetchOne(String.self, "SELECT \(Column.passwordHash) FROM \(table) WHERE \(Column.id) = \(id)")
    }
}

extension User {
    init(id: Int64, profile: UserProfile) {
        self.init(
            id: id, firstName: profile.firstName, lastName: profile.lastName, email: profile.email,
            mobile: profile.mobile, state: profile.state, city: profile.city, pincode: profile.pincode,
            address: profile.address, gender: profile.gender, dateOfBirth: profile.dateOfBirth?.description ?? "",
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
        dateOfBirth = changes.dateOfBirth ?? dateOfBirth
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
    /// The password given to edit or delete a user is wrong.
    case wrongPassword
    /// A field that identifies the account (``UserField/identifying``)
    /// changes only with the user's password, and none was given.
    case passwordRequired

    public var description: String {
        switch self {
        case .invalidCredentials: "invalid email or password"
        case .wrongCurrentPassword: "the current password is wrong"
        case .wrongPassword: "the password is wrong"
        case .passwordRequired: "the password is needed to change the email or the mobile number"
        }
    }
}
