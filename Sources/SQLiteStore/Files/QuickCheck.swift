import Foundation
#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// SQLite's quick integrity check of a database file that must not be
/// touched: for checking a file before it is copied (the app-support
/// module's template install), where opening it as a ``Database`` would
/// take locks and could create files beside it.
///
/// `package`, not public: the app-support module needs it, and a public
/// form would have to become a general "open immutable" option of
/// ``Configuration``, which nothing else asks for.
package enum QuickCheck {
    /// `PRAGMA quick_check` on the file at `path`, opened read-only and
    /// `immutable`: SQLite then takes no lock and creates no file beside it
    /// (a WAL-mode file would otherwise get `-wal` and `-shm` files, and a
    /// file in a read-only bundle could not be opened).
    ///
    /// - Returns: the check's rows (`["ok"]` for a sound database), or the
    ///   error SQLite reported opening or reading the file.
    package static func run(onFileAt path: String) -> Result<[String], SQLiteError> {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var uri = "file://"
        for scalar in absolute.unicodeScalars {
            switch scalar {
            case "%": uri += "%25"
            case "?": uri += "%3f"
            case "#": uri += "%23"
            default: uri.unicodeScalars.append(scalar)
            }
        }
        uri += "?immutable=1"
        var handle: OpaquePointer?
        defer { sqlite3_close_v2(handle) }
        let sql = "PRAGMA quick_check"
        func failure(_ code: Int32) -> Result<[String], SQLiteError> {
            .failure(SQLiteError.from(connection: handle, code: code, sql: sql))
        }
        let openCode = sqlite3_open_v2(uri, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nil)
        guard openCode == SQLITE_OK else { return failure(openCode) }
        var statement: OpaquePointer?
        let prepareCode = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        guard prepareCode == SQLITE_OK else { return failure(prepareCode) }
        var rows: [String] = []
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return .success(rows) }
            guard code == SQLITE_ROW else { return failure(code) }
            rows.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "")
        }
    }
}
