import SQLiteStore

/// Which way a list runs along its order: up (A to Z, youngest first,
/// oldest first) or down. Each order has its own default (see
/// ``RecordSort/defaultDirection``); the raw values are what the pages'
/// `order=` query and the command line's `--order` take.
///
/// ```swift
/// let oldest = try await people.page(sortedBy: .age, direction: .descending, number: 1, size: 20)
/// ```
public enum SortDirection: String, Sendable, CaseIterable, Codable {
    /// From the smallest value up.
    case ascending = "asc"
    /// From the largest value down.
    case descending = "desc"

    /// The other direction.
    public var reversed: SortDirection { self == .ascending ? .descending : .ascending }
}

/// An `ORDER BY` list written once, going up, and run either way: every
/// term follows the direction, so that descending is ascending's exact
/// reverse (the ID, last, breaks ties the same way, and pages of one
/// direction never skip or repeat a row), except the pinned terms, which
/// always go up: they keep what cannot be compared (an unknown age, a
/// price that cannot be read) at the end of the list both ways.
struct SortOrder: Sendable {
    /// One term of the list.
    struct Term: Sendable {
        /// The expression, built from the table's columns, never from a
        /// request.
        var expression: SQL
        /// Whether it always goes up.
        var isPinned: Bool
    }

    /// The terms, in order of importance.
    var terms: [Term]

    /// An order of terms that each follow the direction.
    init(_ expressions: [SQL]) {
        terms = expressions.map { Term(expression: $0, isPinned: false) }
    }

    private init(terms: [Term]) { self.terms = terms }

    /// A term that always goes up, before this order's own: `IS NULL` of a
    /// column keeps its NULLs last both ways.
    func pinning(_ expression: SQL) -> SortOrder {
        SortOrder(terms: [Term(expression: expression, isPinned: true)] + terms)
    }

    /// This order's terms then `other`'s.
    func then(_ other: SortOrder) -> SortOrder { SortOrder(terms: terms + other.terms) }

    /// The `ORDER BY` list (without the keywords) going `direction`; only
    /// the fixed words `ASC` and `DESC` are added to the terms.
    func sql(_ direction: SortDirection) -> SQL {
        let list: [SQL] = terms.map { term in
            term.isPinned || direction == .ascending ? "\(term.expression) ASC" : "\(term.expression) DESC"
        }
        return list.joined(separator: ", ")
    }
}
