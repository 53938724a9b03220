import Foundation
import SQLiteStore

/// A contact of the Contacts app: a row of `CONTACTS`.
public struct Contact: Sendable, Equatable, Hashable, Identifiable, Codable {
    /// The row's ID, assigned by the database.
    public internal(set) var id: Int64
    /// The contact's name.
    public var name: String
    /// The postal address.
    public var address: String
    /// How to reach them: a phone number, an email address, a URL.
    public var contact: String
    /// The version of the stored row this contact was read from (see
    /// ``RecordVersion``); for a contact made in memory, that of the row
    /// its fields make. Editing a field in memory leaves it as it was: it
    /// is what a conditional write
    /// (``ContactsStore/update(id:with:ifVersion:)``) expects to find.
    public internal(set) var version: RecordVersion

    /// Creates a contact.
    public init(id: Int64, name: String, address: String, contact: String) {
        self.init(
            id: id, name: name, address: address, contact: contact,
            version: Self.version(id: id, name: name, address: address, contact: contact))
    }

    init(id: Int64, name: String, address: String, contact: String, version: RecordVersion) {
        self.id = id
        self.name = name
        self.address = address
        self.contact = contact
        self.version = version
    }

    private enum CodingKeys: String, CodingKey {
        case id, name, address, contact
    }

    /// Decodes the four fields; the version is that of the row they make.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(Int64.self, forKey: .id), name: try container.decode(String.self, forKey: .name),
            address: try container.decode(String.self, forKey: .address),
            contact: try container.decode(String.self, forKey: .contact))
    }

    /// Encodes the four fields (not the version: the JSON stays as it was).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(address, forKey: .address)
        try container.encode(contact, forKey: .contact)
    }

    /// The original tutorial's list subtitle: "address | contact".
    public var details: String { "\(address) | \(contact)" }
}

extension Contact {
    /// Equal when the fields are; the version is left out: it tells which
    /// stored row a value was read from, and a value edited in memory keeps
    /// it, so comparing it would tell two equal values apart.
    public static func == (lhs: Contact, rhs: Contact) -> Bool {
        lhs.id == rhs.id && lhs.name == rhs.name && lhs.address == rhs.address && lhs.contact == rhs.contact
    }

    /// Hashes the fields, as ``==`` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(name)
        hasher.combine(address)
        hasher.combine(contact)
    }
}

extension Contact {
    /// The columns of `CONTACTS`, as the original tutorial named them.
    enum Columns: String, TableColumn {
        case id = "ID"
        case name = "NAME"
        case address = "ADDRESS"
        case contact = "CONTACT"
    }
}

extension Contact: FetchableRecord, PersistableRecord {
    /// The original tutorial's table.
    public static let tableName = "CONTACTS"
    /// Its key column.
    public static let primaryKey = Columns.id.rawValue

    /// A contact from a row of `CONTACTS`: NULL reads as empty.
    ///
    /// - Throws: ``UnreadableRowError`` when a stored value is not text,
    ///   naming each.
    public init(row: Row) throws { try self.init(row: row, strict: true) }

    /// Writes the four columns.
    public func encode(to columns: inout RecordColumns) {
        columns[Columns.id] = id
        columns[Columns.name] = name
        columns[Columns.address] = address
        columns[Columns.contact] = contact
    }

    /// Takes the ID SQLite gave the new row, and the version of the row
    /// with it.
    public mutating func didInsert(rowID: Int64) {
        id = rowID
        version = Self.version(id: id, name: name, address: address, contact: contact)
    }
}

extension Contact: AppRecord {
    static let app = AppDatabase.App.contacts
    static let kind = "contact"
    var recordVersion: RecordVersion? { version }
    /// What the version covers: every column.
    static let versionColumns = Columns.allCases.map(\.rawValue)
    static let selection: SQL = "\(columns: Columns.allCases)"

    init(row: Row, strict: Bool) throws {
        var reader = RowReader(row, table: Self.tableName)
        let id = try reader.key(Columns.id)
        let name = try reader.text(Columns.name, field: "name")
        let address = try reader.text(Columns.address, field: "address")
        let contact = try reader.text(Columns.contact, field: "contact")
        if strict { try reader.check(kind: Self.kind, id: id) }
        // From the stored values: NULL is another version than empty text.
        // Values of their fields' own types are hashed as read; a row with
        // any other is hashed from the row itself.
        let version =
            reader.readsAsStored
            ? Self.version(id: id, name: name, address: address, contact: contact)
            : try RecordVersion.of(kind: Self.kind, row: row, columns: Self.versionColumns)
        // The original tutorial's table allows NULL in every column; they read as empty.
        self.init(id: id, name: name ?? "", address: address ?? "", contact: contact ?? "", version: version)
    }

    /// The version of the row these values make, in the order of
    /// ``versionColumns``; nil is NULL.
    static func version(id: Int64, name: String?, address: String?, contact: String?) -> RecordVersion {
        var input = versionSeed
        input.append(integer: id)
        input.append(text: name)
        input.append(text: address)
        input.append(text: contact)
        return input.version()
    }

    /// The hash of the kind, which every version starts with.
    private static let versionSeed = VersionInput(kind: kind)
}

/// The fields of a contact's form: the names its problems carry, and the
/// labels forms show and messages start with ("Name is required.").
public enum ContactField: String, FormField, CaseIterable {
    /// ``Contact/name``.
    case name
    /// ``Contact/address``.
    case address
    /// ``Contact/contact``.
    case contact

    /// "Name", "Address", "Phone, email or web address".
    public var label: String {
        switch self {
        case .name: "Name"
        case .address: "Address"
        case .contact: "Phone, email or web address"
        }
    }
}

/// The rules for a contact's fields.
public enum ContactRules {
    /// The longest name, in characters.
    public static let maxNameLength = 100
    /// The longest address, in characters.
    public static let maxAddressLength = 200
    /// The longest contact field, in characters.
    public static let maxContactLength = 200
}

/// The fields of a new contact, as typed.
public struct ContactDraft: Sendable, Equatable {
    /// The name; surrounding spaces are trimmed.
    public var name: String
    /// The address; surrounding spaces are trimmed.
    public var address: String
    /// The phone number, email or URL; surrounding spaces are trimmed.
    public var contact: String

    /// Creates a draft.
    public init(name: String, address: String, contact: String) {
        self.name = name
        self.address = address
        self.contact = contact
    }

    /// The draft trimmed, or the problems that keep it from being saved:
    /// empty or over-long fields, control characters.
    public func validated() throws -> ContactDraft {
        var validator = Validator()
        let draft = ContactDraft(
            name: validator.text(name, field: ContactField.name, maxLength: ContactRules.maxNameLength),
            address: validator.text(address, field: ContactField.address, maxLength: ContactRules.maxAddressLength),
            contact: validator.text(contact, field: ContactField.contact, maxLength: ContactRules.maxContactLength))
        try validator.check()
        return draft
    }
}

/// Changes to a contact's fields; nil leaves a field as it is.
public struct ContactChanges: Sendable, Equatable {
    /// A new name.
    public var name: String?
    /// A new address.
    public var address: String?
    /// A new contact field.
    public var contact: String?

    /// Creates changes.
    public init(name: String? = nil, address: String? = nil, contact: String? = nil) {
        self.name = name
        self.address = address
        self.contact = contact
    }

    /// Whether nothing would change.
    public var isEmpty: Bool { name == nil && address == nil && contact == nil }

    /// The changes trimmed, or the problems found (the same rules as
    /// ``ContactDraft/validated()``; an empty change set is one).
    public func validated() throws -> ContactChanges {
        if isEmpty {
            throw ValidationError(field: "changes", message: "Nothing to change: give a name, address or contact.")
        }
        var validator = Validator()
        let changes = ContactChanges(
            name: name.map { validator.text($0, field: ContactField.name, maxLength: ContactRules.maxNameLength) },
            address: address.map {
                validator.text($0, field: ContactField.address, maxLength: ContactRules.maxAddressLength)
            },
            contact: contact.map {
                validator.text($0, field: ContactField.contact, maxLength: ContactRules.maxContactLength)
            })
        try validator.check()
        return changes
    }
}

/// How the list of contacts is ordered.
public enum ContactSort: String, Sendable, CaseIterable, Codable {
    /// By name, ignoring case and accents.
    case name
    /// The last added first.
    case newest
}

/// The original tutorial's status line after saving or finding a contact.
public enum ContactStatus: Sendable, Equatable, CustomStringConvertible {
    /// A contact was saved.
    case added
    /// Saving failed, with the reason.
    case failedToAdd(String)
    /// Finding by name found at least one contact.
    case matchFound
    /// Finding by name found nothing.
    case matchNotFound

    public var description: String {
        switch self {
        case .added: "Contact added"
        case .failedToAdd(let reason): "Failed to add contact: \(reason)"
        case .matchFound: "Match found"
        case .matchNotFound: "Match not found"
        }
    }
}

/// A new contact was not saved because another already has its name
/// (ignoring case, accents and spaces, see
/// ``ContactsStore/add(_:allowingDuplicate:)``): saving it again with
/// `allowingDuplicate` makes a second contact of that name.
///
/// ```text
/// a contact named "Jane Doe" already exists (ID 3)
/// ```
public struct DuplicateContactError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name that was to be saved, as typed (trimmed).
    public let name: String
    /// The contacts that have that name and can be read, oldest first.
    public let existing: [Contact]
    /// The IDs of every contact with that name, readable or not, in order.
    public let ids: [Int64]

    /// Creates an error.
    public init(name: String, existing: [Contact], ids: [Int64]) {
        self.name = name
        self.existing = existing
        self.ids = ids
    }

    public var description: String {
        let which = ids.count == 1 ? "ID \(ids[0])" : "IDs " + ids.map(String.init).joined(separator: ", ")
        return ids.count == 1
            ? "a contact named \"\(name)\" already exists (\(which))"
            : "\(ids.count) contacts named \"\(name)\" already exist (\(which))"
    }
}
