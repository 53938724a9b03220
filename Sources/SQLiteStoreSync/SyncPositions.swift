import Foundation
import SQLiteStore

// Server positions a watcher compares without asking the server for a
// pull: the server names the position that covers what it committed (in
// the event that tells of a change), the device the position it pulled
// through; a device at or past the server's has nothing to pull.

extension SyncServer {
    /// The server position that covers every change committed in `db` so
    /// far, read without writing: each change a device pushed, and each
    /// change made on the server itself once a push or pull has numbered
    /// it. Nil while some of the server's own changes wait to be numbered
    /// (the next push or pull numbers them), and for a database without
    /// the sync bookkeeping.
    ///
    /// A device whose pulls have reached this position
    /// (``SyncClient/pulledPosition(_:schema:)``) has every change committed
    /// before it was read, so a server that reads it after a change, and
    /// sends it with the news of that change, lets the device that made
    /// the change skip the pull it would otherwise make for it.
    public static func settledPosition(_ db: Database) throws -> Int64? {
        guard try db.tableExists(Bookkeeping.state), try db.tableExists(Bookkeeping.outbox) else { return nil }
        let waiting = try db.fetchOne(Bool.self, "SELECT EXISTS (SELECT 1 FROM \(identifier: Bookkeeping.outbox))")
        if waiting ?? true { return nil }
        return try db.fetchOne(Int64.self, "SELECT known FROM \(identifier: Bookkeeping.state)")
    }
}

extension SyncClient {
    /// The last server position this device's pulls applied in `db`: it
    /// holds every change the server numbered up to it (its own, and
    /// other devices'). Nil while a catch-up of columns it started syncing
    /// after an upgrade is pending (those columns' values are not all here
    /// yet, whatever the position says).
    public static func pulledPosition(_ db: Database, schema: SyncSchema) throws -> Int64? {
        let context = try ReplicaContext(db, schema: schema)
        if try Backfill.next(context) != nil { return nil }
        return try context.state("known")
    }
}
