import Foundation
import SQLiteStore
import TestSupport
import Testing

#if !canImport(SQLite3)

    /// A loadable extension, compiled for the test with the toolchain's
    /// clang against the system's `sqlite3ext.h`: `twice(x)` on the
    /// connection, an entry point that refuses, and, built with `vfs`, a
    /// VFS named `sqlitestore_test_vfs` (the default VFS under another
    /// name) for the whole process.
    private func compileExtension(named name: String, vfs: Bool, in directory: TemporaryDirectory) async throws
        -> String
    {
        let source = directory.path("\(name).c")
        try """
        #include <sqlite3ext.h>
        SQLITE_EXTENSION_INIT1
        static void twice(sqlite3_context *context, int count, sqlite3_value **values) {
            sqlite3_result_int64(context, 2 * sqlite3_value_int64(values[0]));
        }
        #ifdef WITH_VFS
        static sqlite3_vfs renamed;
        #endif
        int sqlite3_\(name)_init(sqlite3 *db, char **message, const sqlite3_api_routines *api) {
            SQLITE_EXTENSION_INIT2(api);
        #ifdef WITH_VFS
            if (renamed.zName == 0) {
                renamed = *sqlite3_vfs_find(0);
                renamed.zName = "sqlitestore_test_vfs";
                sqlite3_vfs_register(&renamed, 0);
            }
        #endif
            return sqlite3_create_function(db, "twice", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, 0, twice, 0, 0);
        }
        int refuses_init(sqlite3 *db, char **message, const sqlite3_api_routines *api) {
            SQLITE_EXTENSION_INIT2(api);
            *message = sqlite3_mprintf("refused on purpose");
            return SQLITE_ERROR;
        }
        """.write(toFile: source, atomically: true, encoding: .utf8)
        let library = directory.path("\(name).so")
        // Awaited, not waited for: no cooperative thread is held while
        // clang runs.
        let run = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["clang", "-shared", "-fPIC", "-o", library, source] + (vfs ? ["-DWITH_VFS"] : []))
        guard run.status == 0, run.reason == .exit else {
            throw SQLiteError(code: .error, message: "clang failed: " + run.errors)
        }
        return library
    }

    @Suite("Loadable extensions")
    struct LoadableExtensionTests {
        @Test("A loaded extension's function works, and SQL text still cannot load one")
        func loadsIntoTheConnection() async throws {
            let directory = try TemporaryDirectory()
            let library = try await compileExtension(named: "twice", vfs: false, in: directory)
            let db = try Database.inMemory()
            try db.loadExtension(at: library)
            #expect(try db.fetchOne(Int.self, "SELECT twice(21)") == 42)
            // Loading was switched off again: an injected statement cannot
            // load a library.
            let error = try #require(throws: SQLiteError.self) {
                try db.execute("SELECT load_extension(?)", arguments: [library])
            }
            #expect(error.message.contains("not authorized"))
            // Another connection does not have the function.
            let other = try Database.inMemory()
            #expect(throws: SQLiteError.self) { try other.execute("SELECT twice(1)") }
        }

        @Test("A missing file, a missing entry point and a refusing one are errors that say why")
        func failures() async throws {
            let directory = try TemporaryDirectory()
            let library = try await compileExtension(named: "twice", vfs: false, in: directory)
            let db = try Database.inMemory()
            let missing = directory.path("nothing-here.so")
            let noFile = try #require(throws: SQLiteError.self) { try db.loadExtension(at: missing) }
            #expect(noFile.code == .error)
            #expect(noFile.message.contains(missing))
            let noEntry = try #require(throws: SQLiteError.self) {
                try db.loadExtension(at: library, entryPoint: "no_such_init")
            }
            #expect(noEntry.message.contains("no_such_init"))
            let refused = try #require(throws: SQLiteError.self) {
                try db.loadExtension(at: library, entryPoint: "refuses_init")
            }
            #expect(refused.message.contains("refused on purpose"))
            let text = directory.path("text.so")
            try "not a library".write(toFile: text, atomically: true, encoding: .utf8)
            #expect(throws: SQLiteError.self) { try db.loadExtension(at: text) }
            #expect(throws: SQLiteError.self) { try db.loadExtension(at: "") }
            // The connection is unharmed, and a later load works.
            try db.loadExtension(at: library)
            #expect(try db.fetchOne(Int.self, "SELECT twice(2)") == 4)
            db.close()
            let closed = try #require(throws: SQLiteError.self) { try db.loadExtension(at: library) }
            #expect(closed.code == .misuse)
        }

        @Test("An extension loaded for the process registers its VFS for every connection")
        func processWideVFS() async throws {
            let directory = try TemporaryDirectory()
            var configuration = Configuration()
            configuration.vfs = "sqlitestore_test_vfs"
            let path = directory.path("through-the-vfs.sqlite")
            #expect(throws: SQLiteError.self) { _ = try Database(path: path, configuration: configuration) }
            let library = try await compileExtension(named: "withvfs", vfs: true, in: directory)
            let failed = try #require(throws: SQLiteError.self) {
                try LoadableExtension.loadForProcess(at: library, entryPoint: "refuses_init")
            }
            #expect(failed.message.contains("refused on purpose"))
            try LoadableExtension.loadForProcess(at: library)
            try LoadableExtension.loadForProcess(at: library)  // once is enough; again does nothing
            let db = try Database(path: path, configuration: configuration)
            try db.execute("CREATE TABLE t(x)")
            try db.execute("INSERT INTO t VALUES (1)")
            db.close()
            // The file is an ordinary database, readable without the VFS.
            let plain = try Database(path: path)
            #expect(try plain.fetchOne(Int.self, "SELECT count(*) FROM t") == 1)
        }
    }

#endif
