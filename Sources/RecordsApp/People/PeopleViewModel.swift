import Foundation
import Observation

/// The People screen's state (the original tutorial's list and edit screens), for
/// SwiftUI on Apple platforms or any other front-end.
///
/// The list refreshes itself after every committed change of the people,
/// by anyone, while ``start()`` runs (the original tutorial's delegate
/// callback reloaded the table after its own edits only); without it,
/// after every change made through the view model:
///
/// ```swift
/// let model = PeopleViewModel(store: PeopleStore(database: database))
/// let screen = Task { await model.start() }   // or SwiftUI's .task { await model.start() }
/// try await model.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
/// model.people      // includes Ada once the observation read it
/// model.sort = .newest
/// model.searchText = "love"   // the list is reloaded: the matches, best first
/// await model.refreshed()     // (only to wait for it)
/// screen.cancel()             // the list stops following the database
/// ```
///
/// The store's work runs on the database's threads; the view model only
/// awaits it, so the main actor never waits for SQL.
///
/// Changes throw their error and also leave its message in
/// ``errorMessage`` for display; a successful change clears it.
@MainActor
@Observable
public final class PeopleViewModel: ListViewModel {
    /// The people shown: in ``sort`` order, or the matches for
    /// ``searchText`` best first.
    public private(set) var people: [Person] = []

    /// The order of ``people``; changing it reloads the list (see
    /// ``refreshed()``).
    public var sort: PersonSort = .name {
        didSet { if sort != oldValue { scheduleRefresh() } }
    }

    /// Filters ``people`` through the names' full-text index (see
    /// ``PeopleStore/fullTextSearch(_:limit:offset:)``): every word typed
    /// must start the first or last name, ignoring case and accents; the
    /// matches come best first rather than in ``sort`` order. Blank shows
    /// everyone. Changing it refreshes the list.
    public var searchText: String = "" {
        didSet { if searchText != oldValue { scheduleRefresh() } }
    }

    /// The rows of the list that could not be read (a stored value that is
    /// not what its field holds), each naming the row and its columns; the
    /// list shows every other row.
    public private(set) var unreadableRows: [UnreadableRowError] = []

    /// The last error, for display; nil after a success.
    public internal(set) var errorMessage: String?

    @ObservationIgnored var pendingRefresh: Task<Void, Never>?
    @ObservationIgnored let observations = ObservationCount()

    private let store: PeopleStore

    /// Creates a view model; call ``start()`` (or ``load()``) to fill the
    /// list.
    public init(store: PeopleStore) {
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

    /// Returns once the reloads that changing ``sort`` or ``searchText``
    /// started are done.
    public func refreshed() async {
        await waitForPendingRefresh()
    }

    /// The person with that ID, to fill an edit form (the original tutorial's
    /// `recordIDToEdit`).
    public func person(id: Int64) async throws -> Person? {
        try await reportingErrors { try await store.person(id: id) }
    }

    /// Saves a new person; the list refreshes (see ``start()``).
    @discardableResult
    public func add(_ draft: PersonDraft) async throws -> Person {
        try await change { try await store.add(draft) }
    }

    /// Saves changes to a person; the list refreshes.
    @discardableResult
    public func update(id: Int64, with changes: PersonChanges) async throws -> Person {
        try await change { try await store.update(id: id, with: changes) }
    }

    /// Deletes a person; the list refreshes.
    public func delete(id: Int64) async throws {
        try await change { _ = try await store.delete(id: id) }
    }

    /// Deletes the people at positions of ``people`` (a list's swipe to
    /// delete); the list refreshes.
    public func delete(atOffsets offsets: IndexSet) async throws {
        let ids = offsets.filter { people.indices.contains($0) }.map { people[$0].id }
        try await change {
            for id in ids { _ = try await store.delete(id: id) }
        }
    }

    func refresh(keepingError: Bool = false) async {
        do {
            let text = searchText.trimmingCharacters(in: .whitespacesAndNewlines)
            let listed =
                text.isEmpty
                ? try await store.list(sortedBy: sort)
                : try await store.fullTextSearch(text).list
            people = listed.records
            unreadableRows = listed.unreadable
            if !keepingError { errorMessage = nil }
        } catch {
            errorMessage = String(describing: error)
        }
    }
}
