import Foundation

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

extension Database {
    /// Makes a Swift comparison available to SQL as a collation, on this
    /// connection, for as long as it is open: in `ORDER BY x COLLATE name`,
    /// comparisons (`x = y COLLATE name`) and column definitions
    /// (`name TEXT COLLATE name`).
    ///
    /// ```swift
    /// try db.createCollation("localized") { $0.localizedStandardCompare($1) }
    /// let names = try db.fetchAll(String.self, "SELECT name FROM people ORDER BY name COLLATE localized")
    /// ```
    ///
    /// The closure must be a total order (consistent, and returning
    /// `.orderedSame` for equal strings), or indexes using the collation
    /// will be wrong. Registering the same name (case-insensitive) again
    /// replaces the closure, which is then released, as is the closure when
    /// the connection closes. A table or index that names a collation can
    /// only be used on a connection that has it: register collations in
    /// ``Configuration/prepareDatabase`` for queues and pools.
    ///
    /// - Throws: A ``SQLiteError``: ``ResultCode/misuse`` for an invalid
    ///   name, ``ResultCode/busy`` when replacing a collation that a running
    ///   statement uses.
    public func createCollation(_ name: String, _ compare: @escaping (String, String) -> ComparisonResult) throws {
        let handle = try openHandle(forFunction: name)
        let box = Unmanaged.passRetained(CollationBox(compare))
        // On failure SQLite calls the destructor itself, releasing the box.
        let code = sqlite3_create_collation_v2(
            handle, name, SQLITE_UTF8, box.toOpaque(), collationCallback, releaseCollationBox)
        try checkRegistration(code, handle: handle, what: "collation \(name)")
    }

    /// Removes a collation registered with ``createCollation(_:_:)``,
    /// releasing its closure. Statements that use it then fail to prepare
    /// (`no such collation sequence`). Removing a collation that was not
    /// registered does nothing.
    public func removeCollation(_ name: String) throws {
        let handle = try openHandle(forFunction: name)
        let code = sqlite3_create_collation_v2(handle, name, SQLITE_UTF8, nil, nil, nil)
        try checkRegistration(code, handle: handle, what: "collation \(name)")
    }
}

private final class CollationBox {
    let compare: (String, String) -> ComparisonResult
    init(_ compare: @escaping (String, String) -> ComparisonResult) { self.compare = compare }
}

private func releaseCollationBox(_ pointer: UnsafeMutableRawPointer?) {
    guard let pointer else { return }
    Unmanaged<CollationBox>.fromOpaque(pointer).release()
}

private func collationCallback(
    _ pointer: UnsafeMutableRawPointer?, _ leftCount: Int32, _ left: UnsafeRawPointer?, _ rightCount: Int32,
    _ right: UnsafeRawPointer?
) -> Int32 {
    guard let pointer else { return 0 }
    let box = Unmanaged<CollationBox>.fromOpaque(pointer).takeUnretainedValue()
    // The strings are not NUL-terminated: their lengths are given.
    let leftText = collationString(left, leftCount)
    let rightText = collationString(right, rightCount)
    switch box.compare(leftText, rightText) {
    case .orderedAscending: return -1
    case .orderedSame: return 0
    case .orderedDescending: return 1
    }
}

private func collationString(_ bytes: UnsafeRawPointer?, _ count: Int32) -> String {
    guard let bytes, count > 0 else { return "" }
    return String(decoding: UnsafeRawBufferPointer(start: bytes, count: Int(count)), as: UTF8.self)
}
