#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// A SQLite result code, primary (`SQLITE_CONSTRAINT`) or extended
/// (`SQLITE_CONSTRAINT_UNIQUE`).
///
/// Compare a primary code with ``primary``, an extended one directly:
///
/// ```swift
/// catch let error as SQLiteError where error.extendedCode == .constraintUnique { ... }
/// catch let error as SQLiteError where error.code == .busy { ... }
/// ```
///
/// `==` compares codes exactly. In a `switch` or `case` pattern, a primary
/// code matches every extended code of its family (see ``~=(_:_:)``), so
/// `case .constraint` catches `.constraintUnique` and `.constraintNotNull`,
/// whether you switch on ``SQLiteError/code`` or
/// ``SQLiteError/extendedCode``; an extended pattern matches only itself:
///
/// ```swift
/// switch error.extendedCode {
/// case .constraintUnique: print("duplicate")
/// case .constraint: print("another constraint failed")
/// default: throw error
/// }
/// ```
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The numeric code, as returned by the C API.
    public let rawValue: Int32

    /// Creates a result code from its numeric value.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code: the low 8 bits of an extended code.
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    /// Whether this code is primary (not an extended code).
    public var isPrimary: Bool { rawValue & ~0xFF == 0 }

    /// Pattern matching: a primary `pattern` matches `code` and every
    /// extended code of its family; an extended `pattern` matches only
    /// itself.
    public static func ~= (pattern: ResultCode, code: ResultCode) -> Bool {
        pattern.isPrimary ? code.primary == pattern : code == pattern
    }

    /// The symbolic name, such as `SQLITE_CONSTRAINT_UNIQUE`, or `SQLITE_<n>`
    /// for a code this library does not name.
    public var name: String {
        if let name = Self.names[rawValue] { return name }
        if let primary = Self.names[rawValue & 0xFF] { return "\(primary)_\(rawValue >> 8)" }
        return "SQLITE_\(rawValue)"
    }

    /// SQLite's English explanation of the code (`sqlite3_errstr`).
    public var explanation: String { String(cString: sqlite3_errstr(rawValue)) }

    public var description: String { "\(name) (\(rawValue))" }

    // Primary result codes.
    public static let ok = ResultCode(rawValue: 0)
    public static let error = ResultCode(rawValue: 1)
    public static let `internal` = ResultCode(rawValue: 2)
    public static let permission = ResultCode(rawValue: 3)
    public static let abort = ResultCode(rawValue: 4)
    public static let busy = ResultCode(rawValue: 5)
    public static let locked = ResultCode(rawValue: 6)
    public static let noMemory = ResultCode(rawValue: 7)
    public static let readOnly = ResultCode(rawValue: 8)
    public static let interrupt = ResultCode(rawValue: 9)
    public static let ioError = ResultCode(rawValue: 10)
    public static let corrupt = ResultCode(rawValue: 11)
    public static let notFound = ResultCode(rawValue: 12)
    public static let full = ResultCode(rawValue: 13)
    public static let cantOpen = ResultCode(rawValue: 14)
    public static let `protocol` = ResultCode(rawValue: 15)
    public static let schema = ResultCode(rawValue: 17)
    public static let tooBig = ResultCode(rawValue: 18)
    public static let constraint = ResultCode(rawValue: 19)
    public static let mismatch = ResultCode(rawValue: 20)
    public static let misuse = ResultCode(rawValue: 21)
    public static let noLFS = ResultCode(rawValue: 22)
    public static let auth = ResultCode(rawValue: 23)
    public static let range = ResultCode(rawValue: 25)
    public static let notADatabase = ResultCode(rawValue: 26)
    public static let row = ResultCode(rawValue: 100)
    public static let done = ResultCode(rawValue: 101)

    // Extended result codes this library and its users commonly test for.
    public static let busyRecovery = ResultCode(rawValue: 261)
    public static let busySnapshot = ResultCode(rawValue: 517)
    public static let busyTimeout = ResultCode(rawValue: 773)
    public static let cantOpenIsDirectory = ResultCode(rawValue: 526)
    public static let readOnlyRecovery = ResultCode(rawValue: 264)
    public static let readOnlyCantLock = ResultCode(rawValue: 520)
    public static let readOnlyRollback = ResultCode(rawValue: 776)
    public static let readOnlyDatabaseMoved = ResultCode(rawValue: 1032)
    public static let readOnlyDirectory = ResultCode(rawValue: 1544)
    public static let ioErrorRead = ResultCode(rawValue: 266)
    public static let ioErrorShortRead = ResultCode(rawValue: 522)
    public static let ioErrorWrite = ResultCode(rawValue: 778)
    public static let constraintCheck = ResultCode(rawValue: 275)
    public static let constraintForeignKey = ResultCode(rawValue: 787)
    public static let constraintNotNull = ResultCode(rawValue: 1299)
    public static let constraintPrimaryKey = ResultCode(rawValue: 1555)
    public static let constraintTrigger = ResultCode(rawValue: 1811)
    public static let constraintUnique = ResultCode(rawValue: 2067)
    public static let constraintRowID = ResultCode(rawValue: 2579)

    private static let names: [Int32: String] = [
        0: "SQLITE_OK", 1: "SQLITE_ERROR", 2: "SQLITE_INTERNAL", 3: "SQLITE_PERM",
        4: "SQLITE_ABORT", 5: "SQLITE_BUSY", 6: "SQLITE_LOCKED", 7: "SQLITE_NOMEM",
        8: "SQLITE_READONLY", 9: "SQLITE_INTERRUPT", 10: "SQLITE_IOERR",
        11: "SQLITE_CORRUPT", 12: "SQLITE_NOTFOUND", 13: "SQLITE_FULL",
        14: "SQLITE_CANTOPEN", 15: "SQLITE_PROTOCOL", 16: "SQLITE_EMPTY",
        17: "SQLITE_SCHEMA", 18: "SQLITE_TOOBIG", 19: "SQLITE_CONSTRAINT",
        20: "SQLITE_MISMATCH", 21: "SQLITE_MISUSE", 22: "SQLITE_NOLFS",
        23: "SQLITE_AUTH", 24: "SQLITE_FORMAT", 25: "SQLITE_RANGE",
        26: "SQLITE_NOTADB", 27: "SQLITE_NOTICE", 28: "SQLITE_WARNING",
        100: "SQLITE_ROW", 101: "SQLITE_DONE",
        261: "SQLITE_BUSY_RECOVERY", 517: "SQLITE_BUSY_SNAPSHOT", 773: "SQLITE_BUSY_TIMEOUT",
        262: "SQLITE_LOCKED_SHAREDCACHE", 518: "SQLITE_LOCKED_VTAB",
        270: "SQLITE_CANTOPEN_NOTEMPDIR", 526: "SQLITE_CANTOPEN_ISDIR",
        782: "SQLITE_CANTOPEN_FULLPATH", 1038: "SQLITE_CANTOPEN_CONVPATH",
        267: "SQLITE_CORRUPT_VTAB", 523: "SQLITE_CORRUPT_SEQUENCE", 779: "SQLITE_CORRUPT_INDEX",
        264: "SQLITE_READONLY_RECOVERY", 520: "SQLITE_READONLY_CANTLOCK",
        776: "SQLITE_READONLY_ROLLBACK", 1032: "SQLITE_READONLY_DBMOVED",
        1288: "SQLITE_READONLY_CANTINIT", 1544: "SQLITE_READONLY_DIRECTORY",
        516: "SQLITE_ABORT_ROLLBACK",
        266: "SQLITE_IOERR_READ", 522: "SQLITE_IOERR_SHORT_READ", 778: "SQLITE_IOERR_WRITE",
        1034: "SQLITE_IOERR_FSYNC", 1290: "SQLITE_IOERR_DIR_FSYNC", 1546: "SQLITE_IOERR_TRUNCATE",
        1802: "SQLITE_IOERR_FSTAT", 2058: "SQLITE_IOERR_UNLOCK", 2314: "SQLITE_IOERR_RDLOCK",
        2570: "SQLITE_IOERR_DELETE", 3082: "SQLITE_IOERR_NOMEM", 3338: "SQLITE_IOERR_ACCESS",
        3850: "SQLITE_IOERR_LOCK", 4106: "SQLITE_IOERR_CLOSE", 4874: "SQLITE_IOERR_SHMOPEN",
        5130: "SQLITE_IOERR_SHMSIZE", 5386: "SQLITE_IOERR_SHMLOCK", 5642: "SQLITE_IOERR_SHMMAP",
        5898: "SQLITE_IOERR_SEEK", 6410: "SQLITE_IOERR_MMAP",
        275: "SQLITE_CONSTRAINT_CHECK", 531: "SQLITE_CONSTRAINT_COMMITHOOK",
        787: "SQLITE_CONSTRAINT_FOREIGNKEY", 1043: "SQLITE_CONSTRAINT_FUNCTION",
        1299: "SQLITE_CONSTRAINT_NOTNULL", 1555: "SQLITE_CONSTRAINT_PRIMARYKEY",
        1811: "SQLITE_CONSTRAINT_TRIGGER", 2067: "SQLITE_CONSTRAINT_UNIQUE",
        2323: "SQLITE_CONSTRAINT_VTAB", 2579: "SQLITE_CONSTRAINT_ROWID",
        2835: "SQLITE_CONSTRAINT_PINNED", 3091: "SQLITE_CONSTRAINT_DATATYPE",
        257: "SQLITE_ERROR_MISSING_COLLSEQ", 513: "SQLITE_ERROR_RETRY", 769: "SQLITE_ERROR_SNAPSHOT",
    ]
}
