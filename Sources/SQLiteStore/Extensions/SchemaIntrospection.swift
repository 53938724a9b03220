/// A column of a table or view, as `PRAGMA table_xinfo` describes it
/// (see ``Database/columns(in:schema:)``).
public struct ColumnInfo: Sendable, Hashable {
    /// How a column is stored.
    public enum Kind: Int, Sendable, Hashable {
        /// An ordinary column.
        case ordinary = 0
        /// A hidden column of a virtual table.
        case hidden = 1
        /// A generated column computed when read (`GENERATED ALWAYS AS (...) VIRTUAL`).
        case generatedVirtual = 2
        /// A generated column stored in the row (`GENERATED ALWAYS AS (...) STORED`).
        case generatedStored = 3
    }

    /// The column's position in the table, from 0.
    public var position: Int
    /// The column's name.
    public var name: String
    /// The type as declared (`INTEGER`, `VARCHAR(30)`), empty when none was.
    public var declaredType: String
    /// Whether the column has a `NOT NULL` constraint.
    public var isNotNull: Bool
    /// The `DEFAULT` as SQL text (`0`, `'none'`, `CURRENT_TIMESTAMP`), nil
    /// when there is none.
    public var defaultValueSQL: String?
    /// The column's position in the primary key, from 1; nil when it is not
    /// part of it.
    public var primaryKeyPosition: Int?
    /// Ordinary, hidden or generated.
    public var kind: Kind
}

/// An index of a table (see ``Database/indexes(on:schema:)``).
public struct IndexInfo: Sendable, Hashable {
    /// What made an index.
    public enum Origin: String, Sendable, Hashable {
        /// A `CREATE INDEX` statement.
        case createIndex = "c"
        /// A `UNIQUE` constraint of the table.
        case uniqueConstraint = "u"
        /// The `PRIMARY KEY` of a table that is not a rowid alias.
        case primaryKey = "pk"
    }

    /// The index's name (SQLite's own, `sqlite_autoindex_...`, for
    /// constraints).
    public var name: String
    /// Whether the index enforces uniqueness.
    public var isUnique: Bool
    /// What made it.
    public var origin: Origin
    /// Whether it has a `WHERE` clause.
    public var isPartial: Bool
    /// The indexed columns in order; nil for an expression.
    public var columns: [String?]
}

/// What a foreign key does when the row it refers to changes.
public struct ForeignKeyAction: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The action as SQL (`CASCADE`).
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `NO ACTION`, the default.
    public static let noAction = ForeignKeyAction(rawValue: "NO ACTION")
    /// `RESTRICT`.
    public static let restrict = ForeignKeyAction(rawValue: "RESTRICT")
    /// `SET NULL`.
    public static let setNull = ForeignKeyAction(rawValue: "SET NULL")
    /// `SET DEFAULT`.
    public static let setDefault = ForeignKeyAction(rawValue: "SET DEFAULT")
    /// `CASCADE`.
    public static let cascade = ForeignKeyAction(rawValue: "CASCADE")

    public var description: String { rawValue }
}

/// A foreign key of a table (see ``Database/foreignKeys(in:schema:)``).
public struct ForeignKeyInfo: Sendable, Hashable {
    /// SQLite's number for the foreign key within its table.
    public var id: Int
    /// The table it refers to.
    public var destinationTable: String
    /// The referring columns, in order.
    public var originColumns: [String]
    /// The referred-to columns, in the same order; nil where the key names
    /// none, meaning the destination table's primary key.
    public var destinationColumns: [String?]
    /// `ON UPDATE`.
    public var onUpdate: ForeignKeyAction
    /// `ON DELETE`.
    public var onDelete: ForeignKeyAction
}

extension Database {
    /// Whether a table (ordinary or virtual, not a view) of that name exists.
    ///
    /// Names are compared as SQLite does, ignoring ASCII case.
    ///
    /// - Parameters:
    ///   - name: The table's name, unquoted.
    ///   - schema: `main`, `temp` or an attached database's name; nil looks
    ///     in all of them.
    /// - Throws: A ``SQLiteError`` for an unknown schema.
    public func tableExists(_ name: String, schema: String? = nil) throws -> Bool {
        try locate(name, schema: schema)?.type == "table"
    }

    /// Whether a view of that name exists (see ``tableExists(_:schema:)``).
    public func viewExists(_ name: String, schema: String? = nil) throws -> Bool {
        try locate(name, schema: schema)?.type == "view"
    }

    /// The columns of a table or view, in order.
    ///
    /// ```swift
    /// for column in try db.columns(in: "people") {
    ///     print(column.name, column.declaredType, column.isNotNull, column.primaryKeyPosition ?? 0)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - table: The table's or view's name, unquoted.
    ///   - schema: `main`, `temp` or an attached database's name; nil finds
    ///     the table as an unqualified name in SQL would (`temp` first, then
    ///     `main`, then attached databases).
    /// - Throws: A ``SQLiteError`` when there is no such table or view, or
    ///   no such schema.
    public func columns(in table: String, schema: String? = nil) throws -> [ColumnInfo] {
        let schema = try existingSchema(of: table, schema: schema)
        return try fetchAll(
            """
            SELECT cid, name, type, "notnull", dflt_value, pk, hidden
            FROM pragma_table_xinfo(?, ?) ORDER BY cid
            """, arguments: [table, schema]
        ).map { row in
            let primaryKeyPosition: Int = try row["pk"]
            return ColumnInfo(
                position: try row["cid"], name: try row["name"], declaredType: try row["type"] as String? ?? "",
                isNotNull: try row["notnull"], defaultValueSQL: try row["dflt_value"],
                primaryKeyPosition: primaryKeyPosition > 0 ? primaryKeyPosition : nil,
                kind: ColumnInfo.Kind(rawValue: try row["hidden"]) ?? .ordinary)
        }
    }

    /// The indexes of a table, in SQLite's order (`PRAGMA index_list`),
    /// including those made for `UNIQUE` and `PRIMARY KEY` constraints.
    ///
    /// - Throws: A ``SQLiteError`` when there is no such table or schema.
    public func indexes(on table: String, schema: String? = nil) throws -> [IndexInfo] {
        let schema = try existingSchema(of: table, schema: schema)
        let list = try fetchAll(
            "SELECT name, \"unique\", origin, partial FROM pragma_index_list(?, ?) ORDER BY seq",
            arguments: [table, schema])
        return try list.map { row in
            let name: String = try row["name"]
            let origin: String = try row["origin"]
            let columns = try fetchAll(
                String?.self, "SELECT name FROM pragma_index_info(?, ?) ORDER BY seqno", arguments: [name, schema])
            return IndexInfo(
                name: name, isUnique: try row["unique"], origin: IndexInfo.Origin(rawValue: origin) ?? .createIndex,
                isPartial: try row["partial"], columns: columns)
        }
    }

    /// The foreign keys of a table, in SQLite's order
    /// (`PRAGMA foreign_key_list`).
    ///
    /// - Throws: A ``SQLiteError`` when there is no such table or schema.
    public func foreignKeys(in table: String, schema: String? = nil) throws -> [ForeignKeyInfo] {
        let schema = try existingSchema(of: table, schema: schema)
        let rows = try fetchAll(
            """
            SELECT id, "table", "from", "to", on_update, on_delete
            FROM pragma_foreign_key_list(?, ?) ORDER BY id, seq
            """, arguments: [table, schema])
        var keys: [ForeignKeyInfo] = []
        for row in rows {
            let id: Int = try row["id"]
            let from: String = try row["from"]
            let to: String? = try row["to"]
            if let last = keys.indices.last, keys[last].id == id {
                keys[last].originColumns.append(from)
                keys[last].destinationColumns.append(to)
            } else {
                keys.append(
                    ForeignKeyInfo(
                        id: id, destinationTable: try row["table"], originColumns: [from], destinationColumns: [to],
                        onUpdate: ForeignKeyAction(rawValue: try row["on_update"]),
                        onDelete: ForeignKeyAction(rawValue: try row["on_delete"])))
            }
        }
        return keys
    }

    // MARK: - Finding a table

    /// The schemas to search, in the order SQLite resolves an unqualified
    /// name: `temp`, `main`, then attached databases.
    private func searchedSchemas(_ schema: String?) throws -> [String] {
        let names = try fetchAll(String.self, "SELECT name FROM pragma_database_list ORDER BY seq")
        guard let schema else {
            return names.filter { $0 == "temp" } + names.filter { $0 != "temp" }
        }
        guard let known = names.first(where: { $0.lowercased() == schema.lowercased() }) else {
            throw SQLiteError(code: .error, message: "no such schema: \(schema)")
        }
        return [known]
    }

    /// The schema and type (`table`, `view`) of the named table or view.
    private func locate(_ name: String, schema: String?) throws -> (schema: String, type: String)? {
        for candidate in try searchedSchemas(schema) {
            // A schema name is an identifier, so it is quoted, never bound;
            // the table name is bound.
            let sql = """
                SELECT type FROM \(quotedIdentifier(candidate)).sqlite_master
                WHERE type IN ('table', 'view') AND name = ? COLLATE NOCASE
                """
            if let type = try fetchOne(String.self, sql: sql, arguments: [name]) { return (candidate, type) }
        }
        return nil
    }

    /// The schema of the named table or view, which must exist.
    private func existingSchema(of table: String, schema: String?) throws -> String {
        guard let found = try locate(table, schema: schema) else {
            let qualified = schema.map { "\($0)." } ?? ""
            throw SQLiteError(code: .error, message: "no such table: \(qualified)\(table)")
        }
        return found.schema
    }
}
