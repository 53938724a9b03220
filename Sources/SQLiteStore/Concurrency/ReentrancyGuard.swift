#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Knows which queues and pools the current thread is inside an access of,
/// so that a nested access is refused instead of deadlocking.
///
/// Each access pushes a frame that lives on the stack of the thread running
/// it; thread-specific storage points at the innermost frame and each frame
/// at the one it hides. Frames are pushed and popped by the same thread,
/// strictly nested, so the list never holds a dangling pointer, and no other
/// thread ever reads it: no lock is needed.
///
/// `package`: the app-support module's `DBManager` marks its own accesses
/// with it, to refuse a nested call with an error that names the manager.
package enum ReentrancyGuard {
    private struct Frame {
        let owner: ObjectIdentifier
        let previous: UnsafeMutableRawPointer?
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let code = pthread_key_create(&key, nil)
        precondition(code == 0, "pthread_key_create failed (\(code)): out of thread-specific keys")
        return key
    }()

    /// Whether the current thread is running an access closure of `owner`.
    package static func isInsideAccess(of owner: ObjectIdentifier) -> Bool {
        var pointer = pthread_getspecific(key)
        while let current = pointer {
            let frame = current.assumingMemoryBound(to: Frame.self).pointee
            if frame.owner == owner { return true }
            pointer = frame.previous
        }
        return false
    }

    /// Runs `body` marked as inside an access of `owner` on this thread.
    package static func withAccess<T>(of owner: ObjectIdentifier, _ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(key)
        var frame = Frame(owner: owner, previous: previous)
        return try withUnsafeMutablePointer(to: &frame) { pointer in
            pthread_setspecific(key, pointer)
            defer { pthread_setspecific(key, previous) }
            return try body()
        }
    }
}
