import Foundation

/// Deterministic random-looking bytes (xorshift64*), generated a chunk at a
/// time so that large test values never sit in memory; shared by the test
/// targets.
///
/// Generated through a pointer, eight bytes a step: test data made with
/// `Data((0..<count).map { ... })` costs about a second a megabyte in a
/// debug build under Thread Sanitizer, where tests that made pictures of a
/// few megabytes that way held both cooperative threads for tens of
/// seconds, and unrelated tests ran out of their time limits waiting.
public struct PatternBytes {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed
    }

    public mutating func fill(_ buffer: UnsafeMutableRawBufferPointer) {
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
    public static func data(count: Int, seed: UInt64) -> Data {
        var generator = PatternBytes(seed: seed)
        var data = Data(count: count)
        data.withUnsafeMutableBytes { generator.fill($0) }
        return data
    }

    /// Writes `count` pattern bytes from `seed` to a new file, in chunks.
    public static func writeFile(_ path: String, count: Int, seed: UInt64) throws {
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
