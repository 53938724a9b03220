import Foundation
import Observation

/// The Contacts screens' state: the list, the add form's status
/// line, and "Find Contact".
///
/// The list refreshes itself after every change made through the view
/// model, as the original tutorial's `record_saved:` delegate call did:
///
/// ```swift
/// let model = ContactsViewModel(store: ContactsStore(database: database))
/// await model.load()
/// await model.add(ContactDraft(name: "Jane", address: "12 Main St", contact: "555 0100"))
/// model.status?.description     // "Contact added"
/// await model.find(name: "jane") // fills `matches`; status "Match found"
/// ```
@MainActor
@Observable
public final class ContactsViewModel: ListViewModel {
    /// The contacts shown, in ``sort`` order.
    public private(set) var contacts: [Contact] = []

    /// The order of ``contacts``; changing it refreshes the list.
    public var sort: ContactSort = .name {
        didSet { if sort != oldValue { scheduleRefresh() } }
    }

    /// The original tutorial's status line after the last add or find.
    public private(set) var status: ContactStatus?

    /// What the last ``find(name:)`` found.
    public private(set) var matches: [Contact] = []

    /// The rows of the list that could not be read (a stored value that is
    /// not what its field holds), each naming the row and its columns; the
    /// list shows every other row.
    public private(set) var unreadableRows: [UnreadableRowError] = []

    /// The last error, for display; nil after a success.
    public internal(set) var errorMessage: String?

    @ObservationIgnored var pendingRefresh: Task<Void, Never>?

    private let store: ContactsStore

    /// Creates a view model; call ``load()`` to fill the list.
    public init(store: ContactsStore) {
        self.store = store
    }

    /// Loads the list again from the database.
    public func load() async {
        await refresh()
    }

    /// Returns once the reloads that changing ``sort`` started are done.
    public func refreshed() async {
        await waitForPendingRefresh()
    }

    /// Saves a new contact and refreshes the list. The status says
    /// "Contact added" or "Failed to add contact" with the reason.
    ///
    /// - Returns: The saved contact, or nil when it was not saved.
    @discardableResult
    public func add(_ draft: ContactDraft) async -> Contact? {
        var contact: Contact?
        do {
            contact = try await store.add(draft)
            status = .added
            errorMessage = nil
        } catch {
            status = .failedToAdd(String(describing: error))
            errorMessage = String(describing: error)
        }
        await refresh(keepingError: true)
        return contact
    }

    /// Finds contacts by name (the original tutorial's "Find Contact"); the status says
    /// "Match found" or "Match not found". A matching row that cannot be
    /// read still counts as found; ``errorMessage`` names it.
    @discardableResult
    public func find(name: String) async -> [Contact] {
        do {
            let listed = try await store.list(named: name)
            matches = listed.records
            status = matches.isEmpty && listed.isComplete ? .matchNotFound : .matchFound
            errorMessage = listed.isComplete ? nil : listed.unreadable.map(\.description).joined(separator: "\n")
        } catch {
            matches = []
            status = .matchNotFound
            errorMessage = String(describing: error)
        }
        return matches
    }

    /// Saves changes to a contact, then refreshes the list.
    @discardableResult
    public func update(id: Int64, with changes: ContactChanges) async throws -> Contact {
        try await change { try await store.update(id: id, with: changes) }
    }

    /// Deletes a contact, then refreshes the list.
    public func delete(id: Int64) async throws {
        try await change { _ = try await store.delete(id: id) }
    }

    /// Deletes the contacts at positions of ``contacts`` (a list's swipe
    /// to delete), then refreshes the list.
    public func delete(atOffsets offsets: IndexSet) async throws {
        let ids = offsets.filter { contacts.indices.contains($0) }.map { contacts[$0].id }
        try await change {
            for id in ids { _ = try await store.delete(id: id) }
        }
    }

    func refresh(keepingError: Bool = false) async {
        do {
            let listed = try await store.list(sortedBy: sort)
            contacts = listed.records
            unreadableRows = listed.unreadable
            if !keepingError { errorMessage = nil }
        } catch {
            errorMessage = String(describing: error)
        }
    }
}
