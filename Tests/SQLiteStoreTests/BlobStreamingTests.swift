import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

#if canImport(SQLite3)
    import SQLite3
#else
    import CSQLite
#endif

/// Statements seen by a connection's trace hook.
private final class StatementLog {
    var statements: [String] = []

    init(_ db: Database) {
        db.trace { [unowned self] event in self.statements.append(event.sql) }
    }
}

@Suite("Streaming large values: round trips")
struct BlobRoundTripTests {
    @Test("A small value round-trips byte for byte through files, and reads as ordinary Data")
    func smallFileRoundTrip() throws {
        let dir = try TemporaryDirectory()
        let db = try makePictureDatabase(in: dir)
        let data = PatternBytes.data(count: 1000, seed: 1)
        let input = dir.url.appendingPathComponent("in.bin")
        try data.write(to: input)
        #expect(try db.writeBlob(from: .file(input), table: "pictures", column: "picture", rowID: 1) == 1000)
        #expect(try storedPicture(db) == data)
        #expect(try db.blobSize(table: "pictures", column: "picture", rowID: 1) == 1000)
        let output = dir.url.appendingPathComponent("out.bin")
        #expect(try db.readBlob(table: "pictures", column: "picture", rowID: 1, to: .file(output)) == 1000)
        #expect(try Data(contentsOf: output) == data)
        // Paths work like URLs.
        try db.writeBlob(from: .file(path: input.path), table: "pictures", column: "picture", rowID: 1)
        try db.readBlob(table: "pictures", column: "picture", rowID: 1, to: .file(path: dir.path("out2.bin")))
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.path("out2.bin"))) == data)
    }

    @Test("Sizes around the chunk size round-trip exactly", arguments: [0, 1, 63, 64, 65, 200, 1000])
    func chunkBoundaries(size: Int) throws {
        let dir = try TemporaryDirectory()
        let db = try makePictureDatabase(in: dir)
        let data = PatternBytes.data(count: size, seed: UInt64(size) + 7)
        let stored = try db.writeBlob(
            from: .data(data), table: "pictures", column: "picture", rowID: 1, chunkSize: 64)
        #expect(stored == size)
        #expect(try storedPicture(db) == data)
        var chunks: [Int] = []
        var copy = Data()
        let destination = BlobDestination { bytes in
            chunks.append(bytes.count)
            copy.append(contentsOf: bytes)
        }
        #expect(try db.readBlob(table: "pictures", column: "picture", rowID: 1, to: destination, chunkSize: 64) == size)
        #expect(copy == data)
        #expect(chunks.allSatisfy { $0 > 0 && $0 <= 64 })
        #expect(chunks.count == (size + 63) / 64)
    }

    @Test("A 30 MB value round-trips byte for byte between files")
    func largeFileRoundTrip() throws {
        let dir = try TemporaryDirectory()
        let db = try makePictureDatabase(in: dir)
        let size = 30 * 1024 * 1024
        try PatternBytes.writeFile(dir.path("in.bin"), count: size, seed: 30)
        #expect(
            try db.writeBlob(from: .file(path: dir.path("in.bin")), table: "pictures", column: "picture", rowID: 1)
                == size)
        #expect(try db.blobSize(table: "pictures", column: "picture", rowID: 1) == size)
        #expect(
            try db.readBlob(table: "pictures", column: "picture", rowID: 1, to: .file(path: dir.path("out.bin")))
                == size)
        #expect(try sameBytes(dir.path("in.bin"), dir.path("out.bin")))
    }

    @Test("Writing replaces NULL, text and older blobs of any size; other columns are untouched")
    func replacesValues() throws {
        let dir = try TemporaryDirectory()
        let db = try makePictureDatabase(in: dir)
        try db.execute("UPDATE pictures SET picture = 'text' WHERE id = 1")
        for (size, seed) in [(5000, UInt64(1)), (10, 2), (300_000, 3), (0, 4)] {
            let data = PatternBytes.data(count: size, seed: seed)
            try db.writeBlob(from: .data(data), table: "pictures", column: "picture", rowID: 1)
            #expect(try storedPicture(db) == data)
            #expect(try db.blobSize(table: "pictures", column: "picture", rowID: 1) == size)
        }
        #expect(try db.fetchOne(String.self, "SELECT name FROM pictures WHERE id = 1") == "empty")
        #expect(try db.fetchOne(String.self, "SELECT typeof(picture) FROM pictures WHERE id = 1") == "blob")
    }

    @Test("A blob column followed by other columns still round-trips")
    func columnNotLast() throws {
        let db = try Database.inMemory()
        try db.execute(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB, after TEXT); INSERT INTO t VALUES (1, NULL, 'kept')")
        let data = PatternBytes.data(count: 100_000, seed: 9)
        try db.writeBlob(from: .data(data), table: "t", column: "b", rowID: 1)
        #expect(try db.fetchOne(Data.self, "SELECT b FROM t") == data)
        #expect(try db.fetchOne(String.self, "SELECT after FROM t") == "kept")
    }

    @Test("Ordinary Data values and streamed values are the same BLOBs")
    func dataValuesStillWork() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)")
        let data = PatternBytes.data(count: 70_000, seed: 5)
        try db.execute("INSERT INTO t (id, b) VALUES (1, ?), (2, ?)", arguments: [data, Data()])
        var copy = Data()
        try db.readBlob(table: "t", column: "b", rowID: 1, to: BlobDestination { copy.append(contentsOf: $0) })
        #expect(copy == data)
        #expect(try db.blobSize(table: "t", column: "b", rowID: 2) == 0)
        try db.writeBlob(from: .data(Data([1, 2, 3])), table: "t", column: "b", rowID: 2)
        #expect(try db.fetchOne(Data.self, "SELECT b FROM t WHERE id = 2") == Data([1, 2, 3]))
        #expect(try db.fetchOne([UInt8].self, "SELECT b FROM t WHERE id = 2") == [1, 2, 3])
    }

    @Test("Blobs of attached and temp schemas are written and read")
    func otherSchemas() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TEMP TABLE t (id INTEGER PRIMARY KEY, b BLOB); INSERT INTO temp.t VALUES (4, NULL)")
        try db.writeBlob(from: .data(Data([9, 9])), table: "t", column: "b", rowID: 4, schema: "temp")
        #expect(try db.blobSize(table: "t", column: "b", rowID: 4, schema: "temp") == 2)
        var copy = Data()
        try db.readBlob(
            table: "t", column: "b", rowID: 4, schema: "temp", to: BlobDestination { copy.append(contentsOf: $0) })
        #expect(copy == Data([9, 9]))
    }
}

@Suite("Streaming large values: sources and destinations")
struct BlobSourceDestinationTests {
    @Test("A FileHandle source is read from its current offset to its end")
    func fileHandleSource() throws {
        let dir = try TemporaryDirectory()
        let db = try makePictureDatabase(in: dir)
        let payload = PatternBytes.data(count: 4000, seed: 11)
        try (Data("HEADER".utf8) + payload).write(to: dir.url.appendingPathComponent("in.bin"))
        let handle = try #require(FileHandle(forReadingAtPath: dir.path("in.bin")))
        defer { try? handle.close() }
        try handle.seek(toOffset: 6)
        #expect(try db.writeBlob(from: .fileHandle(handle), table: "pictures", column: "picture", rowID: 1) == 4000)
        #expect(try storedPicture(db) == payload)
        #expect(try handle.offset() == 4006)
    }

    @Test("A pipe, whose size is unknown, is buffered first and stored whole")
    func pipeSource() throws {
        let dir = try TemporaryDirectory()
        let db = try makePictureDatabase(in: dir)
        let data = PatternBytes.data(count: 50_000, seed: 12)
        let pipe = Pipe()
        try pipe.fileHandleForWriting.write(contentsOf: data)
        try pipe.fileHandleForWriting.close()
        #expect(
            try db.writeBlob(
                from: .fileHandle(pipe.fileHandleForReading), table: "pictures", column: "picture", rowID: 1)
                == 50_000)
        #expect(try storedPicture(db) == data)
    }

    @Test("An InputStream is stored with or without a known size")
    func inputStreamSource() throws {
        let dir = try TemporaryDirectory()
        let db = try makePictureDatabase(in: dir)
        let data = PatternBytes.data(count: 123_456, seed: 13)
        try db.writeBlob(
            from: .stream(InputStream(data: data), size: data.count), table: "pictures", column: "picture", rowID: 1)
        #expect(try storedPicture(db) == data)
        let other = PatternBytes.data(count: 77_777, seed: 14)
        try db.writeBlob(
            from: .stream(InputStream(data: other)), table: "pictures", column: "picture", rowID: 1, chunkSize: 4096)
        #expect(try storedPicture(db) == other)
        // A stream opened by the caller stays the caller's to close.
        let opened = InputStream(data: data)
        opened.open()
        try db.writeBlob(from: .stream(opened), table: "pictures", column: "picture", rowID: 1)
        #expect(opened.streamStatus != .closed)
        opened.close()
        #expect(try storedPicture(db) == data)
    }

    @Test("A custom source of unknown size is buffered and stored whole")
    func customSource() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB); INSERT INTO t VALUES (1, NULL)")
        var produced = 0
        let source = BlobSource(size: nil) { buffer in
            // Three bytes at a time, 1000 bytes in all.
            let count = min(3, buffer.count, 1000 - produced)
            for index in 0..<count { buffer[index] = UInt8((produced + index) % 251) }
            produced += count
            return count
        }
        #expect(try db.writeBlob(from: source, table: "t", column: "b", rowID: 1) == 1000)
        #expect(try db.fetchOne(Data.self, "SELECT b FROM t") == Data((0..<1000).map { UInt8($0 % 251) }))
    }

    @Test("A FileHandle destination is written from its current offset and left open")
    func fileHandleDestination() throws {
        let dir = try TemporaryDirectory()
        let db = try makePictureDatabase(in: dir)
        let data = PatternBytes.data(count: 3000, seed: 15)
        try db.writeBlob(from: .data(data), table: "pictures", column: "picture", rowID: 1)
        #expect(FileManager.default.createFile(atPath: dir.path("out.bin"), contents: Data("HEAD".utf8)))
        let handle = try #require(FileHandle(forWritingAtPath: dir.path("out.bin")))
        try handle.seekToEnd()
        #expect(try db.readBlob(table: "pictures", column: "picture", rowID: 1, to: .fileHandle(handle)) == 3000)
        try handle.write(contentsOf: Data("TAIL".utf8))
        try handle.close()
        #expect(
            try Data(contentsOf: dir.url.appendingPathComponent("out.bin")) == Data("HEAD".utf8) + data
                + Data("TAIL".utf8))
    }

    @Test("An OutputStream destination receives the whole value")
    func outputStreamDestination() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)")
        let data = PatternBytes.data(count: 600_000, seed: 16)
        try db.execute("INSERT INTO t VALUES (1, ?)", arguments: [data])
        let stream = OutputStream.toMemory()
        try db.readBlob(table: "t", column: "b", rowID: 1, to: .stream(stream))
        #expect(stream.streamStatus == .closed)
        #expect(stream.property(forKey: .dataWrittenToMemoryStreamKey) as? Data == data)
    }

    @Test("An existing destination file is replaced whole and keeps its permissions")
    func replacesDestination() throws {
        let dir = try TemporaryDirectory()
        let db = try makePictureDatabase(in: dir)
        let path = dir.path("out.bin")
        try Data(repeating: 0x55, count: 10_000).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
        let data = PatternBytes.data(count: 100, seed: 17)
        try db.writeBlob(from: .data(data), table: "pictures", column: "picture", rowID: 1)
        try db.readBlob(table: "pictures", column: "picture", rowID: 1, to: .file(path: path))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == data)
        let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(permissions == 0o640)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted() == [
                "out.bin", "pictures.sqlite",
            ])
    }
}

@Suite("Streaming large values: errors")
struct BlobStreamingErrorTests {
    /// A database whose picture already holds `original`, and the bytes.
    private func makeDatabase(_ dir: TemporaryDirectory) throws -> (Database, Data) {
        let db = try makePictureDatabase(in: dir)
        let original = PatternBytes.data(count: 5000, seed: 99)
        try db.execute("UPDATE pictures SET picture = ? WHERE id = 1", arguments: [original])
        return (db, original)
    }

    @Test("A value over the caller's limit is refused before any statement runs")
    func overLimit() throws {
        let dir = try TemporaryDirectory()
        let (db, original) = try makeDatabase(dir)
        try PatternBytes.writeFile(dir.path("big.bin"), count: 10_001, seed: 1)
        let changes = db.totalChangesCount
        let log = StatementLog(db)
        let error = blobError {
            try db.writeBlob(
                from: .file(path: dir.path("big.bin")), table: "pictures", column: "picture", rowID: 1,
                maximumSize: 10_000)
        }
        #expect(error?.reason == .tooLarge(size: 10_001, limit: 10_000))
        #expect(error?.description.contains("10001 bytes, over the limit of 10000 bytes; nothing was written") == true)
        #expect(log.statements.isEmpty)
        #expect(db.totalChangesCount == changes)
        #expect(try storedPicture(db) == original)
    }

    @Test("A value exactly at the limit is accepted")
    func atLimit() throws {
        let dir = try TemporaryDirectory()
        let (db, _) = try makeDatabase(dir)
        let data = PatternBytes.data(count: 10_000, seed: 2)
        try db.writeBlob(from: .data(data), table: "pictures", column: "picture", rowID: 1, maximumSize: 10_000)
        #expect(try storedPicture(db) == data)
        try db.writeBlob(from: .data(Data()), table: "pictures", column: "picture", rowID: 1, maximumSize: 0)
        #expect(try storedPicture(db) == Data())
    }

    @Test("A stream of unknown size is stopped as soon as it passes the limit, before anything is written")
    func unknownSizeOverLimit() throws {
        let dir = try TemporaryDirectory()
        let (db, original) = try makeDatabase(dir)
        var delivered = 0
        // An endless source: only the limit stops it.
        let endless = BlobSource(size: nil) { buffer in
            delivered += buffer.count
            return buffer.count
        }
        let log = StatementLog(db)
        let error = blobError {
            try db.writeBlob(
                from: endless, table: "pictures", column: "picture", rowID: 1, maximumSize: 100_000, chunkSize: 4096)
        }
        #expect(error?.reason == .tooLarge(size: nil, limit: 100_000))
        #expect(error?.description.contains("more than the limit of 100000 bytes") == true)
        #expect(delivered <= 100_000 + 4096)
        #expect(log.statements.isEmpty)
        #expect(try storedPicture(db) == original)
    }

    @Test("SQLite's own maximum length is a limit too")
    func sqliteLimit() throws {
        let dir = try TemporaryDirectory()
        let (db, original) = try makeDatabase(dir)
        let handle = try #require(db.sqliteConnection)
        let previous = sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, 1000)
        let error = blobError {
            try db.writeBlob(from: .data(Data(count: 1001)), table: "pictures", column: "picture", rowID: 1)
        }
        #expect(error?.reason == .tooLarge(size: 1001, limit: 1000))
        sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, previous)
        #expect(try storedPicture(db) == original)
    }

    @Test("A missing input file is reported with its path before any statement runs")
    func missingInput() throws {
        let dir = try TemporaryDirectory()
        let (db, original) = try makeDatabase(dir)
        let log = StatementLog(db)
        let path = dir.path("nope.png")
        let error = blobError {
            try db.writeBlob(from: .file(path: path), table: "pictures", column: "picture", rowID: 1)
        }
        #expect(error?.reason == .unreadableSource("No such file or directory"))
        #expect(error?.path == path)
        #expect(
            error?.description
                == "blob \"pictures\".\"picture\" of row 1: cannot read the source file \(path): No such file or directory"
        )
        #expect(log.statements.isEmpty)
        #expect(try storedPicture(db) == original)
    }

    @Test("A directory, or a URL that is not a file, is not a readable source")
    func directoryInput() throws {
        let dir = try TemporaryDirectory()
        let (db, original) = try makeDatabase(dir)
        let error = blobError { try db.writeBlob(from: .file(dir.url), table: "pictures", column: "picture", rowID: 1) }
        #expect(error?.reason == .unreadableSource("it is a directory"))
        let remote = try #require(URL(string: "https://example.com/coffee.png"))
        let remoteError = blobError {
            try db.writeBlob(from: .file(remote), table: "pictures", column: "picture", rowID: 1)
        }
        #expect(remoteError?.reason == .unreadableSource("not a file URL: https://example.com/coffee.png"))
        #expect(try storedPicture(db) == original)
    }

    @Test(
        "A file without read permission is an unreadable source", .disabled(if: isRoot, "root reads any file"),
        .tags(.unprivileged))
    func unreadableInput() throws {
        let dir = try TemporaryDirectory()
        let (db, original) = try makeDatabase(dir)
        try Data([1, 2, 3]).write(to: dir.url.appendingPathComponent("locked.bin"))
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: dir.path("locked.bin"))
        let error = blobError {
            try db.writeBlob(from: .file(path: dir.path("locked.bin")), table: "pictures", column: "picture", rowID: 1)
        }
        #expect(error?.reason == .unreadableSource("Permission denied"))
        #expect(try storedPicture(db) == original)
    }

    @Test("A source that ends early is a short read, and the row keeps its value")
    func shortSource() throws {
        let dir = try TemporaryDirectory()
        let (db, original) = try makeDatabase(dir)
        let data = PatternBytes.data(count: 500, seed: 3)
        let error = blobError {
            try db.writeBlob(
                from: .stream(InputStream(data: data), size: 1000), table: "pictures", column: "picture", rowID: 1,
                chunkSize: 128)
        }
        #expect(error?.reason == .shortRead(expected: 1000, received: 500))
        #expect(error?.description.contains("ended after 500 of the 1000 bytes expected") == true)
        #expect(try storedPicture(db) == original)
        #expect(!db.isInsideTransaction)
    }

    @Test("A source longer than announced is refused, and the row keeps its value")
    func longSource() throws {
        let dir = try TemporaryDirectory()
        let (db, original) = try makeDatabase(dir)
        let data = PatternBytes.data(count: 1001, seed: 4)
        let error = blobError {
            try db.writeBlob(
                from: .stream(InputStream(data: data), size: 1000), table: "pictures", column: "picture", rowID: 1)
        }
        #expect(error?.reason == .sourceTooLong(expected: 1000))
        #expect(try storedPicture(db) == original)
    }

    @Test("An error thrown by a custom source is rethrown as is, and the row keeps its value")
    func failingSource() throws {
        let dir = try TemporaryDirectory()
        let (db, original) = try makeDatabase(dir)
        var calls = 0
        let failing = BlobSource(size: 100_000) { buffer in
            calls += 1
            if calls > 2 { throw CancellationError() }
            return buffer.count
        }
        #expect(throws: CancellationError.self) {
            try db.writeBlob(from: failing, table: "pictures", column: "picture", rowID: 1, chunkSize: 1000)
        }
        #expect(try storedPicture(db) == original)
    }

    @Test("A source that claims more bytes than its buffer is a misuse, not a crash")
    func lyingSource() throws {
        let dir = try TemporaryDirectory()
        let (db, original) = try makeDatabase(dir)
        let lying = BlobSource(size: 100) { buffer in buffer.count + 1 }
        #expect(
            sqliteError { try db.writeBlob(from: lying, table: "pictures", column: "picture", rowID: 1) }?.code
                == .misuse)
        #expect(try storedPicture(db) == original)
    }

    @Test("A row deleted while its value is written expires the copy, and the deletion is undone with it")
    func rowDeletedDuringWrite() throws {
        let dir = try TemporaryDirectory()
        let (db, original) = try makeDatabase(dir)
        var calls = 0
        let source = BlobSource(size: 10_000) { buffer in
            calls += 1
            if calls == 2 { try db.execute("DELETE FROM pictures WHERE id = 1") }
            return buffer.count
        }
        let error = blobError {
            try db.writeBlob(from: source, table: "pictures", column: "picture", rowID: 1, chunkSize: 1000)
        }
        #expect(error?.reason == .expired)
        #expect(try storedPicture(db) == original)
    }

    @Test("Writing to a missing row is refused and changes nothing")
    func missingRowWrite() throws {
        let dir = try TemporaryDirectory()
        let (db, original) = try makeDatabase(dir)
        let changes = db.totalChangesCount
        let error = blobError {
            try db.writeBlob(from: .data(Data([1])), table: "pictures", column: "picture", rowID: 42)
        }
        #expect(error?.reason == .rowNotFound)
        #expect(error?.rowID == 42)
        #expect(db.totalChangesCount == changes)
        #expect(try db.fetchOne(Int.self, "SELECT count(*) FROM pictures") == 1)
        #expect(try storedPicture(db) == original)
    }

    @Test("Inside a transaction, a failed write undoes only itself")
    func failureInsideTransaction() throws {
        let dir = try TemporaryDirectory()
        let (db, original) = try makeDatabase(dir)
        try db.transaction { db in
            try db.execute("INSERT INTO pictures (id, name) VALUES (2, 'second')")
            let error = blobError {
                try db.writeBlob(
                    from: .stream(InputStream(data: Data(count: 10)), size: 20), table: "pictures", column: "picture",
                    rowID: 1)
            }
            #expect(error?.reason == .shortRead(expected: 20, received: 10))
            #expect(db.isInsideTransaction)
        }
        #expect(try db.fetchOne(String.self, "SELECT name FROM pictures WHERE id = 2") == "second")
        #expect(try storedPicture(db) == original)
    }

    @Test("SQLite's refusals come through: a missing table, a read-only database")
    func sqliteRefusals() throws {
        let dir = try TemporaryDirectory()
        let (db, original) = try makeDatabase(dir)
        #expect(
            sqliteError { try db.writeBlob(from: .data(Data([1])), table: "nope", column: "picture", rowID: 1) }?
                .message.contains("no such table") == true)
        var configuration = Configuration()
        configuration.isReadOnly = true
        let readOnly = try Database(path: dir.path("pictures.sqlite"), configuration: configuration)
        let error = sqliteError {
            try readOnly.writeBlob(from: .data(Data([1])), table: "pictures", column: "picture", rowID: 1)
        }
        #expect(error?.code == .readOnly)
        var copy = Data()
        try readOnly.readBlob(
            table: "pictures", column: "picture", rowID: 1, to: BlobDestination { copy.append(contentsOf: $0) })
        #expect(copy == original)
    }

    @Test("Bad chunk sizes and limits are misuse errors")
    func badArguments() throws {
        let dir = try TemporaryDirectory()
        let (db, original) = try makeDatabase(dir)
        for chunkSize in [0, -1] {
            #expect(
                sqliteError {
                    try db.writeBlob(
                        from: .data(Data([1])), table: "pictures", column: "picture", rowID: 1, chunkSize: chunkSize)
                }?.code == .misuse)
            #expect(
                sqliteError {
                    try db.readBlob(
                        table: "pictures", column: "picture", rowID: 1, to: .file(path: dir.path("x")),
                        chunkSize: chunkSize)
                }?.code == .misuse)
        }
        #expect(
            sqliteError {
                try db.writeBlob(
                    from: .data(Data([1])), table: "pictures", column: "picture", rowID: 1, maximumSize: -1)
            }?.code == .misuse)
        #expect(try storedPicture(db) == original)
        #expect(!FileManager.default.fileExists(atPath: dir.path("x")))
    }

    @Test("A closed database refuses every blob operation")
    func closedDatabase() throws {
        let dir = try TemporaryDirectory()
        let (db, _) = try makeDatabase(dir)
        db.close()
        #expect(
            sqliteError { try db.writeBlob(from: .data(Data([1])), table: "pictures", column: "picture", rowID: 1) }?
                .code == .misuse)
        #expect(
            sqliteError {
                try db.readBlob(table: "pictures", column: "picture", rowID: 1, to: BlobDestination { _ in })
            }?.code == .misuse)
        #expect(sqliteError { _ = try db.blobSize(table: "pictures", column: "picture", rowID: 1) }?.code == .misuse)
    }

    @Test("blobSize: the size without reading, nil for NULL, errors for a missing row or another type")
    func blobSize() throws {
        let db = try Database.inMemory()
        try db.execute(
            """
            CREATE TABLE t (id INTEGER PRIMARY KEY, b);
            INSERT INTO t VALUES (1, zeroblob(5000000)), (2, NULL), (3, 42), (4, 'héllo'), (5, 1.5), (6, x'');
            """)
        #expect(try db.blobSize(table: "t", column: "b", rowID: 1) == 5_000_000)
        #expect(try db.blobSize(table: "t", column: "b", rowID: 2) == nil)
        #expect(try db.blobSize(table: "t", column: "b", rowID: 6) == 0)
        #expect(
            blobError { _ = try db.blobSize(table: "t", column: "b", rowID: 3) }?.reason == .notABlob(found: .integer))
        #expect(blobError { _ = try db.blobSize(table: "t", column: "b", rowID: 4) }?.reason == .notABlob(found: .text))
        #expect(blobError { _ = try db.blobSize(table: "t", column: "b", rowID: 5) }?.reason == .notABlob(found: .real))
        #expect(blobError { _ = try db.blobSize(table: "t", column: "b", rowID: 7) }?.reason == .rowNotFound)
        #expect(
            sqliteError { _ = try db.blobSize(table: "t", column: "nope", rowID: 1) }?.message.contains(
                "no such column") == true)
    }

    @Test("Reading a missing row, a NULL, a number or text says which, and creates no file")
    func readRefusals() throws {
        let dir = try TemporaryDirectory()
        let db = try makePictureDatabase(in: dir)
        try db.execute("INSERT INTO pictures (id, picture) VALUES (2, 7), (3, 'text')")
        let output = dir.path("out.png")
        let cases: [(Int64, BlobError.Reason)] = [
            (42, .rowNotFound), (1, .nullValue), (2, .notABlob(found: .integer)), (3, .notABlob(found: .text)),
        ]
        for (rowID, reason) in cases {
            let error = blobError {
                try db.readBlob(table: "pictures", column: "picture", rowID: rowID, to: .file(path: output))
            }
            #expect(error?.reason == reason)
            #expect(!FileManager.default.fileExists(atPath: output))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["pictures.sqlite"])
    }

    @Test("An existing file is left as it was when reading fails")
    func failedReadKeepsFile() throws {
        let dir = try TemporaryDirectory()
        let db = try makePictureDatabase(in: dir)
        let output = dir.path("out.png")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: output))
        let error = blobError {
            try db.readBlob(table: "pictures", column: "picture", rowID: 1, to: .file(path: output))
        }
        #expect(error?.reason == .nullValue)
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data("precious".utf8))
    }

    @Test("Unwritable output paths are reported with their reason and leave nothing behind")
    func unwritableOutputs() throws {
        let dir = try TemporaryDirectory()
        let (db, _) = try makeDatabase(dir)
        try Data([1]).write(to: dir.url.appendingPathComponent("plain.txt"))
        let cases: [(String, String)] = [
            (dir.path("missing/out.png"), "the directory \(dir.path("missing")) does not exist"),
            (dir.url.path, "it is a directory"),
            (dir.path("plain.txt/out.png"), "\(dir.path("plain.txt")) is not a directory"),
            (dir.path("new") + "/", "the path names a directory, not a file"),
        ]
        for (path, why) in cases {
            let error = blobError {
                try db.readBlob(table: "pictures", column: "picture", rowID: 1, to: .file(path: path))
            }
            #expect(error?.reason == .unwritableDestination(why))
            #expect(error?.path == path)
            #expect(error?.description.contains("cannot write the destination file \(path): \(why)") == true)
        }
        let remote = try #require(URL(string: "https://example.com/out.png"))
        #expect(
            blobError { try db.readBlob(table: "pictures", column: "picture", rowID: 1, to: .file(remote)) }?.reason
                == .unwritableDestination("not a file URL: https://example.com/out.png"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted() == [
                "pictures.sqlite", "plain.txt",
            ])
    }

    @Test(
        "A read-only file or directory is not a writable destination", .disabled(if: isRoot, "root writes anywhere"),
        .tags(.unprivileged))
    func permissionDenied() throws {
        let dir = try TemporaryDirectory()
        let (db, _) = try makeDatabase(dir)
        let locked = dir.path("locked.png")
        try Data([1]).write(to: URL(fileURLWithPath: locked))
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: locked)
        let error = blobError {
            try db.readBlob(table: "pictures", column: "picture", rowID: 1, to: .file(path: locked))
        }
        #expect(error?.reason == .unwritableDestination("Permission denied"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: locked)) == Data([1]))
        try FileManager.default.createDirectory(atPath: dir.path("ro"), withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: dir.path("ro"))
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path("ro")) }
        let inReadOnly = blobError {
            try db.readBlob(table: "pictures", column: "picture", rowID: 1, to: .file(path: dir.path("ro/out.png")))
        }
        #expect(inReadOnly?.reason == .unwritableDestination("Permission denied"))
    }

    @Test("A destination that stops accepting bytes is a short write")
    func shortWrite() throws {
        let dir = try TemporaryDirectory()
        let (db, _) = try makeDatabase(dir)
        let error = blobError {
            try db.readBlob(
                table: "pictures", column: "picture", rowID: 1, to: .stream(FixedCapacityStream(capacity: 1000)),
                chunkSize: 256)
        }
        #expect(error?.reason == .shortWrite(expected: 5000, written: 1000))
        #expect(error?.description.contains("accepted 1000 of the 5000 bytes") == true)
    }

    @Test("A stream that fails is reported with the stream's error")
    func failingStreams() throws {
        let dir = try TemporaryDirectory()
        let (db, original) = try makeDatabase(dir)
        // Foundation's fixed-size buffer stream fails once full.
        var buffer = [UInt8](repeating: 0, count: 1000)
        let full = buffer.withUnsafeMutableBufferPointer { pointer in
            blobError {
                let stream = OutputStream(toBuffer: pointer.baseAddress!, capacity: 1000)
                try db.readBlob(table: "pictures", column: "picture", rowID: 1, to: .stream(stream), chunkSize: 256)
            }
        }
        switch full?.reason {
        case .unwritableDestination?, .shortWrite?: break
        default: Issue.record("expected a failed destination, got \(String(describing: full))")
        }
        let missing = try #require(OutputStream(toFileAtPath: dir.path("missing/out.bin"), append: false))
        let unwritable = blobError {
            try db.readBlob(table: "pictures", column: "picture", rowID: 1, to: .stream(missing))
        }
        #expect(
            unwritable?.reason
                == .unwritableDestination("The operation could not be completed. No such file or directory"))
        let unreadable = try #require(InputStream(fileAtPath: dir.path("missing.bin")))
        let error = blobError {
            try db.writeBlob(from: .stream(unreadable), table: "pictures", column: "picture", rowID: 1)
        }
        #expect(error?.reason == .unreadableSource("The operation could not be completed. No such file or directory"))
        let closed = InputStream(data: Data([1, 2, 3]))
        closed.open()
        closed.close()
        let closedError = blobError {
            try db.writeBlob(from: .stream(closed), table: "pictures", column: "picture", rowID: 1)
        }
        #expect(closedError?.reason == .unreadableSource("the stream is closed"))
        #expect(try storedPicture(db) == original)
    }

    @Test("An error thrown by a custom destination is rethrown as is")
    func failingDestination() throws {
        let dir = try TemporaryDirectory()
        let (db, _) = try makeDatabase(dir)
        var calls = 0
        #expect(throws: CancellationError.self) {
            try db.readBlob(
                table: "pictures", column: "picture", rowID: 1,
                to: BlobDestination { _ in
                    calls += 1
                    throw CancellationError()
                }, chunkSize: 100)
        }
        #expect(calls == 1)
    }
}

/// An output stream that accepts `capacity` bytes, then reports it is full
/// by accepting none (what `write(_:maxLength:)` returning 0 means).
private final class FixedCapacityStream: OutputStream {
    private var capacity = 0
    private var accepted = 0

    convenience init(capacity: Int) {
        self.init(toMemory: ())
        self.capacity = capacity
    }

    // A required initializer in swift-corelibs-foundation, an ordinary
    // designated one in Apple's Foundation.
    #if canImport(Darwin)
        override init(toMemory: ()) { super.init(toMemory: ()) }
    #else
        required init(toMemory: ()) { super.init(toMemory: ()) }
    #endif

    override func open() {}
    override func close() {}
    override var streamStatus: Stream.Status { .open }
    override var hasSpaceAvailable: Bool { accepted < capacity }

    override func write(_ buffer: UnsafePointer<UInt8>, maxLength length: Int) -> Int {
        let count = min(length, capacity - accepted)
        accepted += count
        return count
    }
}
