import Foundation

/// Input that cannot be saved, with a message for each field at fault.
///
/// Stores validate before they write, so invalid input never reaches the
/// database, whichever front-end it comes from.
///
/// ```text
/// First name is required. Age must be a whole number from 0 to 150.
/// ```
public struct ValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One field's problem.
    public struct Problem: Sendable, Equatable {
        /// The field, as front ends map it to their inputs ("first name":
        /// a ``FormField``'s raw value).
        public let field: String
        /// What is wrong, as a sentence that starts with the field's
        /// label: "First name is required."
        public let message: String
    }

    /// Every problem found, in field order; never empty.
    public let problems: [Problem]

    /// Creates an error for one field.
    public init(field: String, message: String) {
        self.problems = [Problem(field: field, message: message)]
    }

    /// Creates an error for one field of a form: `problem` follows the
    /// field's label, and the message is that sentence ("First name" and
    /// "is required" make "First name is required.").
    public init(_ field: some FormField, problem: String) {
        self.problems = [Problem(field: field.rawValue, message: "\(field.label) \(problem).")]
    }

    init(problems: [Problem]) {
        precondition(!problems.isEmpty, "a validation error needs a problem")
        self.problems = problems
    }

    /// The message for one field, if it has a problem.
    public func message(for field: String) -> String? {
        problems.first { $0.field == field }?.message
    }

    /// The messages together: sentences (ending with a period) one after
    /// the other, others separated by semicolons.
    public var description: String {
        problems.map(\.message).reduce("") { text, message in
            text.isEmpty ? message : text + (text.hasSuffix(".") ? " " : "; ") + message
        }
    }
}

/// A record was asked for by an ID that no row has.
public struct RecordNotFoundError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of record ("person", "contact").
    public let kind: String
    /// The ID that was asked for.
    public let id: Int64

    /// Creates an error.
    public init(kind: String, id: Int64) {
        self.kind = kind
        self.id = id
    }

    public var description: String { "no \(kind) with ID \(id)" }
}

/// Records were asked for by IDs that no row has; with several IDs, none
/// of them was acted on (``RecordStore/delete(ids:)`` deletes all or none).
public struct RecordsNotFoundError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of record ("person", "contact").
    public let kind: String
    /// The IDs no row has, in the order given.
    public let missing: [Int64]
    /// How many IDs were given in all.
    public let given: Int

    /// Creates an error.
    public init(kind: String, missing: [Int64], given: Int) {
        self.kind = kind
        self.missing = missing
        self.given = given
    }

    /// "no person with ID 9", or, for several IDs given, "no person with
    /// ID 8 or 9; nothing was deleted".
    public var description: String {
        let ids = missing.map(String.init)
        let list = ids.count <= 1 ? ids.joined() : ids.dropLast().joined(separator: ", ") + " or " + ids[ids.count - 1]
        let base = "no \(kind) with ID \(list)"
        return given == 1 ? base : "\(base); nothing was deleted"
    }
}

/// The rule every free-text field shares, besides its own length limit.
///
/// Limits are in characters (grapheme clusters, what people count), but one
/// character can be made of any number of Unicode code points: a letter
/// with 65,000 combining accents is one character of 130 KB. So a field of
/// at most N characters also holds at most ``codePointsPerCharacter`` × N
/// code points, room for any real text (accented letters written with
/// combining marks, Indic conjuncts, emoji sequences average well under
/// four) but not for such a blow-up.
///
/// ```swift
/// TextRules.maxCodePoints(characters: 100)   // 400
/// ```
public enum TextRules {
    /// How many code points a field holds, on average, per character of its limit.
    public static let codePointsPerCharacter = 4

    /// The most code points a field of at most `characters` characters holds.
    public static func maxCodePoints(characters: Int) -> Int { characters * codePointsPerCharacter }
}

/// A field of an app's form, declared once beside its record's rules:
/// its raw value is the name its problems carry
/// (``ValidationError/Problem/field``, which pages and the JSON API map to
/// their inputs), and its ``label`` is the name the form shows, which its
/// messages start with.
///
/// ```swift
/// PersonField.firstName.rawValue   // "first name"
/// PersonField.firstName.label      // "First name"
/// // ValidationError: "First name is required."
/// ```
public protocol FormField: RawRepresentable<String>, Sendable, Hashable {
    /// The field's name as forms show it: "First name".
    var label: String { get }
}

/// Collects field problems, then throws them together.
struct Validator {
    private var problems: [ValidationError.Problem] = []

    /// Checks a required single-line text field and returns it trimmed:
    /// not blank (see ``isBlank(_:)``), at most `maxLength` characters, and
    /// ``TextRules`` code points.
    mutating func text(_ value: String, field: String, maxLength: Int) -> String {
        let trimmed = Self.trimmed(value)
        if let problem = Self.textProblem(trimmed, maxLength: maxLength) { fail(field, "\(field) \(problem)") }
        return trimmed
    }

    /// A required single-line field of a form, checked as a field named
    /// by text is, its message a sentence that starts with the field's
    /// label.
    mutating func text(_ value: String, field: some FormField, maxLength: Int) -> String {
        let trimmed = Self.trimmed(value)
        if let problem = Self.textProblem(trimmed, maxLength: maxLength) { fail(field, problem) }
        return trimmed
    }

    /// What is wrong with the trimmed text of a required single-line
    /// field, to follow the field's name ("is required"), or nil.
    static func textProblem(_ trimmed: String, maxLength: Int) -> String? {
        // Printable ASCII, what most fields hold, is checked byte by byte:
        // each byte is a character and a code point, a space is its only
        // blank, and it has no control character. The same answers as
        // the general check, without Unicode's tables (every create and
        // change of every record checks each of its fields).
        if trimmed.utf8.allSatisfy({ (0x20..<0x7F).contains($0) }) {
            if trimmed.utf8.allSatisfy({ $0 == 0x20 }) { return "is required" }
            let count = trimmed.utf8.count
            if count > maxLength { return "must be at most \(maxLength) characters (it has \(count))" }
            return codePointProblem(trimmed, maxLength: maxLength)
        }
        return generalTextProblem(trimmed, maxLength: maxLength)
    }

    /// ``textProblem(_:maxLength:)`` for any text.
    static func generalTextProblem(_ trimmed: String, maxLength: Int) -> String? {
        if isBlank(trimmed) { return "is required" }
        if trimmed.count > maxLength { return "must be at most \(maxLength) characters (it has \(trimmed.count))" }
        if let message = codePointProblem(trimmed, maxLength: maxLength) { return message }
        if trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "must be a single line without control characters"
        }
        return nil
    }

    /// `value` without white space and line breaks at either end. When
    /// it starts and ends with a printable ASCII character other than a
    /// space (as nearly every field does), there is nothing to trim, and
    /// Foundation's trimming is not called.
    static func trimmed(_ value: String) -> String {
        if let first = value.utf8.first, let last = value.utf8.last, (0x21..<0x7F).contains(first),
            (0x21..<0x7F).contains(last)
        {
            return value
        }
        return value.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether `text` shows nothing: it is empty or holds only whitespace
    /// and format characters (Unicode general category Cf: zero-width
    /// spaces and joiners, direction marks, embeddings, overrides and
    /// isolates, the byte order mark, ...). Every such character counts
    /// alike, so a field made only of U+202E is as empty as one made only
    /// of U+200B or spaces. Inside other text they are kept: emoji and
    /// many scripts need them.
    static func isBlank(_ text: some StringProtocol) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            scalar.properties.generalCategory == .format || scalar.properties.isWhitespace
                || CharacterSet.whitespacesAndNewlines.contains(scalar)
        }
    }

    /// What is wrong with `text` by ``TextRules``, or nil: "must be at
    /// most 400 Unicode code points ...", to follow the field's name.
    static func codePointProblem(_ text: String, maxLength: Int) -> String? {
        let limit = TextRules.maxCodePoints(characters: maxLength)
        // Every code point takes at least one byte.
        guard text.utf8.count > limit else { return nil }
        let count = text.unicodeScalars.count
        guard count > limit else { return nil }
        return "must be at most \(limit) Unicode code points, accents and other combining marks included "
            + "(it has \(count))"
    }

    /// Checks an integer range.
    mutating func integer(_ value: Int, field: some FormField, range: ClosedRange<Int>) {
        if !range.contains(value) { fail(field, Self.rangeProblem(range)) }
    }

    /// What is wrong with a number outside `range`, to follow the field's
    /// name.
    static func rangeProblem(_ range: ClosedRange<Int>) -> String {
        "must be a whole number from \(range.lowerBound) to \(range.upperBound)"
    }

    /// Records a problem; the same one twice (two checks that catch the
    /// same fault) is said once.
    mutating func fail(_ field: String, _ message: String) {
        let problem = ValidationError.Problem(field: field, message: message)
        if !problems.contains(problem) { problems.append(problem) }
    }

    /// Records `field`'s problem as a sentence that starts with its label:
    /// "Postal code must be 3 to 10 digits." (the problem's field stays
    /// the field's raw value, which forms and the API map to inputs).
    mutating func fail(_ field: some FormField, _ problem: String) {
        fail(field.rawValue, "\(field.label) \(problem).")
    }

    /// Throws the problems found, if any.
    func check() throws {
        if !problems.isEmpty { throw ValidationError(problems: problems) }
    }
}
