#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// What a trace function receives (see ``Database/trace(options:_:)``).
public struct TraceOptions: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Each statement as it starts running (`SQLITE_TRACE_STMT`).
    public static let statements = TraceOptions(rawValue: UInt32(SQLITE_TRACE_STMT))
    /// Each statement when it finishes, with how long it ran (`SQLITE_TRACE_PROFILE`).
    public static let profile = TraceOptions(rawValue: UInt32(SQLITE_TRACE_PROFILE))
}

/// One traced statement.
public struct TraceEvent: Sendable, CustomStringConvertible {
    /// The statement's SQL, with parameters as written (`?`, `:name`): bound
    /// values, which may be private, are not included. Statements run by
    /// triggers appear as a `-- TRIGGER name` comment.
    public let sql: String
    /// How long the statement ran, for ``TraceOptions/profile`` events; nil
    /// when the statement starts.
    public let duration: Duration?

    public var description: String {
        if let duration { return "\(sql) (\(duration))" }
        return sql
    }
}

final class TraceBox {
    let body: (TraceEvent) -> Void
    init(_ body: @escaping (TraceEvent) -> Void) { self.body = body }
}

extension Database {
    /// Calls `body` with each statement the connection runs, or stops
    /// tracing when `body` is nil. The proper form of a "log every query"
    /// debug switch:
    ///
    /// ```swift
    /// db.trace { event in print("SQL:", event.sql) }
    /// ```
    public func trace(options: TraceOptions = .statements, _ body: ((TraceEvent) -> Void)?) {
        guard let handle = connection.handle else { return }
        connection.traceBox?.release()
        connection.traceBox = nil
        guard let body, !options.isEmpty else {
            sqlite3_trace_v2(handle, 0, nil, nil)
            return
        }
        let box = Unmanaged.passRetained(TraceBox(body))
        connection.traceBox = box
        sqlite3_trace_v2(handle, options.rawValue, traceCallback, box.toOpaque())
    }
}

private func traceCallback(
    mask: UInt32, context: UnsafeMutableRawPointer?, p: UnsafeMutableRawPointer?, x: UnsafeMutableRawPointer?
) -> Int32 {
    guard let context else { return 0 }
    let box = Unmanaged<TraceBox>.fromOpaque(context).takeUnretainedValue()
    switch mask {
    case UInt32(SQLITE_TRACE_STMT):
        guard let x else { return 0 }
        let text = String(cString: x.assumingMemoryBound(to: CChar.self))
        box.body(TraceEvent(sql: text, duration: nil))
    case UInt32(SQLITE_TRACE_PROFILE):
        guard let p, let x else { return 0 }
        let statement = OpaquePointer(p)
        let sql = sqlite3_sql(statement).map { String(cString: $0) } ?? ""
        let nanoseconds = x.assumingMemoryBound(to: Int64.self).pointee
        box.body(TraceEvent(sql: sql, duration: .nanoseconds(nanoseconds)))
    default:
        break
    }
    return 0
}
