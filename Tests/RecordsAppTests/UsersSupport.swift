import Foundation
import PasswordHashing
import TestSupport

@testable import RecordsApp
@testable import SQLiteStore

/// The day the tests are run "on", so that dates of birth are checked
/// against a fixed date.
let testToday = CalendarDate(year: 2026, month: 3, day: 15)!

/// A store on `database` with the cheap hasher and the fixed date.
func usersStore(_ database: AppDatabase, hasher: any PasswordHashingService = cheapHasher) -> UsersStore {
    UsersStore(database: database, hasher: hasher, today: { testToday })
}

/// A registration form with every field valid.
func validForm(email: String = "ada@example.com", password: String = "correct horse") -> RegistrationForm {
    RegistrationForm(
        firstName: "Ada", lastName: "Lovelace", email: email, password: password, passwordConfirmation: password,
        mobile: "9876543210", state: "Surrey", city: "London", pincode: "110001", address: "12 St James's Sq",
        gender: "female", dateOfBirth: "1990-12-10", imageName: "ada.png")
}

/// The stored password hash of a user, read behind the store's back.
func storedHash(_ database: AppDatabase, id: Int64) throws -> String? {
    try database.read { db in
        try db.fetchOne(String.self, "SELECT USER_PASS FROM User_Master WHERE UID = ?", arguments: [id])
    }
}

/// A hasher that records what it is asked to do, then does it with the
/// cheap parameters.
final class RecordingHasher: PasswordHashingService {
    enum Call: Equatable, Sendable {
        case hash
        case verify(storedHash: String)
        case needsRehash
        case dummyVerification(password: String)
    }

    let inner: PasswordHasher
    private let recorded = Locked<[Call]>([])

    init(_ inner: PasswordHasher = cheapHasher) {
        self.inner = inner
    }

    var calls: [Call] { recorded.withLock { $0 } }
    func reset() { recorded.withLock { $0 = [] } }
    private func record(_ call: Call) { recorded.withLock { $0.append(call) } }

    func hash(_ password: String) throws -> String {
        record(.hash)
        return try inner.hash(password)
    }

    func hash(passwordBytes: [UInt8]) throws -> String {
        record(.hash)
        return try inner.hash(passwordBytes: passwordBytes)
    }

    func verify(_ password: String, against storedHash: String) throws -> Bool {
        record(.verify(storedHash: storedHash))
        return try inner.verify(password, against: storedHash)
    }

    func needsRehash(_ storedHash: String) throws -> Bool {
        record(.needsRehash)
        return try inner.needsRehash(storedHash)
    }

    func performDummyVerification(_ password: String) {
        record(.dummyVerification(password: password))
        inner.performDummyVerification(password)
    }
}

/// A hasher that fails on its `failingCall`-th hash (1-based), as OpenSSL
/// would when out of memory.
final class FailingHasher: PasswordHashingService {
    struct Failure: Error, Equatable {}

    let failingCall: Int
    private let count = Locked(0)

    init(failingOnHash failingCall: Int) {
        self.failingCall = failingCall
    }

    func hash(_ password: String) throws -> String {
        try hash(passwordBytes: Array(password.utf8))
    }

    func hash(passwordBytes: [UInt8]) throws -> String {
        let call = count.withLock { count in
            count += 1
            return count
        }
        if call == failingCall { throw Failure() }
        return try cheapHasher.hash(passwordBytes: passwordBytes)
    }

    func verify(_ password: String, against storedHash: String) throws -> Bool {
        try cheapHasher.verify(password, against: storedHash)
    }

    func needsRehash(_ storedHash: String) throws -> Bool { false }

    func performDummyVerification(_ password: String) { cheapHasher.performDummyVerification(password) }
}

/// The original Users tutorial's `createTables` statement, exactly as its
/// DBManager.m has it.
let seedCreateTableSQL = """
    CREATE TABLE IF NOT EXISTS User_Master (UID INTEGER PRIMARY KEY AUTOINCREMENT,USER_IMAGENAME TEXT NOT NULL, \
    USER_FNAME VARCHAR(30) NOT NULL,USER_LNAME VARCHAR(30) NOT NULL,USER_EMAIL VARCHAR(255) NOT NULL,\
    USER_PASS VARCHAR(200) NOT NULL,USER_CPASS VARCHAR(200) NOT NULL,USER_MOBILE INTEGER NOT NULL,\
    USER_STATE TEXT NOT NULL,USER_CITY TEXT NOT NULL,USER_PINCODE INTEGER NOT NULL,USER_ADDRESS TEXT NOT NULL,\
    USER_GENDER INT(1) NOT NULL,USER_DOB DATE NOT NULL)
    """

/// One user as the original tutorial's app stored it: the password twice,
/// in plain text.
struct SeedUser {
    var image = "IMG_0001.png"
    var first: String
    var last: String
    var email: String
    var password: String
    var mobile = "9876543210"
    var state = "Maharashtra"
    var city = "Pune"
    var pincode = "411001"
    var address = "12, M.G. Road"
    var gender = "2"
    var dob = "10/12/1990"
}

/// Builds a database file as the original tutorial's app left it: its
/// `CREATE TABLE` and its `INSERT` (values as the tutorial's
/// `stringWithFormat` quoted them, which SQLite's column affinities then
/// converted).
func makeSeedDatabase(at url: URL, users: [SeedUser]) throws {
    let db = try Database(path: url.path)
    defer { db.close() }
    try db.execute(sql: seedCreateTableSQL)
    for user in users {
        try db.execute(
            """
            INSERT INTO User_Master (USER_IMAGENAME,USER_FNAME,USER_LNAME,USER_EMAIL,USER_PASS,USER_CPASS,
                USER_MOBILE,USER_STATE,USER_CITY,USER_PINCODE,USER_ADDRESS,USER_GENDER,USER_DOB)
            VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)
            """,
            arguments: [
                user.image, user.first, user.last, user.email, user.password, user.password, user.mobile, user.state,
                user.city, user.pincode, user.address, user.gender, user.dob,
            ])
    }
}

/// Three users of the original tutorial, with the kinds of values its form
/// produced.
let seedUsers = [
    SeedUser(first: "Asha", last: "Rao", email: "asha@example.in", password: "plain-Secret-1"),
    SeedUser(
        image: "IMG_0002.png", first: "Ravi", last: "O'Neil", email: "Ravi.K@Example.in", password: "plain-Secret-2",
        mobile: "09123456789", pincode: "560001", gender: "1", dob: "1985-01-31"),
    SeedUser(first: "Meera", last: "Iyer", email: "meera@example.in", password: "plain-Secret-1", gender: "0"),
]
