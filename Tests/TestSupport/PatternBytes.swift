import Foundation

/// `count` bytes in which a byte out of place shows: byte `i` is
/// `i * 31 + i >> shift`, modulo 256, so the pattern does not repeat every
/// 256 bytes and a chunk copied to the wrong offset differs.
///
/// Written through a pointer on purpose. The obvious
/// `Data((0..<count).map { ... })` costs about a second a megabyte in a
/// debug build under Thread Sanitizer, where tests that made pictures of a
/// few megabytes held both cooperative threads for tens of seconds, and
/// unrelated tests ran out of their time limits waiting for a thread.
public func patternBytes(count: Int, shift: Int = 7) -> Data {
    var data = Data(count: max(count, 0))
    data.withUnsafeMutableBytes { raw in
        let bytes = raw.bindMemory(to: UInt8.self)
        var index = 0
        while index < bytes.count {
            bytes[index] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> shift)
            index &+= 1
        }
    }
    return data
}
