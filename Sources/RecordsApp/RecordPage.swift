import SQLiteStore

/// One page of a list or of a search: the items read, the rows of the page
/// that could not be read, and whether another page follows.
///
/// A page is read with one more row than it holds, so that whether a next
/// page exists is known without counting the table or reading the rest.
///
/// ```swift
/// let page = try await store.page(sortedBy: .age, number: 2, size: 20)
/// page.items          // people 21 to 40, youngest first
/// page.hasNext        // whether a page 3 has anyone
/// page.hasPrevious    // true: this is page 2
/// ```
public struct RecordPage<Item: Sendable>: Sendable {
    /// The items of the page, in the list's order.
    public var items: [Item]
    /// The rows of the page that could not be read (a stored value that is
    /// not what its field holds), each named with its ID and columns.
    public var unreadable: [UnreadableRowError]
    /// The page's number, from 1.
    public var number: Int
    /// The most items (read or not) a page holds.
    public var size: Int
    /// Whether at least one more row follows this page.
    public var hasNext: Bool
    /// How many rows the whole list has (or how many match a search),
    /// counted in the same read as the page; nil when it was not counted.
    public var total: Int?

    /// Creates a page.
    public init(
        items: [Item], unreadable: [UnreadableRowError] = [], number: Int, size: Int, hasNext: Bool,
        total: Int? = nil
    ) {
        self.items = items
        self.unreadable = unreadable
        self.number = number
        self.size = size
        self.hasNext = hasNext
        self.total = total
    }

    /// How many pages of ``size`` the whole list makes (at least 1, the
    /// empty list's page); nil when ``total`` was not counted.
    public var pageCount: Int? {
        total.map { Swift.max(1, ($0 + size - 1) / Swift.max(size, 1)) }
    }

    /// The same page with its items made into others, in order; the
    /// unreadable rows, number, size, next page and total are kept.
    public func map<Other: Sendable>(_ transform: (Item) throws -> Other) rethrows -> RecordPage<Other> {
        RecordPage<Other>(
            items: try items.map(transform), unreadable: unreadable, number: number, size: size, hasNext: hasNext,
            total: total)
    }

    /// Whether a page comes before this one.
    public var hasPrevious: Bool { number > 1 }

    /// Whether the page holds no row at all, read or not.
    public var isEmpty: Bool { items.isEmpty && unreadable.isEmpty }

    /// The number of the next page, if there is one.
    public var nextNumber: Int? { hasNext ? number + 1 : nil }

    /// The number of the previous page, if there is one.
    public var previousNumber: Int? { hasPrevious ? number - 1 : nil }
}

extension RecordPage: Equatable where Item: Equatable {}

/// The limits of a page.
public enum PageRules {
    /// The most items a page can hold.
    public static let maxSize = 500

    /// The rows to skip before page `number` of `size` items.
    ///
    /// - Throws: ``ValidationError`` when `number` is below 1, `size` is
    ///   not from 1 to ``maxSize``, or the page lies beyond any list a
    ///   database can hold.
    public static func offset(number: Int, size: Int) throws -> Int {
        var validator = Validator()
        if number < 1 { validator.fail("page", "page must be a whole number from 1") }
        if !(1...maxSize).contains(size) {
            validator.fail("page size", "page size must be a whole number from 1 to \(maxSize)")
        }
        try validator.check()
        let (offset, overflow) = (number - 1).multipliedReportingOverflow(by: size)
        guard !overflow else {
            throw ValidationError(field: "page", message: "page \(number) is beyond the end of any list")
        }
        return offset
    }

    /// The page's statement tail: one row more than the page holds, after
    /// the rows before it.
    static func sql(number: Int, size: Int) throws -> SQL {
        let offset = try offset(number: number, size: size)
        return "LIMIT \(Int64(size) + 1) OFFSET \(Int64(offset))"
    }
}

extension RecordPage {
    /// Reads a page from a cursor over up to `size + 1` rows: `item` makes
    /// each of the first `size` rows an item (an ``UnreadableRowError`` it
    /// throws is kept as such, any other error ends the read); a row after
    /// them means another page follows, and is not read.
    static func read(
        _ cursor: RowCursor, number: Int, size: Int, item: (Row) throws -> Item
    ) throws -> RecordPage {
        var page = RecordPage(items: [], number: number, size: size, hasNext: false)
        var count = 0
        while let row = try cursor.next() {
            guard count < size else {
                page.hasNext = true
                break
            }
            count += 1
            do {
                page.items.append(try item(row))
            } catch let error as UnreadableRowError {
                page.unreadable.append(error)
            }
        }
        return page
    }
}

extension RecordTable {
    /// Page `number` (from 1) of `size` rows of the records matching
    /// `filter`, in order, and how many match in all, read in one access
    /// of the database. With `details`, the rows are read with the
    /// record's detail columns (``AppRecord/detailSelection``).
    ///
    /// - Throws: ``ValidationError`` for a page number or size out of
    ///   range (see ``PageRules/offset(number:size:)``).
    func page(where filter: SQL = "1", orderBy order: SQL, number: Int, size: Int, details: Bool = false)
        async throws -> RecordPage<Record>
    {
        let tail = try PageRules.sql(number: number, size: size)
        let selection = details ? Record.detailSelection : Record.selection
        let sql: SQL =
            "SELECT \(selection) FROM \(identifier: Record.tableName) WHERE \(filter) ORDER BY \(order) \(tail)"
        let count: SQL = "SELECT count(*) FROM \(identifier: Record.tableName) WHERE \(filter)"
        return try await database.read(for: Record.app) { db in
            var page = try RecordPage.read(db.fetchCursor(sql), number: number, size: size) { row in
                try Record(row: row, strict: true)
            }
            page.total = try db.fetchOne(Int.self, count) ?? 0
            return page
        }
    }
}
