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
/// event stream (`/api/v1/events`) tells of a change, or a change to a
/// synced record is committed here (by this or any other process), until
/// SIGINT or SIGTERM.
@MainActor
func watchSync(_ database: AppDatabase, remote: SyncRemote, json: Bool) async throws {
    let stop = try SignalWaiter(signals: [SIGINT, SIGTERM])
    let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    let apps = AppDatabase.syncedApps.map(\.rawValue).joined(separator: ",")
    var eventsURL = URLComponents(url: remote.apiURL.appendingPathComponent("events"), resolvingAgainstBaseURL: false)!
    eventsURL.queryItems = [URLQueryItem(name: "apps", value: apps)]
    let events = ServerEventListener(url: eventsURL.url!, token: remote.token) { wake.yield() }
    events.start()
    // Another process's commit is seen by polling the number of the last
    // local change: a read of one row, every 20 ms.
    let local = Task {
        var last = (try? await database.lastLocalSyncChange()) ?? 0
        while (try? await Task.sleep(for: .milliseconds(20))) != nil {
            guard let now = try? await database.lastLocalSyncChange() else { continue }
            if now != last {
                last = now
                wake.yield()
            }
        }
    }
    let client = database.syncClient()
    let transport = HTTPSyncTransport(baseURL: remote.apiURL, token: remote.token)
    let loop = Task { @MainActor in
        for await _ in wakes {
            do {
                let report = try await client.sync(over: transport)
                if report.sent + report.received + report.conflicts > 0 {
                    if json {
                        try Console.json(
                            SyncSummary(report))
                    } else {
                        try Console.out(
                            "Synced: sent \(report.sent), received \(report.received), conflicts \(report.conflicts).")
                    }
                }
            } catch is CancellationError {
                return
            } catch {
                Console.error("records: sync: \(error) (trying again at the next change)")
            }
        }
    }
    wake.yield()
    if !json { try Console.out("Watching \(Terminal.clean(remote.description)) for changes (Ctrl-C to stop).") }
    _ = await stop.wait()
    events.stop()
    local.cancel()
    wake.finish()
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

/// Follows a Server-Sent Events stream and calls `onEvent` for each event
/// (not for the heartbeat comments); reconnects a second after it ends.
final class ServerEventListener: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let url: URL
    private let token: String
    private let onEvent: @Sendable () -> Void
    private let lock = NSLock()
    private var session: URLSession?
    private var stopped = false

    init(url: URL, token: String, onEvent: @escaping @Sendable () -> Void) {
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

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        // An event has a data line; a heartbeat is a comment (": ...").
        if data.range(of: Data("data:".utf8)) != nil { onEvent() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        session.finishTasksAndInvalidate()
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { [weak self] in
            guard let self else { return }
            // Changes made while the stream was down are pulled on reconnecting.
            if !self.lock.withLock({ self.stopped }) { self.onEvent() }
            self.start()
        }
    }
}
