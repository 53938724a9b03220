import Foundation
import Observation

/// The Contacts screens' state: the list, the add form's status
/// line, and "Find Contact".
///
/// The list refreshes itself after every committed change of the
/// contacts, by anyone, while ``start()`` runs (the original tutorial's
/// `record_saved:` delegate call reloaded it after its own saves only);
/// without it, after every change made through the view model:
///
/// ```swift
/// let model = ContactsViewModel(store: ContactsStore(database: database))
/// let screen = Task { await model.start() }   // stops when cancelled
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
    @ObservationIgnored let observations = ObservationCount()

    private let store: ContactsStore

    /// Creates a view model; call ``start()`` (or ``load()``) to fill the
    /// list.
    public init(store: ContactsStore) {
        self.store = store
    }

    /// Loads the list again from the database, once.
    public func load() async {
        await refresh()
    }

    /// Fills the list, then keeps it current until the calling task is
    /// cancelled (SwiftUI's `.task { await model.start() }`, or a server's
    /// task for the screen): after every committed change of the table,
    /// made through this view model, another one, another connection or
    /// another process (the `records` command), the list is read again.
    /// Changes by this app's database show at once; others within the
    /// library's `observationPollingInterval` (250 ms by default). The list
    /// is read off the main actor and set on it. An error that ends the
    /// observation (the database closed) is left in ``errorMessage``.
    ///
    /// While it runs, changes made through the view model leave the
    /// reload to it rather than reloading the list themselves.
    public func start() async {
        await observe(store.changes)
    }

    /// Returns once the reloads that changing ``sort`` started are done.
    public func refreshed() async {
        await waitForPendingRefresh()
    }

    /// Saves a new contact; the list refreshes (see ``start()``). The status says
    /// "Contact added" or "Failed to add contact" with the reason: a name
    /// another contact has is refused (``DuplicateContactError``) unless
    /// `allowingDuplicate`, after the person confirmed it.
    ///
    /// - Returns: The saved contact, or nil when it was not saved.
    @discardableResult
    public func add(_ draft: ContactDraft, allowingDuplicate: Bool = false) async -> Contact? {
        var contact: Contact?
        do {
            contact = try await store.add(draft, allowingDuplicate: allowingDuplicate)
            status = .added
            errorMessage = nil
        } catch {
            status = .failedToAdd(String(describing: error))
            errorMessage = String(describing: error)
        }
        if !observations.isObserving { await refresh(keepingError: true) }
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

    /// Saves changes to a contact; the list refreshes.
    @discardableResult
    public func update(id: Int64, with changes: ContactChanges) async throws -> Contact {
        try await change { try await store.update(id: id, with: changes) }
    }

    /// Deletes a contact; the list refreshes.
    public func delete(id: Int64) async throws {
        try await change { _ = try await store.delete(id: id) }
    }

    /// Deletes the contacts at positions of ``contacts`` (a list's swipe
    /// to delete); the list refreshes.
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
