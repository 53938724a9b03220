/// Returns an identifier (a table, column or index name) quoted for SQL:
/// wrapped in double quotes, with each double quote inside doubled.
///
/// This is the one way the library splices a name into SQL text; values are
/// never spliced, they are bound. Quoting keeps names that are keywords,
/// contain spaces or quotes, or start with a digit working as written:
///
/// ```swift
/// quotedIdentifier("order")          // "order"
/// quotedIdentifier("first name")     // "first name"
/// quotedIdentifier("say \"hi\"")     // "say ""hi"""
/// let sql = "SELECT * FROM \(quotedIdentifier(tableName))"
/// ```
///
/// The whole string is one identifier: `main.people` names a table called
/// `main.people`, not the table `people` of the schema `main`.
public func quotedIdentifier(_ identifier: String) -> String {
    quoted(identifier, in: "\"")
}

/// `text` between two `quote`s, with each `quote` in it doubled: how SQL
/// writes a string literal (`'`) or an identifier (`"`), and how FTS5
/// writes a string in a query or an option.
///
/// Works on Unicode scalars. Foundation's
/// `replacingOccurrences(of: "'", with: "''")` compares characters, and a
/// quote followed by a combining mark (`'` U+0301) is one character that
/// is not `'`: that quote would stay single and end the literal early.
func quoted(_ text: String, in quote: Unicode.Scalar) -> String {
    var quoted = String(quote)
    quoted.reserveCapacity(text.utf8.count + 2)
    for scalar in text.unicodeScalars {
        if scalar == quote { quoted.unicodeScalars.append(quote) }
        quoted.unicodeScalars.append(scalar)
    }
    quoted.unicodeScalars.append(quote)
    return quoted
}
