import Foundation
import SQLiteStore

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
///
/// The waiting rows are folded by one statement, with `records_fold`
/// (which every connection of the app has, see ``SearchFolding``): FTS5
/// writes out what it holds at the end of each statement of a
/// transaction, so folding row by row wrote a full-text segment for every
/// row, and one statement writes one for all of them.
struct FoldingQueries: Sendable {
    /// One row, true when any row waits to be folded.
    let anyWaiting: SQL
    /// Deletes the waiting rows whose row of the app's table is gone.
    let deleteOrphans: SQL
    /// Folds every waiting row's columns from its row of the app's table.
    let foldWaiting: SQL

    /// Whether no row waits to be folded.
    func isComplete(_ db: Database) throws -> Bool {
        try db.fetchOne(Bool.self, anyWaiting) == false
    }

    /// Drops the waiting rows whose row is gone, then folds the others.
    ///
    /// - Returns: How many rows were folded.
    func fill(_ db: Database) throws -> Int {
        // A row deleted without its trigger firing (REPLACE deletes
        // without one) would otherwise wait for ever.
        try db.execute(deleteOrphans)
        return try fold(db)
    }

    /// Folds the waiting rows' columns and stores them.
    ///
    /// - Returns: How many rows were folded.
    func fold(_ db: Database) throws -> Int {
        try db.cachedStatement(foldWaiting).execute()
        return db.changesCount
    }
}

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
/// table, so the index always holds exactly the side table's folded rows'
/// text (an external-content index must be told the very text it indexed
/// to remove it). A row waiting to be folded is not in the index at all:
/// a write that adds or changes rows leaves the index alone until the fold
/// at the end of its transaction. (Once FTS5 is part of a transaction, it
/// writes out what it holds at every statement of every trigger that
/// follows.)
///
/// The index's content, which snippets and highlights read, is the app's
/// table itself: the marks go around the words as they were written,
/// "[Skłodowska]-Curie". That works because FTS5 marks words by their
/// position, and folding changes letters into letters only, so the folded
/// text has the same words in the same places. A `rebuild` of the FTS5
/// table would index the unfolded text: ``create(_:)`` and ``fill(_:)``
/// are the only ways it is filled.
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
        // The app's table is `source` in the fold: the side table's
        // columns have the same names as the app's.
        let assignments: [SQL] = self.columns.map {
            "\(identifier: $0) = \(unsafeLiteral: SearchFolding.functionName)(source.\(identifier: $0))"
        }
        queries = FoldingQueries(
            anyWaiting: "SELECT EXISTS (SELECT 1 FROM \(text) WHERE isFolded = 0)",
            deleteOrphans: """
                DELETE FROM \(text) WHERE isFolded = 0 AND \(id) NOT IN (SELECT \(id) FROM \(identifier: table))
                """,
            foldWaiting: """
                UPDATE \(text) SET isFolded = 1, \(assignments.joined(separator: ", "))
                FROM \(identifier: table) AS source WHERE \(text).\(id) = source.\(id) AND \(text).isFolded = 0
                """)
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
        // A migration may run on a connection that is not the app's.
        try SearchFolding.register(on: db)
        try fold(db)
        try db.execute(
            """
            INSERT INTO \(fts) (rowid, \(columnList)) SELECT \(identifier: rowID), \(columnList) FROM \(text)
            """)
        for trigger in triggersSQL { try db.execute(trigger) }
    }

    /// Upgrades an index made before waiting rows were kept out of it:
    /// folds the waiting rows (whose empty text the old triggers indexed)
    /// with the old triggers, then replaces the side table's triggers.
    /// From then on only folded rows are in the index.
    func indexOnlyFoldedRows(_ db: Database) throws {
        // A migration may run on a connection that is not the app's.
        try SearchFolding.register(on: db)
        try fill(db)
        for name in triggerNames.suffix(3) { try db.execute("DROP TRIGGER IF EXISTS \(identifier: name)") }
        for trigger in triggersSQL.suffix(3) { try db.execute(trigger) }
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
        // Only folded rows are indexed: a row waiting to be folded is not
        // in the index, so it is neither added nor removed.
        let insertNew: SQL = """
            INSERT INTO \(fts) (rowid, \(columnList)) SELECT \(values("new")) WHERE new.isFolded;
            """
        let deleteOld: SQL = """
            INSERT INTO \(fts) (\(fts), rowid, \(columnList)) SELECT 'delete', \(values("old")) WHERE old.isFolded;
            """
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
            "CREATE TRIGGER \(trigger(3)) AFTER INSERT ON \(text) WHEN new.isFolded BEGIN \(insertNew) END",
            "CREATE TRIGGER \(trigger(4)) AFTER UPDATE ON \(text) BEGIN \(deleteOld) \(insertNew) END",
            "CREATE TRIGGER \(trigger(5)) AFTER DELETE ON \(text) WHEN old.isFolded BEGIN \(deleteOld) END",
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
        try queries.fill(db)
    }

    /// Folds the text of the side table's rows that are not folded yet.
    @discardableResult
    private func fold(_ db: Database) throws -> Int {
        try queries.fold(db)
    }

    /// A string literal for FTS5's options, which FTS5 unquotes.
    private func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
