import Foundation

/// A flag set from any thread or task (an observation callback, a
/// transaction hook) and read by the test.
public final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    public init() {}

    /// Sets the flag.
    public func set() { lock.withLock { value = true } }

    /// Clears the flag.
    public func reset() { lock.withLock { value = false } }

    /// Whether the flag is set.
    public var isSet: Bool { lock.withLock { value } }
}
