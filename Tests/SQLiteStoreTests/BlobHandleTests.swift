import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

@Suite("Incremental BLOB handles")
struct BlobHandleTests {
    private func makeDatabase() throws -> Database {
        let db = try Database.inMemory()
        try db.execute(
            """
            CREATE TABLE t (id INTEGER PRIMARY KEY, tag TEXT UNIQUE, n INTEGER, r REAL, s TEXT, b BLOB);
            INSERT INTO t (id, tag, n, r, s, b) VALUES (1, 'a', 7, 1.5, 'hé', x'00010203040506070809');
            INSERT INTO t (id, tag, n, r, s, b) VALUES (2, 'b', NULL, NULL, NULL, NULL);
            INSERT INTO t (id, tag, b) VALUES (3, 'c', x'FFEE');
            """)
        return db
    }

    @Test("A handle reports the blob's size and reads any range of it")
    func readsRanges() throws {
        let db = try makeDatabase()
        let blob = try db.openBlob(table: "t", column: "b", rowID: 1)
        #expect(blob.size == 10)
        #expect(blob.access == .readOnly)
        #expect(try blob.read(count: 10) == Data(0..<10))
        #expect(try blob.read(count: 3, at: 7) == Data([7, 8, 9]))
        #expect(try blob.read(count: 0, at: 10) == Data())
        var bytes = [UInt8](repeating: 0, count: 4)
        try bytes.withUnsafeMutableBytes { try blob.read(into: $0, at: 2) }
        #expect(bytes == [2, 3, 4, 5])
        try blob.close()
    }

    @Test("Reads outside the blob are refused with the range and the size")
    func readOutOfBounds() throws {
        let db = try makeDatabase()
        let blob = try db.openBlob(table: "t", column: "b", rowID: 1)
        for (offset, count) in [(8, 3), (11, 0), (-1, 2), (0, 11), (0, -1), (Int.max, 1)] {
            let error = blobError { _ = try blob.read(count: count, at: offset) }
            #expect(error?.reason == .outOfBounds(offset: offset, count: count, size: 10))
        }
        let error = blobError { _ = try blob.read(count: 3, at: 8) }
        #expect(error?.description.contains("the blob holds 10 bytes") == true)
        // The handle is still usable.
        #expect(try blob.read(count: 2, at: 8) == Data([8, 9]))
    }

    @Test("A read-write handle writes in place, and the row keeps the bytes")
    func writesInPlace() throws {
        let db = try makeDatabase()
        try db.withBlob(table: "t", column: "b", rowID: 1, access: .readWrite) { blob in
            try blob.write(Data([0xAA, 0xBB]), at: 0)
            try blob.write([UInt8]([0xCC]), at: 9)
            #expect(try blob.read(count: 10) == Data([0xAA, 0xBB, 2, 3, 4, 5, 6, 7, 8, 0xCC]))
        }
        #expect(
            try db.fetchOne(Data.self, "SELECT b FROM t WHERE id = 1") == Data([0xAA, 0xBB, 2, 3, 4, 5, 6, 7, 8, 0xCC]))
    }

    @Test("A write past the end is refused and the blob does not grow")
    func writeOutOfBounds() throws {
        let db = try makeDatabase()
        let blob = try db.openBlob(table: "t", column: "b", rowID: 3, access: .readWrite)
        let error = blobError { try blob.write(Data([1, 2, 3]), at: 0) }
        #expect(error?.reason == .outOfBounds(offset: 0, count: 3, size: 2))
        #expect(error?.description.contains("cannot change") == true)
        #expect(blobError { try blob.write(Data([1]), at: -1) }?.reason == .outOfBounds(offset: -1, count: 1, size: 2))
        try blob.close()
        #expect(try db.fetchOne(Data.self, "SELECT b FROM t WHERE id = 3") == Data([0xFF, 0xEE]))
    }

    @Test("A read-only handle refuses writes with a misuse error")
    func readOnlyRefusesWrites() throws {
        let db = try makeDatabase()
        let blob = try db.openBlob(table: "t", column: "b", rowID: 3)
        let error = sqliteError { try blob.write(Data([1]), at: 0) }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("read-only") == true)
        try blob.close()
        #expect(try db.fetchOne(Data.self, "SELECT b FROM t WHERE id = 3") == Data([0xFF, 0xEE]))
    }

    @Test("Opening a missing row, a NULL, an INTEGER or a REAL says which")
    func openRefusals() throws {
        let db = try makeDatabase()
        let cases: [(String, Int64, BlobError.Reason)] = [
            ("b", 99, .rowNotFound), ("b", 2, .nullValue), ("n", 1, .notABlob(found: .integer)),
            ("r", 1, .notABlob(found: .real)),
        ]
        for (column, rowID, reason) in cases {
            for access in [BlobAccess.readOnly, .readWrite] {
                let error = blobError { _ = try db.openBlob(table: "t", column: column, rowID: rowID, access: access) }
                #expect(error?.reason == reason)
                #expect(error?.table == "t")
                #expect(error?.column == column)
                #expect(error?.rowID == rowID)
            }
        }
        #expect(
            blobError { _ = try db.openBlob(table: "t", column: "b", rowID: 99) }?.description
                == "blob \"t\".\"b\" of row 99: the row does not exist")
        #expect(
            blobError { _ = try db.openBlob(table: "t", column: "n", rowID: 1) }?.description
                == "blob \"t\".\"n\" of row 1: the value is INTEGER, not a blob")
    }

    @Test("SQLite's own refusals stay SQLiteErrors with SQLite's message")
    func sqliteRefusals() throws {
        let db = try makeDatabase()
        try db.execute("CREATE TABLE nr (k TEXT PRIMARY KEY, b BLOB) WITHOUT ROWID; CREATE VIEW v AS SELECT * FROM t")
        let missingTable = sqliteError { _ = try db.openBlob(table: "nope", column: "b", rowID: 1) }
        #expect(missingTable?.message.contains("no such table") == true)
        let missingColumn = sqliteError { _ = try db.openBlob(table: "t", column: "nope", rowID: 1) }
        #expect(missingColumn?.message.contains("no such column") == true)
        let indexed = sqliteError { _ = try db.openBlob(table: "t", column: "tag", rowID: 1, access: .readWrite) }
        #expect(indexed?.message.contains("indexed") == true)
        #expect(sqliteError { _ = try db.openBlob(table: "nr", column: "b", rowID: 1) }?.code == .error)
        #expect(sqliteError { _ = try db.openBlob(table: "v", column: "b", rowID: 1) }?.code == .error)
        #expect(sqliteError { _ = try db.openBlob(table: "t", column: "b", rowID: 1, schema: "nope") }?.code == .error)
    }

    @Test("TEXT opens as its UTF-8 bytes, as in SQLite")
    func textOpensAsBytes() throws {
        let db = try makeDatabase()
        let blob = try db.openBlob(table: "t", column: "s", rowID: 1)
        #expect(try blob.read(count: blob.size) == Data("hé".utf8))
    }

    @Test("Deleting or updating the row expires the handle")
    func rowChangesExpireTheHandle() throws {
        let db = try makeDatabase()
        let deleted = try db.openBlob(table: "t", column: "b", rowID: 3)
        let updated = try db.openBlob(table: "t", column: "b", rowID: 1, access: .readWrite)
        try db.execute("DELETE FROM t WHERE id = 3")
        try db.execute("UPDATE t SET n = 8 WHERE id = 1")
        let error = blobError { _ = try deleted.read(count: 1) }
        #expect(error?.reason == .expired)
        #expect(error?.description.contains("changed or deleted") == true)
        #expect(blobError { try updated.write(Data([1]), at: 0) }?.reason == .expired)
        #expect(blobError { _ = try updated.read(count: 1) }?.reason == .expired)
        try deleted.close()
        try updated.close()
        #expect(try db.fetchOne(Data.self, "SELECT b FROM t WHERE id = 1") == Data(0..<10))
    }

    @Test("reopen moves the handle to another row")
    func reopen() throws {
        let db = try makeDatabase()
        let blob = try db.openBlob(table: "t", column: "b", rowID: 1)
        try blob.reopen(rowID: 3)
        #expect(blob.rowID == 3)
        #expect(blob.size == 2)
        #expect(try blob.read(count: 2) == Data([0xFF, 0xEE]))
        try blob.reopen(rowID: 1)
        #expect(blob.size == 10)
        #expect(try blob.read(count: 1, at: 9) == Data([9]))
    }

    @Test("reopen on a row without a blob says why, and leaves the handle aborted")
    func reopenFailure() throws {
        let db = try makeDatabase()
        for (rowID, reason) in [(Int64(99), BlobError.Reason.rowNotFound), (2, .nullValue)] {
            let blob = try db.openBlob(table: "t", column: "b", rowID: 1)
            let error = blobError { try blob.reopen(rowID: rowID) }
            #expect(error?.reason == reason)
            #expect(error?.rowID == rowID)
            #expect(blobError { _ = try blob.read(count: 0) }?.reason == .expired)
            #expect(blobError { try blob.reopen(rowID: 3) }?.reason == .expired)
            try blob.close()
        }
    }

    @Test("readChunks delivers the whole blob in order, in chunks of the size asked")
    func readChunks() throws {
        let db = try makeDatabase()
        let blob = try db.openBlob(table: "t", column: "b", rowID: 1)
        var chunks: [Data] = []
        try blob.readChunks(ofSize: 4) { chunks.append(Data($0)) }
        #expect(chunks == [Data([0, 1, 2, 3]), Data([4, 5, 6, 7]), Data([8, 9])])
        chunks = []
        try blob.readChunks(ofSize: 100) { chunks.append(Data($0)) }
        #expect(chunks == [Data(0..<10)])
        #expect(sqliteError { try blob.readChunks(ofSize: 0) { _ in } }?.code == .misuse)
        #expect(sqliteError { try blob.readChunks(ofSize: -4) { _ in } }?.code == .misuse)
    }

    @Test("An empty blob opens with size 0 and delivers no chunk")
    func emptyBlob() throws {
        let db = try makeDatabase()
        try db.execute("UPDATE t SET b = ? WHERE id = 2", arguments: [Data()])
        let blob = try db.openBlob(table: "t", column: "b", rowID: 2)
        #expect(blob.size == 0)
        var calls = 0
        try blob.readChunks { _ in calls += 1 }
        #expect(calls == 0)
        #expect(blobError { _ = try blob.read(count: 1) }?.reason == .outOfBounds(offset: 0, count: 1, size: 0))
    }

    @Test("close is idempotent; a closed handle throws on use")
    func closeTwice() throws {
        let db = try makeDatabase()
        let blob = try db.openBlob(table: "t", column: "b", rowID: 1, access: .readWrite)
        try blob.close()
        try blob.close()
        #expect(blob.isClosed)
        #expect(blob.sqliteBlob == nil)
        let error = sqliteError { _ = try blob.read(count: 1) }
        #expect(error?.code == .misuse)
        #expect(error?.message == "the blob handle is closed")
        #expect(sqliteError { try blob.write(Data([1])) }?.code == .misuse)
        #expect(sqliteError { try blob.reopen(rowID: 3) }?.code == .misuse)
    }

    @Test("withBlob closes the handle when the body returns and when it throws")
    func withBlobCloses() throws {
        let db = try makeDatabase()
        var kept: BlobHandle?
        let size = try db.withBlob(table: "t", column: "b", rowID: 1) { blob in
            kept = blob
            return blob.size
        }
        #expect(size == 10)
        #expect(kept?.isClosed == true)
        kept = nil
        #expect(throws: CancellationError.self) {
            try db.withBlob(table: "t", column: "b", rowID: 1) { blob in
                kept = blob
                throw CancellationError()
            }
        }
        #expect(kept?.isClosed == true)
    }

    @Test("Closing the database closes its open handles, which then throw")
    func databaseCloseClosesHandles() throws {
        let db = try makeDatabase()
        let reader = try db.openBlob(table: "t", column: "b", rowID: 1)
        let writer = try db.openBlob(table: "t", column: "b", rowID: 3, access: .readWrite)
        db.close()
        #expect(reader.isClosed)
        #expect(writer.isClosed)
        let error = sqliteError { _ = try reader.read(count: 1) }
        #expect(error?.code == .misuse)
        #expect(error?.message == "the database connection is closed")
        #expect(sqliteError { try writer.write(Data([1])) }?.code == .misuse)
        try reader.close()
        #expect(sqliteError { _ = try db.openBlob(table: "t", column: "b", rowID: 1) }?.code == .misuse)
    }

    @Test("An open handle holds its lock until it is closed, released, or its database closes")
    func handlesReleaseLocks() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("locks.sqlite")
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB); INSERT INTO t VALUES (1, x'0102')")
        var configuration = Configuration()
        configuration.busyTimeout = .zero
        let other = try Database(path: path, configuration: configuration)
        func otherCanWrite() -> Bool {
            (try? other.execute("INSERT INTO t (b) VALUES (x'03')")) != nil
        }

        let closed = try db.openBlob(table: "t", column: "b", rowID: 1)
        #expect(!otherCanWrite())
        try closed.close()
        #expect(otherCanWrite())

        var released: BlobHandle? = try db.openBlob(table: "t", column: "b", rowID: 1)
        #expect(!otherCanWrite())
        #expect(released?.size == 2)
        released = nil
        #expect(otherCanWrite())

        let orphan = try db.openBlob(table: "t", column: "b", rowID: 1)
        #expect(!otherCanWrite())
        db.close()
        #expect(orphan.isClosed)
        #expect(otherCanWrite())
    }

    @Test("Outside a transaction, a read-write handle commits its writes when it closes")
    func autocommitOnClose() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("commit.sqlite")
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB); INSERT INTO t VALUES (1, x'0000')")
        let blob = try db.openBlob(table: "t", column: "b", rowID: 1, access: .readWrite)
        try blob.write(Data([5, 6]))
        try blob.close()
        let other = try Database(path: path)
        #expect(try other.fetchOne(Data.self, "SELECT b FROM t") == Data([5, 6]))
    }

    @Test("Inside a transaction that rolls back, writes through a handle are undone")
    func rollbackUndoesWrites() throws {
        let db = try makeDatabase()
        #expect(throws: CancellationError.self) {
            try db.transaction { db in
                try db.withBlob(table: "t", column: "b", rowID: 3, access: .readWrite) { blob in
                    try blob.write(Data([1, 2]))
                }
                throw CancellationError()
            }
        }
        #expect(try db.fetchOne(Data.self, "SELECT b FROM t WHERE id = 3") == Data([0xFF, 0xEE]))
    }

    @Test("Blobs in other schemas and tables with awkward names open too")
    func schemasAndQuoting() throws {
        let db = try makeDatabase()
        try db.execute(
            #"""
            CREATE TEMP TABLE "odd ""name""" (id INTEGER PRIMARY KEY, "the blob" BLOB);
            INSERT INTO "odd ""name""" VALUES (5, x'2A');
            """#)
        let blob = try db.openBlob(table: "odd \"name\"", column: "the blob", rowID: 5, schema: "temp")
        #expect(try blob.read(count: 1) == Data([0x2A]))
        let error = blobError {
            _ = try db.openBlob(table: "odd \"name\"", column: "the blob", rowID: 6, schema: "temp")
        }
        #expect(error?.reason == .rowNotFound)
        #expect(
            error?.description == "blob \"temp\".\"odd \"\"name\"\"\".\"the blob\" of row 6: the row does not exist")
    }
}
