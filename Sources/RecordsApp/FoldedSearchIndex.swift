import Foundation
import SQLiteStore

/// An app's full-text index over its text folded by
/// ``SearchFolding/fold(_:)``, so that "skl" finds "Skłodowska" and "soren"
/// finds "Søren": FTS5's own tokenizer removes only the accents Unicode
/// decomposes, and keeps ł, ø, đ, æ, ß, þ.
///
/// A tokenizer of the app's would break every write by a tool that does
/// not have it (the `sqlite3` shell could no longer change a row), and a
/// trigger cannot call `records_fold` for the same reason. So, as with
/// ``SortKeyTable``, the folded text lives beside the table,
/// `<table>_searchText(<rowID> INTEGER PRIMARY KEY, isFolded, <column>...)`,
/// and triggers written in plain SQL keep one row there per row of the
/// table, whoever writes:
///
/// - an insert, or a change of an indexed column (or of the ID), puts the
///   row there with no text and `isFolded` 0, "not folded yet";
/// - a delete removes it.
///
/// Only the app folds (``fill(_:)``): before a search it folds the rows
/// not folded yet, in a write. The check for them is a seek in a partial
/// index that holds only those rows.
///
/// The FTS5 table is fed from the folded text by triggers on the side
/// table, so the index always holds exactly the side table's text (an
/// external-content index must be told the very text it indexed to remove
/// it). Its content, which snippets and highlights read, is the app's
/// table itself: the marks go around the words as they were written,
/// "[Skłodowska]-Curie". That works because FTS5 marks words by their
/// position, and folding changes letters into letters only, so the folded
/// text has the same words in the same places. A `rebuild` of the FTS5
/// table would index the unfolded text: ``create(_:)`` and ``fill(_:)``
/// are the only ways it is filled.
/// Columns derived from a table's rows by folding their text (search text,
/// sort keys), filled in lazily: rows another program wrote are folded by
/// the next write, or the next read in a write of its own.
protocol FoldedColumns: Sendable {
    /// Whether every row is folded.
    func isComplete(_ db: Database) throws -> Bool
    /// Folds the rows not folded yet, in the write running.
    @discardableResult func fill(_ db: Database) throws -> Int
}

/// The SQL a ``FoldedColumns`` runs on every write of its app, made once
/// per table, and the folding it drives.
struct FoldingQueries: Sendable {
    /// One row, true when any row waits to be folded.
    let anyWaiting: SQL
    /// Deletes the waiting rows whose row of the app's table is gone.
    let deleteOrphans: SQL
    /// The waiting rows: the ID, then the columns to fold.
    let waiting: SQL
    /// Stores one row's folded columns, then its ID, as arguments.
    let store: SQL

    /// Whether no row waits to be folded.
    func isComplete(_ db: Database) throws -> Bool {
        try db.fetchOne(Bool.self, anyWaiting) == false
    }

    /// Drops the waiting rows whose row is gone, then folds the others.
    ///
    /// - Returns: How many rows were folded.
    func fill(_ db: Database, folding fold: (SQLiteValue) -> SQLiteValue) throws -> Int {
        // A row deleted without its trigger firing (REPLACE deletes
        // without one) would otherwise wait for ever.
        try db.execute(deleteOrphans)
        return try self.fold(db, folding: fold)
    }

    /// Folds each waiting row's columns with `fold` and stores them.
    ///
    /// - Returns: How many rows were folded.
    func fold(_ db: Database, folding fold: (SQLiteValue) -> SQLiteValue) throws -> Int {
        let rows = try db.fetchAll(waiting)
        let statement = try db.cachedStatement(store)
        for row in rows {
            let values = row.values
            var folded = values.dropFirst().map(fold)
            folded.append(values[0])
            try statement.execute(arguments: StatementArguments(values: folded))
        }
        return rows.count
    }
}

struct FoldedSearchIndex: FoldedColumns {
    /// The FTS5 table's name.
    let name: String
    /// The app's table, the index's content.
    let table: String
    /// The app's table's `INTEGER PRIMARY KEY`, also the side table's.
    let rowID: String
    /// The indexed columns of ``table``, in order; the side table's and
    /// the FTS5 table's columns have the same names.
    let columns: [String]
    /// How FTS5 splits the folded text into words.
    let tokenizer: FullTextTokenizer = .default
    /// The SQL of ``isComplete(_:)`` and ``fill(_:)``, which every write of
    /// the app runs: made once, not on each write.
    private let queries: FoldingQueries

    init<Column: TableColumn>(_ name: String, on table: String, columns: [Column], rowID: Column) {
        self.name = name
        self.table = table
        self.rowID = rowID.rawValue
        self.columns = columns.map(\.rawValue)
        let text: SQL = "\(identifier: Self.textTable(of: table))"
        let id: SQL = "\(identifier: self.rowID)"
        let selected: [SQL] = self.columns.map { "\(identifier: table).\(identifier: $0)" }
        let assignments: [SQL] = self.columns.map { "\(identifier: $0) = ?" }
        queries = FoldingQueries(
            anyWaiting: "SELECT EXISTS (SELECT 1 FROM \(text) WHERE isFolded = 0)",
            deleteOrphans: """
                DELETE FROM \(text) WHERE isFolded = 0 AND \(id) NOT IN (SELECT \(id) FROM \(identifier: table))
                """,
            waiting: """
                SELECT \(text).\(id), \(selected.joined(separator: ", "))
                FROM \(text) JOIN \(identifier: table) USING (\(id)) WHERE \(text).isFolded = 0
                """,
            store: "UPDATE \(text) SET isFolded = 1, \(assignments.joined(separator: ", ")) WHERE \(id) = ?")
    }

    /// The name of the side table of folded text of `table`.
    private static func textTable(of table: String) -> String { "\(table)_searchText" }

    /// The side table of folded text.
    var textTable: String { Self.textTable(of: table) }

    /// The names of the triggers on ``table`` (keeping ``textTable``) and
    /// on ``textTable`` (keeping the index).
    var triggerNames: [String] {
        ["insert", "update", "delete"].map { "\(textTable)_after_\($0)" }
            + ["insert", "update", "delete"].map { "\(name)_folded_after_\($0)" }
    }

    /// Creates the side table, the index and their triggers, and folds and
    /// indexes the rows already there.
    ///
    /// The rows are folded before the triggers exist, and indexed in one
    /// statement, so a large table is not indexed twice.
    func create(_ db: Database) throws {
        let text: SQL = "\(identifier: textTable)"
        let fts: SQL = "\(identifier: name)"
        let columnList: SQL = "\(identifiers: columns)"
        let options = [
            "content=\(literal(table))", "content_rowid=\(literal(rowID))",
            "tokenize=\(literal(tokenizer.description))",
        ]
        try db.execute(
            """
            CREATE TABLE \(text) (
                \(identifier: rowID) INTEGER PRIMARY KEY, isFolded INTEGER NOT NULL DEFAULT 0, \(columnList));
            CREATE INDEX \(identifier: "\(textTable)_unfolded") ON \(text) (\(identifier: rowID)) WHERE isFolded = 0;
            CREATE VIRTUAL TABLE \(fts) USING fts5(\(columnList), \(unsafeLiteral: options.joined(separator: ", ")));
            INSERT INTO \(text) (\(identifier: rowID)) SELECT \(identifier: rowID) FROM \(identifier: table);
            """)
        try fold(db)
        try db.execute(
            """
            INSERT INTO \(fts) (rowid, \(columnList)) SELECT \(identifier: rowID), \(columnList) FROM \(text)
            """)
        for trigger in triggersSQL { try db.execute(trigger) }
    }

    /// The triggers: those on ``table`` put a row to fold in the side
    /// table (deleting any row left there first, which removes its words
    /// from the index, so no conflict is ever resolved by REPLACE, whose
    /// delete fires no trigger); those on the side table tell the index
    /// each change, the text to remove as it was indexed.
    private var triggersSQL: [SQL] {
        let text: SQL = "\(identifier: textTable)"
        let fts: SQL = "\(identifier: name)"
        let id: SQL = "\(identifier: rowID)"
        let columnList: SQL = "\(identifiers: columns)"
        let watched: SQL = "\(identifiers: columns + [rowID])"
        func values(_ row: String) -> SQL {
            ([rowID] + columns).map { "\(unsafeLiteral: row).\(identifier: $0)" as SQL }.joined(separator: ", ")
        }
        let insertNew: SQL = "INSERT INTO \(fts) (rowid, \(columnList)) VALUES (\(values("new")));"
        let deleteOld: SQL = "INSERT INTO \(fts) (\(fts), rowid, \(columnList)) VALUES ('delete', \(values("old")));"
        let trigger = { (index: Int) -> SQL in "\(identifier: triggerNames[index])" }
        return [
            """
            CREATE TRIGGER \(trigger(0)) AFTER INSERT ON \(identifier: table) BEGIN
                DELETE FROM \(text) WHERE \(id) = new.\(id);
                INSERT INTO \(text) (\(id)) VALUES (new.\(id));
            END
            """,
            """
            CREATE TRIGGER \(trigger(1)) AFTER UPDATE OF \(watched) ON \(identifier: table) BEGIN
                DELETE FROM \(text) WHERE \(id) IN (old.\(id), new.\(id));
                INSERT INTO \(text) (\(id)) VALUES (new.\(id));
            END
            """,
            """
            CREATE TRIGGER \(trigger(2)) AFTER DELETE ON \(identifier: table) BEGIN
                DELETE FROM \(text) WHERE \(id) = old.\(id);
            END
            """,
            "CREATE TRIGGER \(trigger(3)) AFTER INSERT ON \(text) BEGIN \(insertNew) END",
            "CREATE TRIGGER \(trigger(4)) AFTER UPDATE ON \(text) BEGIN \(deleteOld) \(insertNew) END",
            "CREATE TRIGGER \(trigger(5)) AFTER DELETE ON \(text) BEGIN \(deleteOld) END",
        ]
    }

    /// Whether every row's text is folded: a seek in the partial index of
    /// the rows that are not.
    func isComplete(_ db: Database) throws -> Bool {
        try queries.isComplete(db)
    }

    /// Folds the rows not folded yet, in the write running (their triggers
    /// index the folded text), and drops any whose row is gone.
    ///
    /// - Returns: How many rows were folded.
    @discardableResult
    func fill(_ db: Database) throws -> Int {
        try queries.fill(db, folding: Self.folded)
    }

    /// Folds the text of the side table's rows that are not folded yet.
    @discardableResult
    private func fold(_ db: Database) throws -> Int {
        try queries.fold(db, folding: Self.folded)
    }

    /// A column's text as it is indexed: folded as `records_fold` folds
    /// it; NULL stays NULL (no words).
    static func folded(_ value: SQLiteValue) -> SQLiteValue {
        SearchFolding.apply({ SearchFolding.fold($0) }, to: value).map { .text($0) } ?? .null
    }

    /// A string literal for FTS5's options, which FTS5 unquotes.
    private func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
