// The one place that chooses the SQLite C module: the SDK's on Apple
// platforms, the system library (through CSQLite) elsewhere. Re-exported so
// every file of the library, and clients that want the raw C API next to
// SQLiteStore (for example through `Database.sqliteConnection`), see the same
// declarations.
#if canImport(SQLite3)
    @_exported import SQLite3
#else
    @_exported import CSQLite
#endif

/// SQLite's `SQLITE_TRANSIENT` destructor: SQLite copies the bound bytes
/// before the bind call returns. The C macro is not importable into Swift.
@usableFromInline
nonisolated(unsafe) let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
