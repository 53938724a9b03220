import Foundation
import SQLiteStore
import SQLiteStoreSync

/// A device that keeps in sync with its server (`records sync --watch`):
/// it syncs whenever it is told of a change committed here
/// (``localChange()``) or on the server (``serverChange(at:)``), one sync
/// at a time, news that arrives during a sync making one more.
///
/// The server's news of a change names the server position that covers it
/// (the `syncPosition` of an `/api/v1/events` event). A device that has
/// pulled that far already holds the change, so it does not pull for it:
/// that is the news of its own push, which reaches it after the sync that
/// pushed it pulled past it. News of another device's change names a
/// later position, and is pulled for.
///
/// ```swift
/// let watcher = SyncWatcher(database: database, transport: transport)
/// events.onEvent = { data in watcher.serverChange(at: SyncWatcher.syncPosition(inEvent: data)) }
/// await watcher.run { round in if case .synced(let report) = round { print(report) } }
/// ```
public final class SyncWatcher: @unchecked Sendable {
    /// What one round of ``run(_:)`` did.
    public enum Round: Sendable {
        /// Synced, with what the sync moved.
        case synced(SyncReport)
        /// Did not sync: the device already held every server change it
        /// was told of, up to this server position.
        case skipped(pulledThrough: Int64)
        /// The sync failed (the next news tries again); what was
        /// acknowledged or applied before the failure stays.
        case failed(any Error)
    }

    /// What woke the watcher since its last round began.
    private struct Pending {
        /// A change here, news that named no position, or the first round.
        var mustSync = false
        /// The highest server position named by news since.
        var serverPosition: Int64 = 0
    }

    private let database: AppDatabase
    private let client: SyncClient
    private let transport: any SyncTransport
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    // Guarded by `lock`.
    private let lock = NSLock()
    private var pending = Pending(mustSync: true)

    /// A watcher over `database` that syncs through `transport`; its first
    /// round syncs whatever it is told.
    public init(database: AppDatabase, transport: any SyncTransport) {
        self.database = database
        client = database.syncClient()
        self.transport = transport
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        wake.yield()
    }

    /// A synced record changed here: the next round syncs (and pushes it).
    public func localChange() {
        note { $0.mustSync = true }
    }

    /// The server told of a change. With the server position that covers
    /// it, the next round syncs only if this device has not pulled that
    /// far; without one (news that names none, or a stream that
    /// reconnected and may have missed some), it syncs.
    public func serverChange(at position: Int64?) {
        note { pending in
            if let position {
                pending.serverPosition = max(pending.serverPosition, position)
            } else {
                pending.mustSync = true
            }
        }
    }

    /// Ends ``run(_:)`` after its round in progress.
    public func finish() {
        wake.finish()
    }

    /// Syncs as told, one round at a time, until ``finish()`` or the task
    /// is cancelled; `report` hears of each round.
    public func run(_ report: @Sendable (Round) async -> Void) async {
        for await _ in wakes {
            if Task.isCancelled { return }
            let taken = lock.withLock {
                defer { pending = Pending() }
                return pending
            }
            if !taken.mustSync, let pulled = try? await database.syncPulledPosition(),
                pulled >= taken.serverPosition
            {
                await report(.skipped(pulledThrough: pulled))
                continue
            }
            do {
                await report(.synced(try await client.sync(over: transport)))
            } catch is CancellationError {
                return
            } catch {
                await report(.failed(error))
            }
        }
    }

    private func note(_ change: (inout Pending) -> Void) {
        lock.withLock { change(&pending) }
        wake.yield()
    }

    /// The `syncPosition` of an `/api/v1/events` event's data (its JSON
    /// object), or nil when it has none or is not such an object.
    public static func syncPosition(inEvent data: String) -> Int64? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any],
            let number = object["syncPosition"] as? NSNumber
        else { return nil }
        return number.int64Value
    }
}

extension AppDatabase {
    /// Calls `onChange` each time the number of the last local change to a
    /// synced record (`SyncClient.lastLocalChange(_:)`) moves, whichever process
    /// committed it, until the task is cancelled.
    ///
    /// It looks every `interval` at `PRAGMA data_version` on a read-only
    /// connection of its own, which tells whether another connection
    /// committed since (a look at the log's shared index, no read of the
    /// database), and reads the number only then: cheap enough to look
    /// every few milliseconds.
    ///
    /// - Throws: When the database file cannot be opened again (a
    ///   database in memory has no other connections to watch), or a
    ///   read fails.
    public func watchLocalSyncChanges(every interval: Duration, _ onChange: @escaping @Sendable () -> Void)
        async throws
    {
        // Not traced with the rest (--debug): it reads hundreds of times a second.
        var configuration = Self.configuration(debugLog: nil)
        configuration.isReadOnly = true
        let watch = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? watch.close() }
        let (startVersion, startChange) = try await watch.read { db in
            (try db.fetchOne(Int64.self, "PRAGMA data_version"), try SyncClient.lastLocalChange(db))
        }
        var version = startVersion
        var last = startChange
        while (try? await Task.sleep(for: interval)) != nil {
            let seen = version
            let (now, change) = try await watch.read { db -> (Int64?, Int64?) in
                let now = try db.fetchOne(Int64.self, "PRAGMA data_version")
                return (now, now == seen ? nil : try SyncClient.lastLocalChange(db))
            }
            version = now
            if let change, change != last {
                last = change
                onChange()
            }
        }
    }

    /// The last server position this device's pulls applied (see
    /// ``SyncClient/pulledPosition(_:schema:)``): nil while a catch-up of
    /// newly synced columns is pending.
    public func syncPulledPosition() async throws -> Int64? {
        let schema = syncSchema
        return try await writer.read { db in try SyncClient.pulledPosition(db, schema: schema) }
    }

    /// The server position that covers every change committed to this
    /// (server's) database so far (see ``SyncServer/settledPosition(_:)``):
    /// nil while some of its own changes wait to be numbered.
    public func syncSettledPosition() async throws -> Int64? {
        try await writer.read { db in try SyncServer.settledPosition(db) }
    }
}
