import Foundation
import Observation

/// The coffee list screen's state (the original tutorial's root view): names only, as
/// the original tutorial's "fetch only the data required to show on the screen".
///
/// ```swift
/// let list = CoffeeListViewModel(store: CoffeeStore(database: database))
/// await list.load()                            // id and name of every coffee
/// let detail = list.detail(for: list.coffees[0])
/// await detail.load()                          // hydrates: price, picture size and format
/// detail.coffee.name = "Doppio"
/// try await detail.save()                      // writes the name; the list refreshes
/// ```
@MainActor
@Observable
public final class CoffeeListViewModel: ListViewModel {
    /// The coffees shown, not hydrated, in ``sort`` order, filtered by
    /// ``searchText``.
    public private(set) var coffees: [Coffee] = []

    /// The order of ``coffees``; changing it refreshes the list.
    public var sort: CoffeeSort = .name {
        didSet { if sort != oldValue { scheduleRefresh() } }
    }

    /// Filters ``coffees`` by name (see ``CoffeeStore/search(_:mode:sortedBy:)``);
    /// blank shows every coffee. Changing it refreshes the list.
    public var searchText: String = "" {
        didSet { if searchText != oldValue { scheduleRefresh() } }
    }

    /// How ``searchText`` matches; changing it refreshes the list.
    public var searchMode: SearchMode = .substring {
        didSet { if searchMode != oldValue { scheduleRefresh() } }
    }

    /// The rows of the list that could not be read (a stored value that is
    /// not what its field holds), each naming the row and its columns; the
    /// list shows every other row.
    public private(set) var unreadableRows: [UnreadableRowError] = []

    /// The last error, for display; nil after a success.
    public internal(set) var errorMessage: String?

    @ObservationIgnored var pendingRefresh: Task<Void, Never>?

    private let store: CoffeeStore

    /// Creates a view model; call ``load()`` to fill the list.
    public init(store: CoffeeStore) {
        self.store = store
    }

    /// Loads the list again from the database.
    public func load() async {
        await refresh()
    }

    /// Returns once the reloads that changing ``sort``, ``searchText`` or
    /// ``searchMode`` started are done.
    public func refreshed() async {
        await waitForPendingRefresh()
    }

    /// The detail screen of a coffee of the list. Saving or deleting there
    /// refreshes this list, as the original tutorial's detail view did.
    public func detail(for coffee: Coffee) -> CoffeeDetailViewModel {
        CoffeeDetailViewModel(coffee: coffee, store: store) { [weak self] in await self?.refresh() }
    }

    /// Saves a new coffee, then refreshes the list.
    @discardableResult
    public func add(_ draft: CoffeeDraft) async throws -> Coffee {
        try await change { try await store.add(draft) }
    }

    /// Deletes a coffee, then refreshes the list.
    public func delete(id: Int64) async throws {
        try await change { _ = try await store.delete(id: id) }
    }

    /// Deletes the coffees at positions of ``coffees`` (a list's swipe to
    /// delete), then refreshes the list.
    public func delete(atOffsets offsets: IndexSet) async throws {
        let ids = offsets.filter { coffees.indices.contains($0) }.map { coffees[$0].id }
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
                : try await store.list(matching: text, mode: searchMode, sortedBy: sort)
            coffees = listed.records
            unreadableRows = listed.unreadable
            if !keepingError { errorMessage = nil }
        } catch {
            errorMessage = String(describing: error)
        }
    }
}

/// One coffee's detail screen: the hydrated coffee, edited in place and
/// saved only when dirty, and its picture.
///
/// ```swift
/// let detail = CoffeeDetailViewModel(coffee: listed, store: store)
/// await detail.load()                 // price, picture size and format
/// try detail.setPrice(text: "2.70")
/// detail.isDirty                      // true
/// try await detail.save()             // true: the price was written
/// try await detail.save()             // false: nothing to write
/// try await detail.setPicture(from: .file(path: "espresso.png"))   // streamed off the main actor
/// ```
@MainActor
@Observable
public final class CoffeeDetailViewModel: ErrorReporting {
    /// The coffee; edit its ``Coffee/name`` and ``Coffee/price`` in place,
    /// then ``save()``.
    public var coffee: Coffee

    /// The last error, for display; nil after a success.
    public internal(set) var errorMessage: String?

    /// Whether the coffee was deleted through ``delete()``.
    public private(set) var isDeleted = false

    private let store: CoffeeStore
    private let onChange: @MainActor () async -> Void

    /// Creates a detail for a coffee, hydrated or not; call ``load()``.
    ///
    /// - Parameter onChange: Called after the coffee was saved or deleted,
    ///   to refresh a list.
    public init(coffee: Coffee, store: CoffeeStore, onChange: @escaping @MainActor () async -> Void = {}) {
        self.coffee = coffee
        self.store = store
        self.onChange = onChange
    }

    /// Whether there are edits not saved yet.
    public var isDirty: Bool { coffee.isDirty }

    /// Hydrates the coffee if it is not yet (the original tutorial's
    /// `hydrateDetailViewData`); unsaved edits are kept. A failure is left
    /// in ``errorMessage``.
    public func load() async {
        await hydrate(reload: false)
    }

    /// Reads the stored details again, keeping unsaved edits.
    public func reload() async {
        await hydrate(reload: true)
    }

    private func hydrate(reload: Bool) async {
        var hydrated = coffee
        if (try? await reportingErrors({ try await store.hydrate(&hydrated, reload: reload) })) != nil {
            coffee = hydrated
        }
    }

    /// Sets the price from a text field ("3.50").
    ///
    /// - Throws: ``ValidationError``; the price is left as it was.
    public func setPrice(text: String) throws {
        coffee.price = try reportingErrors { try CoffeeRules.price(fromText: text) }
    }

    /// Saves the edits, if any.
    ///
    /// - Returns: Whether anything was written: false, with no statement
    ///   run, when the coffee is not dirty.
    @discardableResult
    public func save() async throws -> Bool {
        var saved = coffee
        let wrote = try await reportingErrors { try await store.save(&saved) }
        coffee = saved
        if wrote { await onChange() }
        return wrote
    }

    /// Stores a picture (checked, then streamed, off the main actor) and
    /// shows its size and format.
    @discardableResult
    public func setPicture(from source: PictureSource) async throws -> CoffeePicture {
        let picture = try await reportingErrors { try await store.setPicture(id: coffee.id, from: source) }
        coffee.picture = picture
        return picture
    }

    /// Writes the picture to a file or stream, byte for byte, off the main
    /// actor.
    @discardableResult
    public func writePicture(to destination: PictureDestination) async throws -> CoffeePicture {
        try await reportingErrors { try await store.writePicture(id: coffee.id, to: destination) }
    }

    /// Removes the picture.
    public func removePicture() async throws {
        _ = try await reportingErrors { try await store.removePicture(id: coffee.id) }
        coffee.picture = nil
    }

    /// Deletes the coffee, then lets the list refresh.
    public func delete() async throws {
        _ = try await reportingErrors { try await store.delete(id: coffee.id) }
        isDeleted = true
        await onChange()
    }
}
