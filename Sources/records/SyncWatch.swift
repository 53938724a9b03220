import Foundation
import RecordsApp
import SQLiteStoreSync

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// `records sync --watch`: syncs now, then again whenever the server's
/// event stream (`/api/v1/events`) tells of a change this device has not
/// pulled yet, or a change to a synced record is committed here (by this
/// or any other process), until SIGINT or SIGTERM.
@MainActor
func watchSync(_ database: AppDatabase, remote: SyncRemote, json: Bool) async throws {
    let stop = try SignalWaiter(signals: [SIGINT, SIGTERM])
    let watcher = SyncWatcher(
        database: database, transport: HTTPSyncTransport(baseURL: remote.apiURL, token: remote.token))
    let apps = AppDatabase.syncedApps.map(\.rawValue).joined(separator: ",")
    var eventsURL = URLComponents(url: remote.apiURL.appendingPathComponent("events"), resolvingAgainstBaseURL: false)!
    eventsURL.queryItems = [URLQueryItem(name: "apps", value: apps)]
    let events = ServerEventListener(url: eventsURL.url!, token: remote.token) { data in
        watcher.serverChange(at: data.flatMap(SyncWatcher.syncPosition(inEvent:)))
    }
    events.start()
    // Another process's commit is seen by looking at the database's data
    // version every 5 ms; the local change number is read when it moved.
    let local = Task {
        while !Task.isCancelled {
            do {
                try await database.watchLocalSyncChanges(every: .milliseconds(5)) { watcher.localChange() }
            } catch {
                Console.error("records: sync: cannot watch this database for changes: \(error) (trying again)")
                try? await Task.sleep(for: .seconds(1))
            }
            // What changed while the watch was down is pushed at the next round.
            watcher.localChange()
        }
    }
    let loop = Task { @MainActor in
        await watcher.run { round in
            await MainActor.run {
                switch round {
                case .synced(let report) where report.sent + report.received + report.conflicts > 0:
                    if json {
                        try? Console.json(SyncSummary(report))
                    } else {
                        try? Console.out(
                            "Synced: sent \(report.sent), received \(report.received), conflicts \(report.conflicts).")
                    }
                case .failed(let error):
                    Console.error("records: sync: \(error) (trying again at the next change)")
                case .synced, .skipped:
                    break
                }
            }
        }
    }
    if !json { try Console.out("Watching \(Terminal.clean(remote.description)) for changes (Ctrl-C to stop).") }
    _ = await stop.wait()
    events.stop()
    local.cancel()
    watcher.finish()
    loop.cancel()
    _ = await loop.value
    if !json { try Console.out("Stopped watching.") }
}

/// What `records sync` prints with --json.
struct SyncSummary: Encodable {
    let sent: Int
    let received: Int
    let conflicts: Int
    /// Bytes of pictures uploaded and downloaded (in pieces, beside the
    /// changes).
    let pictureBytesSent: Int64
    let pictureBytesReceived: Int64

    init(_ report: SyncReport) {
        sent = report.sent
        received = report.received
        conflicts = report.conflicts
        pictureBytesSent = report.largeBytesSent
        pictureBytesReceived = report.largeBytesReceived
    }
}

/// Follows a Server-Sent Events stream and calls `onEvent` with each
/// event's data (not for the heartbeat comments); reconnects a second
/// after it ends. It calls `onEvent` with nil each time the stream opens:
/// what changed before is unknown.
final class ServerEventListener: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let url: URL
    private let token: String
    private let onEvent: @Sendable (String?) -> Void
    private let lock = NSLock()
    private var session: URLSession?
    private var stopped = false
    /// The stream's bytes after its last whole line (URLSession hands them
    /// over in pieces that may end anywhere).
    private var partial = Data()

    init(url: URL, token: String, onEvent: @escaping @Sendable (String?) -> Void) {
        self.url = url
        self.token = token
        self.onEvent = onEvent
    }

    func start() {
        lock.withLock {
            guard !stopped else { return }
            let configuration = URLSessionConfiguration.default
            // The stream is quiet between changes but for the server's heartbeat.
            configuration.timeoutIntervalForRequest = 120
            let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
            self.session = session
            var request = URLRequest(url: url)
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
            session.dataTask(with: request).resume()
        }
    }

    func stop() {
        lock.withLock {
            stopped = true
            session?.invalidateAndCancel()
            session = nil
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        completionHandler(.allow)
        // Open now: what changed before it was open is news too.
        if (response as? HTTPURLResponse)?.statusCode == 200 { onEvent(nil) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        // An event has a data line; a heartbeat is a comment (": ...").
        let lines: [Data] = lock.withLock {
            partial += data
            guard let end = partial.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
            let whole = partial[partial.startIndex..<end]
            partial = Data(partial[partial.index(after: end)...])
            return whole.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).map { Data($0) }
        }
        for line in lines where line.starts(with: Data("data:".utf8)) {
            onEvent(String(decoding: line.dropFirst(5), as: UTF8.self))
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        session.finishTasksAndInvalidate()
        lock.withLock { partial = Data() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { [weak self] in
            guard let self else { return }
            // Changes made while the stream was down are pulled once it is open again.
            self.start()
        }
    }
}
