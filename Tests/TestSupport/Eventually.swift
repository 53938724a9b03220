/// Polls `condition` until it holds, for state that has no signal to
/// await (a count of open connections, of accesses waiting in line);
/// returns whether it held before `timeout` passed.
///
/// The timeout guards against a hang; it is not a measurement, so it is
/// generous. The condition runs in the caller's isolation (a main-actor
/// test may read main-actor state), between short sleeps.
public func eventually(
    timeout: Duration = .seconds(180), isolation: isolated (any Actor)? = #isolation, _ condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
