import PasswordHashing
import SQLiteStore

/// The Users app's table: the original tutorial's `User_Master`, with its columns and
/// names, except where the original tutorial was wrong:
///
/// - `USER_PASS` holds only a PHC string (`$scrypt$ln=17,r=8,p=1$salt$hash`,
///   see ``PasswordHashingService``), never a password; a `CHECK` refuses
///   anything that does not start like one, so no tool can store a plain
///   password there by mistake.
/// - `USER_CPASS` (the confirmation, a second plain copy of the password) is
///   gone: a confirmation is compared with the password when the form is
///   validated and has no use afterwards. Keeping a hash of it would only
///   duplicate `USER_PASS`.
/// - `USER_EMAIL` compares with `NOCASE` and is unique: `Ada@Example.com`
///   and `ada@example.com` are one account. Addresses are validated as ASCII
///   (``Validator/email(_:)``), which `NOCASE` folds completely.
/// - `USER_MOBILE` and `USER_PINCODE` are text: they are digit strings, not
///   numbers (a leading `0` or `+` must survive).
/// - `USER_GENDER` is one of ``Gender``'s codes.
///
/// A database made by the original tutorial's app itself, with its exact `CREATE TABLE` and
/// plain-text passwords, is imported by the same migration (see
/// ``importSeedTable(_:hasher:)``).
enum UsersSchema {
    /// In order; append, never edit a shipped one.
    static let migrations: [Migrator.Migration] = migrations(hasher: PasswordHasher())

    /// The migrations, hashing imported passwords with `hasher` (tests use
    /// cheap parameters or a failing hasher).
    static func migrations(hasher: any PasswordHashingService) -> [Migrator.Migration] {
        [
            Migrator.migration("users.createTable") { db in
                switch try existingLayout(db) {
                case .none:
                    try createTable(db)
                case .current:
                    try db.execute(sql: emailIndexSQL)
                case .seed:
                    try importSeedTable(db, hasher: hasher)
                case .unknown(let columns):
                    throw UsersImportError.unknownLayout(columns: columns)
                }
            }
        ] + SessionSchema.migrations + APITokenSchema.migrations + [
            // Every change of a user's row, by any program, goes to the
            // shared change log (a password change too: it updates the row).
            Migrator.migration("users.changeLog") { db in
                try RecordChangeLog.createTriggers(app: "users", table: "User_Master", key: "UID", in: db)
            },
            // Profile pictures, uploaded on the profile page. The profile's
            // other fields became optional without a change of the table:
            // a field not given is stored as empty text, as the original
            // tutorial's NOT NULL columns allow.
            UserPictureSchema.migration,
            // A profile picture stored or removed is a change of its user, as
            // a coffee's picture is of its coffee: the change log says so.
            Migrator.migration("users.pictureChangeLog") { db in
                try RecordChangeLog.createTriggers(
                    app: "users", relatedTable: "user_picture", recordKey: "userID", recordTable: "User_Master",
                    recordTableKey: "UID", in: db)
            },
        ]
    }

    /// The table's name.
    static let tableName = User.tableName

    /// This app's `CREATE TABLE`, under `name` (the import builds the new
    /// table beside the original tutorial's, then renames it).
    static func createTableSQL(name: String) -> String {
        """
        CREATE TABLE \(name) (
            UID INTEGER PRIMARY KEY AUTOINCREMENT,
            USER_IMAGENAME TEXT NOT NULL,
            USER_FNAME VARCHAR(30) NOT NULL,
            USER_LNAME VARCHAR(30) NOT NULL,
            USER_EMAIL VARCHAR(255) NOT NULL COLLATE NOCASE,
            USER_PASS TEXT NOT NULL CHECK (USER_PASS GLOB '$[a-z0-9]*$*'),
            USER_MOBILE TEXT NOT NULL,
            USER_STATE TEXT NOT NULL,
            USER_CITY TEXT NOT NULL,
            USER_PINCODE TEXT NOT NULL,
            USER_ADDRESS TEXT NOT NULL,
            USER_GENDER INT(1) NOT NULL CHECK (USER_GENDER IN (0, 1, 2, 3)),
            USER_DOB DATE NOT NULL)
        """
    }

    /// The unique index that makes emails unique; it takes the column's
    /// `NOCASE` collation.
    static let emailIndexSQL = "CREATE UNIQUE INDEX IF NOT EXISTS User_Master_email ON User_Master (USER_EMAIL)"

    private static func createTable(_ db: Database) throws {
        try db.execute(sql: createTableSQL(name: tableName))
        try db.execute(sql: emailIndexSQL)
    }

    // MARK: - Recognising the table

    /// What `User_Master` is, if there is one.
    enum Layout: Equatable {
        /// No such table.
        case none
        /// This app's (made by another tool, or a copy of the app's file
        /// without its migration records): kept, with its index ensured.
        case current
        /// The Users tutorial's, exactly as its `createTables` made it.
        case seed
        /// Something else, with these columns.
        case unknown(columns: [String])
    }

    /// A column as `PRAGMA table_info` describes it.
    private struct Column: Equatable {
        let name: String
        let type: String
        let notNull: Bool
        let primaryKey: Bool
    }

    /// The original tutorial's `CREATE TABLE IF NOT EXISTS User_Master (UID INTEGER PRIMARY
    /// KEY AUTOINCREMENT,USER_IMAGENAME TEXT NOT NULL, USER_FNAME VARCHAR(30)
    /// NOT NULL, ...)`, column by column.
    private static let seedColumns: [Column] =
        [Column(name: "UID", type: "INTEGER", notNull: false, primaryKey: true)]
        + [
            ("USER_IMAGENAME", "TEXT"), ("USER_FNAME", "VARCHAR(30)"), ("USER_LNAME", "VARCHAR(30)"),
            ("USER_EMAIL", "VARCHAR(255)"), ("USER_PASS", "VARCHAR(200)"), ("USER_CPASS", "VARCHAR(200)"),
            ("USER_MOBILE", "INTEGER"), ("USER_STATE", "TEXT"), ("USER_CITY", "TEXT"), ("USER_PINCODE", "INTEGER"),
            ("USER_ADDRESS", "TEXT"), ("USER_GENDER", "INT(1)"), ("USER_DOB", "DATE"),
        ].map { Column(name: $0.0, type: $0.1, notNull: true, primaryKey: false) }

    /// This app's columns, as ``createTableSQL(name:)`` makes them.
    private static let currentColumns: [Column] =
        [Column(name: User.Columns.id.rawValue, type: "INTEGER", notNull: false, primaryKey: true)]
        + [
            (User.Columns.imageName, "TEXT"), (.firstName, "VARCHAR(30)"), (.lastName, "VARCHAR(30)"),
            (.email, "VARCHAR(255)"), (.passwordHash, "TEXT"), (.mobile, "TEXT"), (.state, "TEXT"), (.city, "TEXT"),
            (.pincode, "TEXT"), (.address, "TEXT"), (.gender, "INT(1)"), (.dateOfBirth, "DATE"),
        ].map { Column(name: $0.0.rawValue, type: $0.1, notNull: true, primaryKey: false) }

    static func existingLayout(_ db: Database) throws -> Layout {
        guard try db.tableExists(tableName) else { return .none }
        // Hidden and generated columns left out, as `PRAGMA table_info` does.
        let columns = try db.columns(in: tableName).filter { $0.kind == .ordinary }.map {
            Column(
                name: $0.name, type: $0.declaredType.uppercased(), notNull: $0.isNotNull,
                primaryKey: $0.primaryKeyPosition != nil)
        }
        if columns == seedColumns { return .seed }
        // The same columns, and the check that keeps plain passwords out,
        // which only the table's SQL tells.
        let sql = try db.fetchOne(
            String.self, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = \(tableName) COLLATE NOCASE")
        if columns == currentColumns, sql?.contains("CHECK (USER_PASS GLOB") == true { return .current }
        return .unknown(columns: columns.map(\.name))
    }

    // MARK: - Importing the original tutorial's table

    /// Replaces the original tutorial's `User_Master` by this app's, in the caller's
    /// transaction (the migration's): every plain-text `USER_PASS` is
    /// replaced by its hash, `USER_CPASS` is dropped, every other value and
    /// every `UID` is kept, and `AUTOINCREMENT` never hands out an old
    /// user's ID again.
    ///
    /// It refuses, changing nothing, a table this app cannot hold: two
    /// users whose emails differ only in case, or a `USER_GENDER` outside
    /// ``Gender``'s codes. The original tutorial's codes are read as ISO/IEC 5218's.
    ///
    /// `PRAGMA secure_delete` is on while it runs, so the pages that held
    /// the plain passwords are overwritten with zeros, not just freed.
    /// (A rollback journal or WAL file that held them was a file of its
    /// own, deleted or truncated as usual: its blocks are the file
    /// system's to reuse.)
    ///
    /// Hashing takes the hasher's time per user (about 0.4 s at the default
    /// cost).
    static func importSeedTable(_ db: Database, hasher: any PasswordHashingService) throws {
        let duplicates = try db.fetchAll(
            String.self,
            """
            SELECT group_concat(UID, ', ') FROM (SELECT UID, USER_EMAIL FROM User_Master ORDER BY UID)
            GROUP BY USER_EMAIL COLLATE NOCASE HAVING count(*) > 1 ORDER BY min(UID)
            """)
        if !duplicates.isEmpty { throw UsersImportError.duplicateEmails(userIDs: duplicates) }
        let badGenders = try db.fetchAll(
            Int64.self, "SELECT UID FROM User_Master WHERE USER_GENDER NOT IN (0, 1, 2, 3) ORDER BY UID")
        if !badGenders.isEmpty { throw UsersImportError.unknownGender(userIDs: badGenders) }

        let secureDelete = try db.fetchOne(Int.self, "PRAGMA secure_delete") ?? 0
        try db.execute("PRAGMA secure_delete = ON")
        defer { try? db.execute(secureDelete == 0 ? "PRAGMA secure_delete = OFF" : "PRAGMA secure_delete = ON") }

        let oldSequence = try db.fetchOne(Int64.self, "SELECT seq FROM sqlite_sequence WHERE name = 'User_Master'")
        let newTable = "User_Master_import"
        try db.execute(sql: createTableSQL(name: newTable))
        typealias Column = User.Columns
        let placeholders = Array(repeating: SQL("?"), count: Column.allCases.count).joined(separator: ", ")
        let insert = try db.makeStatement(
            "INSERT INTO \(identifier: newTable) (\(columns: Column.allCases)) VALUES (\(placeholders))")
        // The original tutorial's columns have the same names. Mobile
        // numbers and postal codes become the text they were typed as.
        let read: [SQL] = Column.allCases.map { column in
            column == .mobile || column == .pincode ? "CAST(\(column) AS TEXT) AS \(column)" : "\(column)"
        }
        let cursor = try db.fetchCursor(
            "SELECT \(read.joined(separator: ", ")) FROM \(identifier: tableName) ORDER BY \(Column.id)")
        while let row = try cursor.next() {
            // Each of the new table's columns by name; the password hashed.
            let values: [SQLiteValue] = try Column.allCases.map { column in
                let value: SQLiteValue = try row[column]
                return column == .passwordHash ? .text(try hashImported(value, hasher: hasher)) : value
            }
            try insert.execute(arguments: StatementArguments(values: values))
        }
        try db.execute("DROP TABLE User_Master")
        try db.execute("ALTER TABLE \(identifier: newTable) RENAME TO User_Master")
        try db.execute(sql: emailIndexSQL)
        if let oldSequence {
            try db.execute(
                "INSERT OR IGNORE INTO sqlite_sequence (name, seq) SELECT 'User_Master', 0 "
                    + "WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'User_Master')")
            try db.execute(
                "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'User_Master'", arguments: [oldSequence])
        }
    }

    /// The hash of a password the original tutorial stored: text as it was typed; a
    /// blob or text that is not UTF-8 (which the tutorial never wrote, but a
    /// tool could have) as bytes.
    private static func hashImported(_ value: SQLiteValue, hasher: any PasswordHashingService) throws -> String {
        switch value {
        case .text(let password): return try hasher.hash(password)
        case .textBytes(let bytes), .blob(let bytes): return try hasher.hash(passwordBytes: Array(bytes))
        case .integer(let number): return try hasher.hash(String(number))
        case .real(let number): return try hasher.hash(String(number))
        // NOT NULL in the original tutorial's table; an empty password is what NULL
        // would have meant.
        case .null: return try hasher.hash("")
        }
    }
}

/// The `User_Master` table found in a database cannot be taken over; the
/// migration that found it changed nothing.
public enum UsersImportError: Error, Sendable, Equatable, CustomStringConvertible, TableRefusal {
    /// Users that share an email address, ignoring case: each element lists
    /// one group's IDs ("1, 4").
    case duplicateEmails(userIDs: [String])
    /// Users whose `USER_GENDER` is not one of ``Gender``'s codes.
    case unknownGender(userIDs: [Int64])
    /// The table is neither the original tutorial's nor this app's; its columns.
    case unknownLayout(columns: [String])

    public var description: String {
        switch self {
        case .duplicateEmails(let groups):
            return "User_Master cannot be imported: users with IDs "
                + groups.map { "(\($0))" }.joined(separator: ", ")
                + " share an email address (ignoring case); make each address unique, then try again"
        case .unknownGender(let ids):
            let codes = Gender.allCases.map { "\($0.rawValue) \($0.name)" }.joined(separator: ", ")
            return "User_Master cannot be imported: users with IDs "
                + ids.map(String.init).joined(separator: ", ")
                + " have a USER_GENDER that is not one of \(codes); correct them, then try again"
        case .unknownLayout(let columns):
            return "the database has a User_Master table that is neither the Users tutorial's nor this app's (columns "
                + columns.joined(separator: ", ") + "); move it aside, then try again"
        }
    }
}
