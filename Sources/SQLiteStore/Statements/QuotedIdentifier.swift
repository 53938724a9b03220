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
    var quoted = "\""
    quoted.reserveCapacity(identifier.utf8.count + 2)
    for character in identifier.unicodeScalars {
        if character == "\"" { quoted.unicodeScalars.append("\"") }
        quoted.unicodeScalars.append(character)
    }
    quoted.unicodeScalars.append("\"")
    return quoted
}
