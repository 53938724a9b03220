import Foundation

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// How SQLite may use a SQL function (``Database/createFunction(_:argumentCount:options:_:)``).
public struct FunctionOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The function always returns the same result for the same arguments
    /// (`SQLITE_DETERMINISTIC`). SQLite may then compute it once per
    /// statement, and allows it in index expressions, `CHECK` constraints
    /// and generated columns; without it, those refuse the function.
    public static let deterministic = FunctionOptions(rawValue: SQLITE_DETERMINISTIC)

    /// The function has no side effects and reveals nothing beyond its
    /// arguments (`SQLITE_INNOCUOUS`), so it may be used in views, triggers
    /// and the schema even when the connection trusts none of them
    /// (`PRAGMA trusted_schema = OFF`).
    public static let innocuous = FunctionOptions(rawValue: SQLITE_INNOCUOUS)

    /// The function may only be called from top-level SQL, never from
    /// views, triggers, `CHECK` constraints, generated columns or index
    /// expressions (`SQLITE_DIRECTONLY`): for functions with side effects
    /// or access to private data, which a crafted database file must not be
    /// able to call.
    public static let directOnly = FunctionOptions(rawValue: SQLITE_DIRECTONLY)
}

/// An aggregate SQL function, such as `SUM`: one value made from the rows
/// of a group.
///
/// SQLite creates one instance per group (with `init()`), calls
/// ``step(_:)`` with the arguments of each row of the group, then
/// ``finalize()`` for the result. A group without rows (an aggregate over an
/// empty table, without `GROUP BY`) gets a fresh instance and
/// ``finalize()`` alone.
///
/// ```swift
/// struct Product: SQLiteAggregate {
///     var product = 1.0
///     mutating func step(_ arguments: [SQLiteValue]) throws {
///         product *= try Double(sqliteValue: arguments[0])
///     }
///     func finalize() -> Double { product }
/// }
/// try db.createAggregate("product", argumentCount: 1, Product.self)
/// let total = try db.fetchOne(Double.self, "SELECT product(x) FROM t")
/// ```
public protocol SQLiteAggregate {
    /// What the aggregate returns.
    associatedtype Result: SQLiteValueConvertible

    /// A new, empty aggregate for one group.
    init()

    /// Adds one row's arguments. A thrown error fails the statement with
    /// its message.
    mutating func step(_ arguments: [SQLiteValue]) throws

    /// The aggregate's value for the group. A thrown error fails the
    /// statement with its message.
    func finalize() throws -> Result
}

extension Database {
    /// Makes a Swift closure available to SQL as a scalar function, on this
    /// connection, for as long as it is open.
    ///
    /// ```swift
    /// try db.createFunction("reverse", argumentCount: 1, options: .deterministic) { arguments in
    ///     guard case .text(let text) = arguments[0] else { return nil as String? }
    ///     return String(text.reversed())
    /// }
    /// let name = try db.fetchOne(String.self, "SELECT reverse(name) FROM people")
    /// ```
    ///
    /// The closure receives the arguments as ``SQLiteValue``s (text keeps
    /// embedded NUL characters) and returns any ``SQLiteValueConvertible``
    /// (an optional's nil is NULL). An error it throws fails the statement
    /// with a ``SQLiteError`` carrying the error's message (and the code of
    /// a thrown ``SQLiteError``).
    ///
    /// A function is known by its name (case-insensitive) and argument
    /// count: registering again replaces the previous closure, which is then
    /// released, as are all of them when the connection closes. For
    /// ``DatabaseQueue`` and ``DatabasePool``, register functions in
    /// ``Configuration/prepareDatabase`` so that every connection, including
    /// pool readers opened later, has them.
    ///
    /// - Parameters:
    ///   - name: The SQL name, at most 255 bytes of UTF-8.
    ///   - argumentCount: How many arguments the function takes (0 to 127),
    ///     or nil for any number; SQLite refuses a call with another count
    ///     when the statement is prepared. A function registered for a
    ///     given count is preferred to a variadic one of the same name.
    ///   - options: ``FunctionOptions/deterministic``, ``FunctionOptions/innocuous``,
    ///     ``FunctionOptions/directOnly``.
    ///   - body: The function.
    /// - Throws: A ``SQLiteError``: ``ResultCode/misuse`` for an invalid
    ///   name or count, ``ResultCode/busy`` when replacing a function that a
    ///   running statement uses.
    public func createFunction<Result: SQLiteValueConvertible>(
        _ name: String, argumentCount: Int? = nil, options: FunctionOptions = [],
        _ body: @escaping ([SQLiteValue]) throws -> Result
    ) throws {
        let arity = try Self.functionArity(argumentCount, name: name)
        let handle = try openHandle(forFunction: name)
        let box = Unmanaged.passRetained(ScalarFunctionBox { arguments in try body(arguments).sqliteValue })
        // On failure SQLite calls the destructor itself, releasing the box.
        let code = sqlite3_create_function_v2(
            handle, name, arity, SQLITE_UTF8 | options.rawValue, box.toOpaque(), scalarFunctionCallback, nil, nil,
            releaseFunctionBox)
        try checkRegistration(code, handle: handle, what: "function \(name)")
    }

    /// Makes an ``SQLiteAggregate`` type available to SQL as an aggregate
    /// function, on this connection, for as long as it is open.
    ///
    /// Name, count, options, replacement and lifetime are as for
    /// ``createFunction(_:argumentCount:options:_:)``. Each group gets its
    /// own instance, released after its ``SQLiteAggregate/finalize()``,
    /// also when the statement fails or is reset before the end.
    public func createAggregate<Aggregate: SQLiteAggregate>(
        _ name: String, argumentCount: Int? = nil, options: FunctionOptions = [], _ type: Aggregate.Type
    ) throws {
        let arity = try Self.functionArity(argumentCount, name: name)
        let handle = try openHandle(forFunction: name)
        let box = Unmanaged.passRetained(AggregateFunctionBox(makeGroup: { AggregateGroup<Aggregate>() }))
        let code = sqlite3_create_function_v2(
            handle, name, arity, SQLITE_UTF8 | options.rawValue, box.toOpaque(), nil, aggregateStepCallback,
            aggregateFinalCallback, releaseFunctionBox)
        try checkRegistration(code, handle: handle, what: "aggregate \(name)")
    }

    /// Removes a function or aggregate registered with the same name and
    /// argument count (nil for the variadic one), releasing its closure.
    /// Removing a function that was not registered does nothing; SQLite's
    /// built-in functions cannot be removed.
    ///
    /// - Throws: A ``SQLiteError``: ``ResultCode/busy`` while a running
    ///   statement uses the function.
    public func removeFunction(_ name: String, argumentCount: Int? = nil) throws {
        let arity = try Self.functionArity(argumentCount, name: name)
        let handle = try openHandle(forFunction: name)
        let code = sqlite3_create_function_v2(handle, name, arity, SQLITE_UTF8, nil, nil, nil, nil, nil)
        try checkRegistration(code, handle: handle, what: "function \(name)")
    }

    // MARK: - Shared checks

    private static func functionArity(_ argumentCount: Int?, name: String) throws -> Int32 {
        guard let argumentCount else { return -1 }
        guard (0...127).contains(argumentCount) else {
            throw SQLiteError.misuse(
                "cannot register function \(name): \(argumentCount) arguments; the count must be 0 to 127, "
                    + "or nil for any number")
        }
        return Int32(argumentCount)
    }

    /// The open handle, after checking a function or collation name.
    func openHandle(forFunction name: String) throws -> OpaquePointer {
        guard let handle = connection.handle else { throw SQLiteError.misuse("the database connection is closed") }
        guard !name.isEmpty, name.utf8.count <= 255, !name.utf8.contains(0) else {
            throw SQLiteError.misuse(
                "invalid name \(quotedIdentifier(name)): it must be 1 to 255 bytes of UTF-8 without NUL")
        }
        return handle
    }

    func checkRegistration(_ code: Int32, handle: OpaquePointer, what: String) throws {
        guard code != SQLITE_OK else { return }
        let error = SQLiteError.from(connection: handle, code: code, sql: nil)
        throw SQLiteError(code: error.extendedCode, message: "cannot register \(what): \(error.message)")
    }
}

// MARK: - Boxes and C callbacks

/// What SQLite keeps as a function's user data; released by
/// ``releaseFunctionBox`` when the function is replaced or removed, or the
/// connection closes.
private class FunctionBox {}

private final class ScalarFunctionBox: FunctionBox {
    let body: ([SQLiteValue]) throws -> SQLiteValue
    init(_ body: @escaping ([SQLiteValue]) throws -> SQLiteValue) { self.body = body }
}

private final class AggregateFunctionBox: FunctionBox {
    let makeGroup: () -> AnyAggregateGroup
    init(makeGroup: @escaping () -> AnyAggregateGroup) { self.makeGroup = makeGroup }
}

/// One group's aggregate, behind a non-generic interface for the C callbacks.
private class AnyAggregateGroup {
    /// Set once a step failed: later steps are skipped.
    var failed = false
    func step(_ arguments: [SQLiteValue]) throws {}
    func finalize() throws -> SQLiteValue { .null }
}

private final class AggregateGroup<Aggregate: SQLiteAggregate>: AnyAggregateGroup {
    var aggregate = Aggregate()
    override func step(_ arguments: [SQLiteValue]) throws { try aggregate.step(arguments) }
    override func finalize() throws -> SQLiteValue { try aggregate.finalize().sqliteValue }
}

private func releaseFunctionBox(_ pointer: UnsafeMutableRawPointer?) {
    guard let pointer else { return }
    Unmanaged<FunctionBox>.fromOpaque(pointer).release()
}

private func scalarFunctionCallback(
    _ context: OpaquePointer?, _ count: Int32, _ values: UnsafeMutablePointer<OpaquePointer?>?
) {
    guard let context, let pointer = sqlite3_user_data(context) else { return }
    let box = Unmanaged<ScalarFunctionBox>.fromOpaque(pointer).takeUnretainedValue()
    do {
        try box.body(functionArguments(count, values)).setResult(of: context)
    } catch {
        setError(error, of: context)
    }
}

/// The slot SQLite keeps per group (`sqlite3_aggregate_context`, zeroed on
/// first use) holds a retained pointer to the group's Swift object.
private typealias GroupSlot = UnsafeMutablePointer<UnsafeMutableRawPointer?>

private func aggregateStepCallback(
    _ context: OpaquePointer?, _ count: Int32, _ values: UnsafeMutablePointer<OpaquePointer?>?
) {
    guard let context, let pointer = sqlite3_user_data(context) else { return }
    guard let raw = sqlite3_aggregate_context(context, Int32(MemoryLayout<UnsafeMutableRawPointer?>.size)) else {
        sqlite3_result_error_nomem(context)
        return
    }
    let slot = raw.assumingMemoryBound(to: UnsafeMutableRawPointer?.self) as GroupSlot
    let group: AnyAggregateGroup
    if let existing = slot.pointee {
        group = Unmanaged<AnyAggregateGroup>.fromOpaque(existing).takeUnretainedValue()
    } else {
        let box = Unmanaged<AggregateFunctionBox>.fromOpaque(pointer).takeUnretainedValue()
        group = box.makeGroup()
        slot.pointee = Unmanaged.passRetained(group).toOpaque()
    }
    guard !group.failed else { return }
    do {
        try group.step(functionArguments(count, values))
    } catch {
        group.failed = true
        setError(error, of: context)
    }
}

private func aggregateFinalCallback(_ context: OpaquePointer?) {
    guard let context, let pointer = sqlite3_user_data(context) else { return }
    let group: AnyAggregateGroup
    // A size of 0 allocates nothing: NULL means no row was stepped.
    if let raw = sqlite3_aggregate_context(context, 0),
        let existing = raw.assumingMemoryBound(to: UnsafeMutableRawPointer?.self).pointee
    {
        // Balances the retain made at the group's first step.
        group = Unmanaged<AnyAggregateGroup>.fromOpaque(existing).takeRetainedValue()
        raw.assumingMemoryBound(to: UnsafeMutableRawPointer?.self).pointee = nil
    } else {
        group = Unmanaged<AggregateFunctionBox>.fromOpaque(pointer).takeUnretainedValue().makeGroup()
    }
    guard !group.failed else { return }
    do {
        try group.finalize().setResult(of: context)
    } catch {
        setError(error, of: context)
    }
}
