// Shared by every fuzz target (compiled into each one by scripts/fuzz.sh).
//
// libFuzzer calls `LLVMFuzzerTestOneInput` (declared in each target with
// `@_cdecl`) once per input. A crash, a sanitizer report, a timeout or a
// failed `require` is a finding: libFuzzer saves the input and stops.

import Foundation

/// Stops the run with a finding when an invariant does not hold. Unlike
/// `precondition`, it is never compiled out.
func require(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #file,
    line: UInt = #line
) {
    guard !condition() else { return }
    FileHandle.standardError.write(Data("fuzz invariant failed at \(file):\(line): \(message())\n".utf8))
    abort()
}

/// Reads structured values from the fuzzer's bytes, front to back. Running
/// out of bytes is not an error: every read then returns a zero value, so
/// every input means something.
struct FuzzReader {
    private let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    init(_ data: UnsafePointer<UInt8>, count: Int) {
        self.bytes = Array(UnsafeBufferPointer(start: data, count: count))
    }

    var isAtEnd: Bool { offset >= bytes.count }
    var remainingCount: Int { max(bytes.count - offset, 0) }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func bool() -> Bool { byte() & 1 == 1 }

    /// A little-endian integer of `width` bytes, sign-extended.
    mutating func integer(width: Int = 8) -> Int64 {
        var value: UInt64 = 0
        for index in 0..<min(width, 8) { value |= UInt64(byte()) << (8 * UInt64(index)) }
        if width < 8, width > 0, value & (1 << (8 * UInt64(width) - 1)) != 0 {
            value |= ~0 << (8 * UInt64(width))
        }
        return Int64(bitPattern: value)
    }

    mutating func double() -> Double { Double(bitPattern: UInt64(bitPattern: integer())) }

    /// Up to `limit` bytes: a length byte, then that many bytes.
    mutating func bytes(limit: Int = 255) -> [UInt8] {
        let count = min(Int(byte()), limit, remainingCount)
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// Text made of up to `limit` bytes (invalid UTF-8 is repaired, as any
    /// `String` built from bytes would be).
    mutating func string(limit: Int = 255) -> String {
        String(decoding: bytes(limit: limit), as: UTF8.self)
    }

    /// One of `choices`, picked by the next byte.
    mutating func pick<T>(_ choices: [T]) -> T {
        choices[Int(byte()) % choices.count]
    }

    /// Everything not read yet.
    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return offset < bytes.count ? Array(bytes[offset...]) : []
    }
}

/// A directory of this process's own, made once per fuzzing run inside the
/// system's temporary directory (or `$TMPDIR`), for targets that need files.
let fuzzScratchDirectory: URL = {
    let base = FileManager.default.temporaryDirectory
    let url = base.appendingPathComponent("sqlitestore-fuzz-\(getpid())-\(UUID().uuidString)", isDirectory: true)
    do {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
    } catch {
        fatalError("cannot create the fuzz scratch directory \(url.path): \(error)")
    }
    atexit {
        // Best effort: libFuzzer usually ends the process with exit(), which
        // runs this; a crash leaves the directory for inspection.
        try? FileManager.default.removeItem(at: fuzzScratchDirectory)
    }
    return url
}()

/// Runs an `async` call (a store method) to its end from the fuzzer's
/// synchronous entry point; the call itself runs on the database's threads.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = BlockingOutcome<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do {
            outcome.result = .success(try await body())
        } catch {
            outcome.result = .failure(error)
        }
        done.signal()
    }
    done.wait()
    return try outcome.result!.get()
}

/// What a ``blocking(_:)`` call gave: written by its task before it
/// signals, read after the wait, so never at the same time.
final class BlockingOutcome<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
