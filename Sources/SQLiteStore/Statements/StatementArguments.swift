import Foundation

/// Values for the parameters of a statement: positional (`?`, `?NNN`) or
/// named (`:name`, `@name`, `$name`).
///
/// Arguments are always bound, never spliced into the SQL, so quotes, colons
/// and semicolons in values are just data:
///
/// ```swift
/// try db.execute("INSERT INTO people (name, age) VALUES (?, ?)", arguments: ["O'Brien", 42])
/// try db.execute("UPDATE people SET age = :age WHERE id = :id", arguments: ["age": 43, "id": 1])
/// ```
///
/// The number of positional values must match the statement's parameters
/// exactly, and named values must match its parameter names (written with or
/// without the `:`, `@` or `$` prefix); otherwise a ``SQLiteError`` is thrown
/// before anything runs.
public struct StatementArguments: Sendable, Equatable, CustomStringConvertible, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// Positional values, bound to parameters 1, 2, ...
    public private(set) var positional: [SQLiteValue]
    /// Named values, keyed by name without prefix.
    public private(set) var named: [String: SQLiteValue]
    /// A value that could not be converted; thrown when the arguments are
    /// bound, before the statement runs.
    var conversionError: ValueConversionError?

    /// No arguments.
    public init() {
        positional = []
        named = [:]
    }

    /// Positional arguments from already converted values.
    public init(values: [SQLiteValue]) {
        positional = values
        named = [:]
    }

    /// Positional arguments.
    public init(_ values: [(any SQLiteValueConvertible)?]) {
        self.init()
        var converted: [SQLiteValue] = []
        converted.reserveCapacity(values.count)
        // Reading each value in place through the buffer avoids copying the
        // existential containers, which dominated the cost of binding an
        // array literal (several hundred instructions per value).
        values.withUnsafeBufferPointer { buffer in
            for index in buffer.indices {
                do {
                    converted.append(try buffer[index]?.sqliteValue ?? .null)
                } catch {
                    record(error, convertingA: buffer[index].map { type(of: $0) })
                    converted.append(.null)
                }
            }
        }
        positional = converted
    }

    /// Named arguments; keys may carry the `:`, `@` or `$` prefix or not.
    public init(_ values: [String: (any SQLiteValueConvertible)?]) {
        self.init()
        for (name, value) in values {
            named[Self.normalize(name)] = convert(value)
        }
    }

    public init(arrayLiteral elements: (any SQLiteValueConvertible)?...) {
        self.init(elements)
    }

    public init(dictionaryLiteral elements: (String, (any SQLiteValueConvertible)?)...) {
        self.init()
        for (name, value) in elements {
            named[Self.normalize(name)] = convert(value)
        }
    }

    /// Whether there are no arguments at all.
    public var isEmpty: Bool { positional.isEmpty && named.isEmpty }

    /// Appends a positional value.
    public mutating func append(_ value: (any SQLiteValueConvertible)?) {
        positional.append(convert(value))
    }

    /// Sets a named value.
    public subscript(name: String) -> SQLiteValue? {
        get { named[Self.normalize(name)] }
        set { named[Self.normalize(name)] = newValue }
    }

    public var description: String {
        if named.isEmpty { return "[" + positional.map(\.description).joined(separator: ", ") + "]" }
        let pairs = named.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        if positional.isEmpty { return "[" + pairs.joined(separator: ", ") + "]" }
        return "[" + (positional.map(\.description) + pairs).joined(separator: ", ") + "]"
    }

    public static func == (lhs: StatementArguments, rhs: StatementArguments) -> Bool {
        lhs.positional == rhs.positional && lhs.named == rhs.named
    }

    private mutating func convert(_ value: (any SQLiteValueConvertible)?) -> SQLiteValue {
        do {
            return try value?.sqliteValue ?? .null
        } catch {
            record(error, convertingA: value.map { type(of: $0) })
            return .null
        }
    }

    /// Keeps the first conversion failure, to throw when the arguments are bound.
    private mutating func record(_ error: any Error, convertingA type: Any.Type?) {
        guard conversionError == nil else { return }
        conversionError =
            error as? ValueConversionError
            ?? ValueConversionError(.notStorable(String(describing: error)), type: type ?? Any.self)
    }

    /// A parameter name without its `:`, `@` or `$` prefix.
    static func normalize(_ name: String) -> String {
        guard let first = name.utf8.first,
            first == UInt8(ascii: ":") || first == UInt8(ascii: "@") || first == UInt8(ascii: "$")
        else { return name }
        return String(name.dropFirst())
    }
}
