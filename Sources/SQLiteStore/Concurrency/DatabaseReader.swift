/// A `Sendable` way to read a database from any thread or task:
/// ``DatabaseQueue`` or ``DatabasePool``.
///
/// Write code that only reads against this protocol, and code that writes
/// against ``DatabaseWriter``, so that it works with either.
///
/// Each access hands its closure a ``Database`` to use until the closure
/// returns. Do not keep the database, nor a cursor or statement made from
/// it, beyond the closure: the connection then belongs to the next access.
public protocol DatabaseReader: AnyObject, Sendable {
    /// Runs `body` with a connection that sees one committed snapshot of
    /// the database for the whole closure, and returns its result. Blocks
    /// the calling thread until a connection is free.
    ///
    /// Writing from `body` fails with ``ResultCode/readOnly`` (with a
    /// queue, once `body` returns, its changes rolled back). Calling any
    /// access method of the same queue or pool from `body` throws a
    /// ``ResultCode/misuse`` error instead of deadlocking.
    func read<T>(_ body: (Database) throws -> T) throws -> T

    /// Runs `body` like `read(_:)`, on a thread of the
    /// connection rather than the caller's, suspending the caller meanwhile.
    ///
    /// Cancelling the awaiting task interrupts the running statement
    /// (`sqlite3_interrupt`) and throws `CancellationError`; the connection
    /// stays usable.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T

    /// Waits for the accesses already started or waiting, then closes every
    /// connection. Accesses asked for afterwards throw a
    /// ``ResultCode/misuse`` error. Calling it again does nothing more.
    func close() throws

    /// Closes like `close()`, suspending instead of blocking the caller.
    func close() async
}

/// A `Sendable` way to read and write a database from any thread or task:
/// ``DatabaseQueue`` or ``DatabasePool``. Writes are serialized.
public protocol DatabaseWriter: DatabaseReader {
    /// Runs `body` in a transaction and returns its result: committed when
    /// `body` returns, rolled back when it throws. Blocks the calling thread
    /// until the writer connection is free.
    ///
    /// The transaction is `IMMEDIATE`: it takes the write lock before `body`
    /// runs, waiting for other processes up to
    /// ``Configuration/busyTimeout``, so that `body` never fails half-way
    /// with ``ResultCode/busy``.
    func write<T>(_ body: (Database) throws -> T) throws -> T

    /// Runs `body` like `write(_:)`, on a thread of the
    /// connection rather than the caller's, suspending the caller meanwhile.
    ///
    /// Cancelling the awaiting task interrupts the running statement
    /// (`sqlite3_interrupt`), rolls the transaction back and throws
    /// `CancellationError`; the connection stays usable. Once `body` has
    /// returned, the transaction commits even if the task is cancelled.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T

    /// Runs `body` on the writer connection outside any transaction, for
    /// statements that cannot run inside one (`VACUUM`, some pragmas) or to
    /// manage transactions yourself. A transaction `body` leaves open is
    /// rolled back and reported as an error.
    func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T

    /// Runs `body` like `writeWithoutTransaction(_:)`, on a
    /// thread of the connection, suspending the caller meanwhile. Cancelling
    /// the task interrupts the running statement and throws
    /// `CancellationError`; what `body` already did stays done.
    func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T
}
