/// The part of a resource a `Range` header asks for (RFC 9110, section
/// 14.2), for one range of bytes.
///
/// Only a single range is honoured: a header asking for several, with
/// another unit, or malformed, is ignored (``whole``), as the RFC allows,
/// so the answer is the whole resource with 200.
///
/// ```swift
/// switch ByteRange.parse(request.headers["range"], size: picture.count) {
/// case .whole: // 200 with all of it
/// case .partial(let range): // 206 with Content-Range: bytes \(range.lowerBound)-\(range.upperBound)/\(size)
/// case .unsatisfiable: // 416 with Content-Range: bytes */\(size)
/// }
/// ```
public enum ByteRange: Sendable, Equatable {
    /// The whole resource: no `Range` header, or one to ignore.
    case whole
    /// These bytes, by offset from the start, within the resource.
    case partial(ClosedRange<Int>)
    /// A range that starts at or past the end (or is an empty suffix, or
    /// of an empty resource): answered with 416.
    case unsatisfiable

    /// The range `header` (a `Range` header's value, or nil) asks for in
    /// a resource of `size` bytes.
    ///
    /// - `bytes=0-99`: the first 100 bytes; an end past the last byte is
    ///   lowered to it.
    /// - `bytes=100-`: from byte 100 to the end.
    /// - `bytes=-50`: the last 50 bytes (all of them if there are fewer).
    ///
    /// The unit is case-insensitive and spaces around the range are
    /// allowed; an end before the start, a sign, or anything but digits is
    /// malformed.
    public static func parse(_ header: String?, size: Int) -> ByteRange {
        guard let header, let equals = header.firstIndex(of: "=") else { return .whole }
        let unit = header[..<equals].trimmingWhitespace()
        guard unit.lowercased() == "bytes" else { return .whole }
        // A list may hold empty elements, which do not count (RFC 9110,
        // section 5.6.1.2).
        let specs = header[header.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
        guard specs.count == 1, let spec = specs.first, let dash = spec.firstIndex(of: "-") else { return .whole }
        let size = max(0, size)
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            // A suffix: the last `length` bytes.
            guard let length = position(last) else { return .whole }
            guard length > 0, size > 0 else { return .unsatisfiable }
            return .partial(max(0, size - length)...(size - 1))
        }
        guard let start = position(first) else { return .whole }
        var end = Int.max
        if !last.isEmpty {
            guard let given = position(last), given >= start else { return .whole }
            end = given
        }
        guard start < size else { return .unsatisfiable }
        return .partial(start...min(end, size - 1))
    }

    /// A position or length: digits only, and one too large to count is
    /// the largest.
    private static func position(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text) ?? .max
    }
}

extension Substring {
    /// Without the spaces and tabs around it (HTTP's optional whitespace).
    fileprivate func trimmingWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else {
            return self[endIndex...]
        }
        return self[start...end]
    }
}
