import Foundation
import Testing

@testable import RecordsWeb

/// Strings in request bodies: the text a client sent, escaped or not, and
/// a clear 400 for bytes that are not UTF-8, wherever they are.
@Suite struct JSONStringParsingTests {
    static func string(_ body: [UInt8]) throws -> String? {
        guard case .string(let text) = try JSONValue.parse(body) else { return nil }
        return text
    }

    @Test(arguments: [
        (#""Ada Lovelace""#, "Ada Lovelace"),
        (#""""#, ""),
        (#""Skłodowska 😀""#, "Skłodowska 😀"),
        (#""a\"b\\c\/d""#, "a\"b\\c/d"),
        (#""line\nbreak\ttab""#, "line\nbreak\ttab"),
        (#""\u00e9t\u00E9""#, "été"),
        (#""\ud83d\ude00 after""#, "😀 after"),
        (#""before \u0041""#, "before A"),
    ])
    func aStringIsTheTextSent(json: String, text: String) throws {
        #expect(try Self.string(Array(json.utf8)) == text)
    }

    @Test(arguments: [
        [UInt8(ascii: "\""), 0x41, 0xFF, 0x42, UInt8(ascii: "\"")],
        [UInt8(ascii: "\""), 0xC3, UInt8(ascii: "\"")],
        [UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "n"), 0xFF, UInt8(ascii: "\"")],
        [UInt8(ascii: "\""), 0xFF, UInt8(ascii: "\\"), UInt8(ascii: "n"), UInt8(ascii: "\"")],
    ])
    func bytesThatAreNotUTF8AreRefused(body: [UInt8]) {
        #expect {
            try JSONValue.parse(body)
        } throws: { error in
            (error as? Problem)?.code == "malformed-json"
        }
    }

    @Test func anObjectsStringsAreReadWhole() throws {
        let value = try JSONValue.parse(Array(#"{"firstName":"Ada","lastName":"Love\u006Cace","age":36}"#.utf8))
        guard case .object(let object) = value else {
            Issue.record("not an object: \(value)")
            return
        }
        #expect(object["firstName"] == .string("Ada"))
        #expect(object["lastName"] == .string("Lovelace"))
        #expect(object["age"] == .integer(36))
    }
}
