/// A full-text index (SQLite's FTS5) over some text columns of a table,
/// kept in sync with the table by triggers.
///
/// The index is an *external-content* FTS5 table: it stores only the
/// search index, not a second copy of the text, and reads the text from
/// the table when it builds snippets. Three triggers on the table keep it
/// in sync through every insert, update and delete, in the same
/// transaction as the change, so a rollback undoes both.
///
/// Declare it once, create it in a migration, and search with the same
/// value:
///
/// ```swift
/// let peopleSearch = FullTextIndex(
///     "people_search", on: "people", columns: ["firstname", "lastname"], rowID: "id")
///
/// migrator.registerMigration("searchPeople") { db in
///     try db.create(peopleSearch)   // indexes the rows already there
/// }
///
/// if let pattern = SearchPattern(typed: "gra hop") {
///     let matches = try db.search(Person.self, in: peopleSearch, matching: pattern)
/// }
/// ```
///
/// The content table must be an ordinary (rowid) table; `rowID` names its
/// `INTEGER PRIMARY KEY` column, or is `"rowid"` when it has none. The
/// index is named by ``name``; its triggers are named after it
/// (`NAME_after_insert`, `NAME_after_delete`, `NAME_after_update`).
public struct FullTextIndex: Sendable, Hashable {
    /// The name of the FTS5 table that holds the index.
    public var name: String
    /// The table whose rows are indexed.
    public var table: String
    /// The indexed columns of ``table``, in order. Column weights and
    /// snippets name them.
    public var columns: [String]
    /// The column of ``table`` that holds each row's rowid: its
    /// `INTEGER PRIMARY KEY`, or `"rowid"`.
    public var rowID: String
    /// How text is split into words and folded; see ``FullTextTokenizer``.
    public var tokenizer: FullTextTokenizer
    /// Prefix lengths (in bytes, 1 to 999) for which FTS5 keeps extra index
    /// entries (its `prefix` option). They make prefix searches of those
    /// lengths faster at the cost of a larger index; none by default,
    /// which still answers prefix searches.
    public var prefixLengths: [Int]

    /// Declares an index; nothing is created until ``Database/create(_:)``.
    ///
    /// - Parameters:
    ///   - name: The name of the FTS5 table, unique in the schema.
    ///   - table: The table to index.
    ///   - columns: The text columns to index, at least one.
    ///   - rowID: The table's `INTEGER PRIMARY KEY` column, or `"rowid"`.
    ///   - tokenizer: How words are found and folded; by default
    ///     case- and diacritic-insensitive (``FullTextTokenizer/unicode61(removeDiacritics:tokenCharacters:separators:)``).
    ///   - prefixLengths: FTS5 `prefix` option; see ``prefixLengths``.
    public init(
        _ name: String, on table: String, columns: [String], rowID: String = "rowid",
        tokenizer: FullTextTokenizer = .default, prefixLengths: [Int] = []
    ) {
        self.name = name
        self.table = table
        self.columns = columns
        self.rowID = rowID
        self.tokenizer = tokenizer
        self.prefixLengths = prefixLengths
    }

    /// The names of the triggers that keep the index in sync.
    public var triggerNames: [String] {
        ["\(name)_after_insert", "\(name)_after_delete", "\(name)_after_update"]
    }
}

/// How an FTS5 index splits text into words and folds them: the `tokenize`
/// option of the FTS5 table.
///
/// The default, `unicode61 remove_diacritics 2`, splits on anything that is
/// not a letter or a digit, ignores case, and folds diacritics, so
/// "akesson" finds "Åkesson" and "elise" finds "Élise". Queries are folded
/// by the same tokenizer, so a ``SearchPattern`` needs no folding of its own.
public struct FullTextTokenizer: Sendable, Hashable, CustomStringConvertible {
    /// The tokenizer's name and arguments, as FTS5 reads them (for
    /// example `["porter", "unicode61", "remove_diacritics", "2"]`).
    public var arguments: [String]

    /// A tokenizer from its name and arguments, as FTS5's documentation
    /// lists them; each argument is quoted for FTS5, so any text is safe.
    public init(_ arguments: [String]) {
        self.arguments = arguments
    }

    /// `unicode61 remove_diacritics 2`: case- and diacritic-insensitive
    /// words of letters and digits.
    public static let `default` = FullTextTokenizer.unicode61()

    /// The `unicode61` tokenizer.
    ///
    /// - Parameters:
    ///   - removeDiacritics: 0 keeps them, 1 removes them (the old way,
    ///     missing some letters), 2 removes them from every letter.
    ///   - tokenCharacters: Characters that count as part of a word (for
    ///     example `"-_"`), besides letters and digits.
    ///   - separators: Characters that separate words although they are
    ///     letters or digits.
    public static func unicode61(
        removeDiacritics: Int = 2, tokenCharacters: String = "", separators: String = ""
    ) -> FullTextTokenizer {
        var arguments = ["unicode61", "remove_diacritics", String(removeDiacritics)]
        if !tokenCharacters.isEmpty { arguments += ["tokenchars", tokenCharacters] }
        if !separators.isEmpty { arguments += ["separators", separators] }
        return FullTextTokenizer(arguments)
    }

    /// The `ascii` tokenizer: folds ASCII case only.
    public static let ascii = FullTextTokenizer(["ascii"])

    /// The `porter` stemmer over the default tokenizer: "running" also
    /// finds "run".
    public static let porter = FullTextTokenizer(["porter"] + FullTextTokenizer.default.arguments)

    /// The `tokenize` option's value: every argument in single quotes
    /// (the only quotes FTS5 reads there), a quote in it doubled, so that
    /// spaces and quotes in one stay inside it.
    public var description: String {
        arguments.map { quoted($0, in: "'") }.joined(separator: " ")
    }
}

/// An error in declaring, creating or searching a full-text index, or in
/// an advanced search pattern. Nothing was changed.
public struct FullTextSearchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// The index declaration does not fit the database: no such table,
        /// no such column, no column at all, an invalid option.
        case invalidIndex
        /// An advanced pattern is not valid FTS5 query syntax, or names a
        /// column the index does not have.
        case invalidPattern
        /// A search argument is out of range: a weight or snippet for a
        /// column that is not indexed, a negative limit or offset.
        case invalidArgument
    }

    /// What went wrong.
    public let kind: Kind
    /// A sentence for people.
    public let message: String

    /// Creates an error.
    public init(_ kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

extension Database {
    /// Creates a full-text index and its triggers, and indexes the rows the
    /// table already holds.
    ///
    /// Call it in a migration (or any transaction): it runs in a savepoint,
    /// so a failure leaves nothing behind. To change an index later
    /// (other columns, another tokenizer), register a new migration that
    /// calls ``dropFullTextIndex(named:)`` and then `create` with the new
    /// declaration.
    ///
    /// - Throws: ``FullTextSearchError`` (``FullTextSearchError/Kind/invalidIndex``)
    ///   when the table or a column does not exist, when no column is
    ///   given, or when an option is out of range; ``SQLiteError`` when
    ///   SQLite refuses (an index or trigger of that name already exists).
    public func create(_ index: FullTextIndex) throws {
        try validate(index)
        try savepoint { db in
            try db.execute(index.createTableSQL)
            for trigger in index.triggersSQL { try db.execute(trigger) }
            try db.rebuild(index)
        }
    }

    /// Rebuilds a full-text index from its table's rows: after rows were
    /// changed while the triggers did not exist, or to recover an index
    /// found damaged (`integrity-check`).
    public func rebuild(_ index: FullTextIndex) throws {
        try execute("INSERT INTO \(identifier: index.name)(\(identifier: index.name)) VALUES ('rebuild')")
    }

    /// Runs a bulk change of an index's table without keeping the index in
    /// sync row by row, then rebuilds it once: for imports of many rows.
    ///
    /// FTS5 writes a small index segment for each row a trigger changes,
    /// which makes a large import several times slower than without the
    /// index. Here the triggers are dropped while `body` runs, put back,
    /// and the whole index rebuilt from the table, all in one savepoint:
    /// other connections never see the index out of sync, and a failure
    /// leaves the table, the index and the triggers as they were.
    ///
    /// ```swift
    /// try db.rebuilding(peopleSearch) { db in
    ///     for var person in imported { try person.insert(db) }
    /// }
    /// ```
    ///
    /// The rebuild reads the whole table, so this pays off when the change
    /// is large compared with the table, not for a few rows.
    ///
    /// - Parameters:
    ///   - index: The index, as created by ``create(_:)``.
    ///   - body: The changes to the table.
    /// - Returns: What `body` returns.
    @discardableResult
    public func rebuilding<T>(_ index: FullTextIndex, after body: (Database) throws -> T) throws -> T {
        try validate(index)
        return try savepoint { db in
            for trigger in index.triggerNames {
                try db.execute("DROP TRIGGER IF EXISTS \(identifier: trigger)")
            }
            let result = try body(db)
            for trigger in index.triggersSQL { try db.execute(trigger) }
            try db.rebuild(index)
            return result
        }
    }

    /// Drops a full-text index and its triggers; the indexed table is left
    /// as it is. Dropping an index that does not exist does nothing.
    ///
    /// - Parameter name: The index's ``FullTextIndex/name``.
    /// - Throws: ``FullTextSearchError`` (``FullTextSearchError/Kind/invalidIndex``)
    ///   when `name` is a table that is not an FTS5 index: it is not
    ///   dropped.
    public func dropFullTextIndex(named name: String) throws {
        let definition = try fetchOne(
            String.self, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = \(name) COLLATE NOCASE")
        if let definition, !Self.isFTS5Definition(definition) {
            throw FullTextSearchError(
                .invalidIndex,
                message: "\(quotedIdentifier(name)) is a table, not a full-text index: it was not dropped")
        }
        try savepoint { db in
            for trigger in FullTextIndex(name, on: "", columns: []).triggerNames {
                try db.execute("DROP TRIGGER IF EXISTS \(identifier: trigger)")
            }
            try db.execute("DROP TABLE IF EXISTS \(identifier: name)")
        }
    }

    /// Whether a table's `CREATE` statement makes an FTS5 virtual table
    /// (an ordinary table's never starts so).
    private static func isFTS5Definition(_ sql: String) -> Bool {
        let normalized = sql.uppercased().split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return normalized.hasPrefix("CREATE VIRTUAL TABLE ") && normalized.contains(" USING FTS5")
    }

    /// Checks that the declaration fits the database, with messages that
    /// name the problem (SQLite would only fail later, at the first insert).
    private func validate(_ index: FullTextIndex) throws {
        func invalid(_ message: String) -> FullTextSearchError {
            FullTextSearchError(.invalidIndex, message: "full-text index \(quotedIdentifier(index.name)): \(message)")
        }
        guard !index.name.isEmpty else { throw invalid("the index needs a name") }
        guard !index.columns.isEmpty else { throw invalid("no column to index") }
        if let duplicate = firstDuplicate(index.columns) {
            throw invalid("the column \(quotedIdentifier(duplicate)) is listed twice")
        }
        let reserved = ["rank", "rowid", index.name.lowercased()]
        if let column = index.columns.first(where: { reserved.contains($0.lowercased()) }) {
            throw invalid(
                "FTS5 reserves the column name \(quotedIdentifier(column)) (rank, rowid and the index's own name)")
        }
        if let length = index.prefixLengths.first(where: { !(1...999).contains($0) }) {
            throw invalid("prefix length \(length) is out of range (1 to 999)")
        }
        guard !index.tokenizer.arguments.isEmpty else { throw invalid("the tokenizer has no name") }
        guard try tableExists(index.table) else {
            throw invalid("no table named \(quotedIdentifier(index.table))")
        }
        let existing = try columns(in: index.table).map { $0.name.lowercased() }
        for column in index.columns where !existing.contains(column.lowercased()) {
            throw invalid("the table \(quotedIdentifier(index.table)) has no column \(quotedIdentifier(column))")
        }
        let rowIDAliases = ["rowid", "_rowid_", "oid"]
        if !rowIDAliases.contains(index.rowID.lowercased()) && !existing.contains(index.rowID.lowercased()) {
            throw invalid(
                "the table \(quotedIdentifier(index.table)) has no column \(quotedIdentifier(index.rowID)) for rowID")
        }
    }

    private func firstDuplicate(_ names: [String]) -> String? {
        var seen: Set<String> = []
        for name in names where !seen.insert(name.lowercased()).inserted { return name }
        return nil
    }
}

extension FullTextIndex {
    /// `CREATE VIRTUAL TABLE ... USING fts5(...)`. Column names are
    /// identifiers; the option values are SQL string literals, which FTS5
    /// unquotes and then quotes itself when it reads the content table.
    var createTableSQL: SQL {
        var options = [
            "content=\(stringLiteral(table))",
            "content_rowid=\(stringLiteral(rowID))",
            "tokenize=\(stringLiteral(tokenizer.description))",
        ]
        if !prefixLengths.isEmpty {
            options.append("prefix=\(stringLiteral(prefixLengths.map(String.init).joined(separator: " ")))")
        }
        return """
            CREATE VIRTUAL TABLE \(identifier: name) USING fts5(\(identifiers: columns), \
            \(unsafeLiteral: options.joined(separator: ", ")))
            """
    }

    /// The insert, delete and update triggers. An external-content index
    /// is told the old values to remove ('delete') before the new ones are
    /// added; the update trigger fires only when an indexed column (or a
    /// named rowid column) changes.
    var triggersSQL: [SQL] {
        let newValues: SQL = "new.\(identifier: rowID), " + values("new")
        let oldValues: SQL = "old.\(identifier: rowID), " + values("old")
        let insertNew: SQL = "INSERT INTO \(identifier: name)(rowid, \(identifiers: columns)) VALUES (\(newValues));"
        let deleteOld: SQL = """
            INSERT INTO \(identifier: name)(\(identifier: name), rowid, \(identifiers: columns)) \
            VALUES ('delete', \(oldValues));
            """
        let isImplicitRowID = ["rowid", "_rowid_", "oid"].contains(rowID.lowercased())
        let updated = isImplicitRowID ? columns : columns + [rowID]
        return [
            "CREATE TRIGGER \(identifier: triggerNames[0]) AFTER INSERT ON \(identifier: table) BEGIN \(insertNew) END",
            "CREATE TRIGGER \(identifier: triggerNames[1]) AFTER DELETE ON \(identifier: table) BEGIN \(deleteOld) END",
            """
            CREATE TRIGGER \(identifier: triggerNames[2]) AFTER UPDATE OF \(identifiers: updated) \
            ON \(identifier: table) BEGIN \(deleteOld) \(insertNew) END
            """,
        ]
    }

    private func values(_ row: String) -> SQL {
        columns.map { "\(unsafeLiteral: row).\(identifier: $0)" as SQL }.joined(separator: ", ")
    }

    private func stringLiteral(_ text: String) -> String {
        quoted(text, in: "'")
    }
}
