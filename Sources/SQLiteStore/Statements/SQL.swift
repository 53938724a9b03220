import Foundation

/// SQL text together with the values it binds, built by string
/// interpolation that never splices a value into the text.
///
/// Every `execute` and `fetch` method takes an `SQL`, and a string literal
/// passed to one of them *is* an `SQL`: each interpolated value becomes a
/// `?` parameter and is bound as data, so quotes and semicolons in it are
/// harmless.
///
/// ```swift
/// let name = "O'Brien"
/// try db.execute("INSERT INTO people (name, age) VALUES (\(name), \(42))")
/// // runs "INSERT INTO people (name, age) VALUES (?, ?)" with ["O'Brien", 42]
/// ```
///
/// What an interpolation adds:
///
/// - `\(value)`: any ``SQLiteValueConvertible`` becomes `?` and is bound
///   (an optional that is nil binds NULL). Do not put quotes around it:
///   `'\(name)'` would be the text `?`, and is refused with a clear error
///   when the SQL runs.
/// - `\(identifier: name)`, `\(identifier: table, column)`,
///   `\(identifiers: names)`: table and column names, quoted with
///   ``quotedIdentifier(_:)`` (the last one comma-separated).
/// - `\(fragment)`: another `SQL`, whose text is spliced and whose values
///   follow in order, so conditions and clauses compose.
/// - `\(list)`: an array (any collection) of values becomes `(?, ?, ?)`,
///   for `IN`; an empty one becomes `()`, which SQLite accepts: `x IN ()`
///   is false and `x NOT IN ()` true.
/// - `\(unsafeLiteral: text)`: text spliced as SQL, unchecked. Only for
///   text your code chooses (a keyword such as `DESC`), never for input.
///
/// ```swift
/// let adult: SQL = "age >= \(18)"
/// let order: SQL = descending ? "name DESC" : "name"
/// let people = try db.fetchAll(
///     Person.self, "SELECT * FROM \(identifier: table) WHERE \(adult) AND id IN \(ids) ORDER BY \(order)")
/// ```
///
/// Fragments also combine with `+` and `joined(separator:)` on a sequence of fragments.
///
/// An `SQL` carries positional values only. A constant literal keeps
/// working as before, `arguments:` included (positional or named), as long
/// as it interpolates no value. SQL text held in a `String` goes to the
/// forms labelled `sql:` (``Database/execute(sql:arguments:)``,
/// ``Database/fetchAll(sql:arguments:)``, ...), which use it as written; a
/// `String` passed without the label does not compile, so text is never
/// mistaken for SQL with bound values. Statements are cached by ``text``,
/// which is the same for every `SQL` of one shape whatever the values.
public struct SQL: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// The SQL text, with a `?` for each bound value.
    public private(set) var text: String
    /// The values bound to the `?` of ``text``, in order.
    public private(set) var arguments: StatementArguments
    /// A mistake found while building (a value inside quotes), thrown when
    /// the SQL runs.
    private(set) var misuse: String?

    /// SQL text used as written, with no values.
    public init(stringLiteral value: String) {
        text = value
        arguments = StatementArguments()
        misuse = nil
    }

    /// SQL built from an interpolated literal; see ``SQL``.
    public init(stringInterpolation: StringInterpolation) {
        self = stringInterpolation.sql
    }

    /// SQL text spliced as written, unchecked: never pass text that comes
    /// from input, bind it with `\(value)` instead.
    public init(unsafeLiteral text: String) {
        self.init(stringLiteral: text)
    }

    /// The SQL text.
    public var description: String { text }

    /// Whether the text holds nothing (an empty fragment).
    public var isEmpty: Bool { text.isEmpty }

    /// Appends another fragment: its text, then its values after these.
    public mutating func append(_ other: SQL) {
        var builder = StringInterpolation(self)
        builder.appendInterpolation(other)
        self = builder.sql
    }

    /// The two fragments one after the other, values in order.
    public static func + (lhs: SQL, rhs: SQL) -> SQL {
        var result = lhs
        result.append(rhs)
        return result
    }

    /// Appends `rhs` to `lhs`.
    public static func += (lhs: inout SQL, rhs: SQL) {
        lhs.append(rhs)
    }

    /// The arguments to run ``text`` with, given the `arguments:` of the
    /// call: the interpolated values, or `extra` when there are none.
    func resolvedArguments(_ extra: StatementArguments) throws -> StatementArguments {
        if let misuse { throw SQLiteError.misuse(misuse, sql: text) }
        if arguments.positional.isEmpty && arguments.conversionError == nil { return extra }
        guard extra.isEmpty else {
            throw SQLiteError.misuse(
                "values were both interpolated into the SQL and given in arguments:; give them one way", sql: text)
        }
        return arguments
    }

    /// Builds an ``SQL`` from an interpolated literal.
    public struct StringInterpolation: StringInterpolationProtocol {
        var sql: SQL
        var lexer = SQLLexer()

        /// Starts an empty SQL.
        public init(literalCapacity: Int, interpolationCount: Int) {
            sql = SQL(stringLiteral: "")
            sql.text.reserveCapacity(literalCapacity + 2 * interpolationCount)
        }

        init(_ start: SQL) {
            sql = start
            lexer.scan(start.text)
        }

        /// Appends literal SQL text.
        public mutating func appendLiteral(_ literal: String) {
            sql.text += literal
            lexer.scan(literal)
        }

        /// Appends a `?` and binds the value (NULL for nil).
        public mutating func appendInterpolation<Value: SQLiteValueConvertible>(_ value: Value) {
            appendValue(value)
        }

        /// Appends a `?` and binds the value, NULL for nil.
        public mutating func appendInterpolation<Value: SQLiteValueConvertible>(_ value: Value?) {
            appendValue(value)
        }

        /// Appends a `?` and binds the bytes as one blob, not as a list.
        public mutating func appendInterpolation(_ value: [UInt8]) {
            appendValue(value)
        }

        /// Appends a `?` and binds the bytes as one blob (NULL for nil).
        public mutating func appendInterpolation(_ value: [UInt8]?) {
            appendValue(value)
        }

        /// Appends a `?` and binds the data as one blob, not as a list.
        public mutating func appendInterpolation(_ value: Data) {
            appendValue(value)
        }

        /// Appends a `?` and binds the data as one blob (NULL for nil).
        public mutating func appendInterpolation(_ value: Data?) {
            appendValue(value)
        }

        /// Appends `(?, ?, ...)`, one `?` bound to each value, or `()` for
        /// no values; for `IN`.
        public mutating func appendInterpolation<Values: Collection>(_ values: Values)
        where Values.Element: SQLiteValueConvertible {
            check("a list of values")
            sql.text += "("
            var isFirst = true
            for value in values {
                sql.text += isFirst ? "?" : ", ?"
                sql.arguments.append(value)
                isFirst = false
            }
            sql.text += ")"
        }

        /// Appends a table or column name, quoted with
        /// ``quotedIdentifier(_:)``.
        public mutating func appendInterpolation(identifier: String) {
            check("an identifier")
            sql.text += quotedIdentifier(identifier)
        }

        /// Appends a qualified name, `"table"."column"` (or
        /// `"schema"."table"`), each part quoted.
        public mutating func appendInterpolation(identifier qualifier: String, _ name: String) {
            check("an identifier")
            sql.text += quotedIdentifier(qualifier) + "." + quotedIdentifier(name)
        }

        /// Appends names separated by commas, each quoted, for column
        /// lists.
        public mutating func appendInterpolation(identifiers: [String]) {
            check("an identifier list")
            sql.text += identifiers.map(quotedIdentifier).joined(separator: ", ")
        }

        /// Appends another fragment: its text, and its values after those
        /// already appended.
        public mutating func appendInterpolation(_ fragment: SQL) {
            if !fragment.text.isEmpty { check("an SQL fragment") }
            if sql.misuse == nil { sql.misuse = fragment.misuse }
            sql.text += fragment.text
            lexer.scan(fragment.text)
            if sql.arguments.conversionError == nil, let error = fragment.arguments.conversionError {
                sql.arguments.conversionError = error
            }
            sql.arguments.append(contentsOf: fragment.arguments)
        }

        /// Appends text as SQL, unchecked: never pass text that comes from
        /// input, bind it with `\(value)` instead.
        public mutating func appendInterpolation(unsafeLiteral text: String) {
            sql.text += text
            lexer.scan(text)
        }

        private mutating func appendValue(_ value: (some SQLiteValueConvertible)?) {
            check("a value")
            sql.text += "?"
            sql.arguments.append(value)
        }

        /// Records a mistake when what is about to be appended would land
        /// inside a quoted string, a quoted name or a comment.
        private mutating func check(_ what: String) {
            guard sql.misuse == nil, let place = lexer.quotedPlace else { return }
            let advice =
                what == "a value" || what == "a list of values"
                ? "remove the quotes: an interpolated value is bound as data and needs none"
                : "interpolate it outside quotes"
            sql.misuse = "\(what) is interpolated inside \(place), where it would not mean what it says; \(advice)"
        }
    }
}

extension Sequence where Element == SQL {
    /// The fragments one after the other with `separator` between them,
    /// values in order.
    ///
    /// ```swift
    /// let conditions: [SQL] = ["age >= \(18)", "name LIKE \(pattern)"]
    /// let sql: SQL = "SELECT * FROM people WHERE \(conditions.joined(separator: " AND "))"
    /// ```
    public func joined(separator: SQL = "") -> SQL {
        var result = SQL(stringLiteral: "")
        var isFirst = true
        for fragment in self {
            if !isFirst { result.append(separator) }
            result.append(fragment)
            isFirst = false
        }
        return result
    }
}

extension StatementArguments {
    /// Appends the positional values of `other`.
    mutating func append(contentsOf other: StatementArguments) {
        for value in other.positional { append(value) }
    }
}

/// Follows SQL text to know whether its end is inside a quoted string, a
/// quoted identifier or a comment.
struct SQLLexer: Sendable {
    private enum State: Sendable {
        case code, singleQuoted, doubleQuoted, backticked, bracketed, lineComment, blockComment
    }
    private var state = State.code
    private var previous: UInt8 = 0

    /// Where the text so far ends, or nil when it ends in plain SQL.
    var quotedPlace: String? {
        switch state {
        case .code: nil
        case .singleQuoted: "a quoted string ('...')"
        case .doubleQuoted, .backticked, .bracketed: "a quoted name"
        case .lineComment, .blockComment: "a comment"
        }
    }

    mutating func scan(_ text: String) {
        for byte in text.utf8 {
            var next = byte
            switch state {
            case .code:
                switch byte {
                case UInt8(ascii: "'"): state = .singleQuoted
                case UInt8(ascii: "\""): state = .doubleQuoted
                case UInt8(ascii: "`"): state = .backticked
                case UInt8(ascii: "["): state = .bracketed
                case UInt8(ascii: "-") where previous == UInt8(ascii: "-"):
                    state = .lineComment
                case UInt8(ascii: "*") where previous == UInt8(ascii: "/"):
                    state = .blockComment
                    next = 0  // the opening "/*" does not close it
                default: break
                }
            case .singleQuoted: if byte == UInt8(ascii: "'") { state = .code }
            case .doubleQuoted: if byte == UInt8(ascii: "\"") { state = .code }
            case .backticked: if byte == UInt8(ascii: "`") { state = .code }
            case .bracketed: if byte == UInt8(ascii: "]") { state = .code }
            case .lineComment: if byte == UInt8(ascii: "\n") { state = .code }
            case .blockComment:
                if byte == UInt8(ascii: "/") && previous == UInt8(ascii: "*") {
                    state = .code
                    next = 0
                }
            }
            // A closing quote followed by another one ('') reopens the
            // string, which the states above do by themselves.
            previous = next
        }
    }
}
