import Foundation
import Observation

/// The coffee list screen's state (the original tutorial's root view): names only, as
/// the original tutorial's "fetch only the data required to show on the screen".
///
/// ```swift
/// let list = CoffeeListViewModel(store: CoffeeStore(database: database))
/// let listScreen = Task { await list.start() } // id and name of every coffee, kept current
/// let detail = list.detail(for: list.coffees[0])
/// let detailScreen = Task { await detail.start() }  // hydrates: price, picture size and format
/// detail.coffee.name = "Doppio"
/// try await detail.save()                      // writes the name; both screens refresh
/// ```
///
/// While ``start()`` runs, the list follows every committed change of the
/// coffees, by anyone; without it, it reloads after changes made through
/// it or its details.
@MainActor
@Observable
public final class CoffeeListViewModel: ListViewModel {
    /// The coffees shown, not hydrated: in ``sort`` order, or the matches
    /// for ``searchText`` best first.
    public private(set) var coffees: [Coffee] = []

    /// The order of ``coffees``; changing it refreshes the list.
    public var sort: CoffeeSort = .name {
        didSet { if sort != oldValue { scheduleRefresh() } }
    }

    /// Filters ``coffees`` through the names' full-text index (see
    /// ``CoffeeStore/fullTextSearch(_:limit:offset:)``): every word typed
    /// must start a word of the name, ignoring case and accents ("caffe"
    /// finds Caffè Latte); the matches come best first rather than in
    /// ``sort`` order. Blank shows every coffee. Changing it refreshes the
    /// list.
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

    private let store: CoffeeStore

    /// Creates a view model; call ``start()`` (or ``load()``) to fill the
    /// list.
    public init(store: CoffeeStore) {
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

    /// The detail screen of a coffee of the list. Saving or deleting there
    /// refreshes this list, as the original tutorial's detail view did (by
    /// the list's observation while ``start()`` runs, else at once).
    public func detail(for coffee: Coffee) -> CoffeeDetailViewModel {
        CoffeeDetailViewModel(coffee: coffee, store: store) { [weak self] in
            guard let self, !self.observations.isObserving else { return }
            await self.refresh()
        }
    }

    /// Saves a new coffee; the list refreshes (see ``start()``).
    @discardableResult
    public func add(_ draft: CoffeeDraft) async throws -> Coffee {
        try await change { try await store.add(draft) }
    }

    /// Deletes a coffee; the list refreshes.
    public func delete(id: Int64) async throws {
        try await change { _ = try await store.delete(id: id) }
    }

    /// Deletes the coffees at positions of ``coffees`` (a list's swipe to
    /// delete); the list refreshes.
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
                : try await store.fullTextSearch(text).list
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
/// await detail.load()                 // price, picture size and format (or `start()`, kept current)
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

    /// The coffee, or that it was deleted (through ``delete()``, or by
    /// anyone while ``start()`` runs, or found gone by ``load()``).
    public private(set) var state: DetailState = .shown

    /// Whether the coffee was deleted (see ``state``).
    public var isDeleted: Bool { state.isDeleted }

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
    /// in ``errorMessage``; a coffee no longer stored makes ``state``
    /// ``DetailState/deleted(message:)``.
    public func load() async {
        await hydrate(reload: false)
    }

    /// Reads the stored details again, keeping unsaved edits.
    public func reload() async {
        await hydrate(reload: true)
    }

    /// Hydrates the coffee, then reads it again after every committed
    /// change of the coffees, by anyone (this screen, the list, another
    /// connection or process), until the calling task is cancelled
    /// (SwiftUI's `.task { await detail.start() }`). Unsaved edits are
    /// kept. When the coffee is deleted, ``state`` says so and the
    /// observation ends; an error that ends it (the database closed) is
    /// left in ``errorMessage``.
    public func start() async {
        guard !isDeleted else { return }
        do {
            for try await _ in store.changes {
                await hydrate(reload: true, asked: false)
                if isDeleted { return }
            }
        } catch {
            errorMessage = String(describing: error)
        }
    }

    /// Reads the coffee. Asked for (``load()``, ``reload()``), a success
    /// clears ``errorMessage`` and a coffee gone is also its error, as
    /// before; for the observation (`asked` false), the error of an action
    /// (a refused price) is kept when someone else's commit is read, and a
    /// coffee gone is only ``state``.
    private func hydrate(reload: Bool, asked: Bool = true) async {
        do {
            // An edit made while the coffee was read is kept: read again
            // onto it.
            var (before, read) = (coffee, coffee)
            repeat {
                (before, read) = (coffee, coffee)
                try await store.hydrate(&read, reload: reload)
            } while coffee != before
            coffee = read
            if asked { errorMessage = nil }
        } catch let error as RecordNotFoundError where error.id == coffee.id {
            state = .deleted(kind: "coffee", id: coffee.id)
            if asked { errorMessage = String(describing: error) }
        } catch {
            errorMessage = String(describing: error)
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
        state = .deleted(kind: "coffee", id: coffee.id)
        await onChange()
    }
}
