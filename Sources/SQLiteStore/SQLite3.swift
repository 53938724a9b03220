// The SQLite C module: the SDK's on Apple platforms, the system library
// (through CSQLite) elsewhere. Each file of the library that calls the C API
// imports it the same way. It is not re-exported: code above the library
// uses SQLiteStore's Swift API only (`Database.sqliteConnection` remains as
// an escape hatch, for code that imports the C module itself).
#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// SQLite's `SQLITE_TRANSIENT` destructor: SQLite copies the bound bytes
/// before the bind call returns. The C macro is not importable into Swift.
@usableFromInline
nonisolated(unsafe) let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
