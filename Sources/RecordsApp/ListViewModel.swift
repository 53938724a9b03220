/// A view model that shows the error of its last action: a change made
/// through it records its error for display, or clears it.
@MainActor
protocol ErrorReporting: AnyObject {
    /// The last error, for display; nil after a success.
    var errorMessage: String? { get set }
}

/// What the apps' list view models share: a change made through them
/// records its error, then the list reloads, as the seeds' delegate
/// callbacks reloaded their tables.
@MainActor
protocol ListViewModel: ErrorReporting {
    /// Reloads the list; keeps ``errorMessage`` when asked, else clears it
    /// on success.
    func refresh(keepingError: Bool)
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
}

extension ListViewModel {
    /// Runs a change, then reloads the list whether it worked or not.
    func change<T>(_ body: () throws -> T) throws -> T {
        defer { refresh(keepingError: true) }
        return try reportingErrors(body)
    }
}
