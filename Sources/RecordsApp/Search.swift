import Foundation
import SQLiteStore

/// Case- and accent-insensitive sorting and name matching, the same in
/// Swift and in SQL. (Searching by text goes through each app's full-text
/// index, whose tokenizer folds case and diacritics itself.)
///
/// SQLite's own `LIKE` and `NOCASE` fold ASCII letters only, so "élise"
/// would not sort or match as "Élise". The app's connections get SQL
/// functions, `records_fold(text)` and `records_name_key(text)`, that fold
/// exactly as ``fold(_:)`` and ``nameKey(_:)`` do: lists sort by folded
/// names, and Contacts finds a name by its key.
public enum SearchFolding {
    /// The SQL function's name.
    public static let functionName = "records_fold"

    /// `text` without case or diacritic differences: "Åkesson" and
    /// "akesson" fold to the same string.
    ///
    /// Most names are ASCII, which folds to its lower case: such text takes
    /// a fast path that gives the same result without Foundation's Unicode
    /// tables (`SELECT ... ORDER BY records_fold(name)` calls this once
    /// per row).
    public static func fold(_ text: String) -> String {
        foldASCII(text) ?? foldUnicode(text)
    }

    /// The general fold, for any text.
    static func foldUnicode(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    /// `text` folded, when it is all ASCII (where folding only lowers the
    /// case of `A` to `Z`); nil for any other text, or text whose UTF-8 is
    /// not stored contiguously (a bridged string), which the general fold
    /// takes instead.
    static func foldASCII(_ text: String) -> String? {
        let folded = text.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            var hasUpper = false
            for byte in bytes {
                if byte >= 0x80 { return nil }
                if byte &- UInt8(ascii: "A") < 26 { hasUpper = true }
            }
            // Text that is already folded is returned as it is: no copy.
            guard hasUpper else { return text }
            return String(unsafeUninitializedCapacity: bytes.count) { buffer in
                for (index, byte) in bytes.enumerated() {
                    buffer[index] = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
                }
                return bytes.count
            }
        }
        return folded ?? nil
    }

    /// The SQL function that gives ``nameKey(_:)``.
    public static let nameKeyFunctionName = "records_name_key"

    /// A name as it is matched: folded (see ``fold(_:)``), without
    /// surrounding white space, each run of white space inside made one
    /// space: "  Jane   DOE " and "jane doe" have the same key.
    public static func nameKey(_ name: String) -> String {
        fold(name).split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// Adds `records_fold` and `records_name_key` to a connection. Text
    /// keeps its embedded NUL characters; numbers and blobs fold as their
    /// text, as SQLite would convert them; NULL gives NULL.
    static func register(on db: Database) throws {
        let functions: [(name: String, transform: @Sendable (String) -> String)] = [
            (functionName, { fold($0) }), (nameKeyFunctionName, { nameKey($0) }),
        ]
        for function in functions {
            let transform = function.transform
            try db.createFunction(function.name, argumentCount: 1, options: [.deterministic, .innocuous]) {
                (arguments: [SQLiteValue]) -> String? in
                apply(transform, to: arguments[0])
            }
        }
    }

    /// What the SQL function gives for `value`: NULL gives nil, numbers
    /// their text, blobs and text that is not UTF-8 their bytes decoded as UTF-8, each folded by
    /// `transform`. Shared by the SQL functions and the sort keys computed
    /// in Swift (``SortKeyTable``), so that both give the same key.
    static func apply(_ transform: (String) -> String, to value: SQLiteValue) -> String? {
        switch value {
        case .null: nil
        case .text(let text): transform(text)
        case .integer(let integer): String(integer)
        case .real(let real): String(real)
        case .textBytes(let bytes), .blob(let bytes): transform(String(decoding: bytes, as: UTF8.self))
        }
    }
}
