import Foundation
import SQLiteStore

/// Deterministic random-looking bytes (xorshift64*), generated a chunk at a
/// time so that large test values never sit in memory.
struct PatternBytes {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed
    }

    mutating func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        var index = 0
        while index < buffer.count {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            var word = (state &* 0x2545_F491_4F6C_DD1D).littleEndian
            let count = min(8, buffer.count - index)
            withUnsafeBytes(of: &word) { bytes in
                buffer.baseAddress!.advanced(by: index).copyMemory(from: bytes.baseAddress!, byteCount: count)
            }
            index += count
        }
    }

    /// `count` pattern bytes from `seed`.
    static func data(count: Int, seed: UInt64) -> Data {
        var generator = PatternBytes(seed: seed)
        var data = Data(count: count)
        data.withUnsafeMutableBytes { generator.fill($0) }
        return data
    }

    /// Writes `count` pattern bytes from `seed` to a new file, in chunks.
    static func writeFile(_ path: String, count: Int, seed: UInt64) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else { throw CocoaError(.fileWriteUnknown) }
        defer { try? handle.close() }
        var generator = PatternBytes(seed: seed)
        var chunk = Data(count: 1 << 20)
        var remaining = count
        while remaining > 0 {
            let size = min(chunk.count, remaining)
            chunk.withUnsafeMutableBytes { generator.fill(UnsafeMutableRawBufferPointer(rebasing: $0[0..<size])) }
            try handle.write(contentsOf: chunk.prefix(size))
            remaining -= size
        }
    }
}

/// Whether two files hold the same bytes, compared a chunk at a time.
func filesAreEqual(_ first: String, _ second: String) throws -> Bool {
    guard let a = FileHandle(forReadingAtPath: first), let b = FileHandle(forReadingAtPath: second) else {
        throw CocoaError(.fileReadNoSuchFile)
    }
    defer {
        try? a.close()
        try? b.close()
    }
    while true {
        let left = try a.read(upToCount: 1 << 20) ?? Data()
        let right = try b.read(upToCount: 1 << 20) ?? Data()
        if left != right { return false }
        if left.isEmpty { return true }
    }
}

/// A file database with a `pictures` table whose blob column comes last, as
/// the incremental BLOB API recommends.
func makePictureDatabase(in directory: TemporaryDirectory, name: String = "pictures.sqlite") throws -> Database {
    let db = try Database(path: directory.path(name))
    try db.execute(
        """
        CREATE TABLE pictures (id INTEGER PRIMARY KEY, name TEXT, picture BLOB);
        INSERT INTO pictures (id, name, picture) VALUES (1, 'empty', NULL);
        """)
    return db
}

/// The picture of row `id`, read the ordinary way.
func storedPicture(_ db: Database, id: Int64 = 1) throws -> Data? {
    try db.fetchOne(Data.self, "SELECT picture FROM pictures WHERE id = ?", arguments: [id])
}

/// Runs `body` and returns the error of type `E` it throws; nil when it
/// throws nothing or an error of another type.
func thrownError<E: Error>(_ type: E.Type, _ body: () throws -> Void) -> E? {
    do {
        try body()
    } catch {
        return error as? E
    }
    return nil
}

/// The BlobError thrown by `body`, if any.
func blobError(_ body: () throws -> Void) -> BlobError? { thrownError(BlobError.self, body) }

/// The SQLiteError thrown by `body`, if any.
func sqliteError(_ body: () throws -> Void) -> SQLiteError? { thrownError(SQLiteError.self, body) }
