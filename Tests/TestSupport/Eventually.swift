/// How long a test waits for something that must happen (an answer, an
/// event, a connection closing) before calling it a hang: three minutes.
///
/// Not a measurement: on two cores, with the whole suite running, the
/// cooperative pool's two threads can both be busy with other tests'
/// synchronous work (scrypt at its real cost, large pictures, hostile
/// search input) for a minute, and a server's answer waits for them. A
/// wait that ends early only ever reports a hang that is not there.
public let livenessTimeout: Duration = .seconds(180)

/// Polls `condition` until it holds, for state that has no signal to
/// await (a count of open connections, of accesses waiting in line);
/// returns whether it held before `timeout` passed.
///
/// The timeout guards against a hang; it is not a measurement, so it is
/// generous. The condition runs in the caller's isolation (a main-actor
/// test may read main-actor state), between short sleeps.
public func eventually(
    timeout: Duration = livenessTimeout, isolation: isolated (any Actor)? = #isolation, _ condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
