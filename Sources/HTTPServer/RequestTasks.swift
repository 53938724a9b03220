import Foundation

/// Running a request's async work from libmicrohttpd's threads.
extension Callbacks {

    /// Starts `work` on the server's request threads.
    static func start(_ work: @escaping @Sendable () async -> Void) {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            // The request's async work runs on the server's own executor,
            // not on Swift's shared concurrency threads: code elsewhere in
            // the process that blocks those threads (a synchronous wait)
            // must not starve the server.
            Task(executorPreference: RequestExecutor.shared) { await work() }
        } else {
            Task { await work() }
        }
    }

    /// Runs `work` and waits for it on this (libmicrohttpd's) thread.
    static func wait<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
        let result = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        start {
            result.value = await work()
            done.signal()
        }
        done.wait()
        return result.value!
    }
}

/// Runs requests' async work on threads of its own (a concurrent dispatch
/// queue, which adds threads as work waits), so the server never depends on
/// Swift's fixed pool of concurrency threads being free.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class RequestExecutor: TaskExecutor {
    static let shared = RequestExecutor()
    private let queue = DispatchQueue(label: "http-server.requests", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
