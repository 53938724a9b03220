import SQLiteStore

/// Reads and writes contacts. Every value is a bound argument; every write
/// is validated first and runs in a transaction.
///
/// ```swift
/// let store = ContactsStore(database: database)
/// try store.add(ContactDraft(name: "Jane Doe", address: "12 Main St", contact: "+1 555 0100"))
/// let matches = try store.find(name: "jane doe")   // the seed's "Find Contact"
/// ```
public struct ContactsStore: Sendable {
    private let database: AppDatabase

    /// Creates a store on the app's database.
    public init(database: AppDatabase) {
        self.database = database
    }

    private static let select = "SELECT ID, NAME, ADDRESS, CONTACT FROM CONTACTS"

    /// Every contact, in the given order.
    public func all(sortedBy sort: ContactSort = .name) throws -> [Contact] {
        try database.read { db in try Self.contacts(db, "\(Self.select) ORDER BY \(Self.orderBy(sort))") }
    }

    /// The contacts whose name is `name`, ignoring case, accents and
    /// surrounding spaces (the seed's "Find Contact").
    ///
    /// - Throws: ``ValidationError`` when `name` is blank.
    public func find(name: String) throws -> [Contact] {
        let folded = SearchFolding.fold(name.trimmingCharacters(in: .whitespacesAndNewlines))
        guard !folded.isEmpty else {
            throw ValidationError(field: "name", message: "name must not be empty")
        }
        return try database.read { db in
            try Self.contacts(
                db, "\(Self.select) WHERE records_fold(trim(NAME)) = ? ORDER BY ID", arguments: [folded])
        }
    }

    /// The contact with that ID, or nil.
    public func contact(id: Int64) throws -> Contact? {
        try database.read { db in try Self.contact(db, id: id) }
    }

    /// How many contacts there are.
    public func count() throws -> Int {
        try database.read { db in try db.fetchOne(Int.self, "SELECT COUNT(*) FROM CONTACTS") ?? 0 }
    }

    /// Saves a new contact and returns it with its ID.
    ///
    /// - Throws: ``ValidationError`` (nothing is written) or a database error.
    @discardableResult
    public func add(_ draft: ContactDraft) throws -> Contact {
        let valid = try draft.validated()
        return try database.write { db in
            try db.execute(
                "INSERT INTO CONTACTS (NAME, ADDRESS, CONTACT) VALUES (?, ?, ?)",
                arguments: [valid.name, valid.address, valid.contact])
            return Contact(id: db.lastInsertedRowID, name: valid.name, address: valid.address, contact: valid.contact)
        }
    }

    /// Changes the given fields of a contact and returns the result.
    ///
    /// - Throws: ``ValidationError`` or ``RecordNotFoundError`` (nothing is
    ///   written), or a database error.
    @discardableResult
    public func update(id: Int64, with changes: ContactChanges) throws -> Contact {
        let valid = try changes.validated()
        return try database.write { db in
            guard var contact = try Self.contact(db, id: id) else { throw RecordNotFoundError(kind: "contact", id: id) }
            contact.name = valid.name ?? contact.name
            contact.address = valid.address ?? contact.address
            contact.contact = valid.contact ?? contact.contact
            try db.execute(
                """
                UPDATE CONTACTS SET
                    NAME = coalesce(:name, NAME),
                    ADDRESS = coalesce(:address, ADDRESS),
                    CONTACT = coalesce(:contact, CONTACT)
                WHERE ID = :id
                """,
                arguments: ["name": valid.name, "address": valid.address, "contact": valid.contact, "id": id])
            return contact
        }
    }

    /// Deletes a contact and returns who it was.
    ///
    /// - Throws: ``RecordNotFoundError`` or a database error.
    @discardableResult
    public func delete(id: Int64) throws -> Contact {
        try database.write { db in
            guard let contact = try Self.contact(db, id: id) else { throw RecordNotFoundError(kind: "contact", id: id) }
            try db.execute("DELETE FROM CONTACTS WHERE ID = ?", arguments: [id])
            return contact
        }
    }

    // MARK: - Rows

    private static func orderBy(_ sort: ContactSort) -> String {
        switch sort {
        case .name: "records_fold(NAME), ID"
        case .newest: "ID DESC"
        }
    }

    private static func contact(_ db: Database, id: Int64) throws -> Contact? {
        try contacts(db, "\(select) WHERE ID = ?", arguments: [id]).first
    }

    private static func contacts(_ db: Database, _ sql: String, arguments: StatementArguments = StatementArguments())
        throws -> [Contact]
    {
        var contacts: [Contact] = []
        let cursor = try db.fetchCursor(sql, arguments: arguments)
        while let row = try cursor.next() {
            // The seed's table allows NULL in every column; they read as empty.
            contacts.append(
                Contact(
                    id: try row["ID"], name: try row["NAME"] as String? ?? "",
                    address: try row["ADDRESS"] as String? ?? "", contact: try row["CONTACT"] as String? ?? ""))
        }
        return contacts
    }
}
