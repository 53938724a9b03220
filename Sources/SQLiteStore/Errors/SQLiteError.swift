import Foundation

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// An error reported by SQLite, or a misuse of the API detected by this
/// library before SQLite ran anything (wrong argument count, closed
/// connection, ...; these carry ``ResultCode/misuse`` or ``ResultCode/range``).
///
/// The description is meant for logs:
///
/// ```text
/// SQLite error SQLITE_CONSTRAINT_UNIQUE (2067): UNIQUE constraint failed: user.email
///   while executing: INSERT INTO user (email) VALUES (?)
/// ```
///
/// The statement arguments are kept in ``arguments`` but are not part of the
/// description, since they may hold private data, unless the connection's
/// ``Configuration/includesArgumentsInErrors`` is set.
public struct SQLiteError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// The extended result code, such as ``ResultCode/constraintUnique``.
    public let extendedCode: ResultCode
    /// SQLite's message, such as `UNIQUE constraint failed: user.email`.
    public let message: String
    /// The SQL that failed, when there was one.
    public let sql: String?
    /// The arguments bound to the failing statement, when there were any.
    public let arguments: StatementArguments?
    /// Whether ``description`` includes ``arguments``.
    public let includesArgumentsInDescription: Bool

    /// The primary result code, such as ``ResultCode/constraint``.
    public var code: ResultCode { extendedCode.primary }

    /// Creates an error.
    public init(
        code: ResultCode,
        message: String? = nil,
        sql: String? = nil,
        arguments: StatementArguments? = nil,
        includesArgumentsInDescription: Bool = false
    ) {
        self.extendedCode = code
        self.message = message ?? code.explanation
        self.sql = sql
        self.arguments = (arguments?.isEmpty ?? true) ? nil : arguments
        self.includesArgumentsInDescription = includesArgumentsInDescription
    }

    /// An error for a misuse of the API that this library detects itself.
    @usableFromInline
    static func misuse(_ message: String, sql: String? = nil) -> SQLiteError {
        SQLiteError(code: .misuse, message: message, sql: sql)
    }

    /// Reads the current error of a connection: code and message.
    static func from(
        connection: OpaquePointer?, code: Int32, sql: String?, arguments: StatementArguments? = nil,
        includesArguments: Bool = false
    ) -> SQLiteError {
        var message: String?
        if let connection, let cMessage = sqlite3_errmsg(connection) {
            message = String(cString: cMessage)
            if code & 0xFF == SQLITE_READONLY, let file = unwritableFile(of: connection) {
                message = (message ?? "") + " (\(file))"
            }
        }
        return SQLiteError(
            code: ResultCode(rawValue: code), message: message, sql: sql, arguments: arguments,
            includesArgumentsInDescription: includesArguments)
    }

    /// Why a write was refused, when a file of the database cannot be
    /// written: the database file itself, or the `-wal` or `-shm` file
    /// beside it (left, say, by a program that read the database while it
    /// was read-only, with its permissions), which SQLite needs to write.
    private static func unwritableFile(of connection: OpaquePointer) -> String? {
        guard let name = sqlite3_db_filename(connection, "main") else { return nil }
        let path = String(cString: name)
        guard !path.isEmpty else { return nil }
        if access(path, F_OK) == 0, access(path, W_OK) != 0 {
            return "the database file \(path) is not writable"
        }
        let wal = path + "-wal"
        if access(wal, F_OK) == 0, access(wal, W_OK) != 0 {
            // Never "remove it": it may hold committed changes.
            return "the file \(wal) beside the database is not writable; make it writable"
        }
        let shm = path + "-shm"
        if access(shm, F_OK) == 0, access(shm, W_OK) != 0 {
            return "the file \(shm) beside the database is not writable; make it writable, or remove it while no "
                + "program has the database open"
        }
        return nil
    }

    public var description: String {
        var text = "SQLite error \(extendedCode): \(message)"
        if let sql { text += "\n  while executing: \(sql)" }
        if includesArgumentsInDescription, let arguments { text += "\n  with arguments: \(arguments)" }
        return text
    }

    public var errorDescription: String? { description }
}
