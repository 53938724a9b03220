/// What the apps' view models share: a change made through them records
/// its error for display (or clears it), then the list reloads, as the
/// seeds' delegate callbacks reloaded their tables.
@MainActor
protocol ListViewModel: AnyObject {
    /// The last error, for display; nil after a success.
    var errorMessage: String? { get set }
    /// Reloads the list; keeps ``errorMessage`` when asked, else clears it
    /// on success.
    func refresh(keepingError: Bool)
}

extension ListViewModel {
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

    /// Runs a change, then reloads the list whether it worked or not.
    func change<T>(_ body: () throws -> T) throws -> T {
        defer { refresh(keepingError: true) }
        return try reportingErrors(body)
    }
}
