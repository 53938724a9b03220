import Foundation
import SQLiteStore

/// Case- and accent-insensitive sorting, searching and name matching, the
/// same in Swift and in SQL.
///
/// SQLite's own `LIKE` and `NOCASE` fold ASCII letters only, so "élise"
/// would not sort or match as "Élise", and FTS5's tokenizer removes only
/// the accents that Unicode decomposes, so "skl" would not find
/// "Skłodowska". The app's connections get SQL functions,
/// `records_fold(text)` and `records_name_key(text)`, that fold exactly as
/// ``fold(_:)`` and ``nameKey(_:)`` do: lists sort by folded names,
/// Contacts finds a name by its key, and each app's full-text index holds
/// its text folded (see ``FoldedSearchIndex``), searched with the typed
/// text folded the same way.
public enum SearchFolding {
    /// The SQL function's name.
    public static let functionName = "records_fold"

    /// `text` without case or diacritic differences: "Åkesson" and
    /// "akesson" fold to the same string, and so do "Łukasz" and "lukasz",
    /// "Søren" and "soren", "Æsir" and "aesir".
    ///
    /// The letters that Unicode does not decompose into a letter and an
    /// accent (ł, ø, đ, æ, ß, þ, ı and the others of ``letters``) become
    /// the ASCII letters a person types for them; then case, accents and
    /// width are folded by Unicode's rules. A letter only ever becomes
    /// letters, so text has the same words after folding as before.
    ///
    /// Most names are ASCII, which folds to its lower case: such text takes
    /// a fast path that gives the same result without Foundation's Unicode
    /// tables (`SELECT ... ORDER BY records_fold(name)` calls this once
    /// per row).
    public static func fold(_ text: String) -> String {
        foldASCII(text) ?? foldUnicode(text)
    }

    /// The general fold, for any text: ``letters`` replaced, then case,
    /// diacritics and width folded.
    static func foldUnicode(_ text: String) -> String {
        replacingLetters(text).folding(
            options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    /// `text` with each of ``letters`` replaced; the text itself when it
    /// has none (the usual case, found without building a copy).
    static func replacingLetters(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { $0.value >= 0xC0 && letters[$0] != nil }) else { return text }
        var replaced = String.UnicodeScalarView(scalars[..<first])
        for scalar in scalars[first...] {
            if scalar.value >= 0xC0, let replacement = letters[scalar] {
                replaced.append(contentsOf: replacement.unicodeScalars)
            } else {
                replaced.append(scalar)
            }
        }
        return String(replaced)
    }

    /// The Latin letters that Unicode does not decompose, each with the
    /// lower-case ASCII letters a person types for it, both cases of each:
    /// the table of foldings in docs/CLI.md ("Letters folded").
    ///
    /// A letter that decomposes into one of these and accents (ǿ is ø and
    /// an acute) is found through ``letters``, which adds them.
    static let baseLetters: [(letters: String, folded: String)] = [
        // Latin-1 Supplement
        ("Ææ", "ae"), ("Ðð", "d"), ("Øø", "o"), ("Þþ", "th"), ("ß", "ss"),
        // Latin Extended-A
        ("Đđ", "d"), ("Ħħ", "h"), ("ı", "i"), ("Ĳĳ", "ij"), ("ĸ", "q"), ("Ŀŀ", "l"), ("Łł", "l"), ("ŉ", "n"),
        ("Ŋŋ", "n"), ("Œœ", "oe"), ("Ŧŧ", "t"), ("ſ", "s"),
        // Latin Extended-B, with the lower-case letters of its capitals
        // that Unicode keeps among the IPA letters (Ɓ and ɓ)
        ("ƀɃ", "b"), ("Ɓɓ", "b"), ("Ƃƃ", "b"), ("Ɔɔ", "o"), ("Ƈƈ", "c"), ("Ɖɖ", "d"), ("Ɗɗ", "d"), ("Ƌƌ", "d"),
        ("Ǝǝ", "e"), ("Əə", "e"), ("Ɛɛ", "e"), ("Ƒƒ", "f"), ("Ɠɠ", "g"), ("Ɣɣ", "g"), ("ƕǶ", "hv"), ("Ɩɩ", "i"),
        ("Ɨɨ", "i"), ("Ƙƙ", "k"), ("ƚȽ", "l"), ("Ɯɯ", "m"), ("Ɲɲ", "n"), ("ƞȠ", "n"), ("Ɵɵ", "o"), ("Ƣƣ", "oi"),
        ("Ƥƥ", "p"), ("Ʀʀ", "r"), ("ƫ", "t"), ("Ƭƭ", "t"), ("Ʈʈ", "t"), ("Ʊʊ", "u"), ("Ʋʋ", "v"), ("Ƴƴ", "y"),
        ("Ƶƶ", "z"), ("Ʒʒ", "z"), ("ƺ", "z"), ("Ƿƿ", "w"), ("ǄǅǆǱǲǳ", "dz"), ("Ǉǈǉ", "lj"), ("Ǌǋǌ", "nj"),
        ("Ǥǥ", "g"), ("Ȣȣ", "ou"), ("Ȥȥ", "z"), ("ȡ", "d"), ("ȴ", "l"), ("ȵ", "n"), ("ȶ", "t"), ("ȷ", "j"),
        ("ȸ", "db"), ("ȹ", "qp"), ("Ⱥⱥ", "a"), ("Ȼȼ", "c"), ("Ⱦⱦ", "t"), ("ȿ", "s"), ("ɀ", "z"), ("Ʉʉ", "u"),
        ("Ʌʌ", "v"), ("Ɇɇ", "e"), ("Ɉɉ", "j"), ("Ɋɋ", "q"), ("Ɍɍ", "r"), ("Ɏɏ", "y"),
        // Latin Extended Additional: the Welsh ll, v and y of old
        // manuscripts
        ("Ỻỻ", "ll"), ("Ỽỽ", "v"), ("Ỿỿ", "y"),
    ]

    /// Every letter ``fold(_:)`` replaces before Unicode's folding: those
    /// of ``baseLetters``, and the Latin letters (U+00C0 to U+024F, U+1E00
    /// to U+1EFF) that decompose into one of them and accents, which keep
    /// their accents for Unicode's folding to remove.
    static let letters: [Unicode.Scalar: String] = {
        var table: [Unicode.Scalar: String] = [:]
        for (letters, folded) in baseLetters {
            for scalar in letters.unicodeScalars { table[scalar] = folded }
        }
        for value in Array(0xC0...0x24F) + Array(0x1E00...0x1EFF) {
            guard let scalar = Unicode.Scalar(value), table[scalar] == nil else { continue }
            let decomposed = Array(String(scalar).decomposedStringWithCanonicalMapping.unicodeScalars)
            guard decomposed.count > 1, let base = table[decomposed[0]] else { continue }
            var view = String.UnicodeScalarView(base.unicodeScalars)
            view.append(contentsOf: decomposed.dropFirst())
            table[scalar] = String(view)
        }
        return table
    }()

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
