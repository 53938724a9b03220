import Foundation

/// Lets only a few password hashes or checks run at once; the others wait
/// their turn, first come first served.
///
/// Each scrypt run takes 128 MiB for about 0.4 s at the default cost. The
/// server gives each connection a thread, so without a limit a burst of
/// log-in or registration requests would run that many hashes side by
/// side and could exhaust memory. With it, at most ``limit`` run, whatever
/// arrives: about as many as the machine has cores, since more would not
/// finish sooner.
actor PasswordGate {
    /// How many may run at once.
    let limit: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// A gate for `limit` at once (at least 1).
    init(limit: Int = max(2, ProcessInfo.processInfo.activeProcessorCount)) {
        self.limit = max(1, limit)
    }

    /// Runs `body` once a place is free.
    nonisolated func run<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await enter()
        do {
            let result = try await body()
            await leave()
            return result
        } catch {
            await leave()
            throw error
        }
    }

    private func enter() async {
        if running < limit {
            running += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func leave() {
        // The place passes straight to the next in line, if any.
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }

    /// How many run now and how many wait (for tests).
    var load: (running: Int, waiting: Int) { (running, waiting.count) }
}
