import Foundation
import RecordsApp

/// The live screens' server side: the `/events` streams and the one
/// observation per app table that feeds them.
///
/// A page that shows a live region (see ``Layout``) opens
/// `GET /events?topics=people,coffee`, a Server-Sent Events stream. After
/// each committed change of a topic's table, whoever made it (a page, the
/// `records` command, another program), the stream sends
///
/// ```text
/// event: change
/// data: people
/// ```
///
/// naming the topics that changed since the last event (changes that come
/// faster than the client reads are coalesced into one event). A comment
/// line every ``WebConfiguration/liveHeartbeat`` finds clients that went
/// away, and a `retry:` line tells the browser how soon to reconnect after
/// the server restarts. The topics are the apps' names (`people`,
/// `coffee`, ...), those the apps' pages follow (``AppPages/liveTopics``).
///
/// However many streams are open, each table has at most one observation,
/// started with the first stream that follows it and stopped with the
/// last. A stream holds its connection's thread but no database
/// connection while it waits.
///
/// A stream lasts as long as the session it was opened with. The sessions
/// of the open streams are checked after each change of the sessions
/// table (whoever made it), every `sessionCheck` in any case (for
/// expiry; one read for all of them), and before each change is
/// announced: a stream whose session ended (log-out, revocation, a
/// password change, expiry; by this server or another program) ends at
/// once, without the changes pending for it, and so announces no change
/// committed after its session ended.
public final class LiveUpdates: Sendable {
    private let database: AppDatabase
    private let heartbeat: Duration
    private let retry: Duration
    private let sessions: (any SessionAuthenticator)?
    private let sessionCheck: Duration
    private let state = Locked(State())

    private struct State {
        var streams: [ObjectIdentifier: EventStream] = [:]
        var observations: [AppDatabase.App: TopicObservation] = [:]
        var isStopped = false
        /// The topics that changed and are not announced yet.
        var changed: Set<AppDatabase.App> = []
        /// The checks of the streams' sessions, while streams are open.
        var watch: Watch?
    }

    /// Announces changes and checks sessions, one round at a time, on
    /// each wake-up: a change, or the next session check.
    private struct Watch {
        let wake: AsyncStream<Void>.Continuation
        let rounds: Task<Void, Never>
        let ticks: Task<Void, Never>

        func cancel() {
            wake.finish()
            rounds.cancel()
            ticks.cancel()
        }
    }

    /// The live updates over `database`.
    ///
    /// - Parameters:
    ///   - heartbeat: How long a stream stays silent before it sends a
    ///     comment line (which finds clients that went away).
    ///   - retry: How long the browser waits before reconnecting.
    ///   - sessions: Tells which sessions are still valid; nil keeps every
    ///     stream open as long as its client.
    ///   - sessionCheck: How often the streams' sessions are checked.
    public init(
        database: AppDatabase, heartbeat: Duration, retry: Duration, sessions: (any SessionAuthenticator)? = nil,
        sessionCheck: Duration = .seconds(1)
    ) {
        self.database = database
        self.heartbeat = heartbeat
        self.retry = retry
        self.sessions = sessions
        self.sessionCheck = max(sessionCheck, .milliseconds(10))
    }

    /// The streams open now.
    public var streamCount: Int { state.withLock { $0.streams.count } }

    /// The observations running now: at most one per app table, only
    /// while a stream follows it.
    public var observationCount: Int { state.withLock { $0.observations.count } }

    /// Ends every stream (their clients see the end and reconnect, to the
    /// next server) and stops the observations. Streams opened afterwards
    /// end at once. Called when the server stops.
    public func stop() {
        let (streams, observations, watch) = state.withLock { state in
            state.isStopped = true
            defer {
                state.streams = [:]
                state.observations = [:]
                state.watch = nil
            }
            return (Array(state.streams.values), Array(state.observations.values), state.watch)
        }
        watch?.cancel()
        for observation in observations { observation.cancel() }
        for stream in streams { stream.end() }
    }

    /// A new stream following `topics`, for as long as the session
    /// `sessionID` lasts (nil: as long as its client). It returns once
    /// the observations of its topics have read the state at the start, so
    /// that every change committed afterwards reaches the stream.
    func open(topics: Set<AppDatabase.App>, sessionID: Int64?) async -> EventStream {
        let stream = EventStream(
            topics: topics, sessionID: sessionID, heartbeat: heartbeat, retry: retry, hub: self)
        let observations = state.withLock {
            state -> (all: [TopicObservation], new: [(AppDatabase.App, TopicObservation)])? in
            guard !state.isStopped else { return nil }
            state.streams[ObjectIdentifier(stream)] = stream
            if state.watch == nil { state.watch = startWatch() }
            var new: [(AppDatabase.App, TopicObservation)] = []
            let all = topics.map { topic in
                if let running = state.observations[topic] { return running }
                let observation = TopicObservation()
                state.observations[topic] = observation
                new.append((topic, observation))
                return observation
            }
            return (all, new)
        }
        guard let observations else {
            stream.end()
            return stream
        }
        // Started outside the lock: starting reads the database.
        for (topic, observation) in observations.new { await startObserving(topic, observation) }
        for observation in observations.all { await observation.started() }
        return stream
    }

    /// Starts the rounds that announce changes and check sessions, and
    /// the ticks and the observation of the sessions that wake them for
    /// the session checks.
    private func startWatch() -> Watch {
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let rounds = Task { [weak self] in
            for await _ in wakes {
                guard let self else { return }
                await self.round()
            }
        }
        let (interval, sessions) = (sessionCheck, self.sessions)
        let ticks = Task {
            // Started here, not under the lock that starts the watch; it ends with the ticks.
            let stopObserving = sessions?.observeSessionChanges { wake.yield() }
            defer { stopObserving?() }
            // A session that ended before the observation began is found by a check now.
            wake.yield()
            while (try? await Task.sleep(for: interval)) != nil { wake.yield() }
        }
        return Watch(wake: wake, rounds: rounds, ticks: ticks)
    }

    /// Ends the streams whose session ended, then announces the pending
    /// changes to the others.
    private func round() async {
        // The changes are taken before the check: each was committed before
        // it, so none committed after a session ended reaches that
        // session's stream. Changes that come during the check wake the
        // next round.
        let (streams, changed) = state.withLock { state in
            defer { state.changed = [] }
            return (Array(state.streams.values), state.changed)
        }
        let ids = Set(streams.compactMap(\.sessionID))
        var open: Set<Int64>? = ids
        if let sessions, !ids.isEmpty {
            // A failed check ends the streams (their pages reconnect and are asked to log in again if need be).
            open = await sessions.openSessions(among: ids)
        }
        var ended: Set<ObjectIdentifier> = []
        for stream in streams {
            guard let id = stream.sessionID, open?.contains(id) != true else { continue }
            stream.sessionEnded()
            ended.insert(ObjectIdentifier(stream))
        }
        guard !changed.isEmpty else { return }
        for stream in streams where !ended.contains(ObjectIdentifier(stream)) {
            for topic in changed.intersection(stream.topics) { stream.signal(topic) }
        }
    }

    /// Starts the observation of `topic`'s table.
    private func startObserving(_ topic: AppDatabase.App, _ observation: TopicObservation) async {
        await observation.start(
            database.changes(of: topic), onChange: { [weak self] in self?.changed(topic) },
            onError: { [weak self, weak observation] error in
                guard let observation else { return }
                self?.observationFailed(topic, observation, error: error)
            })
    }

    /// A stream is over: the observations no stream follows any more stop.
    func closed(_ stream: EventStream) {
        let (unused, watch) = state.withLock { state -> ([TopicObservation], Watch?) in
            guard state.streams.removeValue(forKey: ObjectIdentifier(stream)) != nil else { return ([], nil) }
            var unused: [TopicObservation] = []
            for topic in stream.topics where !state.streams.values.contains(where: { $0.topics.contains(topic) }) {
                if let observation = state.observations.removeValue(forKey: topic) { unused.append(observation) }
            }
            guard state.streams.isEmpty else { return (unused, nil) }
            defer {
                state.watch = nil
                state.changed = []
            }
            return (unused, state.watch)
        }
        watch?.cancel()
        for observation in unused { observation.cancel() }
    }

    /// Whether the session checks run now (for tests): while streams are
    /// open.
    var isWatching: Bool { state.withLock { $0.watch != nil } }

    private func changed(_ topic: AppDatabase.App) {
        let wake = state.withLock { state -> AsyncStream<Void>.Continuation? in
            guard let watch = state.watch else { return nil }
            state.changed.insert(topic)
            return watch.wake
        }
        wake?.yield()
    }

    /// The table cannot be observed (the app is unavailable in this
    /// database, or the database closed): the streams stay open, with
    /// heartbeats only; the next stream that follows it tries again.
    private func observationFailed(_ topic: AppDatabase.App, _ failed: TopicObservation, error: any Error) {
        state.withLock { state in
            if state.observations[topic] === failed { state.observations[topic] = nil }
        }
        failed.cancel()
    }

    /// The topics a `topics` query value names.
    ///
    /// - Throws: ``HTTPError`` 400 when it is empty or names something
    ///   that is not an app.
    static func topics(from text: String?) throws -> Set<AppDatabase.App> {
        let names = (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let known = SiteApps.liveTopics
        guard !names.isEmpty else {
            let example = known.map(\.rawValue).joined(separator: ",")
            throw HTTPError.badRequest("Name what to follow: /events?topics=\(example).")
        }
        var topics: Set<AppDatabase.App> = []
        for name in names {
            guard let topic = known.first(where: { $0.rawValue == name }) else {
                let choices = known.map(\.rawValue)
                let list = choices.dropLast().joined(separator: ", ") + " or " + (choices.last ?? "")
                throw HTTPError.badRequest("There is no topic with that name: use \(list).")
            }
            topics.insert(topic)
        }
        return topics
    }

    /// The `/events` route.
    func routes() -> [Route] {
        [
            // Open to anyone at the router, so that a visitor not signed in
            // gets a 401 rather than a redirect to the log-in page (an
            // EventSource would take that page for a broken stream).
            Route.get("/events", access: .anyone) { [self] request in
                guard request.session != nil else {
                    return Response(
                        status: 401, headers: [("Content-Type", "text/plain; charset=utf-8")],
                        body: .bytes(Array("Log in to follow changes.\n".utf8)))
                }
                let topics = try Self.topics(from: request.query["topics"])
                let headers: [(name: String, value: String)] = [
                    ("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"),
                    ("X-Accel-Buffering", "no"),
                ]
                if request.isHead { return Response(status: 200, headers: headers) }
                let stream = await open(topics: topics, sessionID: request.session?.sessionID)
                return Response(status: 200, headers: headers, body: .stream(length: nil, stream))
            }
        ]
    }
}

/// The observation of one app's table, shared by the streams that follow
/// it: it reads the state at the start, then calls `onChange` after each
/// committed change, until it is cancelled or fails.
final class TopicObservation: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var task: Task<Void, Never>?
    private var isCancelled = false
    private var isStarted = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Observes `changes` from now on: reads the state at the start (the
    /// caller waits for that, on its own executor, so that opening a stream
    /// needs no thread of Swift's shared pool), then calls `onChange` after
    /// each change, from a task of its own. `onError` is called once if the
    /// observation fails.
    func start(
        _ changes: AppChanges, onChange: @escaping @Sendable () -> Void,
        onError: @escaping @Sendable (any Error) -> Void
    ) async {
        var signals = changes.makeAsyncIterator()
        defer { markStarted() }
        do {
            // The first signal is the state at the start, not a change.
            guard try await signals.next() != nil else { return }
        } catch {
            onError(error)
            return
        }
        // Cancelled meanwhile: dropping the signals ends the observation.
        guard !lock.withLock({ isCancelled }) else { return }
        let task = Task {
            do {
                while try await signals.next() != nil { onChange() }
            } catch {
                onError(error)
            }
        }
        let cancelled = lock.withLock {
            self.task = task
            return isCancelled
        }
        if cancelled { task.cancel() }
    }

    /// Returns once the state at the start is read, or the observation
    /// ended.
    func started() async {
        await withCheckedContinuation { continuation in
            let now = lock.withLock {
                if !isStarted { waiters.append(continuation) }
                return isStarted
            }
            if now { continuation.resume() }
        }
    }

    /// Stops the observation.
    func cancel() {
        let task = lock.withLock {
            isCancelled = true
            return self.task
        }
        task?.cancel()
    }

    private func markStarted() {
        let waiting = lock.withLock {
            defer {
                isStarted = true
                waiters = []
            }
            return waiters
        }
        for waiter in waiting { waiter.resume() }
    }
}

/// One `/events` response: has the next change of its topics, the
/// heartbeat, or the end, and otherwise waits (on the server's event loop,
/// holding no thread; or on its connection's thread when it has one).
final class EventStream: WaitingResponseStream, @unchecked Sendable {
    let topics: Set<AppDatabase.App>
    /// The session it was opened with; it ends with it.
    let sessionID: Int64?
    private let heartbeat: Duration
    private let retry: Duration
    private weak var hub: LiveUpdates?
    // Guarded by `lock`.
    private let lock = NSLock()
    private var changed: Set<AppDatabase.App> = []
    private var ended = false
    private var sessionIsOver = false
    private var started = false
    private var isClosed = false
    /// When the next keep-alive is due, unless something is sent first.
    private var nextBeat = ContinuousClock.now
    /// Wakes the connection waiting for the next bytes.
    private var wake: (@Sendable () -> Void)?

    init(topics: Set<AppDatabase.App>, sessionID: Int64?, heartbeat: Duration, retry: Duration, hub: LiveUpdates) {
        self.topics = topics
        self.sessionID = sessionID
        self.heartbeat = heartbeat
        self.retry = retry
        self.hub = hub
    }

    /// A topic's table changed.
    func signal(_ topic: AppDatabase.App) {
        change { _ = $0.changed.insert(topic) }
    }

    /// Ends the stream once what is pending is sent.
    func end() {
        change { $0.ended = true }
    }

    /// Its session ended: the stream ends now, and what is pending is
    /// not sent.
    func sessionEnded() {
        change { $0.sessionIsOver = true }
    }

    /// Changes the state under the lock, then wakes the waiting connection.
    private func change(_ body: (EventStream) -> Void) {
        let waiting = lock.withLock {
            body(self)
            defer { wake = nil }
            return wake
        }
        waiting?()
    }

    func readReady(into buffer: UnsafeMutableRawBufferPointer, wake: @escaping @Sendable () -> Void) throws
        -> StreamReadiness
    {
        let now = ContinuousClock.now
        let next: SSENext = lock.withLock {
            if sessionIsOver { return .end }
            if !started {
                started = true
                nextBeat = now + heartbeat
                // The browser reconnects this soon after losing the stream;
                // the comment makes the response start at once.
                return .text("retry: \(Self.milliseconds(retry))\n: open\n\n")
            }
            if !changed.isEmpty {
                let names = changed.map(\.rawValue).sorted().joined(separator: ",")
                changed = []
                nextBeat = now + heartbeat
                return .text("event: change\ndata: \(names)\n\n")
            }
            if ended { return .end }
            if now >= nextBeat {
                nextBeat = now + heartbeat
                return .text(": keep-alive\n\n")
            }
            self.wake = wake
            return .wait(until: nextBeat)
        }
        // Events are a few dozen bytes; libmicrohttpd offers kilobytes.
        return try next.write(into: buffer)
    }

    func close() {
        let first = lock.withLock {
            defer { isClosed = true }
            return !isClosed
        }
        if first { hub?.closed(self) }
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    private static func milliseconds(_ duration: Duration) -> Int { Int((seconds(duration) * 1000).rounded()) }
}

/// What an event stream has next: text to send, its end, or nothing until
/// a time (its heartbeat) unless woken first.
enum SSENext {
    case text(String)
    case end
    case wait(until: ContinuousClock.Instant)

    /// As the server takes it: the text written to `buffer`.
    ///
    /// - Throws: ``HTTPError`` (500) when the text does not fit.
    func write(into buffer: UnsafeMutableRawBufferPointer) throws -> StreamReadiness {
        switch self {
        case .end: return .end
        case .wait(let deadline): return .wait(until: deadline)
        case .text(let text):
            let bytes = Array(text.utf8)
            guard bytes.count <= buffer.count else { throw HTTPError(status: 500, message: "event too large") }
            buffer.copyBytes(from: bytes)
            return .bytes(bytes.count)
        }
    }
}
