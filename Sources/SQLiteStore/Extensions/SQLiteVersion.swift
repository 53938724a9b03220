#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// The version of the SQLite library in use (the one linked at run time,
/// which on Apple platforms is the operating system's).
///
/// ```swift
/// print(Database.sqliteVersion)                         // 3.40.1
/// if Database.sqliteVersion >= SQLiteVersion(3, 35, 0) { /* RETURNING */ }
/// ```
public struct SQLiteVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// `SQLITE_VERSION_NUMBER` style: 3040001 for 3.40.1.
    public let number: Int
    /// The version as text: `3.40.1`.
    public let string: String
    /// The check-in the library was built from (date, time and hash); empty
    /// for a version made with ``init(_:_:_:)``.
    public let sourceID: String

    /// The major version (3).
    public var major: Int { number / 1_000_000 }
    /// The minor version (40 in 3.40.1).
    public var minor: Int { number / 1000 % 1000 }
    /// The patch version (1 in 3.40.1).
    public var patch: Int { number % 1000 }

    /// A version to compare with, such as `SQLiteVersion(3, 35, 0)`.
    public init(_ major: Int, _ minor: Int, _ patch: Int) {
        number = major * 1_000_000 + minor * 1000 + patch
        string = "\(major).\(minor).\(patch)"
        sourceID = ""
    }

    init(number: Int, string: String, sourceID: String) {
        self.number = number
        self.string = string
        self.sourceID = sourceID
    }

    public var description: String { string }

    /// Versions compare by number only.
    public static func < (lhs: SQLiteVersion, rhs: SQLiteVersion) -> Bool { lhs.number < rhs.number }

    /// Versions are equal when their numbers are.
    public static func == (lhs: SQLiteVersion, rhs: SQLiteVersion) -> Bool { lhs.number == rhs.number }

    public func hash(into hasher: inout Hasher) { hasher.combine(number) }
}

extension Database {
    /// The SQLite library in use (`sqlite3_libversion`, `sqlite3_libversion_number`,
    /// `sqlite3_sourceid`).
    public static var sqliteVersion: SQLiteVersion {
        SQLiteVersion(
            number: Int(sqlite3_libversion_number()), string: String(cString: sqlite3_libversion()),
            sourceID: String(cString: sqlite3_sourceid()))
    }
}
