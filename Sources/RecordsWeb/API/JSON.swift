import Foundation

/// A JSON value as the API reads and writes it.
///
/// Reading keeps what a typed decoder loses: whether a member was absent
/// or `null` (a PATCH tells them apart), and whether a number was
/// written as a whole number. Writing keeps the members in the order
/// given, so every answer lists a record's fields in the same order.
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number written without a fraction or exponent that fits 64 bits.
    case integer(Int64)
    /// Any other number.
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// What the value is called in an error message: "a string".
    var typeDescription: String {
        switch self {
        case .null: "null"
        case .bool: "true or false"
        case .integer, .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A JSON object: its members in order.
struct JSONObject: Sendable, Equatable {
    var members: [(name: String, value: JSONValue)]

    init(_ members: [(name: String, value: JSONValue)] = []) { self.members = members }

    static func == (a: JSONObject, b: JSONObject) -> Bool {
        a.members.count == b.members.count
            && zip(a.members, b.members).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// The member named `name`, or nil when there is none (a member whose
    /// value is `null` is `.null`, not nil).
    subscript(name: String) -> JSONValue? {
        members.first { $0.name == name }?.value
    }

    /// Adds a member.
    mutating func append(_ name: String, _ value: JSONValue) { members.append((name, value)) }

    var names: [String] { members.map(\.name) }
}

// MARK: - Reading

extension JSONValue {
    /// Parses a request body.
    ///
    /// - Throws: ``Problem`` 400 naming where the text stops being JSON,
    ///   or when it is not UTF-8, nests deeper than 32 levels, or repeats a
    ///   member of an object.
    static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        return try parser.document()
    }
}

/// A strict RFC 8259 parser: one value, no comments, no trailing commas,
/// no repeated members (which another reader might take differently).
private struct JSONParser {
    let bytes: [UInt8]
    var index = 0
    var depth = 0
    static let maximumDepth = 32

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func document() throws -> JSONValue {
        skipSpace()
        guard index < bytes.count else { throw Self.problem("The body is empty; send a JSON object.") }
        let value = try self.value()
        skipSpace()
        guard index == bytes.count else { throw fail("more text after the JSON value") }
        return value
    }

    private mutating func value() throws -> JSONValue {
        guard index < bytes.count else { throw fail("the text ends before a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fail("a value was expected")
        }
    }

    private mutating func object() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var object = JSONObject()
        var seen = Set<String>()
        skipSpace()
        if peek(UInt8(ascii: "}")) {
            index += 1
            return .object(object)
        }
        while true {
            skipSpace()
            guard peek(UInt8(ascii: "\"")) else { throw fail("a member name in quotes was expected") }
            let name = try string()
            guard seen.insert(name).inserted else {
                throw Self.problem("The member \"\(JSONParserNames.printable(name))\" appears twice; send it once.")
            }
            skipSpace()
            guard peek(UInt8(ascii: ":")) else { throw fail("a colon was expected after a member name") }
            index += 1
            skipSpace()
            object.append(name, try value())
            skipSpace()
            if peek(UInt8(ascii: ",")) {
                index += 1
                continue
            }
            guard peek(UInt8(ascii: "}")) else { throw fail("a comma or the object's end was expected") }
            index += 1
            return .object(object)
        }
    }

    private mutating func array() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var items: [JSONValue] = []
        skipSpace()
        if peek(UInt8(ascii: "]")) {
            index += 1
            return .array(items)
        }
        while true {
            skipSpace()
            items.append(try value())
            skipSpace()
            if peek(UInt8(ascii: ",")) {
                index += 1
                continue
            }
            guard peek(UInt8(ascii: "]")) else { throw fail("a comma or the array's end was expected") }
            index += 1
            return .array(items)
        }
    }

    private mutating func string() throws -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flush(_ parser: JSONParser, upTo end: Int) throws {
            guard runStart < end else { return }
            guard let text = String(validating: parser.bytes[runStart..<end], as: UTF8.self) else {
                throw JSONParser.problem("The body is not UTF-8 text.")
            }
            scalars.append(contentsOf: text.unicodeScalars)
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                if scalars.isEmpty {
                    // No escape before the end (the usual string): its
                    // bytes are the text, validated once, not copied twice.
                    guard let text = String(validating: bytes[runStart..<index], as: UTF8.self) else {
                        throw JSONParser.problem("The body is not UTF-8 text.")
                    }
                    index += 1
                    return text
                }
                try flush(self, upTo: index)
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                try flush(self, upTo: index)
                index += 1
                scalars.append(try escape())
                runStart = index
            case 0..<0x20:
                throw fail("a control character inside a string must be escaped")
            default:
                index += 1
            }
        }
        throw fail("a string is not closed")
    }

    private mutating func escape() throws -> Unicode.Scalar {
        guard index < bytes.count else { throw fail("a string is not closed") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try hex4()
            if (0xD800...0xDBFF).contains(high) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { throw fail("a lone surrogate in a \\u escape") }
                index += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw fail("a lone surrogate in a \\u escape") }
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
            }
            guard let scalar = Unicode.Scalar(high) else { throw fail("a lone surrogate in a \\u escape") }
            return scalar
        default:
            throw fail("an unknown escape in a string")
        }
    }

    private mutating func hex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("a \\u escape needs four hex digits")
            }
            value = value << 4 | digit
        }
        index += 4
        return value
    }

    private mutating func number() throws -> JSONValue {
        let start = index
        if peek(UInt8(ascii: "-")) { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("a digit was expected") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        var isWhole = true
        if peek(UInt8(ascii: ".")) {
            isWhole = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("a digit was expected after the point") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            isWhole = false
            index += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("a digit was expected in the exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isWhole, let integer = Int64(text) { return .integer(integer) }
        guard let number = Double(text), number.isFinite else { throw fail("a number too large") }
        return .number(number)
    }

    private mutating func literal(_ word: String) throws {
        let expected = Array(word.utf8)
        guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw fail("a value was expected")
        }
        index += expected.count
    }

    private mutating func enter() throws {
        depth += 1
        if depth > Self.maximumDepth {
            throw Self.problem("The JSON nests deeper than \(Self.maximumDepth) levels.")
        }
    }

    private func peek(_ byte: UInt8) -> Bool { index < bytes.count && bytes[index] == byte }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipSpace() {
        while index < bytes.count,
            bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09
        {
            index += 1
        }
    }

    private func fail(_ what: String) -> Problem {
        Self.problem("The body is not valid JSON: \(what) at byte \(index + 1).")
    }

    static func problem(_ detail: String) -> Problem {
        Problem(status: 400, code: "malformed-json", detail: detail)
    }

}

// MARK: - Writing

/// Writes JSON text straight into bytes, members in the order given.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []

    init(reservingCapacity capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    mutating func write(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let flag): raw(flag ? "true" : "false")
        case .integer(let integer): raw(String(integer))
        case .number(let number): raw(number.description)
        case .string(let text): write(string: text)
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (offset, item) in items.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                write(item)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            for (offset, member) in object.members.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                write(string: member.name)
                bytes.append(UInt8(ascii: ":"))
                write(member.value)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    mutating func write(string text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case UInt8(ascii: "\n"): raw("\\n")
            case UInt8(ascii: "\r"): raw("\\r")
            case UInt8(ascii: "\t"): raw("\\t")
            case 0..<0x20:
                raw("\\u00")
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// `text` as the inside of a JSON string.
    static func escaped(_ text: String) -> String {
        var writer = JSONWriter()
        writer.write(string: text)
        return String(decoding: writer.bytes.dropFirst().dropLast(), as: UTF8.self)
    }

    /// The JSON text of `value`.
    static func encode(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(value)
        return writer.bytes
    }
}

extension JSONValue {
    /// `text`, or null.
    static func string(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }
    /// `integer`, or null.
    static func integer(_ integer: Int?) -> JSONValue { integer.map { .integer(Int64($0)) } ?? .null }
}
