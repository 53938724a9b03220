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

    /// The index of a column, starting the search at `hint`, since records
    /// and loops usually read columns in order: from 0 up, `hint` is the
    /// column after the one found last; below 0, columns are being read in
    /// reverse order and `-hint - 1` is the one expected next.
    @inlinable @inline(__always)
    func index(of name: String, hint: inout Int) -> Int? {
        // One unsigned comparison also sends a negative hint out of line.
        if UInt(bitPattern: hint) < UInt(bitPattern: names.count), isFirstOfName[hint], names[hint] == name {
            hint += 1
            return hint - 1
        }
        return index(of: name, missing: &hint)
    }

    /// The lookup when the hinted column, read in order, was not the one
    /// (or there was none: the last column was read). Tried before reading
    /// all names: the first column, when the last one was read (the next
    /// row, read in the same order); the column expected next when reading
    /// in reverse order; the column before the one found last, which starts
    /// a reverse order. Comparing two different names costs far more than
    /// reading a matching one, so each guess is one that usually matches.
    /// Out of line, so that the in-order path stays small enough to inline.
    @usableFromInline
    func index(of name: String, missing hint: inout Int) -> Int? {
        let count = names.count
        if hint < 0 {
            let expected = -hint - 1
            if expected < count, isFirst(name, at: expected) {
                hint = reverseHint(after: expected)
                return expected
            }
        } else if hint >= count {
            if count > 0, isFirst(name, at: 0) {
                hint = 1
                return 0
            }
        } else {
            let previous = hint - 2
            if previous >= 0, isFirst(name, at: previous) {
                hint = reverseHint(after: previous)
                return previous
            }
        }
        guard let found = index(of: name) else { return nil }
        hint = found + 1
        return found
    }

    /// Whether column `index` is named `name` and is the first of that name.
    private func isFirst(_ name: String, at index: Int) -> Bool {
        isFirstOfName[index] && names[index] == name
    }

    /// The hint after finding column `index` when reading in reverse order:
    /// the column before it expected next, or the last one after column 0
    /// (the next row, read in the same order).
    private func reverseHint(after index: Int) -> Int {
        -(index == 0 ? names.count : index)
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
