import Foundation
import SQLiteStore
import TestSupport
import Testing

@Suite("Schema introspection")
struct SchemaIntrospectionTests {
    @Test("tableExists finds tables in any case, not views nor missing names")
    func tableExistence() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE people(id INTEGER PRIMARY KEY)")
        try db.execute("CREATE VIEW adults AS SELECT * FROM people")
        #expect(try db.tableExists("people"))
        #expect(try db.tableExists("PEOPLE"))
        #expect(try !db.tableExists("adults"))
        #expect(try db.viewExists("adults"))
        #expect(try !db.tableExists("missing"))
        #expect(try !db.viewExists("people"))
    }

    @Test("Names that need quotes are found and described")
    func namesNeedingQuotes() throws {
        let db = try Database.inMemory()
        try db.execute(#"CREATE TABLE "a b"("x""y" INTEGER PRIMARY KEY, "order" TEXT)"#)
        try db.execute(#"CREATE TABLE "x""y"(v TEXT)"#)
        #expect(try db.tableExists("a b"))
        #expect(try db.tableExists(#"x"y"#))
        #expect(try db.columns(in: "a b").map(\.name) == [#"x"y"#, "order"])
        #expect(try db.columns(in: #"x"y"#).map(\.name) == ["v"])
        // A name that looks like SQL is only a name.
        #expect(try !db.tableExists("people' OR '1'='1"))
    }

    @Test("Every kind of column is described: type, NOT NULL, default, primary key, generated")
    func columnsOfEveryKind() throws {
        let db = try Database.inMemory()
        try db.execute(
            """
            CREATE TABLE item (
                a INTEGER NOT NULL,
                b VARCHAR(30) DEFAULT 'none',
                c DEFAULT CURRENT_TIMESTAMP,
                d REAL DEFAULT -1.5,
                e BLOB,
                f TEXT GENERATED ALWAYS AS (upper(b)) VIRTUAL,
                g INTEGER GENERATED ALWAYS AS (a * 2) STORED,
                PRIMARY KEY (b, a))
            """)
        let columns = try db.columns(in: "item")
        #expect(columns.map(\.name) == ["a", "b", "c", "d", "e", "f", "g"])
        #expect(columns.map(\.position) == [0, 1, 2, 3, 4, 5, 6])
        #expect(columns.map(\.declaredType) == ["INTEGER", "VARCHAR(30)", "", "REAL", "BLOB", "TEXT", "INTEGER"])
        #expect(columns.map(\.isNotNull) == [true, false, false, false, false, false, false])
        #expect(columns.map(\.defaultValueSQL) == [nil, "'none'", "CURRENT_TIMESTAMP", "-1.5", nil, nil, nil])
        #expect(columns.map(\.primaryKeyPosition) == [2, 1, nil, nil, nil, nil, nil])
        #expect(
            columns.map(\.kind) == [
                .ordinary, .ordinary, .ordinary, .ordinary, .ordinary, .generatedVirtual, .generatedStored,
            ])
    }

    @Test("A view's columns are described")
    func viewColumns() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t(a INTEGER, b TEXT)")
        try db.execute("CREATE VIEW v AS SELECT b, a + 1 AS c FROM t")
        #expect(try db.columns(in: "v").map(\.name) == ["b", "c"])
    }

    @Test("A missing table is an error naming it, for columns, indexes and foreign keys")
    func missingTable() throws {
        let db = try Database.inMemory()
        let columnsError = try #require(throws: SQLiteError.self) { try db.columns(in: "nope") }
        #expect(columnsError.message == "no such table: nope")
        let indexesError = try #require(throws: SQLiteError.self) { try db.indexes(on: "nope") }
        #expect(indexesError.message == "no such table: nope")
        let keysError = try #require(throws: SQLiteError.self) { try db.foreignKeys(in: "nope", schema: "main") }
        #expect(keysError.message == "no such table: main.nope")
    }

    @Test("An unknown schema is an error")
    func unknownSchema() throws {
        let db = try Database.inMemory()
        let error = try #require(throws: SQLiteError.self) { try db.tableExists("t", schema: "elsewhere") }
        #expect(error.message == "no such schema: elsewhere")
    }

    @Test("Indexes: name, uniqueness, origin, partial, columns and expressions")
    func indexesOfTable() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t(id TEXT PRIMARY KEY, email TEXT UNIQUE, a INTEGER, b INTEGER)")
        try db.execute("CREATE INDEX t_ab ON t(a, b) WHERE a > 0")
        try db.execute("CREATE UNIQUE INDEX \"t lower\" ON t(lower(email), a)")
        let indexes = try db.indexes(on: "t").sorted { $0.name < $1.name }
        let byName = Dictionary(uniqueKeysWithValues: indexes.map { ($0.name, $0) })
        let partial = try #require(byName["t_ab"])
        #expect(partial.columns == ["a", "b"])
        #expect(!partial.isUnique)
        #expect(partial.isPartial)
        #expect(partial.origin == .createIndex)
        let expression = try #require(byName["t lower"])
        #expect(expression.columns == [nil, "a"])
        #expect(expression.isUnique)
        let constraints = indexes.filter { $0.origin != .createIndex }
        #expect(Set(constraints.map(\.origin)) == [.primaryKey, .uniqueConstraint])
        #expect(constraints.first { $0.origin == .primaryKey }?.columns == ["id"])
        #expect(constraints.first { $0.origin == .uniqueConstraint }?.columns == ["email"])
    }

    @Test("A table without indexes has none")
    func noIndexes() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, x)")
        #expect(try db.indexes(on: "t").isEmpty)
    }

    @Test("Foreign keys: destination, column pairs and actions")
    func foreignKeysOfTable() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE parent(id INTEGER PRIMARY KEY, a INTEGER, b INTEGER, UNIQUE(a, b))")
        try db.execute(
            """
            CREATE TABLE child(
                pid INTEGER REFERENCES parent ON DELETE CASCADE,
                x INTEGER, y INTEGER,
                FOREIGN KEY (x, y) REFERENCES parent(a, b) ON UPDATE SET NULL)
            """)
        let keys = try db.foreignKeys(in: "child").sorted { $0.originColumns[0] < $1.originColumns[0] }
        #expect(keys.count == 2)
        #expect(keys[0].destinationTable == "parent")
        #expect(keys[0].originColumns == ["pid"])
        #expect(keys[0].destinationColumns == [nil])
        #expect(keys[0].onDelete == .cascade)
        #expect(keys[0].onUpdate == .noAction)
        #expect(keys[1].originColumns == ["x", "y"])
        #expect(keys[1].destinationColumns == ["a", "b"])
        #expect(keys[1].onUpdate == .setNull)
        #expect(try db.foreignKeys(in: "parent").isEmpty)
    }

    @Test("A schema name selects a temp or attached table of the same name")
    func schemas() throws {
        let directory = try TemporaryDirectory()
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t(main_column INTEGER)")
        try db.execute("CREATE TEMP TABLE t(temp_column INTEGER)")
        try db.execute("ATTACH DATABASE ? AS \"other db\"", arguments: [directory.path("other.sqlite")])
        try db.execute("CREATE TABLE \"other db\".only_there(o INTEGER)")
        #expect(try db.columns(in: "t").map(\.name) == ["temp_column"])
        #expect(try db.columns(in: "t", schema: "main").map(\.name) == ["main_column"])
        #expect(try db.columns(in: "only_there").map(\.name) == ["o"])
        #expect(try db.tableExists("only_there", schema: "other db"))
        #expect(try !db.tableExists("only_there", schema: "main"))
    }

    @Test("A virtual table counts as a table")
    func virtualTable() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
        #expect(try db.tableExists("docs"))
        #expect(try db.columns(in: "docs").map(\.name).contains("body"))
    }
}
