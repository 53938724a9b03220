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
/// (``Route/startsOnEventLoop``): its jobs run on the event loop's thread
/// of the request's connection whenever that thread can take them, and on
/// the request threads (``RequestExecutor``) otherwise.
///
/// - Jobs enqueued while a libmicrohttpd callback of the request drains
///   the executor (its start, the delivery of its body) run at once on
///   that callback's thread.
/// - Jobs enqueued while the request's parked connection waits for the
///   task's answer (``deferJobs(wake:)``) are kept, and the connection is
///   woken: libmicrohttpd calls back on its thread, which runs them
///   (``runDeferred()``). A request that waited for a write thus goes on
///   where its answer is sent, without a request thread in between.
/// - Jobs enqueued at any other time (the answer is taken, the request is
///   over) go to the request threads, as do jobs kept when the waiting
///   ends without running them (``stopDeferring()``).
///
/// So a request answered without waiting for anything (a read of a few
/// rows, which may run on the calling thread: see SQLiteStore's
/// `CallingThreadReads`) switches no thread at all, and one that waits
/// switches only to what it waits for and back.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class EventLoopStartExecutor: TaskExecutor, @unchecked Sendable {
    private struct State {
        /// A callback is draining: jobs wait in ``jobs`` for it.
        var draining = false
        /// The connection waits for the task's answer: jobs wait in
        /// ``jobs`` and `wake` brings the callback back to run them.
        var wake: (@Sendable () -> Void)?
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
        let kept = state.draining || state.wake != nil
        if kept { state.jobs.append(job) }
        let wake = state.draining ? nil : state.wake
        lock.unlock()
        if !kept {
            let executor = asUnownedTaskExecutor()
            requests.run { job.runSynchronously(on: executor) }
        }
        wake?()
    }

    /// Runs `start` (which enqueues jobs: a task's creation, a
    /// continuation's resumption), then every job enqueued until there is
    /// none left, on this thread.
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

    /// From the event loop, as the request's connection is about to wait
    /// for the task's answer: jobs from now on are kept for this thread,
    /// and each calls `wake` (which resumes the parked connection, or
    /// makes its next park decline).
    func deferJobs(wake: @escaping @Sendable () -> Void) {
        lock.lock()
        state.wake = wake
        lock.unlock()
    }

    /// Runs the jobs kept so far, and any they enqueue, on this thread.
    func runDeferred() {
        drain(after: {})
    }

    /// The wait for the answer is over (it came, or the request ends):
    /// jobs go to the request threads again, the kept ones first.
    func stopDeferring() {
        lock.lock()
        state.wake = nil
        let kept = state.draining ? [] : state.jobs
        if !state.draining { state.jobs = [] }
        lock.unlock()
        let executor = asUnownedTaskExecutor()
        for job in kept { requests.run { job.runSynchronously(on: executor) } }
    }
}
