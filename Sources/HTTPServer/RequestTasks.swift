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

    /// Starts `work` on the server's request threads, or, when `executor`
    /// is given, on this thread until it first waits (see
    /// ``EventLoopStartExecutor``).
    static func start(on executor: AnyObject?, _ work: @escaping @Sendable () async -> Void) {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *),
            let executor = executor as? EventLoopStartExecutor
        {
            executor.drain { _ = Task(executorPreference: executor) { await work() } }
        } else {
            start(work)
        }
    }

    /// An ``EventLoopStartExecutor`` for a request on the event loop whose
    /// route starts there; nil for any other.
    static func startExecutor(for match: Router.Match, core: ServerCore) -> AnyObject? {
        guard core.parking != nil, case .route(let route, _) = match, route.startsOnEventLoop else { return nil }
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) { return EventLoopStartExecutor() }
        return nil
    }

    /// Runs `resume` (which resumes the request's task: its body is in),
    /// then the task on this thread until it waits again, when the request
    /// started on the event loop; else just `resume`.
    static func resumingHere(_ exchange: Exchange, _ resume: () -> Void) {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *),
            let executor = exchange.startExecutor as? EventLoopStartExecutor
        {
            executor.drain(after: resume)
        } else {
            resume()
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

    /// Runs `work` on the request threads (for another executor's jobs).
    func run(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }
}

private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}

/// The executor of a request whose route starts on the event loop
/// (``Route/startsOnEventLoop``): jobs enqueued while a libmicrohttpd
/// callback of the request drains it run at once on that callback's
/// thread; jobs enqueued at any other time go to the request threads
/// (``RequestExecutor``). So a request answered without waiting for
/// anything (a read of a few rows, which may run on the calling thread: see
/// SQLiteStore's `CallingThreadReads`) switches no thread at all, and one
/// that waits goes on where it would have anyway.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class EventLoopStartExecutor: TaskExecutor, @unchecked Sendable {
    private struct State {
        /// A callback is draining: jobs wait in ``jobs`` for it.
        var draining = false
        var jobs: [UnownedJob] = []
    }

    // `@unchecked Sendable`: the state is only touched under `lock`, and
    // `UnownedJob` is handed from thread to thread as executors do.
    private let lock = NSLock()
    private var state = State()
    private let requests = RequestExecutor.shared

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.lock()
        let kept = state.draining
        if kept { state.jobs.append(job) }
        lock.unlock()
        if !kept {
            let executor = asUnownedTaskExecutor()
            requests.run { job.runSynchronously(on: executor) }
        }
    }

    /// Runs `start` (which enqueues jobs: a task's creation, a
    /// continuation's resumption), then every job enqueued until there is
    /// none left, on this thread. Jobs enqueued after it returns go to the
    /// request threads.
    func drain(after start: () -> Void) {
        lock.lock()
        state.draining = true
        lock.unlock()
        start()
        let executor = asUnownedTaskExecutor()
        while true {
            lock.lock()
            let next: UnownedJob? = state.jobs.isEmpty ? nil : state.jobs.removeFirst()
            if next == nil { state.draining = false }
            lock.unlock()
            guard let next else { return }
            next.runSynchronously(on: executor)
        }
    }
}
