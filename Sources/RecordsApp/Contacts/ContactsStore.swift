import SQLiteStore

/// Reads and writes contacts. Every value is a bound argument; every write
/// is validated first and runs in a transaction.
///
/// ```swift
/// let store = ContactsStore(database: database)
/// try store.add(ContactDraft(name: "Jane Doe", address: "12 Main St", contact: "+1 555 0100"))
/// let matches = try store.find(name: "jane doe")   // the original tutorial's "Find Contact"
/// ```
public struct ContactsStore: Sendable {
    private let database: AppDatabase

    /// Creates a store on the app's database.
    public init(database: AppDatabase) {
        self.database = database
    }

    private static let select: SQL = "SELECT ID, NAME, ADDRESS, CONTACT FROM CONTACTS"

    /// Every contact, in the given order.
    ///
    /// - Throws: ``UnreadableRowError`` naming the first row with a stored
    ///   value that is not text (see ``list(sortedBy:)``, which reads the
    ///   others all the same).
    public func all(sortedBy sort: ContactSort = .name) throws -> [Contact] {
        try list(sortedBy: sort).get()
    }

    /// Every contact that can be read, in the given order, and the rows
    /// that cannot (a blob in a name), each named with its ID and columns.
    public func list(sortedBy sort: ContactSort = .name) throws -> RecordList<Contact> {
        try database.read(for: .contacts) { db in
            try readList(db, "\(Self.select) ORDER BY \(Self.orderBy(sort))") { try Self.contact($0) }
        }
    }

    /// The contacts whose name is `name`, ignoring case, accents and
    /// surrounding spaces (the original tutorial's "Find Contact").
    ///
    /// - Throws: ``ValidationError`` when `name` is blank;
    ///   ``UnreadableRowError`` for the first match that cannot be read.
    public func find(name: String) throws -> [Contact] {
        try list(named: name).get()
    }

    /// The contacts named `name` that can be read (as ``find(name:)``), and
    /// the matching rows that cannot.
    ///
    /// - Throws: ``ValidationError`` when `name` is blank.
    public func list(named name: String) throws -> RecordList<Contact> {
        let folded = SearchFolding.fold(name.trimmingCharacters(in: .whitespacesAndNewlines))
        guard !folded.isEmpty else {
            throw ValidationError(field: "name", message: "name must not be empty")
        }
        return try database.read(for: .contacts) { db in
            try readList(db, "\(Self.select) WHERE records_fold(trim(NAME)) = \(folded) ORDER BY ID") {
                try Self.contact($0)
            }
        }
    }

    /// The contact with that ID, or nil.
    ///
    /// - Throws: ``UnreadableRowError`` when a stored value of the row is
    ///   not text.
    public func contact(id: Int64) throws -> Contact? {
        try database.read(for: .contacts) { db in try Self.contact(db, id: id) }
    }

    /// How many contacts there are.
    public func count() throws -> Int {
        try database.read(for: .contacts) { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM CONTACTS") ?? 0 }
    }

    /// Saves a new contact and returns it with its ID.
    ///
    /// - Throws: ``ValidationError`` (nothing is written) or a database error.
    @discardableResult
    public func add(_ draft: ContactDraft) throws -> Contact {
        let valid = try draft.validated()
        return try database.write(for: .contacts) { db in
            try db.execute(
                "INSERT INTO CONTACTS (NAME, ADDRESS, CONTACT) VALUES (?, ?, ?)",
                arguments: [valid.name, valid.address, valid.contact])
            return Contact(id: db.lastInsertedRowID, name: valid.name, address: valid.address, contact: valid.contact)
        }
    }

    /// Changes the given fields of a contact and returns the result.
    ///
    /// Only the given columns are written, so this is also how a row with
    /// an unreadable value is mended: give that field a new value.
    ///
    /// - Throws: ``ValidationError`` or ``RecordNotFoundError``, or
    ///   ``UnreadableRowError`` when a field not given still holds an
    ///   unreadable value (nothing is written then), or a database error.
    @discardableResult
    public func update(id: Int64, with changes: ContactChanges) throws -> Contact {
        let valid = try changes.validated()
        return try database.write(for: .contacts) { db in
            try db.execute(
                """
                UPDATE CONTACTS SET
                    NAME = coalesce(:name, NAME),
                    ADDRESS = coalesce(:address, ADDRESS),
                    CONTACT = coalesce(:contact, CONTACT)
                WHERE ID = :id
                """,
                arguments: ["name": valid.name, "address": valid.address, "contact": valid.contact, "id": id])
            guard db.changesCount > 0, let contact = try Self.contact(db, id: id) else {
                throw RecordNotFoundError(kind: "contact", id: id)
            }
            return contact
        }
    }

    /// Deletes a contact and returns who it was.
    ///
    /// A row with unreadable values is deleted all the same; those fields
    /// are empty in the returned contact.
    ///
    /// - Throws: ``RecordNotFoundError`` or a database error.
    @discardableResult
    public func delete(id: Int64) throws -> Contact {
        try database.write(for: .contacts) { db in
            guard let row = try db.fetchOne("\(Self.select) WHERE ID = \(id)") else {
                throw RecordNotFoundError(kind: "contact", id: id)
            }
            let contact = try Self.contact(row, strict: false)
            try db.execute("DELETE FROM CONTACTS WHERE ID = ?", arguments: [id])
            return contact
        }
    }

    // MARK: - Rows

    private static func orderBy(_ sort: ContactSort) -> SQL {
        switch sort {
        case .name: "records_fold(NAME), ID"
        case .newest: "ID DESC"
        }
    }

    private static func contact(_ db: Database, id: Int64) throws -> Contact? {
        try db.fetchOne("\(select) WHERE ID = \(id)").map { try contact($0) }
    }

    /// A contact from a row; with `strict`, a value that is not text is an
    /// ``UnreadableRowError``, else it reads as empty.
    private static func contact(_ row: Row, strict: Bool = true) throws -> Contact {
        let id: Int64 = try row["ID"]
        var reader = RowReader(row, table: "CONTACTS")
        // The original tutorial's table allows NULL in every column; they read as empty.
        let contact = Contact(
            id: id, name: try reader.text("NAME", field: "name") ?? "",
            address: try reader.text("ADDRESS", field: "address") ?? "",
            contact: try reader.text("CONTACT", field: "contact") ?? "")
        if strict { try reader.check(kind: "contact", id: id) }
        return contact
    }
}
