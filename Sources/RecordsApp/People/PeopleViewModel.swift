import Foundation
import Observation

/// The People screen's state (the original tutorial's list and edit screens), for
/// SwiftUI on Apple platforms or any other front-end.
///
/// The list refreshes itself after every change made through the view
/// model, as the original tutorial's delegate callback reloaded the table:
///
/// ```swift
/// let model = PeopleViewModel(store: PeopleStore(database: database))
/// model.load()
/// try model.add(PersonDraft(firstName: "Ada", lastName: "Lovelace", age: 36))
/// model.people      // includes Ada, in the current sort order
/// model.sort = .newest
/// model.searchText = "love"   // the list is filtered at once
/// ```
///
/// Changes throw their error and also leave its message in
/// ``errorMessage`` for display; a successful change clears it.
@MainActor
@Observable
public final class PeopleViewModel: ListViewModel {
    /// The people shown, in ``sort`` order, filtered by ``searchText``.
    public private(set) var people: [Person] = []

    /// The order of ``people``; changing it refreshes the list.
    public var sort: PersonSort = .name {
        didSet { if sort != oldValue { refresh() } }
    }

    /// Filters ``people`` (see ``PeopleStore/search(_:mode:sortedBy:)``);
    /// blank shows everyone. Changing it refreshes the list.
    public var searchText: String = "" {
        didSet { if searchText != oldValue { refresh() } }
    }

    /// How ``searchText`` matches; changing it refreshes the list.
    public var searchMode: SearchMode = .substring {
        didSet { if searchMode != oldValue { refresh() } }
    }

    /// The rows of the list that could not be read (a stored value that is
    /// not what its field holds), each naming the row and its columns; the
    /// list shows every other row.
    public private(set) var unreadableRows: [UnreadableRowError] = []

    /// The last error, for display; nil after a success.
    public internal(set) var errorMessage: String?

    private let store: PeopleStore

    /// Creates a view model; call ``load()`` to fill the list.
    public init(store: PeopleStore) {
        self.store = store
    }

    /// Loads the list again from the database.
    public func load() {
        refresh()
    }

    /// The person with that ID, to fill an edit form (the original tutorial's
    /// `recordIDToEdit`).
    public func person(id: Int64) throws -> Person? {
        try reportingErrors { try store.person(id: id) }
    }

    /// Saves a new person, then refreshes the list.
    @discardableResult
    public func add(_ draft: PersonDraft) throws -> Person {
        try change { try store.add(draft) }
    }

    /// Saves changes to a person, then refreshes the list.
    @discardableResult
    public func update(id: Int64, with changes: PersonChanges) throws -> Person {
        try change { try store.update(id: id, with: changes) }
    }

    /// Deletes a person, then refreshes the list.
    public func delete(id: Int64) throws {
        try change { _ = try store.delete(id: id) }
    }

    /// Deletes the people at positions of ``people`` (a list's swipe to
    /// delete), then refreshes the list.
    public func delete(atOffsets offsets: IndexSet) throws {
        let ids = offsets.filter { people.indices.contains($0) }.map { people[$0].id }
        try change {
            for id in ids { _ = try store.delete(id: id) }
        }
    }

    func refresh(keepingError: Bool = false) {
        do {
            let text = searchText.trimmingCharacters(in: .whitespacesAndNewlines)
            let listed =
                text.isEmpty
                ? try store.list(sortedBy: sort) : try store.list(matching: text, mode: searchMode, sortedBy: sort)
            people = listed.records
            unreadableRows = listed.unreadable
            if !keepingError { errorMessage = nil }
        } catch {
            errorMessage = String(describing: error)
        }
    }
}
