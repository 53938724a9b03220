import Foundation
import SQLiteStore
import SQLiteStoreSync

/// What of an app's records devices sync through `records serve`, and the
/// rules a synced row must pass on the server (the same rules as the
/// pages' and the command line's), declared once in the app's folder.
public struct AppSync: Sendable {
    /// The synced table and columns.
    public let table: SyncedTable
    /// The problems of a row's values, by column (empty when it is valid).
    let problems: @Sendable (_ values: [String: SQLiteValue]) -> [SyncValidationError.Problem]

    init(table: SyncedTable, problems: @escaping @Sendable ([String: SQLiteValue]) -> [SyncValidationError.Problem]) {
        self.table = table
        self.problems = problems
    }

    /// The migration that installs the engine for ``table``: its triggers
    /// and bookkeeping. Rows already there get identities made from their
    /// contents, so that the rows of the shipped sample, on the server and
    /// on each device, are one record each, not one per replica.
    func migration(_ identifier: String) -> Migrator.Migration {
        let schema = SyncSchema(tables: [table])
        return Migrator.migration(identifier) { db in try schema.install(in: db, existingRows: .fromContents) }
    }

    /// The problems an app's validation found, each under the column of its
    /// field (`columns` maps a field's raw value to its column).
    static func problems(_ run: () throws -> Void, columns: [String: String]) -> [SyncValidationError.Problem] {
        do {
            try run()
            return []
        } catch let error as ValidationError {
            return error.problems.map { .init(column: columns[$0.field] ?? $0.field, message: $0.message) }
        } catch {
            return [.init(column: "", message: String(describing: error))]
        }
    }

    /// A text column's value: nil for NULL (an empty field), a problem for
    /// any other type.
    static func text(
        _ value: SQLiteValue?, column: String, label: String, into problems: inout [SyncValidationError.Problem]
    ) -> String {
        switch value {
        case .text(let text)?: return text
        case .null?, nil: return ""
        default:
            problems.append(.init(column: column, message: "\(label) must be text."))
            return ""
        }
    }

    /// An integer column's value: nil for NULL, a problem for any other type.
    static func integer(
        _ value: SQLiteValue?, column: String, label: String, into problems: inout [SyncValidationError.Problem]
    ) -> Int64? {
        switch value {
        case .integer(let number)?: return number
        case .null?, nil: return nil
        default:
            problems.append(.init(column: column, message: "\(label) must be a whole number."))
            return nil
        }
    }
}

extension AppDatabase {
    /// The synced tables of the apps that can use this database.
    public var syncSchema: SyncSchema {
        SyncSchema(tables: Self.apps.filter { unavailableApps[$0.app] == nil }.compactMap { $0.sync?.table })
    }

    /// The server half of sync over this database, refusing rows that the
    /// apps' rules refuse (``SyncValidationError`` naming the row and its
    /// columns).
    public func syncServer() -> SyncServer {
        let apps = Self.apps.compactMap(\.sync)
        let validate: @Sendable (SyncedRow) throws -> Void = { row in
            guard let sync = apps.first(where: { $0.table.name == row.table }) else { return }
            let problems = sync.problems(row.values).filter { row.changedColumns.contains($0.column) }
            if !problems.isEmpty {
                throw SyncValidationError(table: row.table, globalID: row.globalID, problems: problems)
            }
        }
        return SyncServer(writer: writer, schema: syncSchema, validate: validate)
    }

    /// The device half of sync over this database.
    public func syncClient() -> SyncClient {
        SyncClient(writer: writer, schema: syncSchema)
    }

    /// The app whose records live in `table`, if it syncs.
    public static func app(syncing table: String) -> App? {
        apps.first { $0.sync?.table.name == table }?.app
    }

    /// The conflict log of this database (see ``SyncConflict``), oldest
    /// first, with each row's app and its local ID here (nil when it is
    /// not here: deleted).
    public func syncConflicts() async throws -> [AppSyncConflict] {
        try await writer.read { db in
            try SyncConflict.fetchAll(db).map { conflict in
                AppSyncConflict(
                    conflict: conflict, app: Self.app(syncing: conflict.table),
                    localID: try SyncConflict.localID(ofRow: conflict.globalID, in: conflict.table, db))
            }
        }
    }

    /// Applies a device's push on the server (see ``SyncServer/push(_:)``),
    /// off the caller's thread.
    public func syncPush(_ request: PushRequest, on server: SyncServer) async throws -> PushResponse {
        try await Self.offThread { try server.push(request) }
    }

    /// Answers a device's pull on the server (see ``SyncServer/pull(_:)``),
    /// off the caller's thread.
    public func syncPull(_ request: PullRequest, on server: SyncServer) async throws -> PullResponse {
        try await Self.offThread { try server.pull(request) }
    }

    /// Stores a piece of a large value (a coffee picture) a device is about
    /// to push (see ``SyncServer/uploadChunk(_:)``), off the caller's
    /// thread.
    public func syncUploadChunk(_ request: ChunkUpload, on server: SyncServer) async throws -> ChunkUploadResponse {
        try await Self.offThread { try server.uploadChunk(request) }
    }

    /// A piece of a large value a device's pull referenced (see
    /// ``SyncServer/downloadChunk(_:)``), off the caller's thread.
    public func syncDownloadChunk(_ request: ChunkDownload, on server: SyncServer) async throws
        -> ChunkDownloadResponse
    {
        try await Self.offThread { try server.downloadChunk(request) }
    }

    /// Runs a blocking database call on a thread of its own, not one of
    /// the tasks' cooperative threads, which it would hold while it waits
    /// for the write lock.
    private static func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }
}

/// A value that lost a merge (``SyncConflict``), with where its record is
/// in this database.
public struct AppSyncConflict: Sendable {
    /// The conflict, as the engine logged it.
    public let conflict: SyncConflict
    /// The app of its table.
    public let app: AppDatabase.App?
    /// The record's local ID here; nil when the record is not here.
    public let localID: Int64?
}

extension AppDatabase {
    /// The local ID of the synced record with the global identity
    /// `globalID` in `table` here, or nil.
    public func localID(ofSynced globalID: UUID, in table: String) async throws -> Int64? {
        try await writer.read { db in try SyncConflict.localID(ofRow: globalID, in: table, db) }
    }
}

extension AppDatabase {
    /// The apps whose records sync, in the order of ``apps``.
    public static var syncedApps: [App] { apps.filter { $0.sync != nil }.map(\.app) }
}

extension AppSyncConflict {
    /// The value that lost, as text: nil for NULL, a blob as "(N bytes)".
    public var losingText: String? { Self.text(conflict.losingValue) }
    /// The value that won, as text (nil when it is NULL or the row's delete won).
    public var winningText: String? { Self.text(conflict.winningValue) }

    private static func text(_ value: SQLiteValue) -> String? {
        switch value {
        case .null: nil
        case .integer(let number): String(number)
        case .real(let number): String(number)
        case .text(let text): text
        case .textBytes(let bytes): String(decoding: bytes, as: UTF8.self)
        case .blob(let blob): "(\(blob.count) bytes)"
        }
    }
}
