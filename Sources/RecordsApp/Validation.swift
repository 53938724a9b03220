import Foundation

/// Input that cannot be saved, with a message for each field at fault.
///
/// Stores validate before they write, so invalid input never reaches the
/// database, whichever front-end it comes from.
///
/// ```text
/// first name must not be empty; age must be a whole number from 0 to 150
/// ```
public struct ValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One field's problem.
    public struct Problem: Sendable, Equatable {
        /// The field, as people call it ("first name").
        public let field: String
        /// What is wrong, as a sentence that starts with the field.
        public let message: String
    }

    /// Every problem found, in field order; never empty.
    public let problems: [Problem]

    /// Creates an error for one field.
    public init(field: String, message: String) {
        self.problems = [Problem(field: field, message: message)]
    }

    init(problems: [Problem]) {
        precondition(!problems.isEmpty, "a validation error needs a problem")
        self.problems = problems
    }

    /// The message for one field, if it has a problem.
    public func message(for field: String) -> String? {
        problems.first { $0.field == field }?.message
    }

    public var description: String { problems.map(\.message).joined(separator: "; ") }
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

/// Collects field problems, then throws them together.
struct Validator {
    private var problems: [ValidationError.Problem] = []

    /// Checks a required single-line text field and returns it trimmed.
    mutating func text(_ value: String, field: String, maxLength: Int) -> String {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty {
            fail(field, "\(field) must not be empty")
        } else if trimmed.count > maxLength {
            fail(field, "\(field) must be at most \(maxLength) characters (it has \(trimmed.count))")
        } else if trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            fail(field, "\(field) must be a single line without control characters")
        }
        return trimmed
    }

    /// Checks an integer range.
    mutating func integer(_ value: Int, field: String, range: ClosedRange<Int>) {
        if !range.contains(value) {
            fail(field, "\(field) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
    }

    mutating func fail(_ field: String, _ message: String) {
        problems.append(ValidationError.Problem(field: field, message: message))
    }

    /// Throws the problems found, if any.
    func check() throws {
        if !problems.isEmpty { throw ValidationError(problems: problems) }
    }
}
