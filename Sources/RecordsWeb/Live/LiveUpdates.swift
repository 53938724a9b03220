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
/// the server restarts. The topics are the apps: `people`, `contacts`,
/// `coffee`, `users`.
///
/// However many streams are open, each table has at most one observation,
/// started with the first stream that follows it and stopped with the
/// last. A stream holds its connection's thread but no database
/// connection while it waits.
public final class LiveUpdates: Sendable {
    private let database: AppDatabase
    private let heartbeat: Duration
    private let retry: Duration
    private let state = PThreadLocked(State())

    private struct State {
        var streams: [ObjectIdentifier: EventStream] = [:]
        var observations: [AppDatabase.App: AppChangesObservation] = [:]
        var isStopped = false
    }

    /// The live updates over `database`.
    ///
    /// - Parameters:
    ///   - heartbeat: How long a stream stays silent before it sends a
    ///     comment line (which finds clients that went away).
    ///   - retry: How long the browser waits before reconnecting.
    public init(database: AppDatabase, heartbeat: Duration, retry: Duration) {
        self.database = database
        self.heartbeat = heartbeat
        self.retry = retry
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
        let (streams, observations) = state.withLock { state in
            state.isStopped = true
            defer {
                state.streams = [:]
                state.observations = [:]
            }
            return (Array(state.streams.values), Array(state.observations.values))
        }
        for observation in observations { observation.cancel() }
        for stream in streams { stream.end() }
    }

    /// A new stream following `topics`.
    func open(topics: Set<AppDatabase.App>) -> EventStream {
        let stream = EventStream(topics: topics, heartbeat: heartbeat, retry: retry, hub: self)
        let (stopped, newTopics) = state.withLock { state -> (Bool, [AppDatabase.App]) in
            guard !state.isStopped else { return (true, []) }
            state.streams[ObjectIdentifier(stream)] = stream
            let missing = topics.filter { state.observations[$0] == nil }
            return (false, Array(missing))
        }
        if stopped {
            stream.end()
            return stream
        }
        for topic in newTopics { startObserving(topic) }
        return stream
    }

    /// Starts the observation of `topic`'s table unless one runs (another
    /// stream may have started it meanwhile).
    private func startObserving(_ topic: AppDatabase.App) {
        let observation = database.observeChanges(
            of: topic,
            onError: { [weak self] error in self?.observationFailed(topic, error: error) },
            onChange: { [weak self] in self?.changed(topic) })
        let keep = state.withLock { state -> Bool in
            guard !state.isStopped, state.observations[topic] == nil,
                state.streams.values.contains(where: { $0.topics.contains(topic) })
            else { return false }
            state.observations[topic] = observation
            return true
        }
        if !keep { observation.cancel() }
    }

    /// A stream is over: the observations no stream follows any more stop.
    func closed(_ stream: EventStream) {
        let unused = state.withLock { state -> [AppChangesObservation] in
            guard state.streams.removeValue(forKey: ObjectIdentifier(stream)) != nil else { return [] }
            var unused: [AppChangesObservation] = []
            for topic in stream.topics where !state.streams.values.contains(where: { $0.topics.contains(topic) }) {
                if let observation = state.observations.removeValue(forKey: topic) { unused.append(observation) }
            }
            return unused
        }
        for observation in unused { observation.cancel() }
    }

    private func changed(_ topic: AppDatabase.App) {
        let streams = state.withLock { state in state.streams.values.filter { $0.topics.contains(topic) } }
        for stream in streams { stream.signal(topic) }
    }

    /// The table cannot be observed (the app is unavailable in this
    /// database, or the database closed): the streams stay open, with
    /// heartbeats only; the next stream that follows it tries again.
    private func observationFailed(_ topic: AppDatabase.App, error: any Error) {
        let observation = state.withLock { $0.observations.removeValue(forKey: topic) }
        observation?.cancel()
    }

    /// The topics a `topics` query value names.
    ///
    /// - Throws: ``HTTPError`` 400 when it is empty or names something
    ///   that is not an app.
    static func topics(from text: String?) throws -> Set<AppDatabase.App> {
        let names = (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard !names.isEmpty else {
            throw HTTPError.badRequest("Name what to follow: /events?topics=people,contacts,coffee,users.")
        }
        var topics: Set<AppDatabase.App> = []
        for name in names {
            guard let topic = AppDatabase.App(rawValue: name) else {
                throw HTTPError.badRequest("There is no topic with that name: use people, contacts, coffee or users.")
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
                return Response(status: 200, headers: headers, body: .stream(length: nil, open(topics: topics)))
            }
        ]
    }
}

/// One `/events` response: waits on its connection's thread for a change
/// of its topics, the heartbeat, or the end.
final class EventStream: ResponseStream, @unchecked Sendable {
    let topics: Set<AppDatabase.App>
    private let heartbeat: Duration
    private let retry: Duration
    private weak var hub: LiveUpdates?
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var changed: Set<AppDatabase.App> = []
    private var ended = false
    private var started = false
    private var isClosed = false

    init(topics: Set<AppDatabase.App>, heartbeat: Duration, retry: Duration, hub: LiveUpdates) {
        self.topics = topics
        self.heartbeat = heartbeat
        self.retry = retry
        self.hub = hub
    }

    /// A topic's table changed.
    func signal(_ topic: AppDatabase.App) {
        condition.withLock {
            changed.insert(topic)
            condition.signal()
        }
    }

    /// Ends the stream once what is pending is sent.
    func end() {
        condition.withLock {
            ended = true
            condition.signal()
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let text: String? = condition.withLock {
            if !started {
                started = true
                // The browser reconnects this soon after losing the stream;
                // the comment makes the response start at once.
                return "retry: \(Self.milliseconds(retry))\n: open\n\n"
            }
            let deadline = Date().addingTimeInterval(Self.seconds(heartbeat))
            while changed.isEmpty && !ended {
                if !condition.wait(until: deadline) { break }
            }
            if !changed.isEmpty {
                let names = changed.map(\.rawValue).sorted().joined(separator: ",")
                changed = []
                return "event: change\ndata: \(names)\n\n"
            }
            if ended { return nil }
            return ": keep-alive\n\n"
        }
        guard let text else { return 0 }
        let bytes = Array(text.utf8)
        // Events are a few dozen bytes; libmicrohttpd offers 64 KiB.
        guard bytes.count <= buffer.count else { throw HTTPError(status: 500, message: "event too large") }
        buffer.copyBytes(from: bytes)
        return bytes.count
    }

    func close() {
        let first = condition.withLock {
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
