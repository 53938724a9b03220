import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

// MARK: - A VFS whose writes can be made to fail

/// What a ``FaultyVFS`` does to writes and syncs. Touched by SQLite's calls,
/// which run on the thread of the test that uses the connection.
final class FaultControl {
    /// Writes allowed before every later one fails; nil: none fails.
    private var writesLeft: Int?
    /// Whether every sync fails.
    private var failsSyncs = false
    /// How many calls were failed.
    private(set) var failures = 0

    /// From now on, lets `count` writes through, then fails every write
    /// with `SQLITE_IOERR_WRITE`, as a disk going bad would.
    func failWrites(after count: Int) { writesLeft = count }

    /// From now on, fails every sync with `SQLITE_IOERR_FSYNC`.
    func failSyncs() { failsSyncs = true }

    /// Removes the fault: every call goes through again.
    func heal() {
        writesLeft = nil
        failsSyncs = false
    }

    func shouldFailWrite() -> Bool {
        guard let left = writesLeft else { return false }
        if left > 0 {
            writesLeft = left - 1
            return false
        }
        failures += 1
        return true
    }

    func shouldFailSync() -> Bool {
        if failsSyncs { failures += 1 }
        return failsSyncs
    }
}

/// A SQLite VFS registered under a unique name for one test: every call
/// goes to the default VFS, except that its ``control`` can make writes
/// and syncs fail. Rollback-journal files only (no WAL, no memory mapping).
///
/// Each file SQLite opens through it is laid out as the `sqlite3_file`
/// header SQLite sees (its methods are ours), then a pointer to the
/// control, then the default VFS's own file, to which the methods pass
/// every call.
final class FaultyVFS {
    let name: String
    let control = FaultControl()
    private let vfs: UnsafeMutablePointer<sqlite3_vfs>
    private let context: Unmanaged<Context>
    private var isRegistered = true

    final class Context {
        let real: UnsafeMutablePointer<sqlite3_vfs>
        let control: FaultControl
        init(real: UnsafeMutablePointer<sqlite3_vfs>, control: FaultControl) {
            self.real = real
            self.control = control
        }
    }

    /// Bytes before the default VFS's file: our header and the control.
    static let realFileOffset = 16

    init() throws {
        guard let real = sqlite3_vfs_find(nil) else { throw SQLiteError(code: .error, message: "no default VFS") }
        name = "faulty-\(UUID().uuidString)"
        context = Unmanaged.passRetained(Context(real: real, control: control))
        vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: real.pointee)
        vfs.pointee.pNext = nil
        vfs.pointee.szOsFile = Int32(Self.realFileOffset) + real.pointee.szOsFile
        vfs.pointee.zName = UnsafePointer(strdup(name))
        vfs.pointee.pAppData = context.toOpaque()
        vfs.pointee.xOpen = faultyOpen
        let code = sqlite3_vfs_register(vfs, 0)
        guard code == SQLITE_OK else { throw SQLiteError(code: ResultCode(rawValue: code), message: "cannot register") }
    }

    /// Unregisters the VFS. Every connection using it must be closed.
    func unregister() {
        guard isRegistered else { return }
        isRegistered = false
        sqlite3_vfs_unregister(vfs)
        free(UnsafeMutableRawPointer(mutating: vfs.pointee.zName))
        vfs.deallocate()
        context.release()
    }

    deinit { unregister() }

    /// A configuration that opens databases through this VFS.
    var configuration: Configuration {
        var configuration = Configuration()
        configuration.vfs = name
        return configuration
    }
}

/// The default VFS's file inside one of ours.
private func realFile(_ file: UnsafeMutablePointer<sqlite3_file>?) -> UnsafeMutablePointer<sqlite3_file> {
    UnsafeMutableRawPointer(file!).advanced(by: FaultyVFS.realFileOffset).assumingMemoryBound(to: sqlite3_file.self)
}

private func control(_ file: UnsafeMutablePointer<sqlite3_file>?) -> FaultControl {
    let pointer = UnsafeMutableRawPointer(file!).advanced(by: MemoryLayout<sqlite3_file>.stride)
        .load(as: UnsafeMutableRawPointer.self)
    return Unmanaged<FaultControl>.fromOpaque(pointer).takeUnretainedValue()
}

private func realMethods(_ file: UnsafeMutablePointer<sqlite3_file>?) -> sqlite3_io_methods {
    realFile(file).pointee.pMethods.pointee
}

private func faultyOpen(
    vfs: UnsafeMutablePointer<sqlite3_vfs>?, name: UnsafePointer<CChar>?, file: UnsafeMutablePointer<sqlite3_file>?,
    flags: Int32, outFlags: UnsafeMutablePointer<Int32>?
) -> Int32 {
    guard let vfs, let file, let appData = vfs.pointee.pAppData else { return SQLITE_CANTOPEN }
    let context = Unmanaged<FaultyVFS.Context>.fromOpaque(appData).takeUnretainedValue()
    let inner = realFile(file)
    let code = context.real.pointee.xOpen!(context.real, name, inner, flags, outFlags)
    guard code == SQLITE_OK, inner.pointee.pMethods != nil else {
        // SQLite calls no method, not even xClose, of a file without methods.
        file.pointee.pMethods = nil
        return code == SQLITE_OK ? SQLITE_CANTOPEN : code
    }
    UnsafeMutableRawPointer(file).advanced(by: MemoryLayout<sqlite3_file>.stride)
        .storeBytes(of: Unmanaged.passUnretained(context.control).toOpaque(), as: UnsafeMutableRawPointer.self)
    file.pointee.pMethods = UnsafePointer(faultyMethods)
    return SQLITE_OK
}

/// The methods of our files: the default VFS's, through the fault control.
nonisolated(unsafe) private let faultyMethods: UnsafeMutablePointer<sqlite3_io_methods> = {
    var methods = sqlite3_io_methods()
    methods.iVersion = 1
    methods.xClose = { file in realMethods(file).xClose!(realFile(file)) }
    methods.xRead = { file, buffer, amount, offset in realMethods(file).xRead!(realFile(file), buffer, amount, offset) }
    methods.xWrite = { file, buffer, amount, offset in
        if control(file).shouldFailWrite() { return SQLITE_IOERR | (3 << 8) }  // SQLITE_IOERR_WRITE
        return realMethods(file).xWrite!(realFile(file), buffer, amount, offset)
    }
    methods.xTruncate = { file, size in realMethods(file).xTruncate!(realFile(file), size) }
    methods.xSync = { file, flags in
        if control(file).shouldFailSync() { return SQLITE_IOERR | (4 << 8) }  // SQLITE_IOERR_FSYNC
        return realMethods(file).xSync!(realFile(file), flags)
    }
    methods.xFileSize = { file, size in realMethods(file).xFileSize!(realFile(file), size) }
    methods.xLock = { file, level in realMethods(file).xLock!(realFile(file), level) }
    methods.xUnlock = { file, level in realMethods(file).xUnlock!(realFile(file), level) }
    methods.xCheckReservedLock = { file, result in realMethods(file).xCheckReservedLock!(realFile(file), result) }
    methods.xFileControl = { file, operation, argument in
        realMethods(file).xFileControl!(realFile(file), operation, argument)
    }
    methods.xSectorSize = { file in realMethods(file).xSectorSize!(realFile(file)) }
    methods.xDeviceCharacteristics = { file in realMethods(file).xDeviceCharacteristics!(realFile(file)) }
    let pointer = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
    pointer.initialize(to: methods)
    return pointer
}()

// MARK: - Shared checks

/// `PRAGMA integrity_check`'s verdict: "ok" when the file is sound.
func integrity(_ db: Database) throws -> String {
    try db.fetchAll(String.self, "PRAGMA integrity_check").joined(separator: "; ")
}

/// Every row of `t`, in order, as "id:value".
func rowsOfT(_ db: Database) throws -> [String] {
    try db.fetchAll("SELECT id, v FROM t ORDER BY id").map { row in
        let id: Int64 = try row["id"]
        let value: String = try row["v"]
        return "\(id):\(value)"
    }
}

/// Creates `t (id, v)` with `count` committed rows.
func makeCommittedRows(_ db: Database, count: Int) throws {
    try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
    try db.savepoint { db in
        let insert = try db.makeStatement("INSERT INTO t (v) VALUES (?)")
        for index in 0..<count { try insert.execute(values: "committed \(index) " + String(repeating: "c", count: 50)) }
    }
}

/// A transaction big enough to touch many pages: inserts, updates and
/// deletes mixed.
func bigTransaction(_ db: Database) throws {
    try db.transaction { db in
        let insert = try db.makeStatement("INSERT INTO t (v) VALUES (?)")
        for index in 0..<400 { try insert.execute(values: "new \(index) " + String(repeating: "n", count: 200)) }
        try db.execute("UPDATE t SET v = v || ' changed' WHERE id % 3 = 0")
        try db.execute("DELETE FROM t WHERE id % 7 = 0")
    }
}

// MARK: - Full disk

@Suite("Fault injection: a full disk")
struct FullDiskTests {
    @Test("An insert that fills the database fails with SQLITE_FULL; the transaction rolls back, nothing is lost")
    func insertFillsDatabase() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("full.sqlite")
        let db = try Database(path: path)
        try makeCommittedRows(db, count: 100)
        let committed = try rowsOfT(db)
        let pages = try #require(try db.fetchOne(Int.self, "PRAGMA page_count"))
        #expect(try db.fetchOne(Int.self, "PRAGMA max_page_count = \(unsafeLiteral: String(pages + 3))") == pages + 3)

        let error = sqliteError { try bigTransaction(db) }
        #expect(error?.code == .full)
        #expect(!db.isInsideTransaction)
        #expect(try rowsOfT(db) == committed)
        #expect(try integrity(db) == "ok")

        // Room again: the connection works, and the same write succeeds.
        #expect(try db.fetchOne(Int.self, "PRAGMA max_page_count = 1000000") == 1_000_000)
        try bigTransaction(db)
        let after = try rowsOfT(db)
        #expect(after.count > committed.count)
        #expect(try integrity(db) == "ok")
        db.close()
        #expect(try rowsOfT(Database(path: path)) == after)
    }

    @Test("A blob that does not fit fails with SQLITE_FULL and leaves the row as it was")
    func blobDoesNotFit() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("full-blob.sqlite")
        let db = try Database(path: path)
        try db.execute("CREATE TABLE pictures (id INTEGER PRIMARY KEY, name TEXT, picture BLOB)")
        let old = PatternBytes.data(count: 10_000, seed: 1)
        try db.execute("INSERT INTO pictures VALUES (1, 'one', ?)", arguments: [old])
        let pages = try #require(try db.fetchOne(Int.self, "PRAGMA page_count"))
        _ = try db.fetchOne(Int.self, "PRAGMA max_page_count = \(unsafeLiteral: String(pages + 10))")

        let big = PatternBytes.data(count: 1 << 20, seed: 2)
        let error = sqliteError {
            _ = try db.writeBlob(from: .data(big), table: "pictures", column: "picture", rowID: 1)
        }
        #expect(error?.code == .full)
        #expect(!db.isInsideTransaction)
        #expect(try db.fetchOne(Data.self, "SELECT picture FROM pictures WHERE id = 1") == old)
        #expect(try db.fetchOne(String.self, "SELECT name FROM pictures WHERE id = 1") == "one")
        #expect(try integrity(db) == "ok")

        _ = try db.fetchOne(Int.self, "PRAGMA max_page_count = 1000000")
        _ = try db.writeBlob(from: .data(big), table: "pictures", column: "picture", rowID: 1)
        #expect(try db.fetchOne(Data.self, "SELECT picture FROM pictures WHERE id = 1") == big)
    }

    @Test("A blob that does not fit, inside a transaction, throws SQLITE_FULL without ending the transaction unseen")
    func blobDoesNotFitInTransaction() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("full-blob-tx.sqlite"))
        try db.execute("CREATE TABLE pictures (id INTEGER PRIMARY KEY, picture BLOB)")
        try db.execute("INSERT INTO pictures VALUES (1, x'0102')")
        let pages = try #require(try db.fetchOne(Int.self, "PRAGMA page_count"))
        _ = try db.fetchOne(Int.self, "PRAGMA max_page_count = \(unsafeLiteral: String(pages + 10))")
        let error = sqliteError {
            try db.transaction { db in
                try db.execute("INSERT INTO pictures VALUES (2, x'03')")
                _ = try db.writeBlob(
                    from: .data(PatternBytes.data(count: 1 << 20, seed: 3)), table: "pictures", column: "picture",
                    rowID: 1)
            }
        }
        #expect(error?.code == .full)
        #expect(try db.fetchAll(Int.self, "SELECT id FROM pictures") == [1])
        #expect(try db.fetchOne(Data.self, "SELECT picture FROM pictures") == Data([1, 2]))
        #expect(try integrity(db) == "ok")
    }
}

// MARK: - A real full file system (root only)

/// Whether this process can mount a tmpfs (root with the capability to
/// mount, as in a privileged container): tried in a temporary directory,
/// and undone.
func canMountTmpfs() async -> Bool {
    guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/bin/mount") else { return false }
    guard let probe = try? TemporaryDirectory() else { return false }
    guard await runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe.url.path]) == 0 else {
        return false
    }
    return await runProgram("/bin/umount", [probe.url.path]) == 0
}

/// Runs a program, returns its exit status (-1 when it cannot start).
@discardableResult
func runProgram(_ program: String, _ arguments: [String]) async -> Int32 {
    do {
        return try await ChildProcess.run(URL(fileURLWithPath: program), arguments).status
    } catch {
        return -1
    }
}

@Suite("Fault injection: a real full file system")
struct FullFileSystemTests {
    @Test(
        "On a full tmpfs, a write fails with SQLITE_FULL, committed rows stay, and freeing space lets writes go on",
        .enabled("needs root and the right to mount a tmpfs") { await canMountTmpfs() })
    func fullTmpfs() async throws {
        let dir = try TemporaryDirectory()
        let mountPoint = dir.url.path
        try #require(await runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=512k", "tmpfs", mountPoint]) == 0)
        let outcome = Result { try fillTmpfs(dir) }
        // Unmounted before the directory is removed.
        if await runProgram("/bin/umount", [mountPoint]) != 0 { await runProgram("/bin/umount", ["-l", mountPoint]) }
        withExtendedLifetime(dir) {}
        try outcome.get()
    }

    /// The test on the mounted tmpfs `dir`.
    private func fillTmpfs(_ dir: TemporaryDirectory) throws {
        let path = dir.path("db.sqlite")
        var committed: [String] = []
        do {
            let db = try Database(path: path)
            try makeCommittedRows(db, count: 50)
            committed = try rowsOfT(db)
            // Take most of the space, so that a large transaction cannot fit.
            let filler = dir.path("filler")
            #expect(FileManager.default.createFile(atPath: filler, contents: Data(count: 300 * 1024)))

            let error = sqliteError {
                try db.transaction { db in
                    let insert = try db.makeStatement("INSERT INTO t (v) VALUES (?)")
                    for index in 0..<2_000 {
                        try insert.execute(values: "\(index) " + String(repeating: "x", count: 200))
                    }
                }
            }
            #expect(error?.code == .full)
            #expect(!db.isInsideTransaction)
            #expect(try rowsOfT(db) == committed)
            #expect(try integrity(db) == "ok")

            try FileManager.default.removeItem(atPath: filler)
            try db.execute("INSERT INTO t (v) VALUES ('after the space came back')")
            committed = try rowsOfT(db)
            db.close()
        }
        #expect(try rowsOfT(Database(path: path)) == committed)
    }
}

// MARK: - I/O errors

@Suite("Fault injection: I/O errors during a write", .tags(.concurrency))
struct IOErrorTests {
    @Test(
        "A write failing with an I/O error surfaces SQLITE_IOERR_WRITE; once healed, only committed data remains",
        arguments: [0, 1, 2, 3, 5, 8, 20, 60], [false, true])
    func failingWrites(after count: Int, smallCache: Bool) throws {
        let vfs = try FaultyVFS()
        defer { vfs.unregister() }
        let dir = try TemporaryDirectory()
        let path = dir.path("io.sqlite")
        do {
            let db = try Database(path: path, configuration: vfs.configuration)
            // A small page cache makes SQLite write pages before the commit,
            // so that the failure hits a statement inside the transaction.
            if smallCache { try db.execute("PRAGMA cache_size = 5") }
            try makeCommittedRows(db, count: 200)
            let committed = try rowsOfT(db)

            vfs.control.failWrites(after: count)
            let error = sqliteError { try bigTransaction(db) }
            #expect(vfs.control.failures > 0)
            #expect(error?.code == .ioError)
            #expect(error?.extendedCode == .ioErrorWrite)
            vfs.control.heal()

            #expect(!db.isInsideTransaction)
            #expect(try integrity(db) == "ok")
            #expect(try rowsOfT(db) == committed)
            // The connection writes again.
            try db.execute("INSERT INTO t (v) VALUES ('after the fault')")
            db.close()
        }
        // A new connection, through the default VFS, sees the same.
        let fresh = try Database(path: path)
        #expect(try integrity(fresh) == "ok")
        #expect(try fresh.fetchOne(Int.self, "SELECT COUNT(*) FROM t") == 201)
        #expect(try fresh.fetchOne(String.self, "SELECT v FROM t ORDER BY id DESC LIMIT 1") == "after the fault")
    }

    @Test("A commit whose sync fails surfaces SQLITE_IOERR_FSYNC; once healed, only committed data remains")
    func failingSync() throws {
        let vfs = try FaultyVFS()
        defer { vfs.unregister() }
        let dir = try TemporaryDirectory()
        let path = dir.path("sync.sqlite")
        let db = try Database(path: path, configuration: vfs.configuration)
        try makeCommittedRows(db, count: 50)
        let committed = try rowsOfT(db)

        vfs.control.failSyncs()
        let error = sqliteError { try bigTransaction(db) }
        #expect(error?.code == .ioError)
        #expect(error?.extendedCode == ResultCode(rawValue: SQLITE_IOERR | (4 << 8)))
        vfs.control.heal()

        #expect(try integrity(db) == "ok")
        #expect(try rowsOfT(db) == committed)
        db.close()
        #expect(try rowsOfT(Database(path: path)) == committed)
    }

    @Test("A queue's write that hits an I/O error throws, and the queue writes again once healed")
    func queueWrite() throws {
        let vfs = try FaultyVFS()
        defer { vfs.unregister() }
        let dir = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: dir.path("queue.sqlite"), configuration: vfs.configuration)
        try queue.write { db in try makeCommittedRows(db, count: 10) }
        vfs.control.failWrites(after: 0)
        #expect(throws: SQLiteError.self) {
            try queue.write { db in try db.execute("INSERT INTO t (v) VALUES ('lost')") }
        }
        vfs.control.heal()
        try queue.write { db in try db.execute("INSERT INTO t (v) VALUES ('kept')") }
        let values = try queue.read { db in try db.fetchAll(String.self, "SELECT v FROM t WHERE id > 10") }
        #expect(values == ["kept"])
        try queue.close()
    }

    @Test("Opening with a VFS that is not registered fails with a clear error")
    func unknownVFS() throws {
        var configuration = Configuration()
        configuration.vfs = "no-such-vfs"
        let dir = try TemporaryDirectory()
        let error = sqliteError { _ = try Database(path: dir.path("x.sqlite"), configuration: configuration) }
        #expect(error?.message.contains("no such vfs") == true)
        #expect(!FileManager.default.fileExists(atPath: dir.path("x.sqlite")))
    }
}
