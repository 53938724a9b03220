/// A view model that shows the error of its last action: a change made
/// through it records its error for display, or clears it.
@MainActor
protocol ErrorReporting: AnyObject {
    /// The last error, for display; nil after a success.
    var errorMessage: String? { get set }
}

/// What the apps' list view models share: a change made through them
/// records its error, then the list reloads, as the seeds' delegate
/// callbacks reloaded their tables. Reloads run one after the other, in
/// the order they were asked for, so the list ends as the last one read it.
@MainActor
protocol ListViewModel: ErrorReporting {
    /// Reloads the list; keeps ``errorMessage`` when asked, else clears it
    /// on success.
    func refresh(keepingError: Bool) async

    /// The reload started by the last change of a setting (sort, search
    /// text), if any.
    var pendingRefresh: Task<Void, Never>? { get set }
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
    /// Runs a change, then reloads the list whether it worked or not.
    func change<T>(_ body: () async throws -> T) async throws -> T {
        let result: T
        do {
            result = try await reportingErrors(body)
        } catch {
            await refresh(keepingError: true)
            throw error
        }
        await refresh(keepingError: true)
        return result
    }

    /// Starts a reload after the ones already started (a setting changed).
    func scheduleRefresh() {
        let previous = pendingRefresh
        pendingRefresh = Task { [weak self] in
            await previous?.value
            await self?.refresh(keepingError: false)
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
