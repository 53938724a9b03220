import Foundation
import SQLiteStore

/// Why the engine refused a declaration, a batch or a request.
///
/// A refused push or pull applies nothing: the whole batch is checked
/// before anything is written, and the writing happens in one transaction.
public struct SyncError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, for code that reacts to it.
    public enum Kind: Sendable, Equatable {
        /// A synced table's declaration does not match the database (no
        /// such table, column, or integer primary key).
        case invalidDeclaration
        /// The engine's bookkeeping tables are missing: ``SyncSchema/install(in:replicaID:)``
        /// has not run on this database.
        case notInstalled
        /// The bytes of a change batch are cut short, garbled, or not a
        /// change batch at all.
        case malformedBatch
        /// A push the server has already applied, in whole or in part
        /// (a retry after a lost acknowledgement): nothing is applied
        /// again. The client resumes after `acknowledgedThrough`.
        case replayedPush(acknowledgedThrough: Int64)
        /// A push that starts after a position the server never
        /// acknowledged (the server's database was restored from an older
        /// copy, or the client's bookkeeping was altered).
        case pushOutOfOrder(acknowledgedThrough: Int64)
        /// A batch names a table the receiver does not sync.
        case unknownTable(String)
        /// A batch names a column the receiver does not sync.
        case unknownColumn(table: String, column: String)
        /// A change's version is further in the future than the declared
        /// ``SyncSchema/maximumClockSkew`` allows.
        case clockSkew
        /// A push carries changes made by another replica than the one
        /// pushing.
        case foreignChanges
        /// A chunk of a large value, or its reference, does not fit the
        /// value: no bytes, more bytes than the value has left, an offset
        /// outside it, a digest that is not 32 bytes.
        case malformedChunk
        /// A chunk that does not start where the transfer stands (a retry
        /// that crossed another, or a lost answer): nothing is stored, and
        /// the sender resumes from `expectedOffset`.
        case chunkOutOfOrder(expectedOffset: Int64)
        /// The bytes of a large value, once all received, do not hash to its
        /// reference (or it changed size while copied): they are discarded,
        /// and the value must be sent again.
        case largeValueMismatch(LargeValueReference)
        /// A batch references a large value that has not arrived whole: the
        /// batch is refused, nothing applied. Send (or fetch) the value's
        /// chunks, then the batch again.
        case largeValueMissing(LargeValueReference)
        /// A chunk was asked of a large value this replica does not hold (it
        /// was replaced since the reference was sent): pull again for the
        /// current one.
        case unknownLargeValue(LargeValueReference)
        /// The transport cannot carry large values (its ``SyncTransport``
        /// conformance has no chunk methods).
        case largeValuesUnsupported
        /// The database that was to keep the changes or the chunk cannot
        /// grow (its disk is full, or it reached its size limit): the write
        /// was rolled back whole, with the positions and acknowledgements
        /// it would have moved. The message says whose disk; sync again
        /// once it has room, and the sync resumes where it stood.
        case storageFull
    }

    /// What went wrong.
    public let kind: Kind
    /// A sentence for people: what was refused and why.
    public let message: String

    /// An error of `kind` with `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

extension SyncError {
    /// Runs `body`, a write to this replica's database, and turns SQLite's
    /// full-disk error (`SQLITE_FULL`: no room on the disk, or the
    /// database's `max_page_count` reached) into ``Kind/storageFull`` with
    /// `message`; the transaction has rolled back, so nothing of it stays.
    static func whenFull<T>(_ message: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as SQLiteError where error.code == .full {
            throw SyncError(.storageFull, message())
        }
    }

    /// The `async` form of ``whenFull(_:_:)``.
    static func whenFull<T>(_ message: @autoclosure () -> String, _ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let error as SQLiteError where error.code == .full {
            throw SyncError(.storageFull, message())
        }
    }

    /// What the server tells a device whose write it could not keep.
    static func serverFull(_ what: String) -> String {
        "the server's disk is full: \(what). Sync again once the server has room"
    }

    /// What a device is told when its own database cannot grow.
    static func deviceFull(_ what: String) -> String {
        "this device's disk is full: \(what). Free some space and sync again"
    }
}
