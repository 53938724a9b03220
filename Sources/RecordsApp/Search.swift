import Foundation
import SQLiteStore

/// How a search text must match a name.
public enum SearchMode: String, Sendable, CaseIterable, Codable {
    /// The name starts with the text.
    case prefix
    /// The text appears anywhere in the name.
    case substring
}

/// Case- and accent-insensitive matching, the same in Swift and in SQL.
///
/// SQLite's own `LIKE` and `NOCASE` fold ASCII letters only, so "élise"
/// would not find "Élise". The app's connections get a SQL function,
/// `records_fold(text)`, that folds exactly as ``fold(_:)`` does; queries
/// compare folded columns with a folded search text.
public enum SearchFolding {
    /// The SQL function's name.
    public static let functionName = "records_fold"

    /// `text` without case or diacritic differences: "Åkesson" and
    /// "akesson" fold to the same string.
    public static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    /// Adds `records_fold` to a connection.
    static func register(on db: Database) throws {
        guard let handle = db.sqliteConnection else {
            throw SQLiteError(code: .misuse, message: "the database connection is closed")
        }
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        let code = sqlite3_create_function_v2(
            handle, functionName, 1, flags, nil,
            { context, count, values in
                guard count == 1, let value = values?[0], sqlite3_value_type(value) != SQLITE_NULL,
                    let text = sqlite3_value_text(value)
                else {
                    sqlite3_result_null(context)
                    return
                }
                let folded = SearchFolding.fold(String(cString: text))
                sqlite3_result_text(context, folded, -1, sqliteTransientDestructor)
            }, nil, nil, nil)
        guard code == SQLITE_OK else {
            throw SQLiteError(code: ResultCode(rawValue: code), message: "cannot register \(functionName)")
        }
    }
}

/// SQLite's `SQLITE_TRANSIENT`: SQLite copies the result before returning.
private nonisolated(unsafe) let sqliteTransientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
