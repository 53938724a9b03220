// Fuzz target: `Database.execute` on an in-memory database, with fuzzed SQL
// and fuzzed arguments: statement splitting, comments and blanks between
// statements, positional (`?`, `?NNN`) and named (`:a`, `@a`, `$a`)
// parameters consumed across statements, the statement cache, and cursors
// left open while the same SQL runs again.
//
// Input: SQL text, optionally followed by a line `-- args` and one argument
// per line (an SQL comment, so every seed is also plain SQL):
//
//     SELECT ?1 + :n; SELECT $n
//     -- args
//     :n=42
//
// A line `name=value` whose name starts with `:`, `@` or `$` is a named
// argument; any other line is the next positional one. Values: `NULL`, an
// integer, a real, `x'hex'` for a blob, anything else text.
//
// Invariants: nothing traps, hangs or leaks past the sanitizer; errors are
// the library's error types; an argument error (thrown before the statement
// runs) is thrown again when the same SQL runs again from the statement
// cache; afterwards the connection still answers `SELECT 1`.
//
// Every query runs under a progress handler, small SQLite limits and a
// heap limit, so that a fuzzed `WITH RECURSIVE` or `zeroblob(1e9)` fails
// quickly instead of stalling the run; ATTACH (and so VACUUM INTO) is
// disabled, so no SQL can create files.

import Foundation
#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif
import SQLiteStore

/// Virtual-machine steps left to the statement(s) of the current input, in
/// units of the progress handler's interval.
nonisolated(unsafe) private var progressBudget = 0

private let setUpOnce: Void = {
    // Process-wide: no input can make SQLite hold more than this.
    sqlite3_hard_heap_limit64(256 << 20)
}()

private func openDatabase() throws -> Database {
    let db = try Database.inMemory()
    guard let handle = db.sqliteConnection else { throw SQLiteError(code: .misuse, message: "closed") }
    sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, 1 << 20)
    sqlite3_limit(handle, SQLITE_LIMIT_SQL_LENGTH, 1 << 16)
    sqlite3_limit(handle, SQLITE_LIMIT_ATTACHED, 0)
    sqlite3_limit(handle, SQLITE_LIMIT_VDBE_OP, 25_000)
    sqlite3_limit(handle, SQLITE_LIMIT_TRIGGER_DEPTH, 10)
    progressBudget = 2_000
    sqlite3_progress_handler(
        handle, 1_000,
        { _ in
            progressBudget -= 1
            return progressBudget < 0 ? 1 : 0
        }, nil)
    try db.execute(
        """
        CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c BLOB, d REAL);
        INSERT INTO t VALUES (1, 'one', x'01', 1.5), (2, NULL, x'', -0.0);
        """)
    return db
}

/// The SQL and the arguments an input stands for.
private func decode(_ text: String) -> (sql: String, arguments: StatementArguments) {
    let marker = "\n-- args\n"
    guard let range = text.range(of: marker) else { return (text, StatementArguments()) }
    let sql = String(text[..<range.lowerBound])
    var arguments = StatementArguments()
    for line in text[range.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
        if let first = line.first, first == ":" || first == "@" || first == "$",
            let equals = line.firstIndex(of: "=")
        {
            // The prefix is kept: StatementArguments must strip it.
            arguments[String(line[..<equals])] = value(line[line.index(after: equals)...])
        } else {
            arguments.append(value(line))
        }
    }
    return (sql, arguments)
}

private func value(_ text: Substring) -> SQLiteValue {
    if text == "NULL" { return .null }
    if let integer = Int64(text) { return .integer(integer) }
    if let real = Double(text) { return .real(real) }
    if text.hasPrefix("x'"), text.hasSuffix("'"), text.count >= 3, text.count % 2 == 1 {
        let hex = Array(text.utf8.dropFirst(2).dropLast())
        var bytes = Data()
        var index = 0
        while index + 1 < hex.count {
            guard let byte = UInt8(String(decoding: hex[index...index + 1], as: UTF8.self), radix: 16) else {
                return .text(String(text))
            }
            bytes.append(byte)
            index += 2
        }
        return .blob(bytes)
    }
    return .text(String(text))
}

/// Runs `body`; an error must be one the library documents.
private func attempt(_ body: () throws -> Void) -> SQLiteError? {
    do {
        try body()
        return nil
    } catch let error as SQLiteError {
        _ = error.description
        return error
    } catch let error as ValueConversionError {
        _ = error.description
        return nil
    } catch {
        require(false, "an error of an undocumented type: \(type(of: error)): \(error)")
        return nil
    }
}

/// Whether `error` is an argument error, thrown before the statement ran.
private func isArgumentError(_ error: SQLiteError?) -> Bool {
    guard let error, error.extendedCode == .misuse else { return false }
    return ["wrong number of arguments", "cannot mix", "has no name", "missing argument", "unknown argument"]
        .contains { error.message.contains($0) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    _ = setUpOnce
    let (sql, arguments) = decode(String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self))
    let db: Database
    do {
        db = try openDatabase()
    } catch {
        require(false, "cannot open an in-memory database: \(error)")
        return 0
    }
    defer { db.close() }

    let first = attempt { try db.execute(sql: sql, arguments: arguments) }
    let isSingleStatement = (try? db.makeStatement(sql: sql)) != nil
    if isSingleStatement {
        // Again, now from the statement cache: the same arguments are
        // checked the same way.
        let again = attempt { try db.execute(sql: sql, arguments: arguments) }
        if isArgumentError(first) {
            require(
                isArgumentError(again),
                "argument error not repeated from the cache: \(first?.message ?? "") then \(again?.message ?? "none")")
        }
        // A cursor left open on the cached statement, while the same SQL
        // runs again (on a fresh statement) and is fetched.
        var cursor: RowCursor?
        _ = attempt {
            cursor = try db.fetchCursor(sql: sql, arguments: arguments)
            _ = try cursor?.next()
        }
        _ = attempt { try db.execute(sql: sql, arguments: arguments) }
        _ = attempt { _ = try db.fetchAll(sql: sql, arguments: arguments) }
        _ = attempt { _ = try cursor?.next() }
        cursor = nil
    }

    // Whatever ran, the connection still works.
    progressBudget = 2_000
    let one = try? db.fetchOne(Int.self, "SELECT 1")
    require(one == 1, "the connection no longer answers SELECT 1 after \(sql.debugDescription)")
    return 0
}
