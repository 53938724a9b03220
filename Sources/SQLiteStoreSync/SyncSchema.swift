import Foundation
import SQLiteStore

/// One table an app syncs: its name, the local integer key, and the columns
/// whose values travel.
///
/// ```swift
/// let people = SyncedTable("people", columns: ["first", "last", "age", "picture"])
/// ```
///
/// The primary key stays the table's own `INTEGER PRIMARY KEY`: the local
/// ID the app shows and links by. Each row also gets a *global identity*
/// (a version 7 UUID: the replica's clock, then 62 random bits; kept by the
/// engine beside the local ID), under which the row travels, so that rows
/// created offline on two devices never collide: each device numbers them
/// locally as it likes.
public struct SyncedTable: Sendable, Hashable {
    /// The table's name.
    public let name: String
    /// The table's `INTEGER PRIMARY KEY` column (the local ID).
    public let primaryKey: String
    /// The columns whose changes are captured and merged, in a fixed order.
    public let columns: [String]
    /// The columns among ``columns`` that hold large values (pictures,
    /// files): a BLOB there travels by reference, its content hash and
    /// size, and its bytes in a separate, resumable stream of chunks, only
    /// when it changed. See <doc:LargeValues>.
    public let largeColumns: Set<String>

    /// Declares a synced table.
    ///
    /// - Parameters:
    ///   - name: The table's name.
    ///   - primaryKey: Its `INTEGER PRIMARY KEY` column, the local ID.
    ///   - columns: The columns to sync, not including the primary key.
    ///   - largeColumns: Those of `columns` that hold large values, which
    ///     travel in chunks (see <doc:LargeValues>).
    public init(_ name: String, primaryKey: String = "id", columns: [String], largeColumns: Set<String> = []) {
        self.name = name
        self.primaryKey = primaryKey
        self.columns = columns
        self.largeColumns = largeColumns
    }

    func columnIndex(_ column: String) -> Int? { columns.firstIndex(of: column) }

    func isLarge(_ column: String) -> Bool { !largeColumns.isEmpty && largeColumns.contains(column) }
}

/// The tables a database syncs and the limits the server enforces.
///
/// Install it once, from a migration, on every replica (the server's
/// database and each device's), then use a ``SyncServer`` or a
/// ``SyncClient``:
///
/// ```swift
/// let schema = SyncSchema(tables: [SyncedTable("people", columns: ["first", "last", "age"])])
/// migrator.registerMigration("sync") { db in try schema.install(in: db) }
/// ```
///
/// From then on the app writes as before; triggers record each changed
/// column with a version. See <doc:MergeRules> for how versions decide.
public struct SyncSchema: Sendable {
    /// The synced tables.
    public let tables: [SyncedTable]
    /// How far in the future (by the server's clock) a change's version may
    /// be before the server refuses the batch that carries it.
    public let maximumClockSkew: Duration

    /// A schema for `tables`.
    ///
    /// - Parameters:
    ///   - tables: The synced tables; names must be distinct.
    ///   - maximumClockSkew: The bound on devices' clocks running ahead of the
    ///     server's (default five minutes).
    public init(tables: [SyncedTable], maximumClockSkew: Duration = .seconds(300)) {
        self.tables = tables
        self.maximumClockSkew = maximumClockSkew
    }

    func table(named name: String) -> SyncedTable? { tables.first { $0.name == name } }
}
