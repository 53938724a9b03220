import Foundation
import HTTPServer
import RecordsApp

/// Live events for programs: `GET /api/v1/events?apps=people,coffee`, a
/// Server-Sent Events stream of each committed change of those apps'
/// records, whoever made it (the API, the pages, the `records` command,
/// another program):
///
/// ```text
/// id: 1042
/// event: change
/// data: {"app":"people","kind":"updated","id":7,"version":"5f0c2a9e81d3b4c6"}
/// ```
///
/// `id` is the change's place in the database's change log. A client that
/// reconnects sends the last one it saw as `Last-Event-ID` and gets every
/// change after it; when the log no longer holds them all (it keeps the
/// newest 100,000), it gets one `resync` event instead, and should read
/// the lists again. `version` is the record's version when the event was
/// sent (absent for a deletion). `syncPosition` is the sync server's
/// position read after the change committed, which covers it (absent while
/// changes made on the server itself wait to be numbered): a device whose
/// pulls reached it holds the change, and need not pull for it.
///
/// One reader follows the change log for every stream: after each change
/// of an app's table it reads the new entries once, keeps the newest
/// ``ringSize`` in memory, and hands them to the streams that follow those
/// apps. A stream ends within ``tokenCheck`` after its token is revoked or
/// expires.
final class APIEvents: Sendable {
    private let context: WebContext
    private let tokens: APITokenStore
    private let heartbeat: Duration
    private let tokenCheck: Duration
    private let state = Locked(State())

    /// How many recent changes the reader keeps for streams that open or
    /// fall behind.
    static let ringSize = 10_000
    /// The most changes a reconnecting client is sent from the log before
    /// it is told to resync instead.
    static let backlogLimit = 1_000

    private struct State {
        var streams: [ObjectIdentifier: ProgramEventStream] = [:]
        /// The newest changes read, oldest first.
        var ring: [APIEvent] = []
        /// The last sequence read from the log.
        var position: Int64 = 0
        var watch: Task<Void, Never>?
        var isStopped = false
    }

    init(context: WebContext, heartbeat: Duration, tokenCheck: Duration = .seconds(1)) {
        self.context = context
        tokens = APITokenStore(database: context.database, now: context.configuration.now)
        self.heartbeat = heartbeat
        self.tokenCheck = max(tokenCheck, .milliseconds(10))
    }

    /// The apps whose changes a program can follow: those with a
    /// collection in the API.
    static var apps: [APIResource] { SiteApps.all.compactMap(\.api) }

    var streamCount: Int { state.withLock { $0.streams.count } }

    /// Ends every stream; streams opened afterwards end at once.
    func stop() {
        let (streams, watch) = state.withLock { state in
            state.isStopped = true
            defer {
                state.streams = [:]
                state.watch = nil
            }
            return (Array(state.streams.values), state.watch)
        }
        watch?.cancel()
        for stream in streams { stream.end() }
    }

    // MARK: - The route

    var operation: APIOperation {
        let names = Self.apps.map(\.name)
        return APIOperation(
            method: "GET", path: "/events", operationID: "followChanges",
            summary: "Follow every committed change of the apps named, as Server-Sent Events.", access: .read,
            tag: "events",
            parameters: [
                .query(
                    "apps", "The apps to follow, separated by commas: \(names.joined(separator: ", ")).",
                    schema: OpenAPI.stringSchema),
                .header("Last-Event-ID", "The id of the last event received: the changes after it are sent first."),
            ],
            answers: [
                .init(status: 200, summary: "The stream of events.", content: .eventStream),
                .problem(400, "No app, an unknown app, or a Last-Event-ID this server never gave."),
                .problem(401, "No valid token."),
            ]
        ) { [self] request in try await open(request) }
    }

    private func open(_ request: Request) async throws -> Response {
        let client = try request.requireClient()
        let apps = try Self.apps(from: request.query["apps"])
        let latest = try await context.database.latestChangeSequence()
        var start = latest
        var backlog: [APIEvent] = []
        var resync = false
        if let header = request.headers["last-event-id"] {
            guard let last = Int64(header.trimmingCharacters(in: .whitespaces)), last >= 0, last <= latest else {
                throw Problem(
                    status: 400, code: "bad-last-event-id",
                    detail:
                        "Last-Event-ID must be the id of an event this server sent; reconnect without it and read the lists again."
                )
            }
            let batch = try await context.database.recordChanges(
                after: last, apps: apps.map(\.app), limit: Self.backlogLimit + 1)
            if batch.missedSome || batch.changes.count > Self.backlogLimit {
                resync = true
            } else {
                backlog = try await events(
                    for: batch.changes, syncPosition: try await context.database.syncSettledPosition())
                start = max(last, batch.changes.last?.sequence ?? last)
            }
        }
        let headers: [(name: String, value: String)] = [
            ("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"),
            ("X-Accel-Buffering", "no"),
        ]
        if request.isHead { return Response(status: 200, headers: headers) }
        let stream = ProgramEventStream(
            apps: Set(apps.map(\.app)), tokenID: client.token.id, position: start, backlog: backlog, resync: resync,
            heartbeat: heartbeat, hub: self)
        let opened = state.withLock { state -> Bool in
            guard !state.isStopped else { return false }
            state.streams[ObjectIdentifier(stream)] = stream
            if state.watch == nil {
                // The reader starts where the first stream does.
                state.position = start
                state.watch = startWatch()
            }
            stream.offer(state.ring)
            return true
        }
        if !opened { stream.end() }
        return Response(status: 200, headers: headers, body: .stream(length: nil, stream))
    }

    /// The apps an `apps` query value names.
    static func apps(from text: String?) throws -> [APIResource] {
        let names = (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let known = Self.apps
        let list = known.map(\.name).joined(separator: ", ")
        guard !names.isEmpty else {
            throw Problem(
                status: 400, code: "no-apps",
                detail: "Name the apps to follow: ?apps=\(known.map(\.name).joined(separator: ",")).")
        }
        var chosen: [APIResource] = []
        for name in names {
            guard let resource = known.first(where: { $0.name == name }) else {
                throw Problem(
                    status: 400, code: "unknown-app",
                    detail: "There is no app named \"\(JSONParserNames.printable(name))\" to follow: use \(list).")
            }
            if !chosen.contains(where: { $0.name == name }) { chosen.append(resource) }
        }
        return chosen
    }

    // MARK: - Following the log

    /// Reads the log after each change of a followed table, and checks the
    /// streams' tokens every ``tokenCheck``.
    private func startWatch() -> Task<Void, Never> {
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let observers = Self.apps.map { resource in
            let changes = context.database.changes(of: resource.app)
            return Task {
                do {
                    for try await _ in changes { wake.yield() }
                } catch {
                    // The table cannot be observed: the token checks still wake the reader.
                }
            }
        }
        let interval = tokenCheck
        let ticks = Task {
            while (try? await Task.sleep(for: interval)) != nil { wake.yield() }
        }
        return Task { [weak self] in
            defer {
                for observer in observers { observer.cancel() }
                ticks.cancel()
                wake.finish()
            }
            for await _ in wakes {
                guard let self, !Task.isCancelled else { return }
                await self.round()
            }
        }
    }

    /// Reads what the log gained, hands it to the streams, and ends the
    /// streams whose token is no longer valid.
    private func round() async {
        let (position, streams) = state.withLock { ($0.position, Array($0.streams.values)) }
        var fresh: [APIEvent] = []
        var next = position
        do {
            var changes: [RecordChange] = []
            while true {
                let batch = try await context.database.recordChanges(
                    after: next, apps: Self.apps.map(\.app), limit: 1_000)
                if batch.changes.isEmpty { break }
                changes += batch.changes
                next = batch.changes.last!.sequence
                if batch.changes.count < 1_000 { break }
            }
            if !changes.isEmpty {
                // Read after the changes: it covers each of them.
                let syncPosition = try await context.database.syncSettledPosition()
                fresh = try await events(for: changes, syncPosition: syncPosition)
            }
        } catch {
            context.configuration.log("error: reading the change log for /api/v1/events: \(error)")
        }
        if !fresh.isEmpty {
            state.withLock { state in
                state.ring += fresh
                if state.ring.count > Self.ringSize { state.ring.removeFirst(state.ring.count - Self.ringSize) }
                state.position = next
            }
            for stream in streams { stream.offer(fresh) }
        }
        // Tokens: one check per token, however many streams use it.
        var active: [Int64: Bool] = [:]
        for stream in streams {
            if active[stream.tokenID] == nil {
                active[stream.tokenID] = (try? await tokens.isActive(id: stream.tokenID)) ?? false
            }
            if active[stream.tokenID] == false { stream.tokenEnded() }
        }
    }

    /// The events of `changes`, each with the record's version now and
    /// `syncPosition`, the sync server's position read after the changes
    /// (nil when unknown).
    private func events(for changes: [RecordChange], syncPosition: Int64?) async throws -> [APIEvent] {
        var events: [APIEvent] = []
        events.reserveCapacity(changes.count)
        for change in changes {
            var version: RecordVersion?
            if change.kind != .deleted, let resource = Self.apps.first(where: { $0.app == change.app }) {
                version = try await resource.get(context, change.id)?.version
            }
            events.append(APIEvent(change: change, version: version, syncPosition: syncPosition))
        }
        return events
    }

    /// A stream is over.
    func closed(_ stream: ProgramEventStream) {
        let watch = state.withLock { state -> Task<Void, Never>? in
            state.streams.removeValue(forKey: ObjectIdentifier(stream))
            guard state.streams.isEmpty else { return nil }
            defer {
                state.watch = nil
                state.ring = []
                state.position = 0
            }
            return state.watch
        }
        watch?.cancel()
    }
}

/// One change, as the streams send it.
struct APIEvent: Sendable {
    let sequence: Int64
    let app: AppDatabase.App
    /// The event's text, made once for every stream.
    let text: String

    /// - Parameter syncPosition: The sync server position that covers the
    ///   change (read after it committed), sent as `syncPosition` so that
    ///   a device that has pulled that far need not pull for it; nil
    ///   leaves it out.
    init(change: RecordChange, version: RecordVersion?, syncPosition: Int64?) {
        sequence = change.sequence
        app = change.app
        let kind =
            switch change.kind {
            case .created: "created"
            case .updated: "updated"
            case .deleted: "deleted"
            }
        var data = JSONObject([
            ("app", .string(change.app.rawValue)), ("kind", .string(kind)), ("id", .integer(change.id)),
        ])
        if let version { data.append("version", .string(version.description)) }
        if let syncPosition { data.append("syncPosition", .integer(syncPosition)) }
        text =
            "id: \(change.sequence)\nevent: change\ndata: \(String(decoding: JSONWriter.encode(.object(data)), as: UTF8.self))\n\n"
    }
}

/// One `/api/v1/events` response: has the next events of its apps, the
/// heartbeat, or the end, and otherwise waits (on the server's event loop,
/// holding no thread; or on its connection's thread when it has one).
final class ProgramEventStream: WaitingResponseStream, @unchecked Sendable {
    let apps: Set<AppDatabase.App>
    let tokenID: Int64
    private let heartbeat: Duration
    private weak var hub: APIEvents?
    // Guarded by `lock`.
    private let lock = NSLock()
    private var pending: [APIEvent]
    private var position: Int64
    private var resync: Bool
    private var started = false
    private var ended = false
    private var tokenIsOver = false
    private var isClosed = false
    /// When the next keep-alive is due, unless something is sent first.
    private var nextBeat = ContinuousClock.now
    /// Wakes the connection waiting for the next bytes.
    private var wake: (@Sendable () -> Void)?

    init(
        apps: Set<AppDatabase.App>, tokenID: Int64, position: Int64, backlog: [APIEvent], resync: Bool,
        heartbeat: Duration, hub: APIEvents
    ) {
        self.apps = apps
        self.tokenID = tokenID
        self.position = position
        pending = backlog.filter { apps.contains($0.app) }
        self.resync = resync
        self.heartbeat = heartbeat
        self.hub = hub
    }

    /// Events read from the log: those after the stream's position, of its
    /// apps, are queued.
    func offer(_ events: [APIEvent]) {
        let waiting = lock.withLock { () -> (@Sendable () -> Void)? in
            var added = false
            for event in events where event.sequence > position {
                position = event.sequence
                if apps.contains(event.app) {
                    pending.append(event)
                    added = true
                }
            }
            guard added else { return nil }
            defer { wake = nil }
            return wake
        }
        waiting?()
    }

    func end() {
        change { $0.ended = true }
    }

    /// Its token was revoked or expired: the stream ends now, without
    /// what is pending.
    func tokenEnded() {
        change { $0.tokenIsOver = true }
    }

    /// Changes the state under the lock, then wakes the waiting connection.
    private func change(_ body: (ProgramEventStream) -> Void) {
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
            if tokenIsOver { return .end }
            if !started {
                started = true
                nextBeat = now + heartbeat
                return .text(resync ? "retry: 2000\nevent: resync\ndata: {}\n\n" : "retry: 2000\n: open\n\n")
            }
            if !pending.isEmpty {
                // As many whole events as fit the buffer.
                var text = ""
                var taken = 0
                for event in pending {
                    if !text.isEmpty && text.utf8.count + event.text.utf8.count > buffer.count { break }
                    text += event.text
                    taken += 1
                }
                pending.removeFirst(taken)
                nextBeat = now + heartbeat
                return .text(text)
            }
            if ended { return .end }
            if now >= nextBeat {
                nextBeat = now + heartbeat
                return .text(": keep-alive\n\n")
            }
            self.wake = wake
            return .wait(until: nextBeat)
        }
        return try next.write(into: buffer)
    }

    func close() {
        let first = lock.withLock {
            defer { isClosed = true }
            return !isClosed
        }
        if first { hub?.closed(self) }
    }
}
