import Foundation

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

// Loading extensions needs the SQLite library this package links on Linux
// (through CSQLite); Apple's system SQLite leaves it out on iOS and marks
// it unavailable, so the API exists only where it can work.
#if !canImport(SQLite3)

    extension Database {
        /// Loads a SQLite loadable extension (a shared library) into this
        /// connection: the SQL functions, collations, virtual tables or
        /// VFSes it registers become available.
        ///
        /// ```swift
        /// try db.loadExtension(at: "/usr/lib/sqlite3/pcre.so")
        /// let matches = try db.fetchAll(String.self, "SELECT name FROM people WHERE name REGEXP ?", arguments: ["^A"])
        /// ```
        ///
        /// Loading is switched on for this call only and off again before it
        /// returns, so the SQL function `load_extension()` stays
        /// unavailable to SQL text on the connection: an injected statement
        /// cannot load a library. Functions an extension registers belong to
        /// the connection; for queues and pools, load the extension in
        /// ``Configuration/prepareDatabase``. An extension that registers a
        /// VFS registers it for the whole process; to open a database with
        /// that VFS (``Configuration/vfs``), register it first with
        /// ``LoadableExtension/loadForProcess(at:entryPoint:)``.
        ///
        /// - Parameters:
        ///   - path: The shared library, with or without its `.so` or
        ///     `.dylib` suffix (SQLite tries both).
        ///   - entryPoint: The initialisation function; nil lets SQLite
        ///     derive it from the file name (`sqlite3_<name>_init`).
        /// - Throws: A ``SQLiteError`` with ``ResultCode/error`` and SQLite's
        ///   message: the file is missing or not a shared library, the entry
        ///   point is not in it, or its initialisation failed.
        public func loadExtension(at path: String, entryPoint: String? = nil) throws {
            guard let handle = connection.handle else { throw SQLiteError.misuse("the database connection is closed") }
            try LoadableExtension.load(path, entryPoint: entryPoint, into: handle)
        }
    }

    /// Extensions loaded for the whole process: the VFSes they register
    /// stay registered while the process runs.
    public enum LoadableExtension {
        /// The extensions loaded for the process, by path and entry point,
        /// and the connection each was loaded through, kept open: SQLite
        /// unloads an extension's library when the connection that loaded
        /// it closes, unless the extension asks to stay.
        private static let loaded = Locked<[String: UnsafeSendableHandle]>([:])

        /// Loads the extension once for the process: a VFS it registers
        /// can then be named in ``Configuration/vfs`` by every connection.
        /// Loading the same path and entry point again does nothing.
        ///
        /// ```swift
        /// try LoadableExtension.loadForProcess(at: vfsLibraryPath)
        /// var configuration = Configuration()
        /// configuration.vfs = "litestream"
        /// configuration.isReadOnly = true
        /// let replica = try DatabaseQueue(path: "replica.db", configuration: configuration)
        /// ```
        ///
        /// - Throws: A ``SQLiteError`` as
        ///   ``Database/loadExtension(at:entryPoint:)`` throws; nothing is
        ///   kept loaded then.
        public static func loadForProcess(at path: String, entryPoint: String? = nil) throws {
            let key = path + "\u{0}" + (entryPoint ?? "")
            try loaded.withLock { loaded in
                guard loaded[key] == nil else { return }
                var handle: OpaquePointer?
                let code = sqlite3_open_v2(":memory:", &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
                guard code == SQLITE_OK, let handle else {
                    sqlite3_close_v2(handle)
                    throw SQLiteError(code: .cantOpen, message: "cannot open a connection to load \(path) through")
                }
                do {
                    try load(path, entryPoint: entryPoint, into: handle)
                } catch {
                    sqlite3_close_v2(handle)
                    throw error
                }
                loaded[key] = UnsafeSendableHandle(handle: handle)
            }
        }

        /// Switches loading on, loads, and switches it off again.
        static func load(_ path: String, entryPoint: String?, into handle: OpaquePointer) throws {
            guard !path.isEmpty, !path.utf8.contains(0) else {
                throw SQLiteError.misuse("an extension's path must be a non-empty file path without NUL")
            }
            sqlite3_enable_load_extension(handle, 1)
            defer { sqlite3_enable_load_extension(handle, 0) }
            var message: UnsafeMutablePointer<CChar>?
            let code = sqlite3_load_extension(handle, path, entryPoint, &message)
            guard code != SQLITE_OK else { return }
            let reason = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_free(message)
            throw SQLiteError(code: .error, message: "cannot load the extension \(path): \(reason)")
        }
    }

    /// A connection handle that is only ever kept, never used concurrently.
    private struct UnsafeSendableHandle: @unchecked Sendable {
        let handle: OpaquePointer
    }

#endif
