import Foundation
import TestSupport

@testable import RecordsApp
@testable import SQLiteStore

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// Signatures of the picture formats, followed by a few more bytes.
enum PictureBytes {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]
    static let gif87: [UInt8] = Array("GIF87a".utf8)
    static let gif89: [UInt8] = Array("GIF89a".utf8)
    static let webp: [UInt8] = Array("RIFF".utf8) + [0x24, 0, 0, 0] + Array("WEBP".utf8)

    /// A "picture" of `count` bytes: `signature`, then pattern bytes, in
    /// which a byte out of place shows.
    static func make(_ signature: [UInt8] = png, count: Int) -> Data {
        var data = Data(signature.prefix(count))
        data.append(PatternBytes.data(count: max(count - signature.count, 0), seed: 7))
        return data
    }
}

/// The SQL statements a connection runs while `body` runs, from the core's
/// tracing hook, but for the transaction statements around each access.
func tracedStatements<T>(
    _ database: AppDatabase, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
) async throws
    -> (result: T, sql: [String])
{
    let log = StatementLog()
    // Outside any transaction, so that installing the hook is not traced.
    let setTrace: (Bool) throws -> Void = { on in
        try database.writer.writeWithoutTransaction { db in db.trace(on ? { event in log.append(event.sql) } : nil) }
    }
    try setTrace(true)
    defer { try? setTrace(false) }
    let result = try await body()
    // Each access runs in a transaction; its BEGIN and COMMIT are the
    // database's, not the store's statements.
    let transactionControl = ["BEGIN", "COMMIT", "ROLLBACK"]
    return (result, log.lines.filter { line in !transactionControl.contains { line.hasPrefix($0) } })
}

final class StatementLog: Sendable {
    private let value = Locked<[String]>([])
    func append(_ line: String) { value.withLock { $0.append(line) } }
    var lines: [String] { value.withLock { $0 } }
}

/// Rows changed on the connection so far (`sqlite3_total_changes64`).
func totalChanges(_ database: AppDatabase) throws -> Int {
    try database.read { db in db.totalChangesCount }
}

/// Records the columns a statement reads, as SQLite's authorizer reports
/// them when statements are prepared (`SQLITE_READ`: table and column).
final class ColumnReadRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var reads: [String] = []

    fileprivate func add(_ read: String) { lock.withLock { reads.append(read) } }

    var columns: [String] { lock.withLock { reads } }
}

/// The `table.column` pairs the statements prepared by `body` read.
/// Statements prepared earlier are expired when the authorizer is set, so
/// they are prepared (and reported) again.
func columnsRead<T>(
    _ database: AppDatabase, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
) async throws
    -> (result: T, columns: [String])
{
    let recorder = ColumnReadRecorder()
    let context = Unmanaged.passRetained(recorder)
    defer { context.release() }
    try database.read { db in
        db.clearStatementCache()
        sqlite3_set_authorizer(
            db.sqliteConnection,
            { context, action, table, column, _, _ in
                if action == SQLITE_READ, let context, let table, let column {
                    Unmanaged<ColumnReadRecorder>.fromOpaque(context).takeUnretainedValue()
                        .add(String(cString: table) + "." + String(cString: column))
                }
                return SQLITE_OK
            }, context.toOpaque())
    }
    defer { _ = try? database.read { db in sqlite3_set_authorizer(db.sqliteConnection, nil, nil) } }
    let result = try await body()
    return (result, recorder.columns)
}

/// Pages the connection had to read from the file so far
/// (`SQLITE_DBSTATUS_CACHE_MISS`).
func pagesRead(_ database: AppDatabase) throws -> Int {
    try database.read { db in
        var current: Int32 = 0
        var highest: Int32 = 0
        sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_MISS, &current, &highest, 0)
        return Int(current)
    }
}

/// Runs `body` and returns the error of type `E` it throws; nil when it
/// throws nothing or an error of another type.
func thrown<E: Error>(
    _ type: E.Type, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Void
) async -> E? {
    do {
        try await body()
    } catch {
        return error as? E
    }
    return nil
}

/// A decimal from its text.
func decimal(_ text: String) -> Decimal {
    Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) ?? .nan
}
