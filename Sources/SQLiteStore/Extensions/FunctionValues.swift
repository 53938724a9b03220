import Foundation

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

// Moving values between SQLite's `sqlite3_value` / `sqlite3_context` and
// Swift, for SQL functions and aggregates.

extension SQLiteValue {
    /// Reads an argument of a SQL function. Text keeps embedded NUL
    /// characters: its length comes from `sqlite3_value_bytes`, not from a
    /// terminating NUL.
    init(functionArgument value: OpaquePointer) {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER:
            self = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT:
            self = .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            // sqlite3_value_text must be called before sqlite3_value_bytes.
            guard let text = sqlite3_value_text(value) else {
                self = .text("")
                return
            }
            // As a TEXT column reads: text that is not valid UTF-8 keeps its
            // bytes, as TEXT, instead of being repaired.
            self.init(textBytes: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))))
        case SQLITE_BLOB:
            let bytes = sqlite3_value_blob(value)
            let count = Int(sqlite3_value_bytes(value))
            if let bytes, count > 0 {
                self = .blob(Data(bytes: bytes, count: count))
            } else {
                self = .blob(Data())
            }
        default:
            self = .null
        }
    }

    /// Makes the value the result of a SQL function call.
    func setResult(of context: OpaquePointer) {
        switch self {
        case .null:
            sqlite3_result_null(context)
        case .integer(let integer):
            sqlite3_result_int64(context, integer)
        case .real(let real):
            sqlite3_result_double(context, real)
        case .text(let text):
            var text = text
            // The explicit byte count keeps embedded NUL characters.
            text.withUTF8 { buffer in
                guard let base = buffer.baseAddress, buffer.count > 0 else {
                    sqlite3_result_text(context, "", 0, sqliteTransient)
                    return
                }
                base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { chars in
                    sqlite3_result_text64(context, chars, UInt64(buffer.count), sqliteTransient, UInt8(SQLITE_UTF8))
                }
            }
        case .textBytes(let data):
            data.withUnsafeBytes { buffer in
                // A NULL pointer would make the result NULL: empty bytes are empty text.
                guard let base = buffer.baseAddress, buffer.count > 0 else {
                    sqlite3_result_text(context, "", 0, sqliteTransient)
                    return
                }
                sqlite3_result_text64(
                    context, base.assumingMemoryBound(to: CChar.self), UInt64(buffer.count), sqliteTransient,
                    UInt8(SQLITE_UTF8))
            }
        case .blob(let data):
            // A NULL pointer would make the result NULL, so an empty blob is a zeroblob.
            if data.isEmpty {
                sqlite3_result_zeroblob(context, 0)
            } else {
                data.withUnsafeBytes { buffer in
                    sqlite3_result_blob64(context, buffer.baseAddress, UInt64(buffer.count), sqliteTransient)
                }
            }
        }
    }
}

/// Reads the `count` arguments of a SQL function call.
func functionArguments(_ count: Int32, _ values: UnsafeMutablePointer<OpaquePointer?>?) -> [SQLiteValue] {
    guard let values, count > 0 else { return [] }
    return (0..<Int(count)).map { index in
        values[index].map { SQLiteValue(functionArgument: $0) } ?? .null
    }
}

/// Makes a Swift error the result of a SQL function call: the statement
/// fails with the error's message (and, for a ``SQLiteError``, its code).
func setError(_ error: any Error, of context: OpaquePointer) {
    let message: String
    if let error = error as? SQLiteError {
        message = error.message
    } else if let error = error as? LocalizedError, let description = error.errorDescription {
        message = description
    } else {
        message = String(describing: error)
    }
    var utf8 = Array(message.utf8)
    utf8.append(0)
    utf8.withUnsafeBufferPointer { buffer in
        buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { chars in
            sqlite3_result_error(context, chars, Int32(clamping: buffer.count - 1))
        }
    }
    if let error = error as? SQLiteError, error.extendedCode != .ok {
        // sqlite3_result_error_code keeps the message set above.
        sqlite3_result_error_code(context, error.extendedCode.rawValue)
    }
}
