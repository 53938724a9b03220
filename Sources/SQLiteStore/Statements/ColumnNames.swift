#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// The column names of a statement's rows, shared by all rows it returns.
///
/// Lookup by name is case-insensitive for ASCII letters, as SQLite compares
/// identifiers, and takes the first column of that name.
@usableFromInline
final class ColumnNames: Sendable {
    @usableFromInline let names: [String]
    /// Stored rather than read from `names`: checked before every value read.
    @usableFromInline let count: Int
    /// Whether no earlier column has exactly this column's name. A lookup
    /// by name must find the first column of that name, so the in-order
    /// fast path of ``index(of:hint:)`` may only take a column that is.
    @usableFromInline let isFirstOfName: [Bool]

    init(_ names: [String]) {
        self.names = names
        self.count = names.count
        var seen = Set<String>()
        self.isFirstOfName = names.map { seen.insert($0).inserted }
    }

    convenience init(statement: OpaquePointer) {
        let count = Int(sqlite3_column_count(statement))
        var names: [String] = []
        names.reserveCapacity(count)
        for index in 0..<count {
            names.append(sqlite3_column_name(statement, Int32(index)).map { String(cString: $0) } ?? "")
        }
        self.init(names)
    }

    /// The index of a column, starting the search at `hint` (the column after
    /// the one found last), since records and loops usually read columns in
    /// order.
    @inlinable @inline(__always)
    func index(of name: String, hint: inout Int) -> Int? {
        if hint < names.count, isFirstOfName[hint], names[hint] == name {
            hint += 1
            return hint - 1
        }
        guard let found = index(of: name) else { return nil }
        hint = found + 1
        return found
    }

    @usableFromInline
    func index(of name: String) -> Int? {
        if let exact = names.firstIndex(of: name) { return exact }
        return names.firstIndex { Self.asciiCaseInsensitiveEquals($0, name) }
    }

    static func asciiCaseInsensitiveEquals(_ lhs: String, _ rhs: String) -> Bool {
        var left = lhs.utf8.makeIterator()
        var right = rhs.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let a?, let b?):
                if a == b { continue }
                let lowerA = a >= 65 && a <= 90 ? a + 32 : a
                let lowerB = b >= 65 && b <= 90 ? b + 32 : b
                if lowerA != lowerB { return false }
            default: return false
            }
        }
    }
}
