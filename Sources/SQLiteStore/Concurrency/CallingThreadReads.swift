/// Lets the `async` reads of a task run on the task's own thread.
///
/// An `async` read of a ``DatabasePool`` or ``DatabaseQueue`` normally runs
/// its closure on the connection's dispatch queue, so that it never blocks
/// one of Swift's shared concurrency threads: the task hops to that queue
/// and back, two thread switches that can cost more than a read of a few
/// rows. Code whose threads may block for the length of a read (a server
/// whose requests run on threads of its own) can allow reads there:
///
/// ```swift
/// try await CallingThreadReads.$areAllowed.withValue(true) {
///     try await answer(request)  // its reads run on this thread
/// }
/// ```
///
/// Inside, an `async` read that finds a connection free runs its closure
/// at once on the calling thread, in the same transaction and with the
/// same cancellation as otherwise (cancelling the task interrupts it). When
/// every connection is busy, it waits in line without a thread, as always.
/// Writes are not affected: they run on the writer's queue.
///
/// The value is a task-local, so tasks created inside (`Task { }`, child
/// tasks) inherit it: allow it only around code whose tasks all run on
/// threads that may block, never on the main actor's thread.
public enum CallingThreadReads {
    /// Whether `async` reads may run on the calling thread (false unless
    /// set with `$areAllowed.withValue(true) { ... }`).
    @TaskLocal public static var areAllowed = false
}
