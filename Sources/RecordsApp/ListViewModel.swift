import SQLiteStore

/// A view model that shows the error of its last action: a change made
/// through it records its error for display, or clears it.
@MainActor
protocol ErrorReporting: AnyObject {
    /// The last error, for display; nil after a success.
    var errorMessage: String? { get set }
}

/// What the apps' list view models share: the list follows the database
/// while ``observe(_:)`` runs (the view model's `start()`), reloading after
/// every committed change of its table, by anyone; a change made through
/// the view model records its error, and reloads the list itself only
/// when nothing observes it (as the original tutorials' delegate callbacks
/// reloaded their tables). Reloads run one after the other, in the order
/// they were asked for, so the list ends as the last one read it.
@MainActor
protocol ListViewModel: ErrorReporting {
    /// Reloads the list; keeps ``errorMessage`` when asked, else clears it
    /// on success.
    func refresh(keepingError: Bool) async

    /// The reload started by the last change of a setting (sort, search
    /// text), if any.
    var pendingRefresh: Task<Void, Never>? { get set }

    /// The observations running, which make reloads after the view
    /// model's own changes needless.
    var observations: ObservationCount { get }
}

extension ErrorReporting {
    /// Runs `body`, records its outcome in ``errorMessage``, rethrows.
    func reportingErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            let result = try body()
            errorMessage = nil
            return result
        } catch {
            errorMessage = String(describing: error)
            throw error
        }
    }

    /// Awaits `body`, records its outcome in ``errorMessage``, rethrows.
    func reportingErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            let result = try await body()
            errorMessage = nil
            return result
        } catch {
            errorMessage = String(describing: error)
            throw error
        }
    }
}

extension ListViewModel {
    /// Runs a change, then, unless an observation will, reloads the list
    /// whether the change worked or not (a failed change may have done
    /// part of its work).
    func change<T>(_ body: () async throws -> T) async throws -> T {
        let result: T
        do {
            result = try await reportingErrors(body)
        } catch {
            if !observations.isObserving { await refresh(keepingError: true) }
            throw error
        }
        if !observations.isObserving { await refresh(keepingError: true) }
        return result
    }

    /// Starts a reload after the ones already started (a setting changed,
    /// or the database did).
    func scheduleRefresh(keepingError: Bool = false) {
        let previous = pendingRefresh
        pendingRefresh = Task { [weak self] in
            await previous?.value
            await self?.refresh(keepingError: keepingError)
        }
    }

    /// Reloads the list now and after every committed change that
    /// `changes` signals, until the calling task is cancelled; the error
    /// that ends the observation (the database closed) is left in
    /// ``errorMessage``. Reloads keep the error of a change made through
    /// the view model, so that a commit by someone else does not hide it.
    func observe(_ changes: ObservedValues<Bool>) async {
        await observations.counting {
            do {
                for try await _ in changes {
                    scheduleRefresh(keepingError: true)
                    await waitForPendingRefresh()
                }
            } catch {
                errorMessage = String(describing: error)
            }
        }
    }

    /// Waits for the reloads that changing a setting started.
    func waitForPendingRefresh() async {
        while let task = pendingRefresh {
            await task.value
            if pendingRefresh == task { pendingRefresh = nil }
        }
    }
}
