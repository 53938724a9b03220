import Foundation
import SQLiteStore
import SQLiteStoreAppSupport

/// What a SQLite file holds, as far as records is concerned: whether it is
/// records' own, or another application's.
///
/// A database is records' to open when it
/// - has records' migrations table (`sqlitestore_migrations`): records made
///   or adopted it, and any other tables in it are the user's own;
/// - holds no table, view or trigger at all; or
/// - holds only the original tutorials' tables, recognised by name and
///   columns (names ignore case; SQLite's own `sqlite_` tables and the
///   indexes of these tables do not count):
///   - `peopleInfo` (`peopleInfoID`, `firstname`, `lastname`, `age`),
///   - `CONTACTS` (`ID`, `NAME`, `ADDRESS`, `CONTACT`),
///   - `coffee` (`coffeeID`, `coffeeName`, `price`, or records' own with
///     `pictureType` and `picture` after them),
///   - `User_Master`, exactly as the Users tutorial or records creates it.
///
/// Anything else (another table, a view, a trigger, one of these names
/// with other columns) makes it another application's database.
public enum DatabaseContents: Sendable, Equatable {
    /// It has records' migrations table.
    case records
    /// No tables, views or triggers.
    case empty
    /// Only the original tutorials' tables: these.
    case originalTutorials(tables: [String])
    /// Another application's: the schema objects records does not know
    /// ("table accounts", "view totals"), and the tutorials' tables it has.
    case foreign(unknown: [String], known: [String])

    /// Whether records may open it without being asked to adopt it.
    public var isRecords: Bool {
        if case .foreign = self { return false }
        return true
    }

    /// Looks at a database's schema; reads only, changes nothing.
    public static func of(_ db: Database) throws -> DatabaseContents {
        let objects = try db.fetchAll(
            "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view', 'trigger') ORDER BY rowid")
        var known: [String] = []
        var unknown: [String] = []
        for object in objects {
            let type: String = try object["type"]
            let name: String = try object["name"]
            if name.lowercased().hasPrefix("sqlite_") { continue }
            if type == "table" && name == Migrator.tableName { return .records }
            if type == "table", try isTutorialTable(name, in: db) {
                known.append(name)
            } else {
                unknown.append("\(type) \(name)")
            }
        }
        if !unknown.isEmpty { return .foreign(unknown: unknown, known: known) }
        return known.isEmpty ? .empty : .originalTutorials(tables: known)
    }

    /// The column lists a tutorial table may have, by lowercased name.
    private static let tutorialColumns: [String: [[String]]] = [
        "peopleinfo": [["peopleinfoid", "firstname", "lastname", "age"]],
        "contacts": [["id", "name", "address", "contact"]],
        "coffee": [
            ["coffeeid", "coffeename", "price"], CoffeeSchema.columns.map { $0.name.lowercased() },
        ],
    ]

    private static func isTutorialTable(_ name: String, in db: Database) throws -> Bool {
        let lowercased = name.lowercased()
        if lowercased == UsersSchema.tableName.lowercased() {
            let layout = try UsersSchema.existingLayout(db)
            return layout == .seed || layout == .current
        }
        guard let layouts = tutorialColumns[lowercased] else { return false }
        // The columns SQLite's `table_info` lists: generated ones left out.
        let columns = try db.columns(in: name, schema: "main").filter { $0.kind == .ordinary }
        return layouts.contains(columns.map { $0.name.lowercased() })
    }
}

/// The database file belongs to another application: records refused to
/// open it and changed nothing in it (nor left any file beside it).
public struct ForeignDatabaseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file.
    public let path: String
    /// The tables, views and triggers records does not know
    /// ("table accounts").
    public let unknown: [String]
    /// The original tutorials' tables the file also has.
    public let known: [String]

    /// Creates an error.
    public init(path: String, unknown: [String], known: [String]) {
        self.path = path
        self.unknown = unknown
        self.known = known
    }

    public var description: String {
        let shown = unknown.prefix(5).joined(separator: ", ")
        let more = unknown.count > 5 ? " and \(unknown.count - 5) more" : ""
        let alsoKnown = known.isEmpty ? "" : " (beside the tutorials' \(known.joined(separator: ", ")))"
        return "\(path) is another application's SQLite database, not one records made: it has "
            + "\(shown)\(more)\(alsoKnown), which records does not know, and no records migration table. "
            + "Nothing was changed. To add records' tables to it anyway, give --adopt; "
            + "to start a records database, give --database a new file name"
    }
}

extension AppDatabase {
    /// Refuses an existing, non-empty file that is another application's
    /// database (see ``DatabaseContents``). It is read through a plain
    /// connection of its own, before the app's connection is set up, so
    /// that nothing (journal mode, migrations) touches it.
    static func refuseForeignDatabase(at url: URL) throws {
        guard DatabaseTemplate.isInstalled(at: url) else { return }
        var configuration = Configuration()
        configuration.createsMissingFile = false
        configuration.foreignKeysEnabled = false
        // Waits for another program's lock as long as the app's own
        // connection would.
        configuration.busyTimeout = lockWaitLimit
        let db = try Database(path: url.path, configuration: configuration)
        defer { db.close() }
        if case .foreign(let unknown, let known) = try DatabaseContents.of(db) {
            throw ForeignDatabaseError(path: url.path, unknown: unknown, known: known)
        }
    }
}
