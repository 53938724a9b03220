/// What was done to a record, and the one wording every app and every
/// front end uses to say so: the verb, the record's name in quotes, and a
/// full stop.
///
/// ```swift
/// RecordOutcome.added.message("Cortado")                       // Added “Cortado”.
/// RecordOutcome.added.message(RecordMention("Cortado", details: "ID 7"))
/// // Added “Cortado” (ID 7).
/// ```
///
/// The name goes in as it is to be shown: a page sets it apart from the
/// text around it with direction isolates, the `records` command escapes
/// control characters first.
public enum RecordOutcome: String, Sendable, CaseIterable {
    /// A record was made: "Added".
    case added = "Added"
    /// A record was changed: "Updated".
    case updated = "Updated"
    /// A record was deleted: "Deleted".
    case deleted = "Deleted"

    /// `Added “Cortado”.`
    public func message(_ name: String) -> String { message(RecordMention(name)) }

    /// `Updated “Espresso” (ID 1).`, or with `more` after the record:
    /// `Updated “Espresso” (ID 1): price 2.50 → 2.70.`
    public func message(_ record: RecordMention, more: String = "") -> String {
        "\(rawValue) \(record)\(more)."
    }

    /// What an edit that found every value as it was says instead of
    /// ``updated``: `Nothing changed: “Ada Lovelace” (ID 1) already has
    /// those values.`
    public static func unchanged(_ record: RecordMention) -> String {
        "Nothing changed: \(record) already has those values."
    }
}

/// A record as messages name it: its name in quotes, then what else tells
/// it apart in parentheses, when there is any: `“Ada Lovelace” (ID 1, age
/// 36)`. A record without a name is `(no name)`, without quotes, which
/// would make it look like one.
public struct RecordMention: Sendable, Equatable, CustomStringConvertible {
    /// The name, as it is to be shown.
    public var name: String
    /// What follows in parentheses ("ID 1, age 36"), if anything.
    public var details: String?

    /// Creates a mention.
    public init(_ name: String, details: String? = nil) {
        self.name = name
        self.details = details
    }

    /// `“Ada Lovelace” (ID 1)`.
    public var description: String {
        let shown = name.isEmpty ? "(no name)" : "“\(name)”"
        guard let details, !details.isEmpty else { return shown }
        return "\(shown) (\(details))"
    }
}
